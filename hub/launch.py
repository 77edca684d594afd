"""`make hub`: check the machine, make sure a teacher account exists, then run the class's JupyterHub.

    python hub/launch.py            # checks, then JupyterHub in the foreground (Ctrl-C stops it)
    python hub/launch.py --check    # only the checks

Settings come from the environment (the make variables of hub/hub.mk): HUB_IP, HUB_PORT,
HUB_INTERNAL_PORT, HUB_PROXY_API_PORT, HUB_IDLE_TIMEOUT, HUB_SSL_CERT, HUB_SSL_KEY, HUB_TEACHER,
hub/limits.py's HUB_MEM_LIMIT, HUB_CPU_LIMIT, HUB_PIDS_LIMIT, and hub/classroom.py's HUB_STATE,
HUB_HOME_BASE, HUB_USER_PREFIX, HUB_VENV. Every problem found is printed as one plain sentence with its fix,
never as a traceback; the limits per student (or what is lost without them) are printed with the address.
The load test and the security tests use start_hub / wait_until_up / stop_hub from here.
"""
from __future__ import annotations

import argparse
import ctypes
import dataclasses
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import classroom  # noqa: E402
import limits  # noqa: E402

CONFIG = HERE / "jupyterhub_config.py"
PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
NODE_MIN = 20  # configurable-http-proxy 5.3.0 declares "node": ">= 20"


@dataclasses.dataclass(frozen=True)
class Network:
    """Where the hub listens: the public address, and two loopback ports for the hub and proxy APIs."""

    ip: str = "127.0.0.1"
    port: int = 8000
    internal_port: int = 8081
    proxy_api_port: int = 8001
    idle_timeout: int = 3600
    ssl_cert: str = ""
    ssl_key: str = ""

    @classmethod
    def from_env(cls, env: dict | None = None) -> "Network":
        """Network settings from HUB_* variables; raises classroom.RosterError on a non-number."""
        env = os.environ if env is None else env
        values = {}
        for field, var in (("port", "HUB_PORT"), ("internal_port", "HUB_INTERNAL_PORT"),
                           ("proxy_api_port", "HUB_PROXY_API_PORT"), ("idle_timeout", "HUB_IDLE_TIMEOUT")):
            raw = env.get(var, "").strip()
            if raw:
                if not raw.isdigit():
                    raise classroom.RosterError(f"{var} must be a whole number, got {raw!r}")
                values[field] = int(raw)
        return cls(ip=env.get("HUB_IP", "").strip() or cls.ip, ssl_cert=env.get("HUB_SSL_CERT", ""),
                   ssl_key=env.get("HUB_SSL_KEY", ""), **values)

    def as_env(self) -> dict[str, str]:
        return {"HUB_IP": self.ip, "HUB_PORT": str(self.port), "HUB_INTERNAL_PORT": str(self.internal_port),
                "HUB_PROXY_API_PORT": str(self.proxy_api_port), "HUB_IDLE_TIMEOUT": str(self.idle_timeout),
                "HUB_SSL_CERT": self.ssl_cert, "HUB_SSL_KEY": self.ssl_key}

    @property
    def scheme(self) -> str:
        return "https" if self.ssl_cert else "http"

    @property
    def local_url(self) -> str:
        """The URL this machine reaches the hub at (loopback when the hub listens on every address)."""
        host = "127.0.0.1" if self.ip in ("0.0.0.0", "", "::") else self.ip
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def is_loopback(self) -> bool:
        return self.ip.startswith("127.") or self.ip in ("localhost", "::1")


# ------------------------------------------------------------------------------------------ checks


def port_problem(ip: str, port: int, variable: str) -> str | None:
    """A sentence if (ip, port) cannot be listened on, else None."""
    with socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("" if ip == "0.0.0.0" else ip, port))
        except OSError as exc:
            if exc.errno == 98:
                return (f"port {port} on {ip} is in use (another hub or program?): "
                        f"choose another, e.g. make hub {variable}={port + 10}")
            return f"cannot listen on {ip}:{port} ({exc.strerror}); set {variable} to a free port"
    return None


def free_ports(n: int) -> list[int]:
    """n distinct free loopback ports (all held open while choosing, so none is picked twice)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def node_problem() -> str | None:
    """A sentence if Node.js or the pinned configurable-http-proxy is missing or too old."""
    node = shutil.which("node")
    how = ("install Node.js {min}+ and npm (Debian 13 / Ubuntu 24.04: apt-get install nodejs npm; "
           "older releases ship Node 18: use NodeSource's packages), then run make hub-deps").format(min=NODE_MIN)
    if node is None:
        return f"Node.js is not installed: the hub's proxy (configurable-http-proxy) runs on it; {how}"
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
        major = int(version.lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return f"could not run {node} --version; {how}"
    if major < NODE_MIN:
        return f"Node.js {version} is too old for configurable-http-proxy 5.3.0 (needs {NODE_MIN}+); {how}"
    if not PROXY.exists():
        return "configurable-http-proxy is not installed in hub/node_modules: run make hub-deps (npm ci in hub/)"
    return None


def preflight(settings: classroom.Settings, net: Network) -> list[str]:
    """Every reason the hub cannot start here, as sentences with their fix (empty: good to go)."""
    problems = []
    if sys.platform != "linux" or shutil.which("useradd") is None:
        return ["the class hub creates Linux system users (useradd): it runs on a Linux server"]
    if os.geteuid() != 0:
        problems.append("the hub starts each student's server as their own system user, which needs root: "
                        "run sudo make hub")
    if not (settings.venv / "bin" / "jupyterhub-singleuser").exists():
        problems.append(f"JupyterHub is not installed in {settings.venv}: run make hub-deps")
    problem = node_problem()
    if problem:
        problems.append(problem)
    for ip, port, var in ((net.ip, net.port, "HUB_PORT"), ("127.0.0.1", net.internal_port, "HUB_INTERNAL_PORT"),
                          ("127.0.0.1", net.proxy_api_port, "HUB_PROXY_API_PORT")):
        problem = port_problem(ip, port, var)
        if problem:
            problems.append(problem)
    for path, var in ((net.ssl_cert, "HUB_SSL_CERT"), (net.ssl_key, "HUB_SSL_KEY")):
        if path and not Path(path).is_file():
            problems.append(f"{var}={path} is not a file")
    if bool(net.ssl_cert) != bool(net.ssl_key):
        problems.append("HTTPS needs both HUB_SSL_CERT and HUB_SSL_KEY")
    if not problems:
        problem = classroom.student_access_problem(settings)
        if problem:
            problems.append(problem)
    return problems


# ------------------------------------------------------------------------------ running the hub


def _child_setup(tie_to_parent: bool):
    """In the hub's process before exec: default Ctrl-C handling, and SIGTERM when the parent dies."""

    def setup() -> None:
        # A shell starts background jobs with SIGINT ignored; the hub's services and the students'
        # servers would inherit that and make every shutdown wait for its SIGTERM fallback.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if tie_to_parent:  # an interrupted test run or load test leaves no hub behind
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    return setup


def start_hub(settings: classroom.Settings, net: Network, log=None, tie_to_parent: bool = False,
              extra_env: dict | None = None) -> subprocess.Popen:
    """Start JupyterHub with this folder's config; its output goes to `log` (a file) or the terminal."""
    env = {**os.environ, **settings.as_env(), **net.as_env(), **(extra_env or {})}
    cmd = [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)]
    # its own session: a Ctrl-C reaches only us, and we stop the hub with exactly one SIGINT
    return subprocess.Popen(cmd, env=env, cwd=str(settings.state), stdout=log,
                            stderr=subprocess.STDOUT if log else None,
                            preexec_fn=_child_setup(tie_to_parent), start_new_session=True)


def wait_until_up(net: Network, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Return once /hub/health answers through the proxy; raise RuntimeError if the hub exits or times out.

    The hub's own port is asked first: asking the proxy before the hub listens makes it log an error.
    """
    context = ssl._create_unverified_context() if net.ssl_cert else None
    deadline = time.monotonic() + timeout
    for url, ctx in ((f"http://127.0.0.1:{net.internal_port}/hub/health", None),
                     (f"{net.local_url}/hub/health", context)):
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterHub exited during startup (code {proc.returncode}); see its log")
            try:
                with urllib.request.urlopen(url, timeout=5, context=ctx) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterHub did not answer at {url} within {timeout:.0f} s")
            time.sleep(0.5)


def stop_hub(proc: subprocess.Popen, settings: classroom.Settings | None = None) -> None:
    """Stop the hub as Ctrl-C does (it stops the proxy and every server it started); harder if needed."""
    for sig, wait in ((signal.SIGTERM, 90), (signal.SIGKILL, 5)):
        if proc.poll() is not None:
            break
        proc.send_signal(sig)
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
    if settings is not None:  # a proxy left behind by a hub that was killed
        pid_file = settings.state / "jupyterhub-proxy.pid"
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def banner(settings: classroom.Settings, net: Network, limits_line: str = "") -> str:
    """What the teacher reads once the hub is up."""
    roster = classroom.load_roster(settings)
    teachers = sorted(n for n, u in roster.items() if u.get("role") == "teacher")
    students = sorted(n for n, u in roster.items() if u.get("role") == "student")
    url = f"{net.scheme}://{net.ip}:{net.port}" if net.ip not in ("0.0.0.0", "::") else net.local_url
    lines = [
        "",
        f"The class's JupyterHub is up: {url}/",
        f"  teacher (admin): {', '.join(teachers)}; admin page (who is running, stop servers): {url}/hub/admin",
        f"  students on the roster: {len(students)}; add some with  make hub-roster ROSTER=students.txt",
        f"  idle servers are stopped after {net.idle_timeout // 60} min (make hub HUB_IDLE_TIMEOUT=<seconds>)",
    ]
    if limits_line:
        lines.append(f"  {limits_line}")
    if net.ssl_cert:
        lines.append("  HTTPS with the given certificate.")
    else:
        lines += [
            "A public address needs HTTPS in front (passwords would cross the network in clear):",
            "  a reverse proxy with a certificate, e.g. "
            f"`caddy reverse-proxy --from hub.example.org --to 127.0.0.1:{net.port}`, or",
            "  JupyterHub's own: "
            "make hub HUB_IP=0.0.0.0 HUB_PORT=443 HUB_SSL_CERT=fullchain.pem HUB_SSL_KEY=privkey.pem",
        ]
        if not net.is_loopback:
            lines.append(f"WARNING: this hub listens on {net.ip} over plain HTTP.")
    lines.append("Ctrl-C stops the hub and every student's server; their files stay.")
    return "\n".join(lines)


def ensure_teacher(settings: classroom.Settings, name: str) -> str:
    """Create the teacher (admin) account on the first run; return a line with its password, or ''."""
    if classroom.teachers(settings):
        return ""
    password = classroom.add_account(settings, name, role="teacher")
    if not password:
        return ""
    return (f"Teacher (admin) account created: log in as  {name}  with password  {password}\n"
            f"  (shown once; a new one with: make hub-password NAME={name})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make hub", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the hub can start here")
    args = parser.parse_args(argv)
    try:
        settings = classroom.Settings.from_env()
        net = Network.from_env()
        problems = preflight(settings, net)
        if problems:
            print("make hub cannot start:", *[f"  - {p}" for p in problems], sep="\n", file=sys.stderr)
            return 2
        limits_line = limits.Tree.detect().describe(limits.Limits.from_env())
        if args.check:
            print("make hub: all checks passed", limits_line, sep="\n  ")
            return 0
        classroom.ensure_state_dir(settings)
        created = ensure_teacher(settings, classroom.normalize_name(os.environ.get("HUB_TEACHER") or "teacher"))
    except classroom.RosterError as exc:
        print(f"make hub: {exc}", file=sys.stderr)
        return 2
    for sig in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C or `kill`: stop the hub and its servers cleanly
        signal.signal(sig, signal.default_int_handler)
    proc = start_hub(settings, net, tie_to_parent=True)
    try:
        wait_until_up(net, proc, timeout=180)
        print(banner(settings, net, limits_line) + ("\n" + created if created else ""), flush=True)
        return proc.wait()
    except RuntimeError as exc:
        print(f"make hub: {exc}", file=sys.stderr)
        stop_hub(proc, settings)
        return 1
    except KeyboardInterrupt:
        print("\nStopping the hub and the students' servers …", flush=True)
        stop_hub(proc, settings)
        return 0


if __name__ == "__main__":
    sys.exit(main())
