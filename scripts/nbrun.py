"""The one way the scripts execute a notebook: a fresh kernel, the notebook's folder as working directory.

Used by execute_notebooks.py (writes the result back), the site build (sitebuild/execute.py: live panels
as static figures) and cpu_audit.py (under CPU variants, with the rounding audit on). nbval_other_cpu.py
does not execute notebooks itself: nbval does.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
COURSE_GLOB = "notebooks/[0-9][0-9]_*.ipynb"  # the course, in order
EVERY_GLOB = ("notebooks/*.ipynb", "notebooks/zh/*.ipynb")  # every notebook nbval checks, editions included
PIN = re.compile(r'"([A-Za-z0-9_.\[\],-]+\s*==[^"]*)"')  # a pinned requirement in pyproject.toml: "torch==2.13.0"


def hash_course_inputs(h, root: Path = ROOT) -> None:
    """Feed `h` (a hashlib object) every file of attnlib and pyproject.toml's pins, under checkout `root`.

    Every file of attnlib, not only its .py: the Chinese strings (locale/zh/*.json) and the panel's view
    (widgets/*.js, *.css) change the executed outputs too; the pins, because another torch or plotly may.
    The executed-notebook caches (sitebuild/execute.py, nbcache.py) both key on this.
    """
    for src in sorted((root / "attnlib").rglob("*")):
        if src.is_file() and "__pycache__" not in src.parts:
            h.update(str(src.relative_to(root)).encode())
            h.update(src.read_bytes())
    pyproject = root / "pyproject.toml"
    pins = PIN.findall(pyproject.read_text(encoding="utf-8")) if pyproject.exists() else []
    h.update("\n".join(pins).encode())


def course_notebooks() -> list[Path]:
    """The course notebooks notebooks/NN_*.ipynb, in course order."""
    return sorted(ROOT.glob(COURSE_GLOB))


def every_notebook() -> list[Path]:
    """Every notebook nbval checks: notebooks/*.ipynb, then notebooks/zh/*.ipynb."""
    return [p for pattern in EVERY_GLOB for p in sorted(ROOT.glob(pattern))]


def run_notebook(path: Path, *, env: Mapping[str, str] | None = None, timeout: int = 600,
                 allow_errors: bool = False) -> nbformat.NotebookNode:
    """Execute a notebook top to bottom in a fresh kernel; return it without saved widget state.

    Args:
        path: the notebook; its folder is the kernel's working directory. Nothing is written.
        env: variables for the kernel, on top of this process's environment (which stays as it is).
        timeout: seconds allowed per cell.
        allow_errors: keep a failing cell's error as its output and go on (else CellExecutionError is raised).
    Returns:
        The executed notebook; `metadata.widgets` is removed (saved widget state embeds plotly.js, ~5 MB
        per figure).
    """
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env=dict(os.environ, **(env or {})))  # the kernel's environment, replaced as a whole
    nb.metadata.pop("widgets", None)
    return nb
