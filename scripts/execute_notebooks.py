"""Execute notebooks top to bottom in a fresh kernel, in place, then strip saved widget state.

Usage: python scripts/execute_notebooks.py [notebooks/NN_*.ipynb ...]   (default: all)
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import nbformat
from nbrun import course_notebooks, run_notebook

LIMIT_BYTES = 1_000_000


def joined_streams(outputs: list) -> list:
    """Outputs with each run of adjacent pieces of one stream (stdout, stderr) joined, in their order."""
    joined = []
    for out in outputs:
        last = joined[-1] if joined else None
        if last is not None and out.output_type == last.output_type == "stream" and out.name == last.name:
            last.text += out.text
        else:
            joined.append(out)
    return joined


def execute(path: Path) -> None:
    """Run one notebook (scripts/nbrun.py), join each cell's stream pieces and save it; print its time and size."""
    start = time.perf_counter()
    nb = run_notebook(path)
    seconds = time.perf_counter() - start
    for cell in nb.cells:  # a print's text in one output, however the kernel's flushes happened to cut it
        if cell.cell_type == "code":
            cell.outputs = joined_streams(cell.outputs)
    nbformat.write(nb, path)
    size = path.stat().st_size
    flag = "" if size <= LIMIT_BYTES else "  <-- over the 1 MB limit"
    print(f"{path.name}: {seconds:.1f} s, {size / 1e3:.0f} kB{flag}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebook files to run (default: every English course notebook, notebooks/NN_*.ipynb)")
    args = parser.parse_args()
    for p in args.notebooks:
        if p.suffix != ".ipynb" or not p.is_file():
            parser.error(f"notebooks: {p} is not a notebook file (expected one like notebooks/01_introduction.ipynb)")
    for p in args.notebooks or course_notebooks():
        execute(p.resolve())
