"""Fixtures for the accessibility tests: the site and the decks of both editions (tests/conftest.py's `course_build`:
one build per session, shared with tests/site_browser/), Debian's Chromium, and JupyterLab with each notebook run
(tests/conftest.py's `ran`: the Run All that tests/browser/ looks at too).

Without /usr/bin/chromium (or playwright) the browser tests skip, except when CI is set: then they fail.
AL_A11Y_BUILT=DIR checks a build already there (DIR/site and DIR/slides, e.g. `make site` into build/: DIR=build).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

collect_ignore_glob = ["*.ipynb", ".ipynb_checkpoints"]


def pytest_collection_modifyitems(session, config, items):
    """Run this folder's tests after the others (as tests/browser/ and tests/site_browser/ do): tests elsewhere
    start their own Playwright, which Playwright's sync API refuses while pytest-playwright's is running."""
    here = Path(__file__).resolve().parent

    def in_here(item) -> bool:
        return here in Path(str(item.fspath)).resolve().parents

    items[:] = [i for i in items if not in_here(i)] + [i for i in items if in_here(i)]


@pytest.fixture(scope="session")
def built(request) -> tuple[Path, Path]:
    """(site, slides): the pages and the decks of both editions, built once per session (`course_build`)."""
    given = os.environ.get("AL_A11Y_BUILT")
    if given:
        return Path(given).resolve() / "site", Path(given).resolve() / "slides"
    return request.getfixturevalue("course_build")
