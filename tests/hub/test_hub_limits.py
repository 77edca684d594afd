"""Limits per student (hub/limits.py) and the kernel's notice after an OOM kill (hub/kernel_notice.py).

The first tests run anywhere; the cgroup ones need root and a writable cgroup file system (skipped otherwise,
failed under CI=true): a process in a student's group that allocates past the limit is killed, alone.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "hub"))

import classroom  # noqa: E402
import kernel_notice  # noqa: E402
import limits  # noqa: E402

pytestmark = pytest.mark.hub


@pytest.mark.parametrize("text, expected", [("1.5G", int(1.5 * 1024 ** 3)), ("800M", 800 * 1024 ** 2),
                                            ("2g", 2 * 1024 ** 3), ("1610612736", 1610612736), ("512MB", 512 << 20)])
def test_sizes_are_read_as_the_teacher_writes_them(text, expected):
    assert limits.parse_bytes(text) == expected


@pytest.mark.parametrize("env, message", [({"HUB_MEM_LIMIT": "lots"}, "HUB_MEM_LIMIT must be a size"),
                                          ({"HUB_MEM_LIMIT": "10M"}, "at least 64M"),
                                          ({"HUB_CPU_LIMIT": "one"}, "HUB_CPU_LIMIT must be a number"),
                                          ({"HUB_PIDS_LIMIT": "8"}, "HUB_PIDS_LIMIT at least 32")])
def test_bad_limits_get_one_sentence(env, message):
    with pytest.raises(classroom.RosterError, match=message):
        limits.Limits.from_env(env)


def test_defaults_and_the_launcher_line():
    lim = limits.Limits.from_env({})
    assert (lim.mem_text, lim.cpu_cores, lim.max_tasks) == ("1.5 GB", 1.0, 512)
    assert limits.Limits.from_env(lim.as_env()) == lim  # what the hub's processes are given reads back the same
    with_groups = limits.Tree(version=1).describe(lim)
    assert "1.5 GB of memory" in with_groups and "1 CPU core(s)" in with_groups and "cgroup v1" in with_groups
    without = limits.Tree(reason="no cgroup file system at /sys/fs/cgroup").describe(lim)
    assert without.startswith("NO memory or CPU limit per student: no cgroup file system")
    assert "512 per student" in without


def test_the_notice_names_the_limit_and_the_fix_in_the_notebook_language():
    en = kernel_notice.message("1.5 GB", "notebooks/01_introduction.ipynb")
    zh = kernel_notice.message("1.5 GB", "notebooks/zh/01_introduction.ipynb")
    assert "1.5 GB" in en and "restart the kernel" in en and "memory limit" in en
    assert "1.5 GB" in zh and "重启内核" in zh and "上限" in zh and "笔记本" in zh


def _tree_or_skip() -> limits.Tree:
    tree = limits.Tree.detect()
    if not tree.version:
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail(f"no cgroups under CI: {tree.reason}")
        pytest.skip(tree.reason)
    return tree


def test_a_process_over_its_memory_limit_is_killed_alone_and_counted():
    tree = _tree_or_skip()
    user = f"jtest-{uuid.uuid4().hex[:6]}"
    lim = limits.Limits(mem_bytes=200 * 1024 ** 2, cpu_cores=0.5, max_tasks=64)
    groups = tree.prepare(user, lim)
    try:
        grab = "b = bytearray(600 * 1024 ** 2); print('survived')"  # 600 MB > 200 MB, every page touched
        done = subprocess.run([sys.executable, "-c", grab], preexec_fn=limits.preexec(tree, groups, lim),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == -signal.SIGKILL and "survived" not in done.stdout  # measurement: the OOM kill
        assert tree.counters(user)["oom_kill"] == 1
        small = subprocess.run([sys.executable, "-c", "b = bytearray(50 * 1024 ** 2); print('ok')"],
                               preexec_fn=limits.preexec(tree, groups, lim), capture_output=True, text=True)
        assert small.returncode == 0 and small.stdout.strip() == "ok"  # under the limit nothing happens
    finally:
        tree.remove(user)
    assert not any(g.exists() for g in groups)


def test_a_fork_loop_stops_at_the_process_limit():
    tree = _tree_or_skip()
    user = f"jtest-{uuid.uuid4().hex[:6]}"
    lim = limits.Limits(max_tasks=40)
    groups = tree.prepare(user, lim)
    code = ("import os, time\nkids = []\ntry:\n    while len(kids) < 500:\n        pid = os.fork()\n"
            "        if pid == 0:\n            time.sleep(60)\n            os._exit(0)\n        kids.append(pid)\n"
            "except OSError as e:\n    print(len(kids), e.errno)\n"
            "for k in kids:\n    os.kill(k, 9)\n    os.waitpid(k, 0)\n")
    try:
        done = subprocess.run([sys.executable, "-c", code], preexec_fn=limits.preexec(tree, groups, lim),
                              capture_output=True, text=True, timeout=120)
        forked, errno = map(int, done.stdout.split())
        assert errno == 11 and 30 <= forked < 40, done.stdout  # measurement: EAGAIN at pids.max (python is 1 task)
    finally:
        tree.remove(user)
