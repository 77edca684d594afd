"""The real-browser tests' folder: pytest-playwright's `browser` and `page` on Debian's Chromium, one JupyterLab
server for the session (`lab`: attnlib/bench/browser/lab.py: copies of the notebooks, its own settings and runtime
folders, windowing off, stopped by pid), and each notebook run once for every test that looks at it, here and in
tests/a11y/ (`ran`, parametrized over `notebook`): those fixtures are tests/conftest.py's.

Without /usr/bin/chromium (or playwright) the tests skip, except when CI is set: then they fail.
Screenshots of every notebook land in build/browser/ (NN.png, and the main panel alone as NN_panel.png; zh-NN
for the Chinese edition).
"""
from __future__ import annotations

from pathlib import Path

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
