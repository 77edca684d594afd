"""Execute a notebook (live panels as static figures, ATTNLIB_STATIC=1), cached until it, attnlib or a pin changes."""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Optional

import nbformat
from nbclient.exceptions import CellExecutionError
from nbrun import ROOT, hash_course_inputs, run_notebook

from attnlib.widgets.static import STATIC_ENV

CACHE_VERSION = "1"  # bump to invalidate every cached executed notebook


def cache_key(path: Path) -> str:
    """Hash of the notebook, every file of attnlib, pyproject.toml's pins (nbrun.hash_course_inputs) and this
    builder's cache version."""
    h = hashlib.sha256(CACHE_VERSION.encode())
    h.update(path.read_bytes())
    hash_course_inputs(h, ROOT)
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
        try:
            nb = nbformat.read(cached, as_version=4)
        except (OSError, ValueError):  # unreadable: execute again
            nb = nbformat.v4.new_notebook()
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
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}")  # written whole, then renamed: two builds at once
        nbformat.write(nb, tmp)                                  # (make test runs two workers) never read half
        tmp.replace(cached)
    return nb
