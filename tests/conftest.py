"""Shared test fixtures: the checkers' `run`; Debian's Chromium for the browser tests, launched by
pytest-playwright; JupyterLab with each notebook run once per session (`lab`, `ran`: tests/browser/, tests/a11y/);
and how pytest-xdist
shares the tests out (`make test`: -n 2 --dist loadfile, a notebook's JupyterLab tests on one worker).
"""
from __future__ import annotations

import glob
import os
import warnings
from pathlib import Path
from typing import Optional

import pytest

from attnlib.bench.browser.lab import CHROMIUM, CHROMIUM_ARGS, ROOT, copy_name, course_notebooks, start_lab
from attnlib.bench.browser.notebook import NotebookPage


@pytest.fixture
def run(capsys):
    """Run a checker on an answer and return (result, printed text)."""

    def _run(checker, answer):
        result = checker(answer)
        return result, capsys.readouterr().out

    return _run


def skip_or_fail(reason: str) -> None:
    """Skip on a developer's machine; fail in CI, where .ci/run installs Chromium."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason} (CI is set, so this is a failure: .ci/run installs chromium)", pytrace=False)
    pytest.skip(f"{reason}; install it with `apt-get install -y chromium` to run the browser tests")


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium binary; skips (or fails when CI is set) if it, or playwright, is missing."""
    if not CHROMIUM.exists():
        skip_or_fail(f"{CHROMIUM} not found")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        skip_or_fail("the python package playwright is not installed")
    return CHROMIUM


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, chromium):
    """pytest-playwright launches Debian's Chromium (never a downloaded browser), headless unless --headed."""
    return {**browser_type_launch_args, "executable_path": str(chromium), "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """Every page is 1280x900."""
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}}


# --------------------------------------------------------------------- JupyterLab: one Run All per notebook

# The modules whose tests look at a notebook run in JupyterLab (the `ran` fixture), in the order their tests run on
# each notebook: the descriptions first, on the fresh Run All (a moved slider's description is debounced), then
# axe, then the behaviour checks (the slider ones find its position themselves).
LAB_MODULES = ("tests/browser/test_a11y_panels.py", "tests/browser/test_a11y_static_figures.py",
               "tests/a11y/test_lab_panels.py", "tests/browser/test_notebooks_in_browser.py")
SHOTS = ROOT / "build" / "browser"


def notebook_paths() -> list[Path]:
    """The course notebooks present now: notebooks/NN_*.ipynb, then the Chinese edition's notebooks/zh/NN_*.ipynb
    (or the glob in AL_BROWSER_NOTEBOOKS)."""
    pattern = os.environ.get("AL_BROWSER_NOTEBOOKS")  # a development aid: point at scratch notebooks
    if pattern:
        return sorted(Path(p).resolve() for p in glob.glob(pattern))
    return course_notebooks(editions=True)


def notebook_id(path: Path) -> str:
    """A notebook's test id: its copy's stem (01_introduction, zh-01_introduction)."""
    return Path(copy_name(path)).stem


def pytest_generate_tests(metafunc):
    """Parametrize `notebook` over the notebooks for every test that asks for `ran`."""
    if "ran" in metafunc.fixturenames:
        metafunc.parametrize("notebook", notebook_paths(), ids=notebook_id, scope="module")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """The LAB_MODULES' tests together per notebook (at the place of the first of them), so that one Run All serves
    them all: `ran` keeps the notebook last run open until another is asked for."""
    def key(item) -> Optional[tuple[str, int]]:
        module = Path(str(item.fspath)).resolve().relative_to(ROOT).as_posix()
        if module not in LAB_MODULES or not hasattr(item, "callspec") or "notebook" not in item.callspec.params:
            return None
        return notebook_id(item.callspec.params["notebook"]), LAB_MODULES.index(module)

    lab = [i for i in items if key(i)]
    if not lab:
        return
    order = {k: n for n, k in enumerate(dict.fromkeys(key(i)[0] for i in lab))}
    grouped = sorted(lab, key=lambda i: (order[key(i)[0]], key(i)[1]))  # stable: a module's own order kept
    first = items.index(lab[0])
    rest = [i for i in items if not key(i)]
    items[:] = rest[:first] + grouped + rest[first:]


@pytest.fixture(scope="session")
def lab(chromium, tmp_path_factory):
    """JupyterLab on 127.0.0.1 (random port and token) on copies of the notebooks; stopped at the end."""
    try:
        server = start_lab(tmp_path_factory.mktemp("browser-lab"), notebook_paths())
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


class LabRuns:
    """The notebook run last with Run All, kept open for the next test that asks for the same notebook.

    Screenshots of it land in build/browser/ (NN.png, NN_panel.png; zh-NN) when another notebook is asked for.
    """

    def __init__(self, lab, browser, context_args: dict):
        self.lab, self.browser, self.context_args = lab, browser, context_args
        self.notebook, self.context, self.nb, self.error = None, None, None, None
        SHOTS.mkdir(parents=True, exist_ok=True)
        for old in SHOTS.glob("*.png"):  # build/browser/ shows only this run
            old.unlink()

    def get(self, notebook: Path):
        """`notebook` opened in JupyterLab and run with Run All (once: then the same page)."""
        if notebook != self.notebook:
            self.close()
            self.notebook, self.error = notebook, None
            self.context = self.browser.new_context(**self.context_args)
            name = copy_name(notebook)  # notebooks/zh/01_x.ipynb runs as zh-01_x.ipynb
            self.nb = NotebookPage(self.context.new_page(), self.lab, name)
            try:
                self.nb.open(workspace=f"browser-test-{Path(name).stem}")
                self.nb.run_all()
            except Exception as exc:  # every test of this notebook gets the same error, without another run
                self.error = exc
        if self.error is not None:
            raise self.error
        return self.nb

    def close(self) -> None:
        """Screenshots of the open notebook, then its tab and kernel closed."""
        if self.notebook is None:
            return
        name = self.nb.name
        try:
            if self.error is None:
                self.nb.screenshots(SHOTS, name.split("_")[0])  # NN or zh-NN
        except Exception as exc:  # noqa: BLE001  (a screenshot must not fail the tests)
            warnings.warn(f"screenshot of {name} failed: {exc}", stacklevel=1)
        finally:
            self.context.close()
            self.lab.shutdown_kernels_of(name)
            self.notebook = self.context = self.nb = self.error = None


@pytest.fixture(scope="session")
def lab_runs(lab, browser, browser_context_args):
    """One Run All per notebook for the whole session, shared by every module that asks for `ran`."""
    runs = LabRuns(lab, browser, browser_context_args)
    try:
        yield runs
    finally:
        runs.close()


@pytest.fixture(scope="session")
def shots(lab_runs) -> Path:
    """build/browser/ (emptied when the session's first notebook runs): the JupyterLab tests' screenshots."""
    return SHOTS


@pytest.fixture(scope="module")
def ran(notebook, lab_runs):
    """`notebook` opened in JupyterLab and run with Run All: a NotebookPage (its Run All result is `.run`).

    The same page for every test of the notebook in every module (tests/browser/, tests/a11y/): tests run in
    LAB_MODULES' order on it and leave it usable (a panel's controls may have moved)."""
    return lab_runs.get(notebook)


# --------------------------------------------------------------------- the static site and decks: one build

SITE_BUILD = ROOT / "build" / "test-site"


@pytest.fixture(scope="session")
def course_build(chromium) -> tuple[Path, Path]:
    """(site, slides): the pages and decks of both editions, built into build/test-site/ (as `make site` builds them;
    executions cached in build/executed/), for tests/site_browser/ and tests/a11y/ alike: once per test run, even
    with two workers (the first to ask builds, holding a lock; the other waits, then reads what the run built)."""
    import sys

    from attnlib.bench.a11y import build

    sys.path.insert(0, str(ROOT / "scripts"))
    from nbstore import locked

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # the same in both workers of one `pytest -n 2`
    marker = SITE_BUILD.parent / "test-site.run"  # "<run id> ok" or "<run id> failed: why"
    with locked(SITE_BUILD):
        said = marker.read_text(encoding="utf-8") if run and marker.exists() else ""
        if said.startswith(f"{run} "):
            if said != f"{run} ok":
                pytest.fail(f"the site build of this run failed on the other worker: {said}", pytrace=False)
            return SITE_BUILD / "site", SITE_BUILD / "slides"
        marker.unlink(missing_ok=True)
        try:
            out = build(SITE_BUILD, [])
        except RuntimeError as exc:
            if run:
                marker.write_text(f"{run} failed: {exc}", encoding="utf-8")
            pytest.fail(str(exc), pytrace=False)
        if run:
            marker.write_text(f"{run} ok", encoding="utf-8")
        return out


# Files that create the hub's system users and start hubs (tests/hub/, and tests/test_commands.py's make hub-bench):
# one worker runs them one after the other, as a single run would.
ONE_AFTER_THE_OTHER = ("tests/hub/", "tests/test_commands.py")
# Files that build and look at the site and decks: one worker, which builds once (`course_build`), handed out first
# (the build is the longest single piece of work).
SITE_FILES = ("tests/site_browser/", "tests/a11y/test_motion_zoom.py")
# Files whose every test is a unit of its own: axe on one page or deck of that build. One test each (the fewest),
# they are handed out last and keep both workers busy to the end.
ONE_BY_ONE = ("tests/a11y/test_site_axe.py",)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under --dist loadfile, every test file goes to one worker (a notebook's cells share its kernel), the
    ONE_AFTER_THE_OTHER files all to the same one, the SITE_FILES to one (first), the ONE_BY_ONE tests each alone,
    and every LAB_MODULES test of one notebook (node id ending in [<notebook id>]) to one: its single Run All.
    Units go out largest (most tests) first, as xdist orders them, so the one-test units come last."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _assign_work_unit(self, node) -> None:
            if "site" in self.workqueue:
                self.workqueue.move_to_end("site", last=False)
            super()._assign_work_unit(node)

        def _split_scope(self, nodeid: str) -> str:
            file = super()._split_scope(nodeid)
            if file.startswith(ONE_AFTER_THE_OTHER):
                return "hub"
            if file.startswith(SITE_FILES):
                return "site"
            if file.startswith(ONE_BY_ONE):
                return nodeid
            if file in LAB_MODULES and nodeid.endswith("]") and "[" in nodeid:
                return "lab[" + nodeid.rsplit("[", 1)[1]
            return file

    return Scheduling(config, log)


@pytest.fixture
def one_thread():
    """Tiny tensors: one thread is faster on a shared machine and bit-for-bit repeatable."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
