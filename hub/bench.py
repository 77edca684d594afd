"""A class on one server, simulated on loopback: `python -m attnlib.bench hub --students N` (`make hub-bench`).

`python hub/bench.py [--students 3] [--notebook 01_introduction.ipynb] [--timeout 1500] [--fault memory|cpu|fork]`,
which is what
`python -m attnlib.bench hub …` runs (the load test needs the checkout's hub/; the library only starts it).

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

With --fault, the last of the N students does the fault (attnlib/bench/hub_fault.py) while the other N-1 run the
notebook; then the others run it once more in fresh kernels without the fault. The JSON adds fault,
fault_contained, hub_ok, the fault's details, run_p95_s_no_fault (figures other than those two runs are the
others' in the run with the fault), and the others' CPU-seconds per run (cpu_s_p50, cpu_s_p50_no_fault) from
their cgroups, since times on a loaded machine are noisy. The run without the fault comes second (warm caches):
if anything it makes the fault look more costly than it is.

This script is the command line (accounts, hub, cleanup); attnlib/bench/hub_class.py simulates the class and
reports, attnlib/bench/hub_client.py speaks HTTP and websocket to the hub and drives the kernels.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import pwd
import secrets
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # classroom and launch beside this script, as launch.py does

import classroom  # noqa: E402
import launch  # noqa: E402
import limits  # noqa: E402

from attnlib.bench.hub_class import (  # noqa: E402
    Sampler,
    Student,
    guarded,
    report,
    run_notebook,
    simulate,
    stop_servers,
)
from attnlib.bench.hub_client import Client  # noqa: E402
from attnlib.bench.hub_fault import FAULTS, contained, run_fault  # noqa: E402
from attnlib.measure import percentile  # noqa: E402


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line: --students, --notebook, --timeout (exits with a usage message if out of range)."""
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench hub", description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=3, help="simulated students (default 3)")
    parser.add_argument("--notebook", default="01_introduction.ipynb", help="the notebook each student runs")
    parser.add_argument("--timeout", type=float, default=1500, help="seconds for the whole class (default 1500)")
    parser.add_argument("--fault", choices=FAULTS, help="one student allocates 20 GB, busies 4 cores or forks "
                        "without end while the others work")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 200:
        parser.error(f"--students must be between 1 and 200, got {args.students}")
    if args.fault and args.students < 2:
        parser.error("--fault needs --students 2 or more (one at fault, the others working)")
    return args


def _prepare(notebook: str) -> tuple[Path, object, object, list[str]]:
    """A temporary folder, the hub's settings below it and free loopback ports; returns them and any problems."""
    tmp = Path(tempfile.mkdtemp(prefix="attnlib-bench-hub-"))
    os.chmod(tmp, 0o755)  # the students' homes live below it
    settings = classroom.Settings(state=tmp / "state", home_base=tmp / "home", prefix=f"jb{secrets.token_hex(2)}-",
                                  venv=Path(os.environ.get("HUB_VENV") or sys.prefix),
                                  notebooks=ROOT / "notebooks", runtime_base=tmp / "run")
    ports = launch.free_ports(3)
    net = launch.Network(port=ports[0], internal_port=ports[1], proxy_api_port=ports[2], idle_timeout=3600)
    problems = launch.preflight(settings, net)
    if not (settings.notebooks / notebook).is_file():
        problems.append(f"no notebook {notebook} in {settings.notebooks}")
    return tmp, settings, net, problems


def _add_students(settings, count: int, names: list[str], students: list[Student]) -> None:
    """Create the accounts s01 … one by one, appending each name to `names` before its account exists."""
    for i in range(1, count + 1):
        names.append(f"s{i:02d}")  # before the account exists: cleanup removes whatever got created
        password = classroom.add_account(settings, names[-1])
        students.append(Student(names[-1], password, uid=pwd.getpwnam(settings.system_user(names[-1])).pw_uid))


def _measure(students: list[Student], hub_pid: int, url: str, args: argparse.Namespace, t_wall: float,
             load_before: float) -> dict:
    """Run the class against the hub at `url` while sampling memory; return the report."""
    sampler = Sampler(students, hub_pid)
    sampler.start()
    client = Client(url, args.students)
    t0, hub_ms = asyncio.run(simulate(client, students, args.notebook, args.timeout))
    sampler.stop.set()
    sampler.join(10)
    return report(students, t0, hub_ms, sampler, time.monotonic() - t_wall, args.notebook, load_before)


def _cpu_seconds(counters, others: list[Student], before: dict) -> list[float]:
    """CPU-seconds each of `others` used since `before` (their cgroups' counters)."""
    return [(counters(s.name)["cpu_ns"] - before[s.name]) / 1e9 for s in others]


def _measure_fault(settings, students: list[Student], proc, net, args: argparse.Namespace, t_wall: float,
                   load_before: float) -> dict:
    """The class with one student at fault, then the others again without it; the report with both."""
    tree, lim = limits.Tree.detect(), limits.Limits.from_env()

    def counters(name: str) -> dict[str, int]:
        return tree.counters(settings.system_user(name))

    faulty, others = students[-1], students[:-1]
    sampler = Sampler(students, proc.pid)
    sampler.start()
    found: dict = {}

    async def fault(deadline: float) -> None:
        found.update(await run_fault(Client(net.local_url, 2), faulty, args.fault, others, args.notebook, deadline,
                                     counters, lim.mem_text))

    async def class_with_fault() -> tuple[float, list[float]]:
        return await simulate(Client(net.local_url, args.students), others, args.notebook, args.timeout,
                              extra=lambda deadline: guarded(faulty, fault(deadline), deadline, args.timeout),
                              stop=False)

    cpu0 = {s.name: counters(s.name)["cpu_ns"] for s in others}
    t0, hub_ms = asyncio.run(class_with_fault())
    result = report(others, t0, hub_ms, sampler, time.monotonic() - t_wall, args.notebook, load_before)
    result["cpu_s_p50"] = round(percentile(_cpu_seconds(counters, others, cpu0), 50), 1)
    result["fault_contained"] = bool(found) and contained(args.fault, found, others, counters, lim.cpu_cores)
    ok_before = [s for s in others if not s.error]

    async def class_without_fault() -> list[float]:
        client = Client(net.local_url, args.students)
        deadline = time.monotonic() + args.timeout
        await asyncio.gather(*(guarded(s, run_notebook(client, s, args.notebook, deadline, slider=False), deadline,
                                       args.timeout) for s in ok_before))
        cpu_s = _cpu_seconds(counters, ok_before, cpu0)  # before the servers stop: a stopped server's group goes
        await stop_servers(client, students)
        return cpu_s

    for s in ok_before:
        s.run_s = float("nan")
    cpu0 = {s.name: counters(s.name)["cpu_ns"] for s in ok_before}
    hub_ok = proc.poll() is None
    cpu_s_no_fault = asyncio.run(class_without_fault())
    sampler.stop.set()
    sampler.join(10)
    hub_ok = hub_ok and proc.poll() is None
    result.update({
        "fault": args.fault, "hub_ok": hub_ok, "fault_contained": result["fault_contained"] and hub_ok,
        "run_p95_s_no_fault": round(percentile([s.run_s for s in ok_before if not s.error], 95), 1),
        "cpu_s_p50_no_fault": round(percentile(cpu_s_no_fault, 50), 1),
        "errors_no_fault": sum(1 for s in ok_before if s.error),
        "limits": tree.describe(lim), "fault_details": {**found, "error": faulty.error},
        "students": args.students, "others": len(others),
    })
    return result


def _show_errors(students: list[Student], result: dict, log_path: Path) -> None:
    """Print each student's error; if any, keep the hub's log in build/hub-bench/."""
    for s in students:
        if s.error:
            print(f"ERROR {s.error}", flush=True)
    if result["errors"]:
        kept = ROOT / "build" / "hub-bench" / f"hub-{time.strftime('%Y%m%d-%H%M%S')}.log"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log_path, kept)
        print(f"the hub's log (with the students' servers') is kept in {kept}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the load test; the last line printed is the report as JSON.

    Args:
        argv: the options after `hub` (default: sys.argv[1:]).

    Returns:
        0 if every student finished, 1 if some failed, 2 if the test cannot run, 130 if interrupted.
    """
    args = _parse_args(argv)
    tmp, settings, net, problems = _prepare(args.notebook)
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
        _add_students(settings, args.students, names, students)
        log_path = tmp / "hub.log"
        with open(log_path, "w") as log:
            proc = launch.start_hub(settings, net, log=log, tie_to_parent=True)
        launch.wait_until_up(net, proc, timeout=120)
        print(f"hub up at {net.local_url}; {args.students} students log in, start servers and run {args.notebook} …",
              flush=True)
        if args.fault:
            result = _measure_fault(settings, students, proc, net, args, t_wall, load_before)
        else:
            result = _measure(students, proc.pid, net.local_url, args, t_wall, load_before)
        _show_errors(students, result, log_path)
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
        tree = limits.Tree.detect()
        for name in names:
            classroom.delete_system_user(settings, name)
            tree.remove(settings.system_user(name))
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result))
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
