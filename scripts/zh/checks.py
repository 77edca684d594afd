"""The checks (`check`, `english`; tests/test_zh_edition.py runs the same functions). Each returns a list of
Problems; a problem's text says what is wrong and what to do about it."""
from __future__ import annotations

from dataclasses import dataclass

import nbformat

from zh import catalog
from zh.build import generate
from zh.catalog import catalog_path, english_diff, english_notebook, read_catalog, text_diff
from zh.markdown import bold_problems, english_runs, parity_problems
from zh.program import MARKER, english_in_code, program

CHECKS = ("stale", "todo", "regen", "code", "parity", "bold", "english")
TODO_HELP = ("run `python scripts/zh_edition.py edit {nn}`, translate the cells of build/zh-work/{nn}/ "
             "(a to-do's .en file is the current English), then `python scripts/zh_edition.py apply {nn} --done` "
             "and `python scripts/zh_edition.py build {nn} --execute`")


@dataclass
class Problem:
    """One failed check: which check, notebook, cell (or '' for the whole notebook), and the text."""

    check: str
    nn: str
    cell_id: str
    text: str

    def __str__(self) -> str:
        where = f"i18n/zh/{self.nn}.md cell {self.cell_id}" if self.cell_id else f"notebook {self.nn}"
        return f"[{self.check}] {where}: {self.text}"


def check_stale(nn: str) -> list[Problem]:
    """Every entry's frozen English equals the current English cell, cell for cell, types included."""
    cells = nbformat.read(english_notebook(nn), as_version=4).cells
    entries = read_catalog(catalog_path(nn))
    fix = (f"run `python scripts/zh_edition.py todo {nn}` (it adds, drops and re-marks entries as zh todo "
           f"with the English diff), then translate the to-dos: " + TODO_HELP.format(nn=nn))
    problems, by_id = [], {e.cell_id: e for e in entries}
    ids = [c.id for c in cells]
    for cell in cells:
        e = by_id.get(cell.id)
        if e is None:
            problems.append(Problem("stale", nn, cell.id, f"the English cell has no catalog entry (missing); {fix}"))
        elif e.cell_type != cell.cell_type:
            problems.append(Problem("stale", nn, cell.id, f"the entry says {e.cell_type}, the English cell is a "
                                    f"{cell.cell_type} cell; {fix}"))
        elif e.en != cell.source:
            problems.append(Problem("stale", nn, cell.id, "the English cell changed since it was translated:\n"
                                    f"{english_diff(e.en, cell.source)}\n{fix}"))
    for e in entries:
        if e.cell_id not in ids:
            problems.append(Problem("stale", nn, e.cell_id, f"orphaned: no English cell has this id any more; {fix}"))
    if not problems and [e.cell_id for e in entries] != ids:
        problems.append(Problem("stale", nn, "", f"the entries are not in the notebook's cell order; {fix}"))
    return problems


def check_todo(nn: str) -> list[Problem]:
    """No entry is still marked `zh todo`."""
    todos = [e.cell_id for e in read_catalog(catalog_path(nn)) if e.todo]
    if not todos:
        return []
    shown = ", ".join(todos[:8]) + (", …" if len(todos) > 8 else "")
    return [Problem("todo", nn, "", f"{len(todos)} entries are marked zh todo ({shown}): " + TODO_HELP.format(nn=nn))]


def check_regen(nn: str) -> list[Problem]:
    """The committed notebooks/zh/NN_*.ipynb has exactly the generated cells: ids, types and sources."""
    committed = catalog.CHINESE / english_notebook(nn).name
    fix = f"run `python scripts/zh_edition.py build {nn} --execute` and commit {committed.relative_to(catalog.ROOT)}"
    if not committed.exists():
        return [Problem("regen", nn, "", f"{committed.relative_to(catalog.ROOT)} does not exist; {fix}")]
    try:
        want = [(c.id, c.cell_type, c.source) for c in generate(nn).cells]
    except SystemExit as err:  # an English cell without an entry: check_stale says more
        return [Problem("regen", nn, "", f"the catalog cannot generate the notebook: {err}")]
    have = [(c.get("id"), c.cell_type, c.source) for c in nbformat.read(committed, as_version=4).cells]
    if [w[0] for w in want] != [h[0] for h in have]:
        return [Problem("regen", nn, "", f"its cell ids differ from the English notebook's "
                        f"({len(have)} cells, {len(want)} expected); {fix}")]
    problems = []
    for w, h in zip(want, have):
        if w != h:
            diff = text_diff(h[2], w[2], "committed", "generated")
            problems.append(Problem("regen", nn, w[0], f"the committed notebook's cell is not what the catalog "
                                    f"generates (a hand edit? edit the catalog instead):\n{diff}\n{fix}"))
    return problems

def check_code(nn: str) -> list[Problem]:
    """A zh code cell differs from its English cell only in comments and string literals."""
    problems = []
    for e in read_catalog(catalog_path(nn)):
        if e.cell_type != "code" or e.todo:  # a to-do is reported by check_todo
            continue
        try:
            en = program(e.en)
        except SyntaxError as err:
            problems.append(Problem("code", nn, e.cell_id, f"the English cell does not parse ({err}); fix it"))
            continue
        try:
            zh = program(e.zh)
        except SyntaxError as err:
            problems.append(Problem("code", nn, e.cell_id, f"the Chinese cell does not parse ({err.msg}, line "
                                    f"{err.lineno}); a full-width character outside a string or comment? "
                                    f"Edit the entry so only comments and string literals differ"))
            continue
        markers = [sorted(MARKER.findall(text)) for text in (e.en, e.zh)]
        if markers[0] != markers[1]:
            problems.append(Problem("code", nn, e.cell_id, f"the comments that tools read differ: English "
                                    f"{markers[0]}, Chinese {markers[1]}; keep them as the English has them"))
        if en != zh:
            problems.append(Problem("code", nn, e.cell_id, "the Chinese cell is another program, not only other "
                                    "comments and string literals:\n" + text_diff(e.en, e.zh, "English", "Chinese")
                                    + "\nchange only comments, strings and f-strings' literal text (keep each "
                                    "{…} value and its format spec)"))
    cells = read_catalog(catalog_path(nn))
    first = next((e for e in cells if e.cell_type == "code"), None)
    if first is not None and not first.todo and 'set_language("zh")' not in first.zh:
        problems.append(Problem("code", nn, first.cell_id, 'the first code cell must say al.set_language("zh") '
                                "(the English says \"en\"): the zh edition's messages and labels come from it"))
    return problems


def check_parity(nn: str) -> list[Problem]:
    """Each markdown cell has the same math, code spans, link targets, anchors and images in both languages."""
    problems = []
    for e in read_catalog(catalog_path(nn)):
        if e.cell_type == "markdown" and not e.todo:  # a to-do is reported by check_todo
            for text in parity_problems(e.en, e.zh, nn):
                problems.append(Problem("parity", nn, e.cell_id, text + "; copy them from the English exactly "
                                        "(relative link targets as seen from notebooks/zh/, see zh_targets)"))
    return problems


def check_bold(nn: str) -> list[Problem]:
    """No zh markdown cell has bold that JupyterLab's marked cannot render (bold_problems)."""
    return [Problem("bold", nn, e.cell_id, text) for e in read_catalog(catalog_path(nn))
            if e.cell_type == "markdown" and not e.todo for text in bold_problems(e.zh)]


EDITION_MARKDOWN = ("README.zh.md", "docs/glossary.md", "docs/*.zh.md")  # the edition's Markdown besides notebooks


def check_bold_markdown() -> list[str]:
    """bold_problems in the edition's Markdown files (EDITION_MARKDOWN: GitHub and the site render them with the
    same CommonMark rule), each as "path: problem"."""
    paths = sorted({p for pattern in EDITION_MARKDOWN for p in catalog.ROOT.glob(pattern)})
    return [f"{p.relative_to(catalog.ROOT)}: {text}"
            for p in paths for text in bold_problems(p.read_text(encoding="utf-8"))]

def check_english(nn: str) -> list[Problem]:
    """Translated zh markdown cells (not to-dos) have no English run of ENGLISH_WORDS words outside citations."""
    problems = []
    for e in read_catalog(catalog_path(nn)):
        if e.cell_type == "markdown" and not e.todo:
            runs, _ = english_runs(e.zh)
            problems += [Problem("english", nn, e.cell_id, f"still English: {r[:100]!r}; translate it (only a cited "
                                 "work's title may stay English, in *italics* or as its link's text)") for r in runs]
    return problems


CHECK_FUNCTIONS = {"stale": check_stale, "todo": check_todo, "regen": check_regen, "code": check_code,
                   "parity": check_parity, "bold": check_bold, "english": check_english}


def run_checks(numbers: list[str], only: list[str]) -> list[Problem]:
    """Every problem the checks in `only` find in the notebooks `numbers`."""
    return [p for nn in numbers for name in only for p in CHECK_FUNCTIONS[name](nn)]


def english_report(nn: str) -> list[str]:
    """Lines listing each zh cell (to-dos included) with English runs: markdown prose, citations marked as
    allowed, and code cells' comments and strings (a report only: no test counts these)."""
    lines = []
    for i, e in enumerate(read_catalog(catalog_path(nn))):
        if e.cell_type == "code":
            for r in english_in_code(e.zh):
                lines.append(f"{nn} cell {i} {e.cell_id}{' (todo)' if e.todo else ''}: code comment/string: {r[:100]}")
        if e.cell_type == "markdown":
            runs, quoted = english_runs(e.zh)
            for r in runs:
                lines.append(f"{nn} cell {i} {e.cell_id}{' (todo)' if e.todo else ''}: {r[:110]}")
            for r in quoted:
                lines.append(f"{nn} cell {i} {e.cell_id}: cited (a title or names), allowed: {r[:100]}")
    return lines
