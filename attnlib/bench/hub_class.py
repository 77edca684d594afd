"""The simulated class of the hub load test: each student's session, the hub probe, the memory sampler, the report.

Used by `python -m attnlib.bench hub` (hub/bench.py), which starts the hub and the accounts.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import threading
import time
import uuid

from ..measure import percentile
from .hub_client import MB, Client, Kernel

POLL_S = 1.0  # how often servers are polled for readiness, the hub is probed and memory is sampled

# Runs in the student's kernel after the notebook: move the main panel's first slider to another value.
SLIDER_CODE = """
import json as _json
import attnlib as _al
_panels = [v for v in list(globals().values()) if isinstance(v, _al.widgets.LivePanel)]
assert _panels, "the notebook made no LivePanel"
_panel = _panels[0]
_slider = next(c for c in _panel.controls.values() if hasattr(c, "min") and hasattr(c, "max"))
_before, _old = _panel.updates, _json.dumps(_panel.figures[0].to_dict()["data"], default=str)
_slider.value = _slider.max if _slider.value != _slider.max else _slider.min
_new = _json.dumps(_panel.figures[0].to_dict()["data"], default=str)
print("SLIDER", _json.dumps({"updates": _panel.updates - _before, "status": _panel.status, "changed": _new != _old}))
"""


@dataclasses.dataclass
class Student:
    """One simulated student and what happened to them."""

    name: str
    password: str
    uid: int = -1
    token: str = ""
    login_s: float = math.nan
    ready_at: float = math.nan
    run_s: float = math.nan
    slider_ms: float = math.nan
    cells: int = 0
    phase: str = "not started"
    error: str = ""
    peak_rss: int = 0
    peak_pss: int = 0


async def start_server(client: Client, s: Student, deadline: float) -> None:
    """Log in and start the student's server; record the login time and when the server was ready."""
    t0 = time.monotonic()
    s.phase = "logging in"
    reply = await client.call("POST", f"/hub/api/users/{s.name}/tokens", expect=(200, 201),
                              body={"auth": {"username": s.name, "password": s.password}, "expires_in": 7200,
                                    "note": "attnlib.bench hub"})
    s.token = reply["token"]
    s.login_s = time.monotonic() - t0
    s.phase = "starting the server"
    await client.call("POST", f"/hub/api/users/{s.name}/server", s.token, body={}, expect=(201, 202))
    while True:
        model = await client.call("GET", f"/hub/api/users/{s.name}", s.token)
        server = model.get("servers", {}).get("")
        if server and server.get("ready"):
            s.ready_at = time.monotonic()
            return
        if server is None and model.get("pending") is None:
            raise RuntimeError("the server stopped while starting (see the hub log)")
        if time.monotonic() > deadline:
            raise RuntimeError("the server was not ready before the deadline")
        await asyncio.sleep(POLL_S)


async def open_kernel(client: Client, s: Student, notebook: str, deadline: float) -> tuple[str, object, list[str]]:
    """A session on the student's copy of `notebook` with a fresh kernel: (session id, its websocket, code cells)."""
    s.phase = "opening the notebook"
    base = f"/user/{s.name}/api"
    path = f"notebooks/{notebook}"
    nb = (await client.call("GET", f"{base}/contents/{path}?content=1&type=notebook", s.token))["content"]
    code_cells = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                  for c in nb["cells"] if c["cell_type"] == "code"]
    session = await client.call("POST", f"{base}/sessions", s.token, expect=(201,),
                                body={"path": path, "name": notebook, "type": "notebook",
                                      "kernel": {"name": "python3"}})
    ws = await client.websocket(f"{base}/kernels/{session['kernel']['id']}/channels?session_id={uuid.uuid4().hex}",
                                s.token)
    s.phase = "waiting for the kernel"
    await Kernel(ws, s.name).ready(deadline)
    return session["id"], ws, code_cells


async def run_notebook(client: Client, s: Student, notebook: str, deadline: float, slider: bool = True) -> None:
    """Run the notebook's code cells top to bottom in a fresh kernel (as Run All), then move the slider."""
    session, ws, code_cells = await open_kernel(client, s, notebook, deadline)
    try:
        kernel = Kernel(ws, s.name)
        t_run = time.monotonic()
        for i, code in enumerate(code_cells):
            s.phase = f"running code cell {i + 1} of {len(code_cells)}"
            await kernel.execute(code, deadline)
            s.cells = i + 1
        s.run_s = time.monotonic() - t_run
        if slider:
            s.phase = "moving the slider"
            t_slider = time.monotonic()
            out = await kernel.execute(SLIDER_CODE, deadline)
            s.slider_ms = (time.monotonic() - t_slider) * 1000
            line = next((x for x in out.splitlines() if x.startswith("SLIDER ")), "")
            moved = json.loads(line[len("SLIDER "):]) if line else {}
            if not (moved.get("updates") == 1 and moved.get("status") == "" and moved.get("changed")):
                raise RuntimeError(f"moving the slider did not redraw the panel cleanly: {moved or out[-200:]}")
    finally:
        ws.close()
    # close the notebook as JupyterLab's "Shut Down Kernel" does: its memory goes back to the class
    await client.call("DELETE", f"/user/{s.name}/api/sessions/{session}", s.token, expect=(204,))


async def run_student(client: Client, s: Student, notebook: str, deadline: float) -> None:
    """Log in, start the server, run the notebook, move the slider; record times or the first error."""
    await start_server(client, s, deadline)
    await run_notebook(client, s, notebook, deadline)


class Sampler(threading.Thread):
    """Every POLL_S: each student's memory (all processes of their uid) and the hub's processes."""

    def __init__(self, students: list[Student], hub_pid: int):
        super().__init__(daemon=True)
        self.students = {s.uid: s for s in students}
        self.hub_pid = hub_pid
        self.stop = threading.Event()
        self.peak_total = 0  # Σ PSS over every student process, plus the hub, proxy and culler
        self.peak_hub = 0

    def run(self) -> None:
        import psutil

        while not self.stop.wait(POLL_S):
            rss, pss = {}, {}
            for p in psutil.process_iter(["uids"]):
                try:
                    uid = p.info["uids"].real
                    if uid in self.students:
                        full = p.memory_full_info()
                        rss[uid] = rss.get(uid, 0) + full.rss
                        pss[uid] = pss.get(uid, 0) + full.pss
                except (psutil.Error, AttributeError):
                    continue
            hub = 0
            try:
                top = psutil.Process(self.hub_pid)
                for p in [top, *top.children(recursive=True)]:
                    if p.uids().real == 0:
                        hub += p.memory_full_info().pss
            except psutil.Error:
                pass
            for uid, s in self.students.items():
                s.peak_rss = max(s.peak_rss, rss.get(uid, 0))
                s.peak_pss = max(s.peak_pss, pss.get(uid, 0))
            self.peak_hub = max(self.peak_hub, hub)
            self.peak_total = max(self.peak_total, hub + sum(pss.values()))


async def probe_hub(client: Client, students: list[Student], done: asyncio.Event, times: list[float]) -> None:
    """Time the hub's API once a second while the class works: whoami with a student's token, or /hub/api/."""
    while not done.is_set():
        token = next((s.token for s in students if s.token), "")
        t0 = time.monotonic()
        try:
            await client.call("GET", "/hub/api/user" if token else "/hub/api/", token, timeout=30)
            times.append((time.monotonic() - t0) * 1000)
        except RuntimeError:
            times.append(30_000.0)
        try:
            await asyncio.wait_for(done.wait(), POLL_S)
        except asyncio.TimeoutError:
            pass


async def guarded(s: Student, job, deadline: float, timeout: float) -> None:
    """Run one student's job; a failure or the deadline becomes the student's error (the class goes on)."""
    try:
        await asyncio.wait_for(job, max(1.0, deadline - time.monotonic()))
    except asyncio.TimeoutError:
        s.error = f"{s.name}, {s.phase}: did not finish within --timeout {timeout:.0f} s"
    except Exception as exc:  # noqa: BLE001  (one student's failure is counted, the class goes on)
        s.error = f"{s.name}, {s.phase}: {type(exc).__name__}: {exc}"


async def simulate(client: Client, students: list[Student], notebook: str, timeout: float,
                   extra=None, stop: bool = True) -> tuple[float, list[float]]:
    """All students at once (and `extra(deadline)`, a coroutine, beside them); returns (start, hub times in ms)."""
    done = asyncio.Event()
    hub_ms: list[float] = []
    t0 = time.monotonic()
    deadline = t0 + timeout
    probe = asyncio.ensure_future(probe_hub(client, students, done, hub_ms))
    jobs = [guarded(s, run_student(client, s, notebook, deadline), deadline, timeout) for s in students]
    await asyncio.gather(*jobs, *([extra(deadline)] if extra else []))
    done.set()
    await probe
    if stop:
        await stop_servers(client, students)
    return t0, hub_ms


async def stop_servers(client: Client, students: list[Student]) -> None:
    """Stop the servers through the hub, as the culler or the admin page would."""
    await asyncio.gather(*(client.call("DELETE", f"/hub/api/users/{s.name}/server", s.token, expect=(202, 204, 400),
                                       timeout=120) for s in students if s.token), return_exceptions=True)


def report(students: list[Student], t0: float, hub_ms: list[float], sampler: Sampler, wall_s: float,
           notebook: str, load_before: float) -> dict:
    """The figures of one run (seconds and MB, rounded for reading)."""
    ok = [s for s in students if not s.error]
    ready = [s.ready_at for s in students]
    runs = [s.run_s for s in ok]
    return {
        "students": len(students),
        "errors": sum(1 for s in students if s.error),
        "ready_s": round(max(ready) - t0, 1) if all(math.isfinite(r) for r in ready) else None,
        "login_p95_s": round(percentile([s.login_s for s in students if math.isfinite(s.login_s)], 95), 2),
        "run_p50_s": round(percentile(runs, 50), 1),
        "run_p95_s": round(percentile(runs, 95), 1),
        "slider_p50_ms": round(percentile([s.slider_ms for s in ok], 50), 1),
        "slider_p95_ms": round(percentile([s.slider_ms for s in ok], 95), 1),
        "hub_p50_ms": round(percentile(hub_ms, 50), 1),
        "hub_p95_ms": round(percentile(hub_ms, 95), 1),
        "hub_max_ms": round(max(hub_ms), 1) if hub_ms else None,
        "peak_mb_per_student": round(max(s.peak_rss for s in students) / MB),
        "peak_pss_mb_per_student": round(max(s.peak_pss for s in students) / MB),
        "peak_total_mb": round(sampler.peak_total / MB),
        "hub_mb": round(sampler.peak_hub / MB),
        "notebook": notebook,
        "cpus": os.cpu_count(),
        "load_1m_before": round(load_before, 2),
        "wall_s": round(wall_s, 1),
        "error_messages": [s.error for s in students if s.error][:5],
    }
