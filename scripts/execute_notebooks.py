"""Execute notebooks top to bottom in a fresh kernel, in place, then strip saved widget state.

Usage: python scripts/execute_notebooks.py [notebooks/NN_*.ipynb ...]   (default: all)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
LIMIT_BYTES = 1_000_000


def execute(path: Path) -> None:
    """Run one notebook from a fresh kernel with its folder as working directory, and save it."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - start
    nb.metadata.pop("widgets", None)  # saved widget state embeds plotly.js (~5 MB per figure)
    nbformat.write(nb, path)
    size = path.stat().st_size
    flag = "" if size <= LIMIT_BYTES else "  <-- over the 1 MB limit"
    print(f"{path.name}: {seconds:.1f} s, {size / 1e3:.0f} kB{flag}")


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for p in paths:
        execute(p.resolve())
