"""Execute a notebook (live panels as static figures, ATTNLIB_STATIC=1), cached until it, attnlib or a pin changes."""
from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import Optional

import nbformat
from nbclient.exceptions import CellExecutionError
from nbrun import ROOT, run_notebook

from attnlib.widgets.static import STATIC_ENV

CACHE_VERSION = "1"  # bump to invalidate every cached executed notebook


PIN = re.compile(r'"([A-Za-z0-9_.\[\],-]+\s*==[^"]*)"')  # a pinned requirement in pyproject.toml: "torch==2.13.0"


def cache_key(path: Path) -> str:
    """Hash of the notebook, every file of attnlib, pyproject.toml's pins and this builder's cache version.

    Every file of attnlib, not only its .py: the Chinese strings (locale/zh/*.json) and the panel's view
    (widgets/*.js, *.css) change the executed outputs too; the pins, because another torch or plotly may.
    """
    h = hashlib.sha256(CACHE_VERSION.encode())
    h.update(path.read_bytes())
    for src in sorted((ROOT / "attnlib").rglob("*")):
        if src.is_file() and "__pycache__" not in src.parts:
            h.update(str(src.relative_to(ROOT)).encode())
            h.update(src.read_bytes())
    pyproject = ROOT / "pyproject.toml"
    pins = PIN.findall(pyproject.read_text(encoding="utf-8")) if pyproject.exists() else []
    h.update("\n".join(pins).encode())
    return h.hexdigest()


def execute_static(path: Path, cache_dir: Optional[Path] = None, timeout: int = 600) -> nbformat.NotebookNode:
    """Execute a notebook top to bottom with ATTNLIB_STATIC=1 in its kernel (live panels become static figures).

    Args:
        path: the notebook.
        cache_dir: where executed copies are kept; a copy is reused while its key matches.
        timeout: seconds allowed per cell.
    Returns:
        The executed notebook (widget state stripped).
    """
    key = cache_key(path)
    cached = cache_dir / path.name if cache_dir else None
    if cached and cached.exists():
        nb = nbformat.read(cached, as_version=4)
        if nb.metadata.get("al_static_key") == key:
            print(f"  {path.name}: executed copy is up to date ({cached})")
            return nb
    start = time.perf_counter()
    try:
        nb = run_notebook(path, env={STATIC_ENV: "1"}, timeout=timeout)
    except CellExecutionError as exc:
        raise SystemExit(f"build_site: {path.name} failed when executed with {STATIC_ENV}=1:\n{exc}") from None
    nb.metadata["al_static_key"] = key
    print(f"  {path.name}: executed with {STATIC_ENV}=1 in {time.perf_counter() - start:.1f} s")
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, cached)
    return nb
