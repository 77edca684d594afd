"""Shared test fixtures: the checkers' `run`, and Debian's Chromium for the browser tests (tests/browser/, the
notebooks in JupyterLab; tests/site_browser/, the static site), launched by pytest-playwright; and how
pytest-xdist shares the files out (`make test`: -n 2 --dist loadfile)."""
import os
from pathlib import Path

import pytest

from attnlib.bench.browser.lab import CHROMIUM, CHROMIUM_ARGS


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


# Files that create the hub's system users and start hubs (tests/hub/, and tests/test_commands.py's make hub-bench):
# one worker runs them one after the other, as a single run would.
ONE_AFTER_THE_OTHER = ("tests/hub/", "tests/test_commands.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under --dist loadfile, every test file goes to one worker (a notebook's cells share its kernel, a browser
    module its JupyterLab), and the ONE_AFTER_THE_OTHER files all to the same one."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = super()._split_scope(nodeid)
            return "hub" if file.startswith(ONE_AFTER_THE_OTHER) else file

    return Scheduling(config, log)
