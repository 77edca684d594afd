"""Fixtures for the accessibility tests: the site and the decks built once per session (both editions), Debian's
Chromium (tests/conftest.py), and JupyterLab with each notebook run (tests/browser/conftest.py's fixtures).

Without /usr/bin/chromium (or playwright) the browser tests skip, except when CI is set: then they fail.
AL_A11Y_BUILT=DIR checks a build already there (DIR/site and DIR/slides, e.g. `make site` into build/: DIR=build).
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from attnlib.bench.a11y import build

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "a11y"

collect_ignore_glob = ["*.ipynb", ".ipynb_checkpoints"]

# JupyterLab's fixtures (lab, ran, the `notebook` parametrization) are tests/browser/conftest.py's own, loaded by
# path: one definition of how a notebook is opened and run.
_spec = importlib.util.spec_from_file_location("al_browser_conftest", ROOT / "tests" / "browser" / "conftest.py")
_browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_browser)
lab, ran, pytest_generate_tests = _browser.lab, _browser.ran, _browser.pytest_generate_tests


def pytest_collection_modifyitems(session, config, items):
    """Run this folder's tests after the others (as tests/browser/ and tests/site_browser/ do): tests elsewhere
    start their own Playwright, which Playwright's sync API refuses while pytest-playwright's is running."""
    here = Path(__file__).resolve().parent

    def in_here(item) -> bool:
        return here in Path(str(item.fspath)).resolve().parents

    items[:] = [i for i in items if not in_here(i)] + [i for i in items if in_here(i)]


@pytest.fixture(scope="session")
def built(chromium) -> tuple[Path, Path]:
    """(site, slides): the pages and the decks of both editions, built once into build/a11y/built/."""
    given = os.environ.get("AL_A11Y_BUILT")
    if given:
        return Path(given).resolve() / "site", Path(given).resolve() / "slides"
    try:
        return build(OUT / "built", [])
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def shots() -> Path:
    """build/a11y/shots/ (the JupyterLab notebooks' screenshots of this folder's run)."""
    (OUT / "shots").mkdir(parents=True, exist_ok=True)
    return OUT / "shots"
