"""Generating the Chinese notebooks from the English ones and the catalogs, and the edit/apply workflow."""
from __future__ import annotations

from pathlib import Path

import nbformat

from zh import catalog
from zh.catalog import Entry, catalog_path, english_diff, english_notebook, read_catalog, write_catalog


def todo(nn: str) -> int:
    """Bring catalog NN up to date with its English notebook; return how many entries are to-dos."""
    en_path = english_notebook(nn)
    nb = nbformat.read(en_path, as_version=4)
    old = {e.cell_id: e for e in read_catalog(catalog_path(nn))}
    entries = []
    for cell in nb.cells:
        e = old.get(cell.id)
        if e is None:  # a new cell: the English as a placeholder
            e = Entry(cell.id, cell.cell_type, cell.source, cell.source, todo=True)
        elif e.en != cell.source:  # the English changed since it was translated
            e.diff, e.en, e.todo, e.cell_type = english_diff(e.en, cell.source), cell.source, True, cell.cell_type
        entries.append(e)
    write_catalog(catalog_path(nn), entries, en_path.name)
    return sum(e.todo for e in entries)


def generate(nn: str) -> nbformat.NotebookNode:
    """The zh notebook NN in memory: the English notebook with each cell's source from the catalog, no outputs."""
    en_path = english_notebook(nn)
    nb = nbformat.read(en_path, as_version=4)
    entries = {e.cell_id: e for e in read_catalog(catalog_path(nn))}
    for cell in nb.cells:
        e = entries.get(cell.id)
        if e is None:
            raise SystemExit(f"{catalog_path(nn)}: no entry for cell {cell.id}; run scripts/zh_edition.py todo {nn}")
        cell.source = e.zh
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata["language_info"] = nb.metadata.get("language_info", {})
    return nb


def build(nn: str, out_dir: Path | None = None) -> Path:
    """Write out_dir/NN_*.ipynb (default notebooks/zh/): generate(nn), unexecuted."""
    out = Path(out_dir or catalog.CHINESE) / english_notebook(nn).name
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(generate(nn), out)
    return out


WORK = catalog.ROOT / "build" / "zh-work"
SUFFIX = {"markdown": ".md", "code": ".py", "raw": ".txt"}


def edit(nn: str) -> Path:
    """Write each entry's Chinese to build/zh-work/NN/<index>_<cell id>.<md|py>, English beside it as .en."""
    folder = WORK / nn
    folder.mkdir(parents=True, exist_ok=True)
    for i, e in enumerate(read_catalog(catalog_path(nn))):
        stem = f"{i:02d}_{e.cell_id}"
        (folder / (stem + SUFFIX[e.cell_type])).write_text(e.zh, encoding="utf-8")
        (folder / (stem + ".en")).write_text(e.en, encoding="utf-8")
    return folder


def apply(nn: str, done: bool) -> int:
    """Read build/zh-work/NN/ back into catalog NN; with `done`, clear every to-do and diff. Return the to-dos."""
    entries, folder = read_catalog(catalog_path(nn)), WORK / nn
    for i, e in enumerate(entries):
        work = folder / f"{i:02d}_{e.cell_id}{SUFFIX[e.cell_type]}"
        if work.exists():
            e.zh = work.read_text(encoding="utf-8")
        if done:
            e.todo, e.diff = False, ""
    write_catalog(catalog_path(nn), entries, english_notebook(nn).name)
    return sum(e.todo for e in entries)
