"""The Chinese edition: notebooks/zh/NN_*.ipynb generated from the English notebooks and i18n/zh/NN.md.

    python scripts/zh_edition.py todo [NN ...]     add new or changed English cells to the catalogs, as to-dos
    python scripts/zh_edition.py build [NN ...]    write notebooks/zh/ from the English notebooks and catalogs
    python scripts/zh_edition.py build --execute   ... and execute them (scripts/nbrun.py), outputs included
    python scripts/zh_edition.py edit NN           one file per cell's Chinese in build/zh-work/NN/, to edit
    python scripts/zh_edition.py apply NN [--done] put those files back into the catalog (--done: no to-dos left)
    python scripts/zh_edition.py build --out DIR   write (and with --execute run) them in DIR instead, for trials
    python scripts/zh_edition.py check [NN ...] [--only stale,todo,regen,code,parity,bold,english]
                                                   the checks of tests/test_zh_edition.py, each failure says what to do
    python scripts/zh_edition.py english [NN ...]  list the zh markdown cells that still hold an English sentence

A catalog (i18n/zh/NN.md) has one entry per cell id of the English notebook NN, in the notebook's order:

    <!-- cell 9f240dbe code -->
    <!-- en -->
    the English source it was translated from, frozen
    <!-- zh -->            (`<!-- zh todo -->` while it still needs translating or re-checking)
    the Chinese source (for a code cell: the same program, only comments and string literals differ)
    <!-- end -->

A changed English cell gets `<!-- zh todo -->` and a `<!-- diff -->` section (old → new English) before it.

The checks (`check`; tests/test_zh_edition.py runs each per notebook; to-do entries are left to `todo`):
    stale    every entry's frozen English is the English cell now (a diff if not); no missing or orphaned
             ids; the same cell types, in the notebook's order
    todo     no entry is marked zh todo
    regen    notebooks/zh/NN_*.ipynb has exactly the cells the catalog generates (ids, types, sources)
    code     a zh code cell is the English program: the ast with every string literal blanked and each f-string
             reduced to its {values} (format specs kept, order free) is the same; # NBVAL_* and # noqa stay;
             the first code cell says al.set_language("zh")
    parity   per markdown cell: the same math spans (the words in \\text{…}/\\textrm{…}/\\mbox{…} may be
             translated), code spans (one quoting a message may be translated),
             fenced blocks, anchors, images and link targets. Link targets are written as seen from
             notebooks/zh/: URLs, #anchors and NN_*.ipynb (the Chinese twin) stay; any other relative path gets
             one more ../ and may name the file's Chinese version (../docs/teaching.md -> ../../docs/teaching.zh.md);
             a zh cell may add a link to its English twin (../NN_*.ipynb) or to docs/glossary.md
    bold     no `**` that JupyterLab's marked cannot open or close (`**注意，**这里`: punctuation inside the
             closing **, a CJK character after it); tests/test_zh_lab.py checks the rule in JupyterLab; `check`
             also runs it on the edition's Markdown files (README.zh.md, docs/glossary.md, docs/*.zh.md)
    english  no run of 6 English words in a translated markdown cell outside code, math, link texts,
             *italic* titles and lists of names
"""
from __future__ import annotations

import argparse
import ast
import difflib
import os
import re
import sys
import unicodedata
from collections import Counter
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


def text_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff of two cell sources."""
    return "\n".join(difflib.unified_diff(old.split("\n"), new.split("\n"), old_name, new_name, lineterm=""))


def english_diff(old: str, new: str) -> str:
    """A unified diff from the frozen English to the current English."""
    return text_diff(old, new, "frozen English", "English now")


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
    out = Path(out_dir or CHINESE) / english_notebook(nn).name
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(generate(nn), out)
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


# ---------------------------------------------------------------------------------------------------------
# Checks (`check`, `english`; tests/test_zh_edition.py runs the same functions). Each returns a list of
# Problems; a problem's text says what is wrong and what to do about it.

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
    committed = CHINESE / english_notebook(nn).name
    fix = f"run `python scripts/zh_edition.py build {nn} --execute` and commit {committed.relative_to(ROOT)}"
    if not committed.exists():
        return [Problem("regen", nn, "", f"{committed.relative_to(ROOT)} does not exist; {fix}")]
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


# -- code cells: the same program in both editions -----------------------------------------------------------

class _Blanked(ast.NodeTransformer):
    """Every str constant becomes "<str>"; an f-string becomes its formatted values, sorted (word order may
    change in Chinese), each value's expression and format spec kept as they are."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant("<str>") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        values = [self.visit_FormattedValue(v) for v in node.values if isinstance(v, ast.FormattedValue)]
        if not values:
            return ast.Constant("<str>")
        return ast.Call(ast.Name("<f-string>"), sorted(values, key=ast.dump), [])

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.AST:
        return ast.FormattedValue(self.visit(node.value), node.conversion, node.format_spec)  # spec unblanked


def program(source: str) -> str:
    """The code cell's program without its string literals and comments (an ast dump); raises SyntaxError."""
    from IPython.core.inputtransformer2 import TransformerManager

    tree = ast.parse(TransformerManager().transform_cell(source))
    return ast.dump(_Blanked().visit(tree), include_attributes=False)


MARKER = re.compile(r"#\s*(NBVAL_[A-Z_]+|noqa\b[:\sA-Z0-9,]*)")  # comments nbval and ruff read: never translated


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


# -- markdown: what must be the same in both languages ---------------------------------------------------------

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?!\$).+?(?<![\\$])\$", re.S)
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
ANCHOR = re.compile(r"<a\s+(?:id|name)=[\"']([^\"']+)[\"']", re.I)
HTML_SRC = re.compile(r"<img\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.I)
HTML_HREF = re.compile(r"<a\b[^>]*\bhref=[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


@dataclass
class Markdown:
    """A markdown cell's parts: fenced blocks, code spans, math, links, images, anchors, and the prose left."""

    fences: list[str]
    code: list[str]
    math: list[str]
    links: list[tuple[str, str]]  # (text, target)
    images: list[str]
    anchors: list[str]
    prose: str  # code and math replaced by JupyterLab-like placeholders, links by their text
    prose_with_links: str  # the same with the links as they are


def split_markdown(text: str) -> Markdown:
    """Take a markdown cell apart (fences first, then code spans, then math, as JupyterLab does)."""
    fences, code, math = [], [], []

    def keep(store: list[str], value: str, placeholder: str) -> str:
        store.append(value)
        return placeholder

    text = FENCE.sub(lambda m: keep(fences, m.group(0), "\n"), text)
    text = CODE_SPAN.sub(lambda m: keep(code, m.group(2).strip(), "`x`"), text)
    text = MATH.sub(lambda m: keep(math, " ".join(m.group(0).split()), f"@@{len(math)}@@"), text)
    links = [(m.group(2), m.group(3)) for m in LINK.finditer(text) if not m.group(1)]
    images = [m.group(3) for m in LINK.finditer(text) if m.group(1)] + HTML_SRC.findall(text)
    links += [("", href) for href in HTML_HREF.findall(text)]
    prose = LINK.sub(lambda m: m.group(2), text)
    return Markdown(fences, code, math, links, images, ANCHOR.findall(text), prose, text)


def zh_targets(target: str) -> set[str]:
    """The link targets a zh cell may use for an English cell's target (seen from notebooks/zh/).

    The rule: URLs and #anchors stay as they are; a course notebook (NN_*.ipynb, maybe with #anchor) stays too,
    which from notebooks/zh/ is its Chinese twin; any other relative path gets one more ../ (it is one folder
    deeper), or may point to the file's Chinese version beside it (docs/teaching.md -> docs/teaching.zh.md).
    """
    if target.startswith("#") or SCHEME.match(target):
        return {target}
    path, hash_, anchor = target.partition("#")
    if re.fullmatch(r"\d\d_[^/]+\.ipynb", path):
        return {target}
    resolved = (ENGLISH / path).resolve()
    out = set()
    for candidate in (resolved, resolved.with_name(f"{resolved.stem}.zh{resolved.suffix}")):
        if candidate == resolved or candidate.exists():
            out.add(os.path.relpath(candidate, CHINESE).replace(os.sep, "/") + hash_ + anchor)
    return out


def zh_only_link(target: str, nn: str) -> bool:
    """Links the Chinese may add: to the English twin (../NN_*.ipynb) and to the glossary (docs/glossary.md)."""
    path = target.partition("#")[0]
    return path == f"../{english_notebook(nn).name}" or path.endswith("docs/glossary.md")


def _multiset_gap(en: list[str], zh: list[str]) -> tuple[list[str], list[str]]:
    """(in English only, in Chinese only), counting repeats."""
    missing, extra = Counter(en) - Counter(zh), Counter(zh) - Counter(en)
    return sorted(missing.elements()), sorted(extra.elements())


TEXT_IN_MATH = re.compile(r"\\(?:text|textrm|mbox)\s*\{")


def blank_math_text(math: str) -> str:
    """A math span with the words inside \\text{…}, \\textrm{…} and \\mbox{…} blanked (they are prose, translated).

    Everything else (symbols, sub- and superscripts, the commands themselves) stays, so a changed symbol still
    shows: `$c_{\\text{it}}$` and `$c_{\\text{它}}$` both become `$c_{\\text{}}$`; nested braces are followed.
    """
    out, pos = [], 0
    for m in TEXT_IN_MATH.finditer(math):
        if m.start() < pos:
            continue  # inside a \\text{…} already blanked
        depth, end = 1, m.end()
        while end < len(math) and depth:
            depth += {"{": 1, "}": -1}.get(math[end], 0) if math[end - 1] != "\\" else 0
            end += 1
        out.append(math[pos:m.end()] + ("}" if depth == 0 else ""))
        pos = end
    return "".join(out) + math[pos:]


def parity_problems(en_text: str, zh_text: str, nn: str) -> list[str]:
    """What differs between an English markdown cell and its Chinese (an empty list: nothing)."""
    en, zh = split_markdown(en_text), split_markdown(zh_text)
    out = []
    en_math, zh_math = [blank_math_text(x) for x in en.math], [blank_math_text(x) for x in zh.math]
    for name, a, b in (("math spans (words in \\text{…} aside)", en_math, zh_math),
                       ("anchors (<a id>)", en.anchors, zh.anchors)):
        missing, extra = _multiset_gap(a, b)
        if missing or extra:
            out.append(f"{name}: only in the English {missing}, only in the Chinese {extra}")
    missing, extra = _multiset_gap(en.code, zh.code)
    if len(missing) == len(extra) and all(CJK.search(x) for x in extra):
        missing = extra = []  # a code span quoting a message, translated like the message (e.g. `✓ 正确`)
    if missing or extra:
        out.append(f"code spans: only in the English {missing}, only in the Chinese {extra}")
    if len(en.fences) != len(zh.fences):
        out.append(f"fenced code blocks: {len(en.fences)} in the English, {len(zh.fences)} in the Chinese")
    for name, a, b in (("link targets", [t for _, t in en.links], [t for _, t in zh.links]),
                       ("images", en.images, zh.images)):
        left = list(b)
        unmatched = []
        for target in a:
            allowed = zh_targets(target)
            hit = next((t for t in left if t in allowed), None)
            if hit is None:
                unmatched.append(f"{target} (from notebooks/zh/: {' or '.join(sorted(allowed))})")
            else:
                left.remove(hit)
        left = [t for t in left if not (name == "link targets" and zh_only_link(t, nn))]
        if unmatched or left:
            out.append(f"{name}: only in the English {unmatched}, only in the Chinese {left}")
    return out


def check_parity(nn: str) -> list[Problem]:
    """Each markdown cell has the same math, code spans, link targets, anchors and images in both languages."""
    problems = []
    for e in read_catalog(catalog_path(nn)):
        if e.cell_type == "markdown" and not e.todo:  # a to-do is reported by check_todo
            for text in parity_problems(e.en, e.zh, nn):
                problems.append(Problem("parity", nn, e.cell_id, text + "; copy them from the English exactly "
                                        "(relative link targets as seen from notebooks/zh/, see zh_targets)"))
    return problems


# -- bold that JupyterLab's marked does not render --------------------------------------------------------------

def _kind(ch: str) -> str:
    """'space', 'punct' (Unicode P* or S*, as CommonMark and marked count it) or 'other'."""
    if not ch or ch.isspace():
        return "space"
    return "punct" if unicodedata.category(ch)[0] in "PS" else "other"


def bold_problems(text: str) -> list[str]:
    """`**` runs that cannot open or close where they should (CommonMark's flanking rules, which marked follows).

    A closing `**` right after punctuation (，。：) and right before a letter or CJK character is not
    right-flanking, so it does not close: `**注意，**这里` shows its asterisks. Likewise an opening `**` right
    before punctuation (“) and right after a letter or CJK character does not open.
    """
    out = []
    for para in re.split(r"\n\s*\n", split_markdown(text).prose):
        runs = [m for m in re.finditer(r"(?<!\*)\*\*(?!\*)", para)]
        for i, m in enumerate(runs):
            before = _kind(para[m.start() - 1] if m.start() else "")
            after = _kind(para[m.end()] if m.end() < len(para) else "")
            opens = after != "space" and (after != "punct" or before != "other")
            closes = before != "space" and (before != "punct" or after != "other")
            role_ok = opens if i % 2 == 0 else closes
            if not role_ok:
                context = para[max(0, m.start() - 12):m.end() + 12].replace("\n", " ")
                side = ("before the closing ** comes punctuation and after it a character" if i % 2
                        else "after the opening ** comes punctuation and before it a character")
                out.append(f"{context!r}: {side}, so JupyterLab shows the asterisks; move the punctuation "
                           f"outside the bold (**注意**，这里) or put a space next to the **")
    return out


def check_bold(nn: str) -> list[Problem]:
    """No zh markdown cell has bold that JupyterLab's marked cannot render (bold_problems)."""
    return [Problem("bold", nn, e.cell_id, text) for e in read_catalog(catalog_path(nn))
            if e.cell_type == "markdown" and not e.todo for text in bold_problems(e.zh)]


EDITION_MARKDOWN = ("README.zh.md", "docs/glossary.md", "docs/*.zh.md")  # the edition's Markdown besides notebooks


def check_bold_markdown() -> list[str]:
    """bold_problems in the edition's Markdown files (EDITION_MARKDOWN: GitHub and the site render them with the
    same CommonMark rule), each as "path: problem"."""
    paths = sorted({p for pattern in EDITION_MARKDOWN for p in ROOT.glob(pattern)})
    return [f"{p.relative_to(ROOT)}: {text}" for p in paths for text in bold_problems(p.read_text(encoding="utf-8"))]


# -- English left in the Chinese ----------------------------------------------------------------------------------

ENGLISH_WORDS = 6  # a run of this many English words in a row is a sentence (or most of one), not a term
WORD_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[ \t\n,;:]+[A-Za-z][A-Za-z'’-]*){%d,}" % (ENGLISH_WORDS - 1))


ITALIC = re.compile(r"(?<![*\w])\*(?![*\s])([^*\n]+?)(?<!\s)\*(?![*\w])"
                    r"|(?<![_\w])_(?![_\s])([^_\n]+?)(?<!\s)_(?![_\w])")
NAME_WORDS = {"and", "et", "al", "van", "von", "de", "der", "den", "la", "le"}


def english_runs(text: str) -> tuple[list[str], list[str]]:
    """(English runs in the prose, English runs in citations) of a markdown cell.

    Code, math, HTML tags and link targets do not count. Citations are a link's text and italics (the title
    of a cited work, kept in its language so that the reader can find it), and lists of names ("Vaswani,
    Shazeer, Parmar and …": every word capitalised); quoted English is prose like any other.
    """
    md = split_markdown(text)
    prose = re.sub(r"<[^>]+>", " ", md.prose_with_links)
    cited = [t for t, _ in md.links] + [m.group(1) or m.group(2) for m in ITALIC.finditer(LINK.sub(" ", prose))]
    prose = ITALIC.sub(" ", LINK.sub(" ", prose))
    runs, names = [], []
    for m in WORD_RUN.finditer(prose):
        words = re.findall(r"[A-Za-z][A-Za-z'’-]*", m.group(0))
        names_only = all(w[0].isupper() or w in NAME_WORDS for w in words)
        (names if names_only else runs).append(" ".join(m.group(0).split()))
    cited = [" ".join(m.group(0).split()) for t in cited for m in WORD_RUN.finditer(t)] + names
    return runs, cited


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


def english_in_code(source: str) -> list[str]:
    """English runs of ENGLISH_WORDS words in a code cell's comments and string literals (what a reader sees)."""
    import io
    import tokenize

    texts = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                texts.append(MARKER.sub(" ", tok.string))
            elif tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                texts.append(tok.string)
    except (tokenize.TokenError, SyntaxError):
        return []
    return [" ".join(m.group(0).split()) for t in texts for m in WORD_RUN.finditer(t)]


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


def main(argv: list[str]) -> int:
    """The command line (see the module docstring); returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["todo", "build", "edit", "apply", "check", "english"])
    parser.add_argument("notebooks", nargs="*", help="two-digit numbers (default: all seven)")
    parser.add_argument("--execute", action="store_true", help="build: also execute the generated notebooks")
    parser.add_argument("--out", type=Path, default=None,
                        help="build: the folder to write to (default notebooks/zh/; a temporary folder for trials)")
    parser.add_argument("--done", action="store_true", help="apply: the translation is finished, clear the to-dos")
    parser.add_argument("--only", default=",".join(CHECKS),
                        help=f"check: a comma-separated subset of {','.join(CHECKS)} (default: all)")
    args = parser.parse_args(argv)
    numbers = args.notebooks or [p.name[:2] for p in sorted(ENGLISH.glob("[0-9][0-9]_*.ipynb"))]
    if args.command == "check":
        only = [c for c in args.only.split(",") if c]
        unknown = sorted(set(only) - set(CHECKS))
        if unknown:
            parser.error(f"--only: unknown checks {unknown}; choose from {','.join(CHECKS)}")
        problems = run_checks(numbers, only)
        markdown = check_bold_markdown() if "bold" in only else []  # README.zh.md, docs: not per notebook
        for p in problems:
            print(p, end="\n\n")
        for text in markdown:
            print(f"[bold] {text}", end="\n\n")
        print("problems per notebook:  " + "  ".join(f"{c:>7}" for c in only))
        for nn in numbers:
            print(f"  {nn}                    " + "  ".join(
                f"{sum(p.nn == nn and p.check == c for p in problems):>7}" for c in only))
        if "bold" in only:
            print(f"  Markdown files (README.zh.md, docs)  bold {len(markdown)}")
        return 1 if problems or markdown else 0
    for nn in numbers:
        if args.command == "todo":
            print(f"{catalog_path(nn).relative_to(ROOT)}: {todo(nn)} to-do entries")
        elif args.command == "edit":
            print(f"edit the files in {edit(nn).relative_to(ROOT)}, then: scripts/zh_edition.py apply {nn}")
        elif args.command == "apply":
            print(f"{catalog_path(nn).relative_to(ROOT)}: {apply(nn, args.done)} to-do entries")
        elif args.command == "english":
            lines = english_report(nn)
            print("\n".join(lines) if lines else f"{nn}: no English run of {ENGLISH_WORDS}+ words")
        else:
            out = build(nn, args.out)
            if args.execute:  # in out's folder (notebooks/zh/ by default): no notebook reads files beside it
                sys.path.insert(0, str(ROOT / "scripts"))
                from nbrun import run_notebook
                nbformat.write(run_notebook(out), out)
            print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
