"""scripts/testcache.py on a made-up test folder, run by pytest in a subprocess as `make test` runs it (-p testcache,
two xdist workers): a file that passed is kept even when its tests ran on both workers, and is not run again; a file
with a failure, or a run that selects tests, keeps nothing."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SPREAD = '''import os, pathlib, pytest
@pytest.mark.parametrize("i", range(8))
def test_logs(i):
    with open(os.environ["RUN_LOG"], "a") as log:
        log.write(f"spread {i} {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\\n")
def test_skipped():
    pytest.skip("not here")
'''
SINGLE = '''import os
def test_one():
    with open(os.environ["RUN_LOG"], "a") as log:
        log.write("single\\n")
    assert not os.environ.get("FAIL_SINGLE")
'''


def run_pytest(folder: Path, *args: str, **env: str) -> str:
    """pytest with the testcache plugin in `folder` (two workers, tests dealt one by one); its output."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "testcache", "-p", "no:cacheprovider", "-n", "2", "--dist", "load",
         "tests", *args],
        cwd=folder, capture_output=True, text=True, timeout=300,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},  # not this run's xdist worker's
             "PYTHONPATH": str(ROOT / "scripts"), "RUN_LOG": str(folder / "log.txt"),
             "TESTCACHE_DIR": str(folder / "cache"), **env})
    return done.stdout + done.stderr


def made_up_folder(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "tests" / "test_spread.py").write_text(SPREAD)
    (tmp_path / "tests" / "test_single.py").write_text(SINGLE)
    return tmp_path


def test_a_file_spread_over_both_workers_is_kept_and_not_run_again(tmp_path):
    folder = made_up_folder(tmp_path)
    out = run_pytest(folder)
    assert "9 passed, 1 skipped" in out, out
    workers = {line.split()[-1] for line in (folder / "log.txt").read_text().splitlines() if line.startswith("spread")}
    assert workers == {"gw0", "gw1"}, workers  # the case in question: one file's tests on both workers
    assert sorted(p.name for p in (folder / "cache").iterdir()) == ["tests__test_single.py.json",
                                                                   "tests__test_spread.py.json"]
    log = (folder / "log.txt").read_text()
    again = run_pytest(folder)
    assert "testcache: 10 test(s) under tests/ not run again" in again and "9 passed, 1 skipped" in again, again
    assert (folder / "log.txt").read_text() == log  # nothing ran


def test_a_failing_file_or_a_selection_keeps_nothing_of_it(tmp_path):
    folder = made_up_folder(tmp_path)
    assert "1 failed" in run_pytest(folder, FAIL_SINGLE="1")
    assert [p.name for p in (folder / "cache").iterdir()] == ["tests__test_spread.py.json"]
    for p in (folder / "cache").iterdir():
        p.unlink()
    assert "1 passed" in run_pytest(folder, "-k", "one")
    assert list((folder / "cache").iterdir()) == []
