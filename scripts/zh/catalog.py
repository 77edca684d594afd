"""The catalog format: i18n/zh/NN.md, one entry per English cell (frozen English, Chinese, to-do mark, diff).

The course's paths live here (ROOT, ENGLISH, CHINESE, CATALOGS): the other modules read them as catalog.X at
call time, so that a test can point them at a made-up course.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


def text_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff of two cell sources."""
    return "\n".join(difflib.unified_diff(old.split("\n"), new.split("\n"), old_name, new_name, lineterm=""))


def english_diff(old: str, new: str) -> str:
    """A unified diff from the frozen English to the current English."""
    return text_diff(old, new, "frozen English", "English now")
