"""A real class hub for the security tests: hub/jupyterhub_config.py on free loopback ports.

Two students (alice, bob) and a teacher get temporary system users (`jtXXXX-alice` …) whose homes
live in a temporary folder; both students' servers are started once for the whole session. At the
end the hub is stopped, the accounts and their processes removed, and the folder deleted, also when
a test fails. Needs root, Node.js and `make hub-deps`: without them the tests are skipped with the
reason, except under CI=true, where that is a failure (.ci/run installs them).
"""
from __future__ import annotations

import asyncio
import http.cookiejar
import importlib.util
import os
import pwd
import re
import secrets
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "hub"))

import classroom  # noqa: E402
import launch  # noqa: E402
import limits  # noqa: E402

STUDENTS = ("alice", "bob")
TEACHER = "teacher"


def pytest_configure(config):
    config.addinivalue_line("markers", "hub: starts a real JupyterHub with system users (needs root and Node.js)")


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_or_fail(reason: str) -> None:
    """Skip on a developer's machine; fail in CI, where .ci/run provides root, Node.js and the hub extra."""
    if _in_ci():
        pytest.fail(f"{reason} (CI is set, so this is a failure: .ci/run runs make hub-deps)", pytrace=False)
    pytest.skip(reason)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@dataclass
class ClassHub:
    """The running hub: its URL, the accounts' passwords and API tokens, and helpers to call it."""

    settings: classroom.Settings
    net: launch.Network
    proc: object
    passwords: dict[str, str]
    tokens: dict[str, str] = field(default_factory=dict)
    kernels: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.net.local_url

    def home(self, name: str) -> Path:
        return Path(pwd.getpwnam(self.settings.system_user(name)).pw_dir)

    def uid(self, name: str) -> int:
        return pwd.getpwnam(self.settings.system_user(name)).pw_uid

    def request(self, method: str, path: str, token: str = "", body: object = None, opener=None,
                follow: bool = False) -> tuple[int, str]:
        """(status, body text) of one request; redirects are followed only if `follow`."""
        import json

        headers = {"Authorization": f"token {token}"} if token else {}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        elif method in ("POST", "PUT", "PATCH", "DELETE"):
            data = b""
        opener = opener or urllib.request.build_opener(*([] if follow else [NoRedirect()]))
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with opener.open(req, timeout=60) as r:
                return r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")

    def browser(self, name: str, password: str) -> tuple[int, str, urllib.request.OpenerDirector]:
        """Log in through the login form as a browser does; returns (status, page, opener with its cookies)."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect())
        with opener.open(self.url + "/hub/login", timeout=60) as r:
            page = r.read().decode()
        xsrf = re.search(r'name="_xsrf"\s+value="([^"]+)"', page)
        form = {"username": name, "password": password, **({"_xsrf": xsrf.group(1)} if xsrf else {})}
        req = urllib.request.Request(self.url + "/hub/login", data=urllib.parse.urlencode(form).encode(), method="POST")
        try:
            with opener.open(req, timeout=60) as r:
                status, page = r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            status, page = e.code, e.read().decode(errors="replace")
        following = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        return status, page, following

    def run_in_kernel(self, name: str, code: str, timeout: float = 120) -> str:
        """Run `code` in a kernel on `name`'s server (one kernel per student, started on first use)."""
        from attnlib.bench.hub_client import Client, Kernel

        async def go() -> str:
            client = Client(self.url, 2)
            token = self.tokens[name]
            if name not in self.kernels:
                k = await client.call("POST", f"/user/{name}/api/kernels", token, body={"name": "python3"},
                                      expect=(201,))
                self.kernels[name] = k["id"]
            ws = await client.websocket(f"/user/{name}/api/kernels/{self.kernels[name]}/channels", token)
            try:
                kernel = Kernel(ws, name)
                deadline = time.monotonic() + timeout
                await kernel.ready(deadline)
                return await kernel.execute(code, deadline)
            finally:
                ws.close()

        return asyncio.run(go())


def _requirements_problem(settings: classroom.Settings) -> str | None:
    if sys.platform != "linux":
        return "the class hub runs on Linux"
    if os.geteuid() != 0:
        return "the hub tests create system users and need root"
    if importlib.util.find_spec("jupyterhub") is None or importlib.util.find_spec("jupyterhub_idle_culler") is None:
        return "jupyterhub is not installed in this venv: run make hub-deps"
    problem = launch.node_problem()
    if problem:
        return problem
    return classroom.student_access_problem(settings)


def _course_copy(dest: Path) -> Path:
    """The course's notebooks, with a Chinese edition in zh/ (a copy of 01 until notebooks/zh/ exists)."""
    dest.mkdir()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copyfile(nb, dest / nb.name)
    (dest / "zh").mkdir()
    zh = sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")) or [ROOT / "notebooks" / "01_introduction.ipynb"]
    for nb in zh:
        shutil.copyfile(nb, dest / "zh" / nb.name)
    return dest


async def _start_servers(hub: ClassHub, names: list[str]) -> None:
    from attnlib.bench.hub_client import Client

    client = Client(hub.url, len(names))

    async def one(name: str) -> None:
        reply = await client.call("POST", f"/hub/api/users/{name}/tokens", expect=(200, 201),
                                  body={"auth": {"username": name, "password": hub.passwords[name]},
                                        "expires_in": 3600})
        hub.tokens[name] = reply["token"]
        if name == TEACHER:
            return
        await client.call("POST", f"/hub/api/users/{name}/server", hub.tokens[name], body={}, expect=(201, 202))
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            model = await client.call("GET", f"/hub/api/users/{name}", hub.tokens[name])
            if (model.get("servers", {}).get("") or {}).get("ready"):
                return
            await asyncio.sleep(0.5)
        raise RuntimeError(f"{name}'s server was not ready within 180 s")

    await asyncio.gather(*(one(n) for n in names))


@pytest.fixture(scope="session")
def hub():
    """A running class hub with alice's and bob's servers up; removed with everything it made at the end."""
    tmp = Path(tempfile.mkdtemp(prefix="attnlib-test-hub-"))
    os.chmod(tmp, 0o755)
    settings = classroom.Settings(state=tmp / "state", home_base=tmp / "home", prefix=f"jt{secrets.token_hex(2)}-",
                                  venv=Path(sys.prefix), notebooks=_course_copy(tmp / "course"),
                                  runtime_base=tmp / "run")
    problem = _requirements_problem(settings)
    if problem:
        shutil.rmtree(tmp, ignore_errors=True)
        skip_or_fail(problem)
    ports = launch.free_ports(3)
    net = launch.Network(port=ports[0], internal_port=ports[1], proxy_api_port=ports[2], idle_timeout=3600)
    names = [*STUDENTS, TEACHER]
    proc, log = None, None
    try:
        (tmp / "home").mkdir(mode=0o755)
        passwords = {n: classroom.add_account(settings, n, role="teacher" if n == TEACHER else "student")
                     for n in names}
        log = open(tmp / "hub.log", "w")
        proc = launch.start_hub(settings, net, log=log, tie_to_parent=True)
        launch.wait_until_up(net, proc, timeout=120)
        hub = ClassHub(settings, net, proc, passwords)
        asyncio.run(_start_servers(hub, names))
        yield hub
    except RuntimeError as exc:
        text = (tmp / "hub.log").read_text()[-4000:] if (tmp / "hub.log").exists() else ""
        pytest.fail(f"the test hub did not come up: {exc}\n{text}", pytrace=False)
    finally:
        if proc is not None:
            launch.stop_hub(proc, settings)
        if log is not None:
            log.close()
        tree = limits.Tree.detect()
        for n in names:
            classroom.delete_system_user(settings, n)
            tree.remove(settings.system_user(n))  # a cgroup the hub's stop left behind (seen: alice's, empty)
        shutil.rmtree(tmp, ignore_errors=True)

