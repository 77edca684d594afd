"""The lesson apart from its proof machinery (issue 21 §2), in every notebook of both editions.

- nbval's markers are cell tags (`nbval-ignore-output`, `nbval-skip`), never `# NBVAL_*` comments a learner reads;
- every tagged cell gives its reason in cell metadata `nbval_reason` (and no untagged cell has one);
- no word of the test or build machinery in markdown or in a visible code cell; a collapsed cell
  (metadata.jupyter.source_hidden) may use them;
- no visible code cell over 30 lines;
- the last cell links to docs/how_it_is_tested.md (zh: ../../docs/how_it_is_tested.zh.md), which explains it all.
Cell numbers are 0-based indices into the notebook's cells, as in issue 21.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from nbval.plugin import metadata_tags

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("notebooks/zh/*.ipynb"))
DOCS = {"en": "../docs/how_it_is_tested.md", "zh": "../../docs/how_it_is_tested.zh.md"}  # as linked from the notebook
MAX_LINES = 30
MARKER_COMMENT = re.compile(r"#\s*(NBVAL_\w+|PYTEST_VALIDATE_\w+)")  # the comments nbval reads
NBVAL_TAGS = set(metadata_tags)  # the tags nbval 0.11 reads: nbval-ignore-output, nbval-skip, raises-exception, ...
# Words of the test and build machinery (case-insensitive), the same list as /work/shared/hooks/before-stop's plus
# the Chinese ones; "CPU" alone stays allowed (the lesson may say a float64 result is the same on every CPU).
INFRA = re.compile("|".join([
    r"nbval", r"(?<![a-z])mkl(?![a-z])", r"onednn", r"aten_cpu", r"static_grid", r"cpu_variants", r"cpu_audit",
    r"committed outputs?", r"precomputed states?", r"web page's states?",
    r"提交的输出", r"预先?计算的?状态", r"网页上的状态",
]), re.IGNORECASE)


def cells(path: Path) -> list[dict]:
    """The cells of a notebook, each with its source as one string."""
    found = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for c in found:
        c["source"] = "".join(c["source"])
    return found


def hidden(cell: dict) -> bool:
    """True for a collapsed code cell (JupyterLab shows only its first line)."""
    return cell["cell_type"] == "code" and bool(cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"))


def name(path: Path) -> str:
    """The notebook's path relative to the repository."""
    return str(path.relative_to(ROOT))


def edition(path: Path) -> str:
    """'zh' for notebooks/zh/*, else 'en'."""
    return "zh" if path.parent.name == "zh" else "en"


@pytest.fixture(params=NOTEBOOKS, ids=name)
def notebook(request) -> Path:
    return request.param


def test_there_are_notebooks_of_both_editions():
    assert {edition(p) for p in NOTEBOOKS} == {"en", "zh"}


def test_the_testing_docs_exist():
    for folder, target in (("notebooks", DOCS["en"]), ("notebooks/zh", DOCS["zh"])):
        assert (ROOT / folder / target).resolve().is_file(), f"{target} (as linked from {folder}/) is missing"


def test_no_nbval_comment(notebook):
    problems = [f"{name(notebook)} cell {i}: the comment '# {m.group(1)}' is read by nbval and by the learner; "
                f"drop it and give the cell the tag {m.group(1).lower().replace('_', '-')} with its reason in "
                "metadata nbval_reason"
                for i, c in enumerate(cells(notebook)) if c["cell_type"] == "code"
                for m in MARKER_COMMENT.finditer(c["source"])]
    assert not problems, "\n".join(problems)


def test_tagged_cells_give_their_reason(notebook):
    problems = []
    for i, c in enumerate(cells(notebook)):
        meta = c.get("metadata", {})
        tags = [t for t in meta.get("tags", []) if t in NBVAL_TAGS or t.lower().startswith(("nbval", "pytest"))]
        reason = meta.get("nbval_reason")
        where = f"{name(notebook)} cell {i}"
        for t in tags:
            if t not in NBVAL_TAGS:
                problems.append(f"{where}: nbval does not know the tag {t!r} (so it compares the output); "
                                f"use one of {sorted(NBVAL_TAGS)}")
        if tags and not (isinstance(reason, str) and reason.strip()):
            problems.append(f"{where}: tagged {tags} but no reason; add metadata \"nbval_reason\": "
                            "\"<one sentence: why this output is not compared, and which assert checks its claim>\"")
        if reason is not None and not tags:
            problems.append(f"{where}: metadata nbval_reason without an nbval tag; add the tag "
                            "(nbval-ignore-output) or drop the stale reason")
    assert not problems, "\n".join(problems)


def test_the_lesson_names_no_test_machinery(notebook):
    problems = []
    for i, c in enumerate(cells(notebook)):
        if c["cell_type"] not in ("markdown", "code") or hidden(c):
            continue
        words = sorted({m.group(0) for m in INFRA.finditer(c["source"])})
        if words:
            where = "markdown" if c["cell_type"] == "markdown" else "visible code"
            problems.append(f"{name(notebook)} cell {i}: the learner reads {words} in {where}; say it in "
                            "docs/how_it_is_tested.md, a cell tag or a collapsed cell (metadata.jupyter.source_hidden)")
    assert not problems, "\n".join(problems)


def test_visible_code_cells_are_short(notebook):
    problems = [f"{name(notebook)} cell {i}: {n} visible lines of code (limit {MAX_LINES}); move the plumbing "
                "into attnlib.viz or a collapsed cell, keep the lesson's own lines in view"
                for i, c in enumerate(cells(notebook))
                if c["cell_type"] == "code" and not hidden(c) and (n := len(c["source"].splitlines())) > MAX_LINES]
    assert not problems, "\n".join(problems)


def test_the_last_cell_links_how_it_is_tested(notebook):
    target = DOCS[edition(notebook)]
    link = re.compile(r"\]\(\s*<?" + re.escape(target) + r"(#[^)\s>]*)?>?\s*\)")
    all_cells = cells(notebook)
    last = all_cells[-1]
    assert last["cell_type"] == "markdown" and link.search(last["source"]), (
        f"{name(notebook)} cell {len(all_cells) - 1} (the last): add a markdown link [...]({target}) "
        "to how the course is tested")
