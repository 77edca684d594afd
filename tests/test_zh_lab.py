"""`make lab-zh` shows JupyterLab's own interface in Chinese, `make lab` in English; neither asks about news.

The servers run the Makefile's own command (`make -n lab` / `make -n lab-zh`), on a free port with a token,
their user settings and runtime files in a temporary folder. The settings come from jupyter/lab-en and
jupyter/lab-zh (overrides.json, passed as --LabApp.app_settings_dir). The browser tests look at the menu bar
in headless Chromium (screenshots build/zh-lab/lab.png and lab-zh.png) and check the bold lint of
scripts/zh_edition.py against JupyterLab's markdown renderer (build/zh-lab/bold-lint.png).
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "build" / "zh-lab"  # not build/browser/, which tests/browser empties when it starts
CHROMIUM = Path("/usr/bin/chromium")
MENUS = {"lab": ["File", "Edit", "View", "Run", "Kernel", "Settings", "Help"],
         "lab-zh": ["文件", "编辑", "查看", "运行", "内核", "设置", "帮助"]}
NOTIFICATION = "@jupyterlab/apputils-extension:notification"
TRANSLATION = "@jupyterlab/translation-extension:plugin"


def make_command(target: str, port: int = 8888) -> list[str]:
    """The `jupyter lab …` command that `make <target>` runs (from `make -n`, continuation lines joined)."""
    out = subprocess.run(["make", "-n", "-s", target, f"PORT={port}", "ROOT_FLAG=--allow-root"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    lines = out.replace("\\\n", " ").splitlines()
    found = [line for line in lines if "jupyter lab" in line]
    assert len(found) == 1, f"`make -n {target}` should run one `jupyter lab` command, got:\n{out}"
    return shlex.split(found[0])


def option(command: list[str], name: str) -> str:
    """The value of --name=value in a command (the last one wins, as in traitlets)."""
    values = [a.split("=", 1)[1] for a in command if a.startswith(f"--{name}=")]
    assert values, f"{name} not set in {command}"
    return values[-1]


def test_the_two_editions_open_their_own_notebook_01():
    assert option(make_command("lab"), "LabApp.default_url") == "/lab/tree/01_introduction.ipynb"
    zh = make_command("lab-zh")
    assert option(zh, "LabApp.default_url") == "/lab/tree/zh/01_introduction.ipynb"
    assert option(zh, "ServerApp.root_dir") == "notebooks"  # both editions visible; zh links to ../ resolve
    assert (ROOT / "notebooks" / "zh" / "01_introduction.ipynb").exists(), \
        "make lab-zh opens notebooks/zh/01_introduction.ipynb: run `python scripts/zh_edition.py build 01 --execute`"
    for target, locale in (("lab", "en"), ("lab-zh", "zh_CN")):
        overrides = json.loads((Path(option(make_command(target), "LabApp.app_settings_dir"))
                                / "overrides.json").read_text())
        assert overrides[TRANSLATION]["locale"] == locale
        assert overrides[NOTIFICATION] == {"fetchNews": "false", "checkForUpdates": False}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server started with `make <target>`'s command, stopped by its pid."""

    def __init__(self, target: str, tmp: Path, extra: tuple[str, ...] = ()):
        self.port, self.token = free_port(), secrets.token_hex(16)
        for d in ("config", "data", "runtime", "user-settings", "workspaces"):
            (tmp / d).mkdir(parents=True, exist_ok=True)
        replaced = {a.split("=", 1)[0] for a in extra}
        cmd = [a for a in make_command(target, self.port) if a.split("=", 1)[0] not in replaced]
        cmd = [*cmd, "--no-browser", "--ServerApp.port_retries=0",
               f"--ServerApp.token={self.token}", f"--LabApp.user_settings_dir={tmp / 'user-settings'}",
               f"--LabApp.workspaces_dir={tmp / 'workspaces'}", *extra]
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_DATA_DIR=str(tmp / "data"),
                   JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), LANG="C.UTF-8", LC_ALL="C.UTF-8")
        env.pop("JUPYTERLAB_SETTINGS_DIR", None)
        self.log = open(tmp / "lab.log", "wb")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                self.get("/api/status")
                return
            except (urllib.error.URLError, OSError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"JupyterLab did not start: {(tmp / 'lab.log').read_text()[-2000:]}") from None
                time.sleep(0.5)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}{'&' if '?' in path else '?'}token={self.token}"

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(self.url(path), timeout=10) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


@pytest.fixture(scope="module", params=["lab", "lab-zh"])
def lab(request, tmp_path_factory):
    server = Lab(request.param, tmp_path_factory.mktemp(request.param))
    server.target = request.param
    yield server
    server.stop()


def default(lab: Lab, plugin: str, name: str):
    """A setting's default as the server gives it to JupyterLab (the schema's, after overrides.json)."""
    return lab.get(f"/lab/api/settings/{plugin}")["schema"]["properties"][name].get("default")


def test_the_server_serves_the_edition_s_settings(lab):
    assert default(lab, TRANSLATION, "locale") == {"lab": "en", "lab-zh": "zh_CN"}[lab.target]
    assert default(lab, NOTIFICATION, "fetchNews") == "false"
    assert default(lab, NOTIFICATION, "checkForUpdates") is False
    if lab.target == "lab-zh":  # the language pack is installed and serves Chinese
        pack = lab.get("/lab/api/translations/zh_CN")["data"]
        assert len(pack.get("jupyterlab", {})) > 1000, "jupyterlab-language-pack-zh-CN serves too few strings"


# Run in a child process: its own Playwright, whatever Playwright (pytest-playwright's) this process runs.
LOOK = """
import json, sys
from playwright.sync_api import sync_playwright
url, shot = sys.argv[1:]
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                args=["--disable-dev-shm-usage", "--no-sandbox", "--disable-gpu"])
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(url, timeout=120_000)
    page.wait_for_selector(".lm-MenuBar-itemLabel", timeout=120_000)
    page.wait_for_timeout(5000)  # without the overrides JupyterLab asks about news a few seconds after it starts
    labels = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
    toasts = page.locator(".Toastify__toast").all_inner_texts()
    page.screenshot(path=shot)
    browser.close()
print(json.dumps({"labels": labels, "toasts": toasts}))
"""


@pytest.mark.browser
def test_the_menus_are_in_the_edition_s_language_and_no_news_prompt(lab):
    if not CHROMIUM.exists():
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("/usr/bin/chromium is missing (CI is set: .ci/run installs it)")
        pytest.skip("needs /usr/bin/chromium")
    pytest.importorskip("playwright.sync_api")
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{lab.target}.png"
    run = subprocess.run([sys.executable, "-c", LOOK, lab.url("/lab"), str(shot)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert [m for m in MENUS[lab.target] if m in seen["labels"]] == MENUS[lab.target], seen["labels"]
    assert not seen["toasts"], f"a notification is shown: {seen['toasts']} (see {shot})"


# The bold lint's rule against JupyterLab's own markdown renderer: each case of tests/test_zh_edition.py's
# bold lint, one markdown cell each, rendered in a notebook; the lint must flag exactly the unrendered ones.
RENDER = """
import json, sys
from playwright.sync_api import sync_playwright
url, count, shot = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                args=["--disable-dev-shm-usage", "--no-sandbox", "--disable-gpu"])
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(url, timeout=120_000)
    cells = page.locator(".jp-MarkdownCell .jp-RenderedMarkdown")
    page.wait_for_function(f"document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown').length >= {count}",
                           timeout=120_000)
    html = None
    for _ in range(60):  # rendering (and typesetting the math) goes on after the cells appear: wait until still
        now = [cells.nth(i).inner_html() for i in range(count)]
        if now == html and all(h.strip() for h in now):
            break
        html = now
        page.wait_for_timeout(1000)
    page.screenshot(path=shot)
    browser.close()
print(json.dumps(html))
"""
BOLD_CASES = ["**注意，**这里", "**注意**，这里", "**注意，** 这里", "这是**“查询”**向量", "这是 **“查询”** 向量",
              "**Learning objectives.** After", "**注意：**$x$ 很大", "**凸组合。**它的权重"]


@pytest.mark.browser
def test_the_bold_lint_predicts_what_jupyterlab_renders(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("needs /usr/bin/chromium")
    pytest.importorskip("playwright.sync_api")
    from test_zh_edition import zh

    root = tmp_path / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_markdown_cell(f"{i}. {text}") for i, text in enumerate(BOLD_CASES)]
    nbformat.write(nb, root / "bold.ipynb")
    lab = Lab("lab-zh", tmp_path, (f"--ServerApp.root_dir={root}",))
    try:
        SHOTS.mkdir(parents=True, exist_ok=True)
        run = subprocess.run([sys.executable, "-c", RENDER, lab.url("/lab/tree/bold.ipynb"), str(len(BOLD_CASES)),
                              str(SHOTS / "bold-lint.png")], capture_output=True, text=True, timeout=300)
    finally:
        lab.stop()
    assert run.returncode == 0, run.stderr[-2000:]
    html = json.loads(run.stdout.strip().splitlines()[-1])
    rendered = {text: "<strong>" in h and "**" not in h for text, h in zip(BOLD_CASES, html)}
    predicted = {text: not zh.bold_problems(text) for text in BOLD_CASES}
    assert rendered == predicted, {t: (rendered[t], predicted[t], h) for t, h in zip(BOLD_CASES, html)}
