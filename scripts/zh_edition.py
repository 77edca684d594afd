"""The Chinese edition: notebooks/zh/NN_*.ipynb generated from the English notebooks and i18n/zh/NN.md.

    python scripts/zh_edition.py todo [NN ...]     add new or changed English cells to the catalogs, as to-dos
    python scripts/zh_edition.py build [NN ...]    write notebooks/zh/ from the English notebooks and catalogs
    python scripts/zh_edition.py build --execute   ... and execute them (scripts/nbrun.py), outputs included
    python scripts/zh_edition.py edit NN           one file per cell's Chinese in build/zh-work/NN/, to edit
    python scripts/zh_edition.py apply NN [--done] put those files back into the catalog (--done: no to-dos left)

A catalog (i18n/zh/NN.md) has one entry per cell id of the English notebook NN, in the notebook's order:

    <!-- cell 9f240dbe code -->
    <!-- en -->
    the English source it was translated from, frozen
    <!-- zh -->            (`<!-- zh todo -->` while it still needs translating or re-checking)
    the Chinese source (for a code cell: the same program, only comments and string literals differ)
    <!-- end -->

A changed English cell gets `<!-- zh todo -->` and a `<!-- diff -->` section (old → new English) before it.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
ENGLISH = ROOT / "notebooks"
CHINESE = ROOT / "notebooks" / "zh"
CATALOGS = ROOT / "i18n" / "zh"
MARK = re.compile(r"^<!-- (cell (\S+) (markdown|code|raw)|en|zh|zh todo|diff|end) -->$")
HEADER = ("# 中文版 catalog: {en} → {zh}\n\n"
          "Each entry: the English cell as translated (frozen), then its Chinese. See scripts/zh_edition.py.\n\n")


@dataclass
class Entry:
    """One cell's translation: its id and type, the frozen English, the Chinese, and whether it is a to-do."""

    cell_id: str
    cell_type: str
    en: str
    zh: str
    todo: bool = False
    diff: str = ""


def english_notebook(nn: str) -> Path:
    """notebooks/NN_*.ipynb for a two-digit NN."""
    found = sorted(ENGLISH.glob(f"{nn}_*.ipynb"))
    if len(found) != 1:
        raise SystemExit(f"no single English notebook notebooks/{nn}_*.ipynb (found {len(found)})")
    return found[0]


def catalog_path(nn: str) -> Path:
    """i18n/zh/NN.md."""
    return CATALOGS / f"{nn}.md"


def read_catalog(path: Path) -> list[Entry]:
    """The entries of a catalog file, in order ([] when it does not exist)."""
    if not path.exists():
        return []
    entries: list[Entry] = []
    part, body, current = None, [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        m = MARK.match(line)
        if not m:
            if part is not None:
                body.append(line)
            continue
        text = "\n".join(body)
        if current is not None and part in ("en", "zh", "zh todo", "diff"):
            setattr(current, "zh" if part.startswith("zh") else part, text)
            current.todo = current.todo or part == "zh todo"
        if m.group(2):
            current = Entry(m.group(2), m.group(3), "", "")
            entries.append(current)
        elif m.group(1) == "end":
            current = None
        elif current is None:
            raise SystemExit(f"{path}:{number}: {line!r} is outside an entry (entries open with <!-- cell ID TYPE -->)")
        part, body = (m.group(1) if current is not None else None), []
    return entries


def write_catalog(path: Path, entries: list[Entry], en_name: str) -> None:
    """Write entries to a catalog file (the inverse of read_catalog)."""
    out = [HEADER.format(en=f"notebooks/{en_name}", zh=f"notebooks/zh/{en_name}")]
    for e in entries:
        for text in (e.en, e.zh, e.diff):
            bad = [line for line in text.split("\n") if MARK.match(line)]
            if bad:
                raise SystemExit(f"cell {e.cell_id}: a line of its text looks like a catalog marker: {bad[0]!r}")
        out.append(f"<!-- cell {e.cell_id} {e.cell_type} -->\n<!-- en -->\n{e.en}\n")
        if e.diff:
            out.append(f"<!-- diff -->\n{e.diff}\n")
        out.append(f"<!-- {'zh todo' if e.todo else 'zh'} -->\n{e.zh}\n<!-- end -->\n\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(out), encoding="utf-8")


def english_diff(old: str, new: str) -> str:
    """A unified diff from the frozen English to the current English."""
    lines = difflib.unified_diff(old.split("\n"), new.split("\n"), "frozen English", "English now", lineterm="")
    return "\n".join(lines)


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


def build(nn: str) -> Path:
    """Write notebooks/zh/NN_*.ipynb: the English notebook with each cell's source from the catalog."""
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
    out = CHINESE / en_path.name
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return out


WORK = ROOT / "build" / "zh-work"
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


def main(argv: list[str]) -> None:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["todo", "build", "edit", "apply"])
    parser.add_argument("notebooks", nargs="*", help="two-digit numbers (default: all seven)")
    parser.add_argument("--execute", action="store_true", help="build: also execute the generated notebooks")
    parser.add_argument("--done", action="store_true", help="apply: the translation is finished, clear the to-dos")
    args = parser.parse_args(argv)
    numbers = args.notebooks or [p.name[:2] for p in sorted(ENGLISH.glob("[0-9][0-9]_*.ipynb"))]
    for nn in numbers:
        if args.command == "todo":
            print(f"{catalog_path(nn).relative_to(ROOT)}: {todo(nn)} to-do entries")
        elif args.command == "edit":
            print(f"edit the files in {edit(nn).relative_to(ROOT)}, then: scripts/zh_edition.py apply {nn}")
        elif args.command == "apply":
            print(f"{catalog_path(nn).relative_to(ROOT)}: {apply(nn, args.done)} to-do entries")
        else:
            out = build(nn)
            if args.execute:
                sys.path.insert(0, str(ROOT / "scripts"))
                from nbrun import run_notebook
                nbformat.write(run_notebook(out), out)
            print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
