"""Fixtures for the static site in a browser: the site of both editions (tests/conftest.py's `course_build`, one
build per session shared with tests/a11y/), Debian's Chromium.

Without /usr/bin/chromium (or playwright) the tests skip, except when CI is set: then they fail.
Screenshots land in build/site-browser/ (NN[_zh]_<control>_before.png / _after.png).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SHOTS = ROOT / "build" / "site-browser"

collect_ignore_glob = ["*.ipynb", ".ipynb_checkpoints"]


def pytest_collection_modifyitems(session, config, items):
    """Run this folder's tests after the others (like tests/browser/): tests/test_site.py fits decks with its own
    Playwright, which Playwright's sync API refuses while pytest-playwright's (these tests') is running."""
    here = Path(__file__).resolve().parent

    def in_here(item) -> bool:
        return here in Path(str(item.fspath)).resolve().parents

    items[:] = [i for i in items if not in_here(i)] + [i for i in items if in_here(i)]


@pytest.fixture(scope="session")
def site(request) -> Path:
    """The course site (both editions when notebooks/zh/ exists), built once per session (`course_build`).

    AL_SITE_BROWSER_SITE=DIR tests a site already built there instead (a development aid: `make site` output).
    """
    built = os.environ.get("AL_SITE_BROWSER_SITE")
    return Path(built).resolve() if built else request.getfixturevalue("course_build")[0]


@pytest.fixture(scope="session")
def shots() -> Path:
    """build/site-browser/, emptied of earlier screenshots: it shows only this run."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    return SHOTS
