"""A student's server and files are theirs alone, on a real hub (tests/hub/conftest.py).

Each refusal is paired with the same request succeeding for its owner, so a hub that refused
everything (or a test that could not reach it) would fail instead of passing.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.hub
ROOT = Path(__file__).resolve().parents[2]
REFUSED = (403, 404)


def test_wrong_password_and_unknown_user_are_refused(hub):
    wrong = [("alice", "not-her-password"), ("alice", ""), ("alice", hub.passwords["bob"]),
             ("mallory", "anything"), ("Robert'); --", "x" * 2000)]
    for name, password in wrong:
        status, page, _ = hub.browser(name, password)
        assert status == 403 and "Invalid username or password" in page, (name, status)
        assert "Traceback" not in page
    for auth in ({"username": "alice", "password": "nope"}, {"username": "mallory", "password": "x"},
                 "not a dict", {"username": ["alice"], "password": None}, None):
        status, body = hub.request("POST", "/hub/api/users/alice/tokens", body={"auth": auth})
        assert status == 403 and "Traceback" not in body, (auth, status)
    status, _, _ = hub.browser("alice", hub.passwords["alice"])
    assert status == 302  # the right password logs in


def test_a_token_gets_nothing_of_b(hub):
    a = hub.tokens["alice"]
    paths = [("GET", "/user/{u}/api/contents/notebooks"), ("GET", "/user/{u}/api/kernels"),
             ("GET", "/user/{u}/files/notebooks/01_introduction.ipynb"), ("GET", "/user/{u}/api/terminals"),
             ("GET", "/hub/api/users/{u}"), ("GET", "/hub/api/users/{u}/tokens")]
    for method, path in paths:
        own, _ = hub.request(method, path.format(u="alice"), a)
        other, body = hub.request(method, path.format(u="bob"), a)
        assert own == 200, (path, own)
        assert other in REFUSED, (path, other, body[:200])
    # and nothing that changes B's state
    for method, path, body in (("POST", "/user/bob/api/kernels", {"name": "python3"}),
                               ("PUT", "/user/bob/api/contents/notebooks/x.txt", {"type": "file", "format": "text",
                                                                                 "content": "from alice"}),
                               ("POST", "/hub/api/users/bob/server", {}), ("DELETE", "/hub/api/users/bob/server", None),
                               ("POST", "/hub/api/users/bob/tokens", {})):
        status, text = hub.request(method, path, a, body=body)
        assert status in REFUSED, (method, path, status, text[:200])
    status, model = hub.request("GET", "/hub/api/users/bob", hub.tokens["bob"])
    assert status == 200 and json.loads(model)["servers"][""]["ready"]  # B's server still runs
    assert not (hub.home("bob") / "notebooks" / "x.txt").exists()


def test_a_browser_session_cannot_open_b_server(hub):
    status, _, browser = hub.browser("alice", hub.passwords["alice"])
    assert status == 302
    own, page = hub.request("GET", "/user/alice/lab/tree/notebooks/01_introduction.ipynb", opener=browser)
    assert own == 200 and "JupyterLab" in page
    for path in ("/user/bob/lab", "/user/bob/api/contents/notebooks", "/hub/user/bob/lab", "/hub/spawn/bob"):
        status, page = hub.request("GET", path, opener=browser)
        assert status in REFUSED, (path, status)
        assert "Traceback" not in page


def test_a_kernel_cannot_read_b_files(hub):
    b_notebook = hub.home("bob") / "notebooks" / "01_introduction.ipynb"
    assert b_notebook.is_file()  # it is there: a refusal below is about permission, not absence
    code = f"""
import json, os
tries = {{
    "list B's home": lambda: os.listdir({str(hub.home("bob"))!r}),
    "read B's notebook": lambda: open({str(b_notebook)!r}).read(10),
    "write in B's home": lambda: open({str(hub.home("bob") / "from_alice.txt")!r}, "w"),
    "read own notebook": lambda: open(os.path.expanduser("~/notebooks/01_introduction.ipynb")).read(10),
    "list B's kernel sockets": lambda: os.listdir({str(hub.settings.runtime_dir("bob"))!r}),
}}
import ipykernel.connect
result = {{"uid": os.getuid(), "transport": json.load(open(ipykernel.connect.get_connection_file()))["transport"]}}
for what, attempt in tries.items():
    try:
        attempt()
        result[what] = "allowed"
    except PermissionError:
        result[what] = "denied"
print("RESULT", json.dumps(result))
"""
    out = hub.run_in_kernel("alice", code)
    result = json.loads(out.split("RESULT ", 1)[1])
    assert result == {"uid": hub.uid("alice"), "transport": "ipc", "list B's home": "denied",
                      "read B's notebook": "denied", "write in B's home": "denied", "read own notebook": "allowed",
                      "list B's kernel sockets": "denied"}
    assert os.stat(hub.home("bob")).st_mode & 0o777 == 0o700


def _servers_of(uid: int) -> list[psutil.Process]:
    """The jupyterhub-singleuser processes running as `uid` (a student's server)."""
    return [p for p in psutil.process_iter(["uids", "cmdline"])
            if p.info["uids"].real == uid and "jupyterhub-singleuser" in " ".join(p.info["cmdline"] or [])]


def test_a_terminal_runs_as_a(hub):
    """A terminal is a shell of A's server, so it is A's system user with the kernel's (denied) access."""
    status, body = hub.request("POST", "/user/alice/api/terminals", hub.tokens["alice"], body={})
    assert status == 200, body[:200]
    name = json.loads(body)["name"]
    try:
        server = _servers_of(hub.uid("alice"))
        assert len(server) == 1
        shells = [c for c in server[0].children(recursive=True) if c.name() in ("bash", "sh")]
        assert shells and all(c.uids().real == hub.uid("alice") for c in shells)
    finally:
        hub.request("DELETE", f"/user/alice/api/terminals/{name}", hub.tokens["alice"])


def test_a_kernel_cannot_use_b_server_directly(hub):
    """Bypassing the proxy: B's server port on 127.0.0.1 refuses A's own server token, and no token."""
    server = _servers_of(hub.uid("bob"))
    port = next(c.laddr.port for c in server[0].net_connections("tcp") if c.status == psutil.CONN_LISTEN)
    code = f"""
import os, urllib.request, urllib.error
def get(headers):
    req = urllib.request.Request("http://127.0.0.1:{port}/user/bob/api/contents/notebooks", headers=headers)
    try:
        return urllib.request.build_opener(urllib.request.HTTPErrorProcessor()).open(req, timeout=30).status
    except urllib.error.HTTPError as e:
        return e.code
print("RESULT", get({{"Authorization": "token " + os.environ["JUPYTERHUB_API_TOKEN"]}}), get({{}}))
"""
    with_token, without = map(int, hub.run_in_kernel("alice", code).split("RESULT ", 1)[1].split())
    assert with_token in REFUSED and without in REFUSED + (302,), (with_token, without)


def _secrets(hub) -> dict[str, str]:
    """The hub's secrets, read as root: what a student must never see."""
    found = {"cookie secret": (hub.settings.state / "jupyterhub_cookie_secret").read_text().strip()}
    for p in psutil.process_iter(["cmdline", "uids"]):
        cmd = " ".join(p.info["cmdline"] or [])
        try:
            env = p.environ()
        except psutil.Error:
            continue
        if "jupyterhub_idle_culler" in cmd and env.get("JUPYTERHUB_API_TOKEN"):
            found["the culler service's API token"] = env["JUPYTERHUB_API_TOKEN"]
        if "configurable-http-proxy" in cmd and env.get("CONFIGPROXY_AUTH_TOKEN"):
            found["the proxy's auth token"] = env["CONFIGPROXY_AUTH_TOKEN"]
        if "jupyterhub-singleuser" in cmd and p.info["uids"].real == hub.uid("bob"):
            found["bob's server token"] = env["JUPYTERHUB_API_TOKEN"]
        if "jupyterhub-singleuser" in cmd and p.info["uids"].real == hub.uid("alice"):
            found["alice's own token"] = env["JUPYTERHUB_API_TOKEN"]
    return found


def test_hub_secrets_are_not_readable_by_students(hub):
    secrets = _secrets(hub)
    assert len(secrets) == 5, sorted(secrets)  # every process and file was found
    own = secrets.pop("alice's own token")
    state = hub.settings.state
    code = f"""
import glob, json, os
seen, denied = [], []
paths = glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline")
paths += [os.path.join(d, f) for d, _, fs in os.walk({str(state)!r}) for f in fs]
paths += glob.glob({str(state / "*")!r}) + [{str(state / "jupyterhub_cookie_secret")!r}, {str(state / "roster.json")!r}]
for path in paths:
    try:
        with open(path, "rb") as f:
            seen.append(f.read().decode("latin-1"))
    except OSError:
        denied.append(path)
try:
    os.listdir({str(state)!r})
    listed = True
except PermissionError:
    listed = False
state_denied = [p for p in denied if p.startswith({str(state)!r})]
print("RESULT", json.dumps({{"listed_state": listed, "state_denied": state_denied}}))
print("SEEN", "\\n".join(seen))
"""
    out = hub.run_in_kernel("alice", code, timeout=180)
    result = json.loads(out.split("RESULT ", 1)[1].split("\n", 1)[0])
    seen = out.split("SEEN ", 1)[1]
    assert own in seen  # the scan does read what A may read (A's own server environment)
    for what, value in secrets.items():
        assert value not in seen, f"a student could read {what}"
    assert result["listed_state"] is False
    assert str(state / "roster.json") in result["state_denied"]
    assert str(state / "jupyterhub_cookie_secret") in result["state_denied"]
    assert Path(state).stat().st_mode & 0o777 == 0o700


def test_each_student_has_an_own_copy_of_both_editions_opening_at_01(hub):
    course = sorted(p.relative_to(hub.settings.notebooks) for p in hub.settings.notebooks.rglob("*.ipynb"))
    assert any(p.parts[0] == "zh" for p in course) and len(course) >= 8
    for name in ("alice", "bob"):
        copy = hub.home(name) / "notebooks"
        assert sorted(p.relative_to(copy) for p in copy.rglob("*.ipynb")) == course
        assert all(p.stat().st_uid == hub.uid(name) for p in copy.rglob("*"))
    req = urllib.request.Request(hub.url + "/user/alice/", headers={"Authorization": f"token {hub.tokens['alice']}"})
    with urllib.request.urlopen(req, timeout=60) as r:  # follows the server's redirect to its default_url
        assert r.url.endswith("/user/alice/lab/tree/notebooks/01_introduction.ipynb"), r.url


def test_reset_gives_a_fresh_copy_and_keeps_the_old_one(hub):
    mine = hub.home("alice") / "notebooks" / "01_introduction.ipynb"
    mine.write_text("{}")  # the student broke their notebook
    env = {**os.environ, **hub.settings.as_env()}
    done = subprocess.run([sys.executable, str(ROOT / "hub" / "roster.py"), "reset", "alice"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert mine.read_bytes() == (hub.settings.notebooks / "01_introduction.ipynb").read_bytes()
    kept = [p for p in hub.home("alice").iterdir() if p.name.startswith("notebooks-before-reset-")]
    assert len(kept) == 1 and (kept[0] / "01_introduction.ipynb").read_text() == "{}"
    assert mine.stat().st_uid == hub.uid("alice")
