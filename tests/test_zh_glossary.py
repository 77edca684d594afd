"""One name per concept in the Chinese edition (issue 22): the variants docs/glossary.md rejects appear nowhere.

The glossary's table "一个概念一个名字" names, per concept, the term to use and the rejected variants (each in
backticks in the column 不用). The check reads them and looks, with a rule per variant (FINDERS: the same
characters can mean something else), through what a reader of the Chinese edition sees:
- notebooks/zh/*.ipynb: markdown, code comments and string literals, outputs' text (and figures' labels);
- the Chinese parts of the catalogs i18n/zh/NN.md (the frozen English is not read);
- attnlib/locale/zh/*.json (attnlib's messages and labels) and the static site's strings (static.TEXT["zh"]);
- README.zh.md and docs/*.zh.md (the glossary itself is where the variants are named, so it is not read).
A failure names the file, the place, the variant and the term to use. Below it: the headings' one form, the bold
lint over the edition's Markdown files, and the rules themselves on made-up sentences.
"""
from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
import tokenize
from pathlib import Path
from typing import Callable, Iterator

import nbformat
import pytest

from attnlib.widgets import static

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary.md"
SECTION = "## 一个概念一个名字"
spec = importlib.util.spec_from_file_location("zh_edition", ROOT / "scripts" / "zh_edition.py")
zh = importlib.util.module_from_spec(spec)
sys.modules["zh_edition"] = zh  # dataclasses look their module up by name
spec.loader.exec_module(zh)

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
SENTENCE = re.compile(r"[^。！？；\n]+")


def _pattern(regex: str, flags: int = 0, latin: bool = False) -> Callable[[str], list[str]]:
    """A finder: the matches of `regex` in a text; `latin`: only in a text that holds Chinese (an English word
    in an English string or line, e.g. an identifier a learner types, is not a Chinese term)."""
    compiled = re.compile(regex, flags)

    def find(text: str) -> list[str]:
        if latin and not CJK.search(text):
            return []
        return [m.group(0) for m in compiled.finditer(text)]
    return find


def _in_sentence_with(word: str, *context: str) -> Callable[[str], list[str]]:
    """A finder: `word` in a sentence that also holds one of `context` (the meaning the glossary fixes)."""
    def find(text: str) -> list[str]:
        return [word for s in SENTENCE.findall(text) if word in s and any(c in s for c in context)]
    return find


# One rule per rejected variant of the glossary (test_every_rejected_variant_has_a_rule keeps them in step).
FINDERS: dict[str, Callable[[str], list[str]]] = {
    # the English word in Chinese prose; not a path, file name or identifier (notebooks/zh/, execute_notebooks.py,
    # nb_notebook), and not the application's name Jupyter Notebook
    "notebook": lambda text: _pattern(r"(?<![\w/.\-])notebooks?(?![\w/.\-])", re.I, latin=True)(
        text.replace("Jupyter Notebook", "")),
    # the label of an exercise's solution (答案（点击展开）, **答案**, 答案：…, 答案在每道练习下方, 练习答案), not the
    # word's other uses (你的答案, 两种答案, 给出相同的答案)
    "答案": _pattern(r"(?<!参考)答案(?=\s*(?:（|\(|\*\*|：|:|在每|折叠|单元格))|练习的?答案"),
    "共享权重": _pattern("共享权重"),
    "权重共享": _pattern("权重共享"),
    "排列等变": _pattern("排列等变"),  # 按原顺序排列 is another word
    "排列不变": _pattern("排列不变"),
    "通道": _in_sentence_with("通道", "头", "复用", "信道"),  # a convolution's channels (conv1d) are 通道
    "正确率": _pattern("正确率"),
    "对数坐标": _pattern("对数坐标"),
    "nats": _pattern(r"(?<![A-Za-z_])nats(?![A-Za-z_])", latin=True),  # entropy_nats is an identifier
    "槽位": _pattern("槽位"),
    "屏蔽": _pattern("屏蔽"),
    "已遮住": _pattern("已遮住"),
    "遮住": _pattern("(?<!已)遮住"),
    "去除": _pattern(r"用[^。；！？\n]{0,40}去除"),  # 用 T 去除分数: division; 去除 alone means "remove"
}


def glossary() -> dict[str, str]:
    """{rejected variant: the term to use}, read from the glossary's table under SECTION."""
    text = GLOSSARY.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/glossary.md has no section {SECTION!r}"
    rejected: dict[str, str] = {}
    for line in text.split(SECTION, 1)[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3 and "`" in cells[2]:
            for variant in re.findall(r"`([^`]+)`", cells[2]):
                rejected[variant] = cells[1]
    return rejected


# -- what a reader of the Chinese edition sees, as (place, text) ------------------------------------------------

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)


def markdown_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, prose) of Markdown: fenced blocks, code spans, link targets, URLs and HTML tags blanked."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = CODE_SPAN.sub(lambda m: " x " + "\n" * m.group(0).count("\n"), text)
    text = re.sub(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)", "]", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"<[^>]*>", " ", text)
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield number, line


def code_texts(source: str) -> list[str]:
    """A code cell's comments and string literals (a line's text when the cell does not tokenize)."""
    try:
        return [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                if tok.type in (tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1))]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]


def _strings(value) -> Iterator[str]:
    """Every string inside a JSON value (a figure's titles, labels, hover templates, trace names)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def output_texts(output) -> Iterator[str]:
    """The text a reader sees in one output, line by line (HTML without its tags), and a JSON output's strings."""
    pieces = [output.get("text", "")] if output.get("output_type") == "stream" else []
    for mime, value in output.get("data", {}).items():
        if isinstance(value, str) and mime.startswith("text/"):
            pieces.append(re.sub(r"<[^>]*>", " ", value) if mime == "text/html" else value)
        elif not isinstance(value, str):
            pieces += [s for s in _strings(value) if CJK.search(s)]
    for piece in pieces:
        yield from (line for line in piece.splitlines() if line.strip())


def notebook_texts(path: Path) -> Iterator[tuple[str, str]]:
    """(place, text) of a zh notebook: markdown prose, code comments and strings, outputs."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for number, line in markdown_lines(cell.source):
                yield f"cell {i} (markdown, line {number})", line
        elif cell.cell_type == "code":
            for text in code_texts(cell.source):
                yield f"cell {i} (code)", text
            for output in cell.get("outputs", []):
                for text in output_texts(output):
                    yield f"cell {i} (output)", text


def catalog_texts(path: Path) -> Iterator[tuple[str, str]]:
    """(place, text) of a catalog's Chinese parts (to-dos included: they are what the next build shows)."""
    for entry in zh.read_catalog(path):
        if entry.cell_type == "markdown":
            for number, line in markdown_lines(entry.zh):
                yield f"cell {entry.cell_id} (zh, line {number})", line
        elif entry.cell_type == "code":
            for text in code_texts(entry.zh):
                yield f"cell {entry.cell_id} (zh code)", text


def locale_texts(path: Path) -> Iterator[tuple[str, str]]:
    """(place, text) of an attnlib/locale/zh catalog: each translation under its English template."""
    for key, text in json.loads(path.read_text(encoding="utf-8")).items():
        yield f"entry {key[:60]!r}", text


def document_texts(path: Path) -> Iterator[tuple[str, str]]:
    """(place, text) of a Markdown document, per line."""
    for number, line in markdown_lines(path.read_text(encoding="utf-8")):
        yield f"line {number}", line


def _each(read: Callable[[Path], Iterator[tuple[str, str]]], paths) -> list[tuple[str, Callable]]:
    """(file name, a function giving its (place, text)) per path."""
    return [(str(p.relative_to(ROOT)), lambda p=p: read(p)) for p in paths]


SOURCES: list[tuple[str, Callable[[], Iterator[tuple[str, str]]]]] = (
    _each(notebook_texts, sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")))
    + _each(catalog_texts, sorted((ROOT / "i18n" / "zh").glob("*.md")))
    + _each(locale_texts, sorted((ROOT / "attnlib" / "locale" / "zh").glob("*.json")))
    + [("attnlib/widgets/static.py TEXT['zh']", lambda: ((f"key {k!r}", v) for k, v in static.TEXT["zh"].items()))]
    + _each(document_texts, [ROOT / "README.zh.md", *sorted((ROOT / "docs").glob("*.zh.md"))])
)


def variants_in(texts: Iterator[tuple[str, str]], rejected: dict[str, str]) -> list[str]:
    """One line per rejected variant found: place, variant, the term to use, and the text around it."""
    found = []
    for place, text in texts:
        for variant, use in rejected.items():
            at = -1
            for match in FINDERS[variant](text):
                at = text.find(match, at + 1)
                context = " ".join(text[max(0, at - 20):at + len(match) + 20].split())
                found.append(f"{place}: {match!r} → use {use} (…{context}…)")
    return found


@pytest.mark.parametrize("name, texts", SOURCES, ids=[name for name, _ in SOURCES])
def test_one_name_per_concept(name, texts):
    found = variants_in(texts(), glossary())
    assert not found, (f"{name}: {len(found)} variant(s) that docs/glossary.md ({SECTION}) rejects:\n  "
                       + "\n  ".join(found))


def test_every_rejected_variant_has_a_rule():
    rejected = glossary()
    assert len(rejected) >= 10, f"the glossary's table {SECTION} lists too few variants: {rejected}"
    assert set(rejected) == set(FINDERS), (f"glossary variants without a rule: {set(rejected) - set(FINDERS)}; "
                                           f"rules for variants it no longer lists: {set(FINDERS) - set(rejected)}")


# -- headings: one form each ----------------------------------------------------------------------------------

def markdown_sources() -> Iterator[tuple[str, str]]:
    """(place, Markdown) of the edition: zh notebooks' markdown cells, README.zh.md, docs/*.zh.md."""
    for path in sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "markdown":
                yield f"{path.relative_to(ROOT)} cell {i}", cell.source
    for path in [ROOT / "README.zh.md", *sorted((ROOT / "docs").glob("*.zh.md"))]:
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def heading_problems(place: str, text: str) -> list[str]:
    """Learning objectives as **学习目标**, an exercise's title as `### 练习 N：标题` (full-width colon)."""
    text = FENCE.sub("", text)
    bold = r"\*\*[^*\n]*(?:学习目标|你将能够)[^*\n]*\*\*"  # also the objectives' lead-in in bold without the name
    problems = [f"{place}: {m.group(0)!r} → **学习目标**" for m in re.finditer(bold, text)
                if m.group(0) != "**学习目标**"]
    problems += [f"{place}: {m.group(0)!r} → ### 练习 N：标题" for m in re.finditer(r"(?m)^#+ *练习 *\d.*$", text)
                 if not re.fullmatch(r"### 练习 \d+：\S.*", m.group(0))]
    return problems


def test_headings_have_one_form():
    problems = [p for place, text in markdown_sources() for p in heading_problems(place, text)]
    assert not problems, f"{len(problems)} heading(s) in another form:\n  " + "\n  ".join(problems)


def test_bold_renders_in_every_markdown_file_of_the_edition():
    problems = zh.check_bold_markdown()
    assert not problems, "\n".join(problems)


# -- the rules on made-up sentences ----------------------------------------------------------------------------

@pytest.mark.parametrize("variant, text, hits", [
    ("notebook", "每个 notebook 都以学习目标开头", 1),
    ("notebook", "| # | Notebook | 文章小节 |", 1),
    ("notebook", "运行 scripts/execute_notebooks.py 或打开 notebooks/zh/", 0),  # paths
    ("notebook", "open the notebook and run it", 0),  # an English line: not a Chinese term
    ("notebook", "共七个 Jupyter Notebook 文件", 0),  # the application's name
    ("答案", "答案（点击展开）", 1),
    ("答案", "**答案**就在每道练习正下方", 1),
    ("答案", "答案在每道练习下方。", 1),
    ("答案", "参考答案（点击展开）", 0),
    ("答案", "你的答案不随 kernel_size 变化", 0),
    ("答案", "四个掩码参数，两种答案", 0),
    ("通道", "各个头并不是彼此隔离的通道", 1),
    ("通道", "conv1d 要求通道在前", 0),
    ("nats", "熵（nats）", 1),
    ("nats", "entropy_nats = 3  # 熵", 0),
    ("遮住", "灰色格子被掩码遮住", 1),
    ("遮住", "与「已遮住」的说明齐平", 0),  # 已遮住 is its own variant
    ("已遮住", "与「已遮住」的说明齐平", 1),
    ("去除", "用很小的 $T$ 去除分数", 1),
    ("去除", "去除重复的词元", 0),
    ("排列等变", "按原顺序排列的句子", 0),
])
def test_rules(variant, text, hits):
    assert len(FINDERS[variant](text)) == hits


def test_the_check_reads_the_chinese_of_code_outputs_and_markdown(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("见 [这本 notebook](../notebooks/zh/01_introduction.ipynb)。`notebook`"),
                nbformat.v4.new_code_cell("entropy_nats = 1  # 熵，单位 nats\nprint('正确率')")]
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", {"application/json": {"title": "对数坐标"}})]
    nbformat.write(nb, tmp_path / "nb.ipynb")
    texts = list(notebook_texts(tmp_path / "nb.ipynb"))
    found = variants_in(iter(texts), {"notebook": "笔记本", "nats": "奈特", "正确率": "准确率", "对数坐标": "对数刻度"})
    assert [f.split(": ")[1].split(" →")[0] for f in found] == ["'notebook'", "'nats'", "'正确率'", "'对数坐标'"], found


@pytest.mark.parametrize("text, bad", [
    ("**学习目标**。学完这本笔记本，你将能够：", False),
    ("**学习目标。** 学完这本笔记本", True),
    ("### 练习 1：加权和", False),
    ("### 练习 1 — 写出软读取", True),
    ("### 练习 2 · 缩放", True),
    ("## 练习", False),
    ("**学完本笔记本，你将能够**", True),
])
def test_heading_rule(text, bad):
    assert bool(heading_problems("x", text)) is bad
