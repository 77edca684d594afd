"""Notebook executions kept on disk (build/nbcache/): their keys, their files, and a lock per notebook.

Shared by the pytest plugin scripts/nbcache.py (nbval's executions) and the site builder
(scripts/sitebuild/execute.py), which reads an execution nbval made, or makes one and keeps it for nbval: the one
who comes first under the notebook's lock executes, the other reads (`shared_execution`).
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import nbformat
from nbrun import ROOT, hash_course_inputs

from attnlib.widgets.static import STATIC_ENV

KEY_VERSION = "1"  # bump to forget every kept execution
# Environment variables that reach the kernel and may change what it computes or prints (CPU kernels, threads,
# BLAS, hash seed, the course's own switches, locale). Their names and values are part of the key.
ENV_PREFIXES = ("ATEN_", "OMP_", "MKL_", "DNNL_", "ONEDNN_", "OPENBLAS_", "GOTO", "KMP_", "GOMP_", "TORCH",
                "PYTORCH_", "CUDA", "ATTNLIB_", "AL_", "PYTHON", "IPYTHON", "JUPYTER", "LANG", "LC_", "TZ")


def enabled() -> bool:
    """False when NBCACHE=0 (or false/no) is set."""
    return os.environ.get("NBCACHE", "1").strip().lower() not in ("0", "false", "no")


def cache_dir() -> Path:
    """build/nbcache/ of this checkout, or NBCACHE_DIR."""
    return Path(os.environ.get("NBCACHE_DIR") or ROOT / "build" / "nbcache")


def cpu_identity() -> str:
    """The CPU's model name and flags (the first processor of /proc/cpuinfo), and the machine type."""
    lines = []
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.split(":")[0].strip() in ("model name", "flags", "Features", "CPU part"):
                lines.append(line.strip())
            if not line.strip() and lines:
                break
    except OSError:
        pass
    return "\n".join([platform.machine(), platform.processor(), *lines])


def environment_identity() -> str:
    """Python, every installed distribution with its version, the CPU, and the kernel's environment variables."""
    # a set: a checkout's own attnlib.egg-info is seen a second time from a process started in the checkout
    dists = sorted({f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()})
    env = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(ENV_PREFIXES))
    return "\n".join([sys.version, sys.prefix, *dists, cpu_identity(), *env])


def notebook_key(path: Path, environment: str, options: str) -> str:
    """The key of one notebook's execution: everything that decides its outputs (see the module docstring)."""
    path = Path(path).resolve()
    h = hashlib.sha256(KEY_VERSION.encode())
    h.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).encode())
    h.update(path.read_bytes())
    hash_course_inputs(h, ROOT)
    h.update(environment.encode())
    h.update(options.encode())
    return h.hexdigest()


def entry_path(path: Path, environment: str) -> Path:
    """The file that keeps `path`'s execution under this environment (one per notebook, edition and setting)."""
    path = Path(path).resolve()
    edition = path.parent.name if path.parent != ROOT / "notebooks" else "en"
    setting = hashlib.sha256(environment.encode()).hexdigest()[:12]
    return cache_dir() / f"{edition}-{path.stem}-{setting}.json"


def site_options() -> str:
    """The nbval options part of the key of an execution shared with the site builder (nbval's defaults)."""
    return repr((False, None, STATIC_ENV))


@contextmanager
def locked(entry: Path, wait: bool = True) -> Iterator[bool]:
    """Hold the lock of `entry` (its .lock file) while inside; yields False at once if `wait` is False and another
    process holds it."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.with_suffix(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_entry(entry: Path, key: str, path: Path, cells: dict) -> None:
    """Keep {code cell number: outputs} under `key`, written whole then renamed (two workers never read half)."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"key": key, "notebook": str(path), "cells": cells}), encoding="utf-8")
    tmp.replace(entry)


def read_entry(entry: Path, key: str, cells: int) -> Optional[dict]:
    """The kept {cell number: outputs} if its key matches and it has every one of the `cells` code cells."""
    try:
        kept = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if kept.get("key") != key or sorted(kept["cells"], key=int) != [str(i) for i in range(cells)]:
        return None
    return kept["cells"]


class SharedExecution:
    """The site builder's side of a notebook's one execution (see `shared_execution`)."""

    def __init__(self, path: Path):
        self.path = Path(path).resolve()
        environment = environment_identity()
        self.key = notebook_key(self.path, environment, site_options())
        self.entry = entry_path(self.path, environment)

    def read(self) -> Optional[nbformat.NotebookNode]:
        """The notebook with the kept outputs of its site execution, or None."""
        nb = nbformat.read(self.path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        kept = read_entry(self.entry, self.key, len(code)) if enabled() else None
        if kept is None or any(kept[str(i)] is None for i in range(len(code))):
            return None
        for i, cell in enumerate(code):
            cell.outputs = [nbformat.from_dict(o) for o in kept[str(i)]]
        return nb

    def keep(self, nb: nbformat.NotebookNode) -> None:
        """Keep the site builder's execution `nb` for nbval to compare."""
        if enabled():
            code = [c for c in nb.cells if c.cell_type == "code"]
            write_entry(self.entry, self.key, self.path, {str(i): c.outputs for i, c in enumerate(code)})


@contextmanager
def shared_execution(path: Path, wait: bool = True) -> Iterator[Optional[SharedExecution]]:
    """Hold `path`'s lock; yields its SharedExecution (None if `wait` is False and nbval or another build is
    executing it now): `.read()` the kept execution, or execute and `.keep(nb)` it."""
    shared = SharedExecution(path)
    with locked(shared.entry, wait) as got:
        yield shared if got else None
