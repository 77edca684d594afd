"""A class on one server, simulated on loopback: `python -m attnlib.bench hub --students N`.

`python -m attnlib.bench hub [--students 3] [--notebook 01_introduction.ipynb] [--timeout 1500]`

Starts a separate JupyterHub with hub/jupyterhub_config.py (the one `make hub` runs) on free loopback
ports, with N temporary student accounts (system users `jbXXXX-s01` …, homes in a temporary folder).
Then every student, at the same time, as a browser would:
  1. logs in through the hub's HTTP API (POST /hub/api/users/<name>/tokens with name and password),
  2. starts a server (POST /hub/api/users/<name>/server) and waits until the hub says it is ready,
  3. opens their own copy of the notebook (contents API) with a kernel (sessions API) and runs its code
     cells top to bottom through the kernel's websocket, as JupyterLab's Run All does,
  4. moves a slider: sets the value of the main LivePanel's first slider in the kernel, which runs the
     panel's update path (recompute, redraw the figures in place), and checks that it ran without error.
Meanwhile the hub's API is timed once a second (its response time under load) and the memory of each
student's processes (their server and kernel) is sampled. Every wait has a deadline; at the end all
servers, the hub, the accounts and the temporary folder are removed, also after an error or Ctrl-C.

Needs root (it creates system users), Node.js and hub/node_modules (`make hub-deps`).
The last line of output is one JSON object: students, errors, ready_s, run_p50_s, run_p95_s, slider_p50_ms,
hub_p50_ms, hub_p95_ms, hub_max_ms, peak_mb_per_student (RSS of server + kernel, the largest student),
peak_pss_mb_per_student (the same counting shared library pages once per sharer), peak_total_mb and more.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import os
import pwd
import secrets
import shutil
import signal
import struct
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HUB_DIR = ROOT / "hub"
POLL_S = 1.0  # how often servers are polled for readiness, the hub is probed and memory is sampled
MB = 1024 * 1024

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


def _percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation, like numpy's default; nan if empty."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


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


class Client:
    """HTTP and websocket calls to the hub and the students' servers through the hub's proxy."""

    def __init__(self, base: str, concurrency: int):
        from tornado.httpclient import AsyncHTTPClient

        AsyncHTTPClient.configure(None, max_clients=max(16, 4 * concurrency))
        self.http = AsyncHTTPClient()
        self.base = base

    async def call(self, method: str, path: str, token: str = "", body: object = None, timeout: float = 60,
                   expect: tuple[int, ...] = (200,)) -> object:
        """JSON in, JSON out; raises RuntimeError naming the call if the status is not expected."""
        from tornado.httpclient import HTTPClientError

        headers = {"Authorization": f"token {token}"} if token else {}
        data = json.dumps(body) if body is not None else ("" if method in ("POST", "PUT", "PATCH") else None)
        try:
            r = await self.http.fetch(self.base + path, method=method, headers=headers, body=data,
                                      request_timeout=timeout, raise_error=False, allow_nonstandard_methods=True)
        except (HTTPClientError, OSError, asyncio.TimeoutError) as exc:
            raise RuntimeError(f"{method} {path}: {exc}") from None
        if r.code not in expect:
            raise RuntimeError(f"{method} {path}: HTTP {r.code} {(r.body or b'')[:200]!r}")
        return json.loads(r.body) if r.body else None

    async def websocket(self, path: str, token: str):
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        url = "ws" + self.base[len("http"):] + path
        return await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"},
                                                   request_timeout=120), max_message_size=256 * MB)


def _decode(frame) -> dict:
    """A kernel message from a websocket frame: JSON text, or jupyter_server's binary framing."""
    if isinstance(frame, str):
        return json.loads(frame)
    nbufs = struct.unpack("!I", frame[:4])[0]
    offsets = struct.unpack("!" + "I" * nbufs, frame[4 : 4 * (nbufs + 1)])
    end = offsets[1] if nbufs > 1 else None
    return json.loads(frame[offsets[0] : end].decode())


class Kernel:
    """The student's kernel, driven through its websocket as JupyterLab does."""

    def __init__(self, ws, username: str):
        self.ws = ws
        self.username = username
        self.session = uuid.uuid4().hex

    def _send(self, msg_type: str, content: dict, channel: str = "shell") -> str:
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "username": self.username, "session": self.session, "msg_type": msg_type,
                  "version": "5.3", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.ws.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": content,
                                          "channel": channel, "buffers": []}))
        return msg_id

    async def _until_done(self, msg_id: str, reply_type: str, deadline: float) -> tuple[dict, list[str], dict | None]:
        """Read until the reply to msg_id and its iopub idle; return (reply content, stdout, error content)."""
        reply, idle, out, error = None, False, [], None
        while reply is None or not idle:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"no {reply_type} within the deadline")
            frame = await asyncio.wait_for(self.ws.read_message(), left)
            if frame is None:
                raise RuntimeError("the kernel's websocket closed")
            if isinstance(frame, str) and msg_id not in frame:
                continue  # another request's message: skip parsing it (a widget's can be megabytes)
            msg = _decode(frame)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["header"]["msg_type"]
            if kind == reply_type:
                reply = msg["content"]
            elif kind == "status" and msg["content"].get("execution_state") == "idle":
                idle = True
            elif kind == "stream":
                out.append(msg["content"].get("text", ""))
            elif kind == "error":
                error = msg["content"]
        return reply, out, error

    async def ready(self, deadline: float) -> None:
        """Wait for the kernel to answer kernel_info (it may still be importing when the socket opens)."""
        while True:
            msg_id = self._send("kernel_info_request", {})
            try:
                await self._until_done(msg_id, "kernel_info_reply", min(deadline, time.monotonic() + 10))
                return
            except (RuntimeError, asyncio.TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError("the kernel did not answer kernel_info in time") from None

    async def execute(self, code: str, deadline: float) -> str:
        """Run `code`; return its stdout; raise RuntimeError with the kernel's error if it failed."""
        msg_id = self._send("execute_request", {"code": code, "silent": False, "store_history": True,
                                                "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
        reply, out, error = await self._until_done(msg_id, "execute_reply", deadline)
        if reply.get("status") != "ok":
            err = error or reply
            raise RuntimeError(f"{err.get('ename', 'error')}: {str(err.get('evalue', ''))[:200]}")
        return "".join(out)


async def run_student(client: Client, s: Student, notebook: str, deadline: float) -> None:
    """Log in, start the server, run the notebook, move the slider; record times or the first error."""
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
            break
        if server is None and model.get("pending") is None:
            raise RuntimeError("the server stopped while starting (see the hub log)")
        if time.monotonic() > deadline:
            raise RuntimeError("the server was not ready before the deadline")
        await asyncio.sleep(POLL_S)
    s.phase = "opening the notebook"
    base = f"/user/{s.name}/api"
    path = f"notebooks/{notebook}"
    nb = (await client.call("GET", f"{base}/contents/{path}?content=1&type=notebook", s.token))["content"]
    code_cells = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                  for c in nb["cells"] if c["cell_type"] == "code"]
    session = await client.call("POST", f"{base}/sessions", s.token, expect=(201,),
                                body={"path": path, "name": notebook, "type": "notebook", "kernel": {"name": "python3"}})
    ws = await client.websocket(f"{base}/kernels/{session['kernel']['id']}/channels?session_id={uuid.uuid4().hex}",
                                s.token)
    try:
        kernel = Kernel(ws, s.name)
        s.phase = "waiting for the kernel"
        await kernel.ready(deadline)
        t_run = time.monotonic()
        for i, code in enumerate(code_cells):
            s.phase = f"running code cell {i + 1} of {len(code_cells)}"
            await kernel.execute(code, deadline)
            s.cells = i + 1
        s.run_s = time.monotonic() - t_run
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


async def simulate(client: Client, students: list[Student], notebook: str, timeout: float) -> tuple[float, list[float]]:
    """All students at once; returns (start time, hub response times in ms)."""
    done = asyncio.Event()
    hub_ms: list[float] = []
    t0 = time.monotonic()
    deadline = t0 + timeout
    probe = asyncio.ensure_future(probe_hub(client, students, done, hub_ms))

    async def one(s: Student) -> None:
        try:
            await asyncio.wait_for(run_student(client, s, notebook, deadline), max(1.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            s.error = f"{s.name}, {s.phase}: did not finish within --timeout {timeout:.0f} s"
        except Exception as exc:  # noqa: BLE001  (one student's failure is counted, the class goes on)
            s.error = f"{s.name}, {s.phase}: {type(exc).__name__}: {exc}"

    await asyncio.gather(*(one(s) for s in students))
    done.set()
    await probe
    # stop the servers through the hub, as the culler or the admin page would
    await asyncio.gather(*(client.call("DELETE", f"/hub/api/users/{s.name}/server", s.token, expect=(202, 204, 400),
                                       timeout=120) for s in students if s.token), return_exceptions=True)
    return t0, hub_ms


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
        "login_p95_s": round(_percentile([s.login_s for s in students if math.isfinite(s.login_s)], 95), 2),
        "run_p50_s": round(_percentile(runs, 50), 1),
        "run_p95_s": round(_percentile(runs, 95), 1),
        "slider_p50_ms": round(_percentile([s.slider_ms for s in ok], 50), 1),
        "slider_p95_ms": round(_percentile([s.slider_ms for s in ok], 95), 1),
        "hub_p50_ms": round(_percentile(hub_ms, 50), 1),
        "hub_p95_ms": round(_percentile(hub_ms, 95), 1),
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


def _load_hub_modules():
    """hub/classroom.py and hub/launch.py from the course checkout (they are not part of the package)."""
    if not (HUB_DIR / "launch.py").exists():
        raise SystemExit("the hub load test runs from a course checkout (hub/ next to attnlib/); none found")
    sys.path.insert(0, str(HUB_DIR))
    import classroom
    import launch

    return classroom, launch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench hub", description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=3, help="simulated students (default 3)")
    parser.add_argument("--notebook", default="01_introduction.ipynb", help="the notebook each student runs")
    parser.add_argument("--timeout", type=float, default=1500, help="seconds for the whole class (default 1500)")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 200:
        parser.error(f"--students must be between 1 and 200, got {args.students}")
    classroom, launch = _load_hub_modules()

    tmp = Path(tempfile.mkdtemp(prefix="attnlib-bench-hub-"))
    os.chmod(tmp, 0o755)  # the students' homes live below it
    settings = classroom.Settings(state=tmp / "state", home_base=tmp / "home", prefix=f"jb{secrets.token_hex(2)}-",
                                  venv=Path(os.environ.get("HUB_VENV") or sys.prefix),
                                  notebooks=ROOT / "notebooks", runtime_base=tmp / "run")
    ports = launch.free_ports(3)
    net = launch.Network(port=ports[0], internal_port=ports[1], proxy_api_port=ports[2], idle_timeout=3600)
    problems = launch.preflight(settings, net)
    if not (settings.notebooks / args.notebook).is_file():
        problems.append(f"no notebook {args.notebook} in {settings.notebooks}")
    if problems:
        shutil.rmtree(tmp, ignore_errors=True)
        print("the hub load test cannot run:", *[f"  - {p}" for p in problems], sep="\n", file=sys.stderr)
        return 2

    students: list[Student] = []
    names: list[str] = []
    proc = None
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # clean up on `kill` as on Ctrl-C
    t_wall = time.monotonic()
    load_before = os.getloadavg()[0]
    try:
        (tmp / "home").mkdir(mode=0o755)
        print(f"creating {args.students} temporary accounts ({settings.prefix}s01 …) in {tmp}", flush=True)
        for i in range(1, args.students + 1):
            names.append(f"s{i:02d}")  # before the account exists: cleanup removes whatever got created
            password = classroom.add_account(settings, names[-1])
            students.append(Student(names[-1], password, uid=pwd.getpwnam(settings.system_user(names[-1])).pw_uid))
        log_path = tmp / "hub.log"
        with open(log_path, "w") as log:
            proc = launch.start_hub(settings, net, log=log, tie_to_parent=True)
        launch.wait_until_up(net, proc, timeout=120)
        print(f"hub up at {net.local_url}; {args.students} students log in, start servers and run {args.notebook} …",
              flush=True)
        sampler = Sampler(students, proc.pid)
        sampler.start()
        client = Client(net.local_url, args.students)
        t0, hub_ms = asyncio.run(simulate(client, students, args.notebook, args.timeout))
        sampler.stop.set()
        sampler.join(10)
        result = report(students, t0, hub_ms, sampler, time.monotonic() - t_wall, args.notebook, load_before)
        for s in students:
            if s.error:
                print(f"ERROR {s.error}", flush=True)
        if result["errors"]:
            kept = ROOT / "build" / "hub-bench" / f"hub-{time.strftime('%Y%m%d-%H%M%S')}.log"
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log_path, kept)
            print(f"the hub's log (with the students' servers') is kept in {kept}", flush=True)
    except classroom.RosterError as exc:
        print(f"the hub load test: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # the hub did not start
        print(f"the hub load test: {exc}", file=sys.stderr)
        if (tmp / "hub.log").exists():
            print((tmp / "hub.log").read_text()[-3000:], file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: cleaning up", file=sys.stderr)
        return 130
    finally:
        if proc is not None:
            launch.stop_hub(proc, settings)
        for name in names:
            classroom.delete_system_user(settings, name)
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result))
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
