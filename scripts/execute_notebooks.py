"""Execute notebooks top to bottom in a fresh kernel, in place, then strip saved widget state.

Usage: python scripts/execute_notebooks.py [notebooks/NN_*.ipynb ...]   (default: all)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbrun import course_notebooks, run_notebook

LIMIT_BYTES = 1_000_000


def execute(path: Path) -> None:
    """Run one notebook (scripts/nbrun.py) and save it where it was; print its time and size."""
    start = time.perf_counter()
    nb = run_notebook(path)
    seconds = time.perf_counter() - start
    nbformat.write(nb, path)
    size = path.stat().st_size
    flag = "" if size <= LIMIT_BYTES else "  <-- over the 1 MB limit"
    print(f"{path.name}: {seconds:.1f} s, {size / 1e3:.0f} kB{flag}")


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or course_notebooks()
    for p in paths:
        execute(p.resolve())
