"""A JupyterLab server of its own, on copies of the notebooks, for driving it in Debian's headless Chromium.

The server runs on COPIES of the notebooks in a folder of the caller's (Run All never touches the committed
files), with its own settings, runtime, config and data folders, so it neither reads nor changes the user's
Jupyter setup. Windowing is off (every cell is rendered). It is stopped by its pid, and on Linux it gets
SIGTERM if the process that started it dies first (PR_SET_PDEATHSIG).
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package (apt-get install -y chromium); no downloaded browser
CHROMIUM_ARGS = ["--disable-dev-shm-usage", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# Printed by a cell appended to each COPY of a notebook: its output can only come from this Run All.
SENTINEL = "AL-BROWSER-RUN-ALL-FINISHED"
START_TIMEOUT_S = 90
SETTINGS = {
    # Windowing renders only visible cells (JupyterLab >= 4.2): every cell must be attached to be checked.
    # Start the notebook's kernel on opening, without the "Select Kernel" dialog of JupyterLab 4.6.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none",
                                                                    "autoStartDefaultKernel": True},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}


def course_notebooks(editions: bool = False) -> list[Path]:
    """The course notebooks notebooks/NN_*.ipynb of this checkout, in order; with `editions`, then those of the
    other languages, notebooks/<language>/NN_*.ipynb (the Chinese edition, notebooks/zh/, when it exists)."""
    english = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    others = sorted((ROOT / "notebooks").glob("[a-z]*/[0-9][0-9]_*.ipynb"))  # zh/…, never .ipynb_checkpoints/
    return english + (others if editions else [])


def copy_name(src: Path) -> str:
    """The name of a notebook's copy on the server: its own name, "zh-" before it for notebooks/zh/NN_*.ipynb
    (the copies share one folder)."""
    return f"{src.parent.name}-{src.name}" if src.parent.parent.name == "notebooks" else src.name


def launch_chromium(playwright):
    """Debian's Chromium, headless, through a started playwright (sync API)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)


@contextmanager
def chromium_context(width: int = 1280, height: int = 900):
    """A browser context (width x height) of Debian's headless Chromium, closed on leaving the block."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            yield browser.new_context(viewport={"width": width, "height": height})
        finally:
            browser.close()


def copy_notebook(src: Path, dst_dir: Path) -> Path:
    """Copy a notebook without saved widget state, with a cell printing SENTINEL appended at the end."""
    nb = nbformat.read(src, as_version=4)
    nb.metadata.pop("widgets", None)
    nb.cells.append(nbformat.v4.new_code_cell(f"print({SENTINEL!r})"))
    dst = dst_dir / copy_name(src)
    nbformat.write(nb, dst)
    return dst


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent() -> None:
    """In the server's process (Linux): get SIGTERM when its parent dies without stopping it (SIGKILL, crash),
    so the server and, through its shutdown, its kernels never outlive the caller."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclass
class LabServer:
    """A running JupyterLab: base URL, token, the folder holding the notebook copies, its process and log."""

    url: str
    token: str
    root_dir: Path
    proc: subprocess.Popen
    log_path: Path

    def api(self, method: str, path: str) -> object:
        """Call the server's REST API; returns the decoded JSON body (or None)."""
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def notebook_url(self, name: str, workspace: str) -> str:
        """The address that opens notebook `name` in a workspace of its own (no other notebook reopens)."""
        from urllib.parse import quote

        return f"{self.url}/lab/workspaces/{quote(workspace)}/tree/{quote(name)}?token={self.token}"

    def kernel_state(self, name: str) -> str | None:
        """Execution state of the kernel of notebook `name` ('idle', 'busy', ...), None if it has none."""
        for s in self.api("GET", "/api/sessions") or []:
            if Path(s.get("path", "")).name == name and s.get("kernel"):
                return s["kernel"].get("execution_state")
        return None

    def shutdown_kernels_of(self, name: str) -> None:
        """Delete the sessions (and so the kernels) of notebook `name`, to free CPU and memory."""
        try:
            for s in self.api("GET", "/api/sessions") or []:
                if Path(s.get("path", "")).name == name:
                    self.api("DELETE", f"/api/sessions/{s['id']}")
        except (urllib.error.URLError, OSError):
            pass

    def log_tail(self, n: int = 40) -> str:
        """The last n lines of the server's log."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self) -> None:
        """Shut kernels down through the API, then SIGTERM the server by pid; SIGKILL its group if stuck."""
        if self.proc.poll() is not None:
            return
        try:
            for k in self.api("GET", "/api/kernels") or []:
                self.api("DELETE", f"/api/kernels/{k['id']}")
        except (urllib.error.URLError, OSError):
            pass
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group created by start_new_session
            self.proc.wait(timeout=10)


def prepare(base: Path, notebooks: list[Path]) -> dict[str, str]:
    """Copy the notebooks into base/notebooks, write the settings; return the server's environment."""
    (base / "notebooks").mkdir(parents=True)
    for nb in notebooks:
        copy_notebook(nb, base / "notebooks")
    for rel, content in SETTINGS.items():
        path = base / "settings" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content))
    for d in ("config", "data", "runtime", "ipython", "workspaces"):
        (base / d).mkdir()
    return dict(os.environ, JUPYTER_CONFIG_DIR=str(base / "config"), JUPYTER_DATA_DIR=str(base / "data"),
                JUPYTER_RUNTIME_DIR=str(base / "runtime"), IPYTHONDIR=str(base / "ipython"),
                # kernels import attnlib from this checkout even where it is not pip-installed
                PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))


def start_lab(base: Path, notebooks: list[Path]) -> LabServer:
    """Start JupyterLab on 127.0.0.1 (random port and token) on copies of `notebooks` in `base`.

    Args:
        base: an empty folder for the copies, the server's settings, runtime files and log.
        notebooks: the notebooks to copy.
    Returns:
        The server, answering its API. Raises RuntimeError (with the log's tail) if it exits or stays silent.
    """
    env = prepare(base, notebooks)
    port, token = free_port(), secrets.token_hex(24)
    cmd = [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--allow-root",
           "--ServerApp.ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0", f"--ServerApp.token={token}",
           f"--ServerApp.root_dir={base / 'notebooks'}", f"--LabApp.user_settings_dir={base / 'settings'}",
           f"--LabApp.workspaces_dir={base / 'workspaces'}", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly"]
    log_path = base / "jupyterlab.log"
    with open(log_path, "wb") as log:  # the child keeps its own copy of the descriptor
        # a new session: the server and its helpers form one process group, whose id is the server's pid
        proc = subprocess.Popen(cmd, cwd=base / "notebooks", env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
    server = LabServer(f"http://127.0.0.1:{port}", token, base / "notebooks", proc, log_path)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {proc.returncode}:\n{server.log_tail()}")
        try:
            server.api("GET", "/api/status")
            return server
        except (urllib.error.URLError, OSError):
            if time.monotonic() > deadline:
                server.stop()
                log = server.log_tail()
                raise RuntimeError(f"JupyterLab did not answer within {START_TIMEOUT_S} s:\n{log}") from None
            time.sleep(0.25)
