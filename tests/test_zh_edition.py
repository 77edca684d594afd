"""The Chinese edition (issue 13) cannot drift from the English one.

Per notebook NN, the checks of scripts/zh_edition.py (also `python scripts/zh_edition.py check NN`):
stale (catalog i18n/zh/NN.md against the English cells), todo (no `zh todo` left), regen (notebooks/zh/NN
is what the catalog generates), code (a zh code cell is the English program, only comments and strings
differ), parity (math, code spans, link targets, anchors, images per markdown cell), bold (bold that
JupyterLab's marked cannot render), english (an English sentence left in a translated markdown cell).
Every failure says what to do. Below them, the checks themselves are tested on small made-up cells.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("zh_edition", ROOT / "scripts" / "zh_edition.py")
zh = importlib.util.module_from_spec(spec)
sys.modules["zh_edition"] = zh  # dataclasses look their module up by name
spec.loader.exec_module(zh)

NUMBERS = [p.name[:2] for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]


@pytest.mark.parametrize("check", zh.CHECKS)
@pytest.mark.parametrize("nn", NUMBERS)
def test_zh_edition(nn, check):
    problems = zh.CHECK_FUNCTIONS[check](nn)
    assert not problems, f"{len(problems)} problem(s):\n\n" + "\n\n".join(map(str, problems))


# -- the checks catch what they should (made-up cells) -------------------------------------------------------

@pytest.fixture
def course(tmp_path, monkeypatch):
    """A one-notebook course in tmp_path: notebooks/09_test.ipynb (a markdown and a code cell) and its catalog."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nb = nbformat.v4.new_notebook(metadata={"language_info": {"name": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("Scores are $q \\cdot k$, see `softmax`.", id="m1"),
                nbformat.v4.new_code_cell('import attnlib as al\nal.set_language("en")\nprint("hi")  # greet',
                                          id="c1")]
    nbformat.write(nb, notebooks / "09_test.ipynb")
    for name, value in (("ENGLISH", notebooks), ("CHINESE", notebooks / "zh"), ("CATALOGS", tmp_path / "i18n"),
                        ("ROOT", tmp_path)):
        monkeypatch.setattr(zh, name, value)
        monkeypatch.setattr(zh.catalog, name, value)  # the paths every step of the edition reads
    zh.todo("09")
    return tmp_path


def translate(cell_id: str, text: str) -> None:
    """Give cell_id of catalog 09 the Chinese `text`, no longer a to-do."""
    entries = zh.read_catalog(zh.catalog_path("09"))
    for e in entries:
        if e.cell_id == cell_id:
            e.zh, e.todo, e.diff = text, False, ""
    zh.write_catalog(zh.catalog_path("09"), entries, "09_test.ipynb")


def test_a_fresh_catalog_is_all_todo_and_not_stale(course):
    assert zh.check_stale("09") == []
    assert "2 entries are marked zh todo" in str(zh.check_todo("09")[0])


def test_an_english_edit_makes_the_entry_stale_with_its_diff(course):
    zh.build("09")
    path = course / "notebooks" / "09_test.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = "Scores are $q \\cdot k / \\sqrt{d_k}$."
    nb.cells.append(nbformat.v4.new_markdown_cell("new", id="m2"))
    nbformat.write(nb, path)
    problems = [str(p) for p in zh.check_stale("09")]
    assert len(problems) == 2
    assert "changed since it was translated" in problems[0] and "+Scores are $q \\cdot k / \\sqrt{d_k}$." in problems[0]
    assert "m2: the English cell has no catalog entry" in problems[1]
    assert "cannot generate" in str(zh.check_regen("09")[0])
    assert "scripts/zh_edition.py todo 09" in problems[0]
    zh.todo("09")  # what the message says to do
    assert zh.check_stale("09") == []


def test_an_orphaned_entry_fails(course):
    path = course / "notebooks" / "09_test.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells = nb.cells[1:]
    nbformat.write(nb, path)
    assert "orphaned" in str(zh.check_stale("09")[0])


def test_regeneration_compares_ids_and_sources(course):
    assert "does not exist" in str(zh.check_regen("09")[0])
    out = zh.build("09")
    assert zh.check_regen("09") == []
    nb = nbformat.read(out, as_version=4)
    nb.cells[0].source += " (edited by hand)"
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="hi\n")]  # outputs do not count
    nbformat.write(nb, out)
    problems = zh.check_regen("09")
    assert [p.cell_id for p in problems] == ["m1"] and "hand edit" in problems[0].text


def test_build_out_writes_elsewhere(course, tmp_path):
    out = zh.build("09", tmp_path / "trial")
    assert out == tmp_path / "trial" / "09_test.ipynb" and not (course / "notebooks" / "zh").exists()


@pytest.mark.parametrize("zh_source, ok", [
    ('import attnlib as al\nal.set_language("zh")\nprint("你好")  # 问候', True),
    ('import attnlib as al\nal.set_language("zh")\nprint("你好", end="")', False),  # a new argument
    ('import attnlib as al\nal.set_language("zh")\nprint(f"你好")', True),  # an f-string without values
    ('import attnlib as al\nal.set_language("zh")\nprint(hi)', False),  # a name, not a string
    ('import attnlib as al\nal.set_language("zh")\nprint("hi"）', False),  # a full-width parenthesis
])
def test_code_cells_may_differ_only_in_strings_and_comments(course, zh_source, ok):
    translate("c1", zh_source)
    assert (zh.check_code("09") == []) is ok


def test_comments_that_tools_read_stay(course):
    translate("c1", 'import attnlib as al\nal.set_language("zh")\nprint("你好")  # 问候\n# NBVAL_IGNORE_OUTPUT')
    assert "comments that tools read" in zh.check_code("09")[0].text


def test_english_in_code_comments_and_strings_is_reported():
    found = zh.english_in_code('x = 1  # the row of it moves from animal to street\n'
                               'print(f"held out accuracy of all the {n} seeds")')
    assert found == ["the row of it moves from animal to street", "held out accuracy of all the"]
    assert zh.english_in_code('x = 1  # 它那一行从动物移到马路  # noqa: E501') == []


def test_the_first_code_cell_must_set_zh(course):
    translate("c1", 'import attnlib as al\nal.set_language("en")\nprint("你好")')
    assert 'al.set_language("zh")' in zh.check_code("09")[0].text


def test_f_strings_keep_their_values_and_format_specs_in_any_order():
    en = zh.program('print(f"{n} of {total:.2f} rows")')
    assert zh.program('print(f"共 {total:.2f} 行中的 {n} 行")') == en  # word order changes in Chinese
    assert zh.program('print(f"共 {total:.3f} 行中的 {n} 行")') != en  # another format spec: other digits
    assert zh.program('print(f"共 {total} 行")') != en  # a value dropped
    assert zh.program('print(f"{n + 1} of {total:.2f}")') != en  # another expression


@pytest.mark.parametrize("zh_text, complaint", [
    ("分数是 $q \\cdot k$，见 `softmax`。", None),
    ("分数是 $q  \\cdot k$，见 `softmax`。", None),  # whitespace inside math does not count
    ("分数是 $q k$，见 `softmax`。", "math spans"),
    ("分数是 $q \\cdot k$。", "code spans"),
    ("分数是 $q \\cdot k$，见 `softmax`。<a id=\"x\"></a>", "anchors"),
    ("分数是 $q \\cdot k$，见 `softmax`，[论文](https://arxiv.org/abs/1706.03762)。", "link targets"),
])
def test_markdown_parity(zh_text, complaint):
    found = zh.parity_problems("Scores are $q \\cdot k$, see `softmax`.", zh_text, "01")
    assert (found == []) if complaint is None else (len(found) == 1 and found[0].startswith(complaint)), found


def test_words_in_math_text_may_be_translated_but_symbols_may_not():
    en = r"Weight $c_{\text{it},\text{animal}}$; $$q_i = x_i W_Q \quad \text{query: what token } i \text{ seeks}$$"
    ok = r"权重 $c_{\text{它},\text{动物}}$；$$q_i = x_i W_Q \quad \text{查询：词元 } i \text{ 在找什么}$$"
    assert zh.parity_problems(en, ok, "01") == []
    for bad in (ok.replace("c_{", "w_{"),  # another symbol
                ok.replace(" } i ", " } j "),  # another index between two \text{…}
                ok.replace(r",\text{动物}", "")):  # a subscript dropped
        found = zh.parity_problems(en, bad, "01")
        assert len(found) == 1 and found[0].startswith("math spans"), found
    assert zh.blank_math_text(r"$\mbox{a {b} c} + \textrm{d\}e}$") == r"$\mbox{} + \textrm{}$"  # nested braces


def test_a_code_span_quoting_a_message_may_be_translated():
    assert zh.parity_problems("It prints `✓ Correct: well done`.", "它打印 `✓ 正确：很好`。", "01") == []


def test_link_targets_seen_from_notebooks_zh():
    assert zh.zh_targets("https://arxiv.org/abs/1706.03762") == {"https://arxiv.org/abs/1706.03762"}
    assert zh.zh_targets("#summary") == {"#summary"}
    assert zh.zh_targets("03_core_formula.ipynb#assumptions") == {"03_core_formula.ipynb#assumptions"}  # its twin
    assert "../../attnlib/core.py" in zh.zh_targets("../attnlib/core.py")  # one folder deeper
    assert zh.parity_problems("[ok](../attnlib/core.py)", "[好](../../attnlib/core.py)", "01") == []
    assert zh.parity_problems("[ok](../attnlib/core.py)", "[好](../attnlib/core.py)", "01") != []
    assert zh.parity_problems("[x](#a)", "[x](#a)（[英文版](../01_introduction.ipynb)）", "01") == []


@pytest.mark.parametrize("text, bad", [
    ("**注意，**这里", True),  # the pitfall: punctuation before the closing **, a CJK character after it
    ("**注意**，这里", False),
    ("**注意，** 这里", False),
    ("这是**“查询”**向量", True),  # the opening side: a character before, punctuation after
    ("这是 **“查询”** 向量", False),
    ("**Learning objectives.** After", False),
    ("**注意：**$x$ 很大", False),  # math becomes @@0@@ in JupyterLab: punctuation after the **
])
def test_bold_lint(text, bad):
    assert bool(zh.bold_problems(text)) is bad


def test_english_runs_outside_link_texts():
    runs, cited = zh.english_runs("注意力 the mechanism that lets a network decide 很重要。")
    assert runs == ["the mechanism that lets a network decide"] and cited == []
    runs, cited = zh.english_runs("见 [Attention Is All You Need, by Vaswani et al.](https://arxiv.org/abs/1706.03762)，"
                                  "以及 `a b c d e f g`、$a b c d e f$、<a id=\"a-b-c-d-e-f\"></a>。")
    assert runs == [] and cited == ["Attention Is All You Need, by Vaswani et al"]
    assert zh.english_runs("句子 “The animal didn't cross the street” 是英文。")[0] != []  # quoted English is prose
    runs, cited = zh.english_runs("- Luong, Pham and Manning (2015), *Effective Approaches to Attention-based Neural "
                                  "Machine Translation*, EMNLP。Vaswani, Shazeer, Parmar, Uszkoreit, Jones and Gomez。")
    assert runs == [] and len(cited) == 2  # a title in italics, a list of names
    assert zh.english_runs("多头注意力（multi-head attention）把 d_model 分给 num_heads 个头")[0] == []  # terms


def test_every_zh_notebook_has_an_english_twin():
    english = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
    orphans = [p.name for p in (ROOT / "notebooks" / "zh").glob("*.ipynb") if p.name not in english]
    assert not orphans, (f"notebooks/zh/ has notebooks without an English twin: {orphans}; the zh edition is "
                         "generated from notebooks/NN_*.ipynb: remove them (git rm) or rename them as the English")
