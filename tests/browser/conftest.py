"""Fixtures for the real-browser tests: one JupyterLab server, one headless Chromium, one report.

The server runs on COPIES of the notebooks in a temporary folder (Run All never touches the
committed files), with its own settings, runtime, config and data folders, so the tests neither
read nor change the user's Jupyter setup. It is stopped by its pid at the end, also on failure.
"""
from __future__ import annotations

import glob
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "browser"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--disable-dev-shm-usage",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Printed by a cell appended to each COPY of a notebook: its output can only come from this Run All.
SENTINEL = "AL-BROWSER-RUN-ALL-FINISHED"
SERVER_START_TIMEOUT_S = 90

# nbval (`pytest --nbval`) collects every .ipynb under testpaths: nothing in this folder is a notebook
# to validate (the notebooks are copied to a temporary folder outside the repo for the browser).
collect_ignore_glob = ["*.ipynb", ".ipynb_checkpoints"]


def pytest_collection_modifyitems(session, config, items):
    """Run this folder's tests last, after the unit tests and the nbval notebook checks.

    Only this folder's: another module's browser-marked test moved behind these would start its own
    Playwright while this session's is still running, which Playwright's sync API refuses.
    """
    here = Path(__file__).resolve().parent

    def in_here(item) -> bool:
        return here in Path(str(item.fspath)).resolve().parents

    items[:] = [i for i in items if not in_here(i)] + [i for i in items if in_here(i)]


def pytest_generate_tests(metafunc):
    """Parametrize `notebook` over the notebooks present at collection time."""
    if "notebook" in metafunc.fixturenames:
        metafunc.parametrize("notebook", notebook_paths(), ids=lambda p: p.stem)


def notebook_paths() -> list[Path]:
    """The course notebooks present now: notebooks/NN_*.ipynb (or the glob in AL_BROWSER_NOTEBOOKS)."""
    pattern = os.environ.get("AL_BROWSER_NOTEBOOKS")  # a development aid: point at scratch notebooks
    if pattern:
        return sorted(Path(p).resolve() for p in glob.glob(pattern))
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _skip_or_fail(reason: str) -> None:
    """Skip on a developer's machine; fail in CI, where .ci/run installs Chromium."""
    if _in_ci():
        pytest.fail(f"{reason} (CI is set, so this is a failure: .ci/run installs chromium)", pytrace=False)
    pytest.skip(f"{reason}; install it with `apt-get install -y chromium` to run the browser tests")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    """A running JupyterLab: base URL, token, folder holding the notebook copies, process."""

    url: str
    token: str
    root_dir: Path
    proc: subprocess.Popen
    log_path: Path
    sentinel: str = SENTINEL

    def api(self, method: str, path: str) -> object:
        """Call the server's REST API; returns the decoded JSON body (or None)."""
        req = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels_of(self, name: str) -> None:
        """Delete the sessions (and so the kernels) of notebook `name`, to free CPU and memory."""
        try:
            for s in self.api("GET", "/api/sessions") or []:
                if Path(s.get("path", "")).name == name:
                    self.api("DELETE", f"/api/sessions/{s['id']}")
        except (urllib.error.URLError, OSError):
            pass

    def kernel_state(self, name: str) -> str | None:
        """Execution state of the kernel of notebook `name` ('idle', 'busy', ...), None if it has none."""
        for s in self.api("GET", "/api/sessions") or []:
            if Path(s.get("path", "")).name == name and s.get("kernel"):
                return s["kernel"].get("execution_state")
        return None

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


def _write_settings(settings_dir: Path) -> None:
    """JupyterLab user settings for the test server: render every cell, no news, no update check."""
    files = {
        # Windowing renders only visible cells (JupyterLab >= 4.2): the tests need every cell attached.
        # Start the notebook's kernel on opening, without the "Select Kernel" dialog of JupyterLab 4.6.
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
            "windowingMode": "none",
            "autoStartDefaultKernel": True,
        },
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }
    for rel, content in files.items():
        path = settings_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content))


def _copy_notebook(src: Path, dst_dir: Path) -> Path:
    """Copy a notebook without saved widget state, with a sentinel cell appended at the end."""
    nb = nbformat.read(src, as_version=4)
    nb.metadata.pop("widgets", None)
    nb.cells.append(nbformat.v4.new_code_cell(f"print({SENTINEL!r})"))
    dst = dst_dir / src.name
    nbformat.write(nb, dst)
    return dst


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    """The Debian Chromium binary; skips (or fails when CI is set) if it, or playwright, is missing."""
    if not CHROMIUM.exists():
        _skip_or_fail(f"{CHROMIUM} not found")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _skip_or_fail("the python package playwright is not installed")
    return CHROMIUM


@pytest.fixture(scope="session")
def lab_server(chromium_path, tmp_path_factory) -> LabServer:
    """Start JupyterLab on 127.0.0.1 with a random port and token; stop it by its pid afterwards."""
    base = tmp_path_factory.mktemp("browser-lab")
    root_dir = base / "notebooks"
    root_dir.mkdir()
    for nb in notebook_paths():
        _copy_notebook(nb, root_dir)
    settings_dir = base / "settings"
    _write_settings(settings_dir)
    for d in ("config", "data", "runtime", "ipython", "workspaces"):
        (base / d).mkdir()

    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_DATA_DIR=str(base / "data"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        IPYTHONDIR=str(base / "ipython"),
        # Kernels import attnlib from this checkout even where it is not pip-installed.
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p),
    )
    port, token = _free_port(), secrets.token_hex(24)
    jupyter = Path(sys.executable).parent / "jupyter"
    cmd = [
        str(jupyter), "lab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}",
        f"--ServerApp.root_dir={root_dir}",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    log_path = base / "jupyterlab.log"
    log = open(log_path, "wb")
    # A new session: the server and its helpers form one process group, whose id is the server's pid.
    proc = subprocess.Popen(cmd, cwd=root_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    server = LabServer(f"http://127.0.0.1:{port}", token, root_dir, proc, log_path)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with code {proc.returncode}:\n{server.log_tail()}", pytrace=False)
            try:
                server.api("GET", "/api/status")
                break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {SERVER_START_TIMEOUT_S} s:\n"
                                f"{server.log_tail()}", pytrace=False)
                time.sleep(0.25)
        yield server
    finally:
        _stop_server(server)
        log.close()


def _die_with_parent() -> None:
    """In the server's process (Linux): get SIGTERM if pytest dies without tearing down (SIGKILL,
    crash), so the server and, through its shutdown, its kernels never outlive the test run."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _stop_server(server: LabServer) -> None:
    """Shut kernels down through the API, then SIGTERM the server by pid; SIGKILL its group if stuck."""
    proc = server.proc
    if proc.poll() is None:
        try:
            for k in server.api("GET", "/api/kernels") or []:
                server.api("DELETE", f"/api/kernels/{k['id']}")
        except (urllib.error.URLError, OSError):
            pass
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group created by start_new_session above
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def browser(chromium_path):
    """One headless Chromium for the whole session."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=str(chromium_path), headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
    finally:
        pw.stop()


@dataclass
class BrowserReport:
    """Collects one entry per notebook and writes build/browser/report.json after each one."""

    path: Path
    notebooks: list[dict] = field(default_factory=list)

    def add(self, entry: dict) -> None:
        self.notebooks = [e for e in self.notebooks if e["name"] != entry["name"]] + [entry]
        self.notebooks.sort(key=lambda e: e["name"])
        self.write()

    def write(self) -> None:
        presses = [ms for e in self.notebooks for ms in e.get("latencies_ms", [])]
        data = {
            "notebooks": self.notebooks,
            "latency_ms_median": round(statistics.median(presses), 1) if presses else None,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(data, indent=2) + "\n")


@pytest.fixture(scope="session")
def browser_report(chromium_path) -> BrowserReport:
    """The session's report; screenshots go next to it as NN.png. The folder shows only this run."""
    BUILD.mkdir(parents=True, exist_ok=True)
    for old in [*BUILD.glob("*.png"), BUILD / "report.json"]:
        old.unlink(missing_ok=True)
    report = BrowserReport(BUILD / "report.json")
    yield report
    report.write()
