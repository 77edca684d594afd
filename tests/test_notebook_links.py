"""Every link between and inside the notebooks lands somewhere.

JupyterLab 4.6 ignores non-ASCII heading anchors, so a link `](#x)` must name an explicit ASCII anchor
`<a id="x"></a>` (or `<a name="x">`) in the same notebook, and `](NN_name.ipynb#x)` an existing
notebook with that anchor. Checks notebooks/*.ipynb and notebooks/zh/*.ipynb (when it exists).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("notebooks/zh/*.ipynb"))
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")  # ](target) or ](target "title")
ANCHOR = re.compile(r"<a\s[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)


def markdown_cells(path: Path) -> list[tuple[int, str, str]]:
    """(cell index, cell id, source) of every markdown cell of a notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(i, c.get("id", "?"), "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]


def anchors(path: Path) -> set[str]:
    """The explicit anchors of a notebook."""
    return {a for _, _, src in markdown_cells(path) for a in ANCHOR.findall(src)}


def heading_ids(path: Path) -> set[str]:
    """The ids JupyterLab derives from a notebook's headings (text with spaces as '-')."""
    found = set()
    for _, _, src in markdown_cells(path):
        for line in src.splitlines():
            if line.startswith("#"):
                text = re.sub(r"<[^>]+>", "", line.lstrip("#")).strip()
                found.add(text.replace(" ", "-"))
    return found


def link_problems(path: Path, root: Path = ROOT) -> list[str]:
    """One line per link of `path` that does not land on an explicit ASCII anchor or an existing notebook."""
    own = anchors(path)
    problems = []
    for index, cell_id, src in markdown_cells(path):
        for target in LINK.findall(src):
            where = f"{path.relative_to(root)} cell {index} (id {cell_id}): ]({target})"
            file_part, _, fragment = target.partition("#")
            if file_part and not file_part.endswith(".ipynb"):
                continue  # web pages, docs, images: not notebook links
            fragment = unquote(fragment)
            if file_part:
                other = (path.parent / unquote(file_part)).resolve()
                if not other.is_file():
                    problems.append(f"{where}: no notebook {file_part} next to {path.name}")
                    continue
                targets = anchors(other)
            else:
                targets = own
            if not fragment:
                if not file_part:
                    problems.append(f"{where}: empty anchor")
                continue
            if not fragment.isascii():
                problems.append(f"{where}: the anchor is not ASCII (JupyterLab 4.6 ignores it); "
                                f'add <a id="…"></a> with an ASCII id to the heading and link to that')
            elif fragment not in targets:
                named = other if file_part else path
                hint = (" (a heading gives this id, but heading text changes and the Chinese edition translates it:"
                        " give that heading an explicit ASCII anchor)" if fragment in heading_ids(named) else "")
                problems.append(f'{where}: no <a id="{fragment}"></a> in {named.name}{hint}')
    return problems


def test_there_are_notebooks_to_check():
    assert len(NOTEBOOKS) >= 7, [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "notebooks")) for p in NOTEBOOKS])
def test_every_link_lands_on_an_explicit_ascii_anchor(path):
    problems = link_problems(path)
    assert not problems, "\n".join(problems)


def test_anchors_are_unique_within_a_notebook():
    duplicates = []
    for path in NOTEBOOKS:
        seen: dict[str, int] = {}
        for index, _, src in markdown_cells(path):
            for a in ANCHOR.findall(src):
                if a in seen:
                    duplicates.append(f"{path.relative_to(ROOT)}: anchor {a!r} in cells {seen[a]} and {index}")
                seen[a] = index
    assert not duplicates, "\n".join(duplicates)


def test_the_checker_catches_broken_links(tmp_path):
    def notebook(name: str, *sources: str) -> Path:
        cells = [{"cell_type": "markdown", "id": f"c{i}", "metadata": {}, "source": s} for i, s in enumerate(sources)]
        path = tmp_path / name
        path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        return path

    notebook("02_b.ipynb", '## Two <a id="two"></a>')
    path = notebook("01_a.ipynb", '## One <a id="one"></a>', "[ok](#one) [ok](02_b.ipynb#two) [web](https://x.org/#y)",
                    "[bad](#3.2-Why-√d_k) [bad](#missing) [bad](02_b.ipynb#nope) [bad](03_c.ipynb#one)")
    problems = link_problems(path, root=tmp_path)
    assert len(problems) == 4, problems
    for problem, says in zip(problems, ["not ASCII", 'no <a id="missing">', 'no <a id="nope"></a> in 02_b.ipynb',
                                        "no notebook 03_c.ipynb"]):
        assert problem.startswith("01_a.ipynb cell 2 (id c2)") and says in problem, problem
