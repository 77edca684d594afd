"""Fixtures for the real-browser tests: pytest-playwright's `browser` and `page` on Debian's Chromium, one
JupyterLab server for the session (attnlib/bench/browser/lab.py: copies of the notebooks, its own settings and
runtime folders, windowing off, stopped by pid), and each notebook run once for the tests that look at it.

Without /usr/bin/chromium (or playwright) the tests skip, except when CI is set: then they fail.
Screenshots of every notebook land in build/browser/ (NN.png, and the main panel alone as NN_panel.png; zh-NN
for the Chinese edition).
"""
from __future__ import annotations

import glob
import os
import warnings
from pathlib import Path

import pytest

from attnlib.bench.browser.lab import ROOT, copy_name, course_notebooks, start_lab
from attnlib.bench.browser.notebook import NotebookPage

SHOTS = ROOT / "build" / "browser"

# nbval (`pytest --nbval`) collects every .ipynb under testpaths: nothing in this folder is a notebook
# to validate (the notebooks are copied to a temporary folder outside the repo for the browser).
collect_ignore_glob = ["*.ipynb", ".ipynb_checkpoints"]


def pytest_collection_modifyitems(session, config, items):
    """Run this folder's tests last, after the unit tests and the nbval notebook checks.

    Only this folder's: another module's browser-marked test moved behind these would start its own
    Playwright while pytest-playwright's is still running, which Playwright's sync API refuses.
    """
    here = Path(__file__).resolve().parent

    def in_here(item) -> bool:
        return here in Path(str(item.fspath)).resolve().parents

    items[:] = [i for i in items if not in_here(i)] + [i for i in items if in_here(i)]


def notebook_paths() -> list[Path]:
    """The course notebooks present now: notebooks/NN_*.ipynb, then the Chinese edition's notebooks/zh/NN_*.ipynb
    (or the glob in AL_BROWSER_NOTEBOOKS)."""
    pattern = os.environ.get("AL_BROWSER_NOTEBOOKS")  # a development aid: point at scratch notebooks
    if pattern:
        return sorted(Path(p).resolve() for p in glob.glob(pattern))
    return course_notebooks(editions=True)


def pytest_generate_tests(metafunc):
    """Parametrize `notebook` over the notebooks, per module: each notebook runs once for all its tests."""
    if "notebook" in metafunc.fixturenames:
        metafunc.parametrize("notebook", notebook_paths(), ids=lambda p: Path(copy_name(p)).stem, scope="module")


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


@pytest.fixture(scope="session")
def shots() -> Path:
    """build/browser/, emptied of earlier screenshots: it shows only this run."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    return SHOTS


@pytest.fixture(scope="module")
def ran(notebook, lab, browser, browser_context_args, shots):
    """`notebook` opened in JupyterLab and run with Run All, once for the tests that look at it.

    Yields the NotebookPage (its Run All result is `.run`); screenshots are taken when its tests are done.
    """
    context = browser.new_context(**browser_context_args)
    name = copy_name(notebook)  # notebooks/zh/01_x.ipynb runs as zh-01_x.ipynb
    nb = NotebookPage(context.new_page(), lab, name)
    try:
        nb.open(workspace=f"browser-test-{Path(name).stem}")
        nb.run_all()
        yield nb
        try:
            nb.screenshots(shots, name.split("_")[0])  # NN or zh-NN
        except Exception as exc:  # noqa: BLE001  (a screenshot must not fail the tests)
            warnings.warn(f"screenshot of {name} failed: {exc}", stacklevel=1)
    finally:
        context.close()
        lab.shutdown_kernels_of(name)
