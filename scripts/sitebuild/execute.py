"""Execute a notebook (live panels as static figures, ATTNLIB_STATIC=1), cached until it, attnlib or a pin changes.

Under `make test` the execution is shared with nbval (scripts/nbstore.py): whichever comes first to a notebook
executes it, the other reads it.
"""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Optional

import nbformat
from nbclient.exceptions import CellExecutionError
from nbrun import ROOT, hash_course_inputs, run_notebook
from nbstore import shared_execution

from attnlib.widgets.static import STATIC_ENV

CACHE_VERSION = "1"  # bump to invalidate every cached executed notebook


def cache_key(path: Path) -> str:
    """Hash of the notebook, every file of attnlib, pyproject.toml's pins (nbrun.hash_course_inputs) and this
    builder's cache version."""
    h = hashlib.sha256(CACHE_VERSION.encode())
    h.update(path.read_bytes())
    hash_course_inputs(h, ROOT)
    return h.hexdigest()


def execute_static(path: Path, cache_dir: Optional[Path] = None, timeout: int = 600,
                   wait: bool = True) -> Optional[nbformat.NotebookNode]:
    """Execute a notebook top to bottom with ATTNLIB_STATIC=1 in its kernel (live panels become static figures).

    Args:
        path: the notebook.
        cache_dir: where executed copies are kept; a copy is reused while its key matches.
        timeout: seconds allowed per cell.
        wait: False: return None at once if nbval is executing the notebook now.
    Returns:
        The executed notebook (widget state stripped), or None (see `wait`).
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
    with shared_execution(path, wait) as shared:
        if shared is None:  # nbval is executing it now (wait=False): come back to it
            return None
        nb = executed(path, shared, timeout)
    nb.metadata["al_static_key"] = key
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}")  # written whole, then renamed: two builds at once
        nbformat.write(nb, tmp)                                  # (make test runs two workers) never read half
        tmp.replace(cached)
    return nb


def executed(path: Path, shared, timeout: int) -> nbformat.NotebookNode:
    """The execution nbval kept for `path` (`shared`: nbstore.SharedExecution), or a new one, kept for nbval."""
    nb = shared.read()
    if nb is not None:
        print(f"  {path.name}: the execution nbval made with {STATIC_ENV}=1 is read")
        return nb
    start = time.perf_counter()
    try:
        nb = run_notebook(path, env={STATIC_ENV: "1"}, timeout=timeout)
    except CellExecutionError as exc:
        raise SystemExit(f"build_site: {path.name} failed when executed with {STATIC_ENV}=1:\n{exc}") from None
    print(f"  {path.name}: executed with {STATIC_ENV}=1 in {time.perf_counter() - start:.1f} s")
    shared.keep(nb)
    return nb


def execute_all(paths: list[Path], cache_dir: Optional[Path] = None) -> dict[str, nbformat.NotebookNode]:
    """{name: executed notebook} of `paths`: first those nobody is executing now, then the others, waiting."""
    done = {p.name: execute_static(p, cache_dir, wait=False) for p in paths}
    return {p.name: done[p.name] or execute_static(p, cache_dir) for p in paths}
