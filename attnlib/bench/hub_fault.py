"""One student at fault while the class works: `python -m attnlib.bench hub --fault memory|cpu|fork`.

The faulty student logs in with the others, opens the notebook, waits until another student's kernel runs cells,
then, in their own kernel: `memory` allocates 20 GB (a typo in a shape), `cpu` starts four busy processes until the
others are done (training on every core), `fork` forks until the system refuses (a fork loop). hub/bench.py reads
the student's cgroup counters before and after (root only) and judges whether the fault stayed contained.
"""
from __future__ import annotations

import asyncio
import json
import math
import time

from .hub_class import Student, open_kernel, start_server
from .hub_client import Client, Kernel, KernelDied

FAULTS = ("memory", "cpu", "fork")
FORK_CAP = 5000  # forks tried at most: without any limit the test stops here instead of exhausting the machine

CODE = {
    "memory": "import torch\nx = torch.ones(20 * 1024 ** 3 // 4)  # [5e9] float32: 20 GB, a shape typo\nprint(1)",
    "cpu": ("import subprocess, sys\n"
            "_busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(4)]\n"
            "print('BUSY', len(_busy))"),
    "fork": ("import os, time, json\n_kids, _errno = [], None\n"
             f"while len(_kids) < {FORK_CAP}:\n"
             "    try:\n        _pid = os.fork()\n    except OSError as e:\n        _errno = e.errno\n        break\n"
             "    if _pid == 0:\n        time.sleep(600)\n        os._exit(0)\n    _kids.append(_pid)\n"
             "for _k in _kids:\n    os.kill(_k, 9)\nfor _k in _kids:\n    os.waitpid(_k, 0)\n"
             "print('FORK', json.dumps({'forked': len(_kids), 'errno': _errno}))"),
}
STOP_CPU = "for _p in _busy:\n    _p.kill()\n    _p.wait()\nprint('STOPPED')"


async def _until(condition, deadline: float) -> None:
    while not condition() and time.monotonic() < deadline:
        await asyncio.sleep(0.5)


async def run_fault(client: Client, s: Student, kind: str, others: list[Student], notebook: str, deadline: float,
                    counters, limit_text: str) -> dict:
    """Do the fault in `s`'s kernel while `others` work; return what happened and the cgroup counters' changes.

    Args:
        counters: name -> {"oom_kill", "throttled", "cpu_ns", "tasks"} of that student's cgroup (hub/limits.py).
        limit_text: the memory limit as the kernel's notice names it (e.g. "1.5 GB").
    """
    await start_server(client, s, deadline)
    session, ws, _ = await open_kernel(client, s, notebook, deadline)
    kernel_id = (await client.call("GET", f"/user/{s.name}/api/sessions/{session}", s.token))["kernel"]["id"]
    await _until(lambda: any(o.phase.startswith("running") or o.error for o in others), deadline)
    s.phase = f"the {kind} fault"
    before, t0 = counters(s.name), time.monotonic()
    others_ns = {o.name: counters(o.name)["cpu_ns"] for o in others}
    found: dict = {"kernel_died": False}
    kernel = Kernel(ws, s.name)
    try:
        if kind == "memory":
            found["output"] = (await kernel.execute(CODE["memory"], min(deadline, time.monotonic() + 300)))[-200:]
        elif kind == "cpu":
            await kernel.execute(CODE["cpu"], deadline)
            await _until(lambda: all(math.isfinite(o.run_s) or o.error for o in others), deadline)
            seconds = time.monotonic() - t0
            found["cores_used"] = round((counters(s.name)["cpu_ns"] - before["cpu_ns"]) / 1e9 / seconds, 2)
            # what each other student's kernel got meanwhile (a busy machine gives the fault less than its limit)
            found["cores_others"] = [round((counters(o.name)["cpu_ns"] - others_ns[o.name]) / 1e9 / seconds, 2)
                                     for o in others]
            await kernel.execute(STOP_CPU, deadline)
        else:
            out = await kernel.execute(CODE["fork"], deadline)
            found.update(json.loads(out.split("FORK ", 1)[1]))
    except KernelDied:
        found["kernel_died"] = True
    except RuntimeError as exc:
        found["output"] = str(exc)[:200]
    finally:
        ws.close()
    after = counters(s.name)
    found.update({k: after[k] - before[k] for k in ("oom_kill", "throttled")})
    if found["kernel_died"]:  # the next cell in the restarted kernel shows the notice
        ws = await client.websocket(f"/user/{s.name}/api/kernels/{kernel_id}/channels", s.token)
        try:
            kernel = Kernel(ws, s.name)
            await kernel.ready(deadline)
            out = await kernel.execute("print('after the restart')", deadline)
            found["notice_shown"] = limit_text in out and "restart the kernel" in out
            found["notice"] = next((line for line in out.splitlines() if limit_text in line), "")[:600]
        finally:
            ws.close()
    s.phase = "done"
    return found


def contained(kind: str, found: dict, others: list[Student], counters, cpu_limit: float) -> bool:
    """True when only the faulty student's kernel died (memory), stayed within its cores (cpu) or was refused (fork)."""
    if any(s.error for s in others) or any(counters(s.name)["oom_kill"] for s in others):
        return False
    if kind == "memory":
        return found["kernel_died"] and found["oom_kill"] >= 1
    if kind == "cpu":  # never more than its limit; `throttled` > 0 only if the machine had cores to spare
        return found.get("cores_used", math.inf) <= cpu_limit * 1.1 + 0.05
    return found.get("errno") == 11 and found.get("forked", FORK_CAP) < FORK_CAP  # EAGAIN: the limit said no
