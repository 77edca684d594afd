"""The course's exercises as nbgrader assignments: one per notebook with exercises, in both editions.

    python hub/assignments.py source COURSE_DIR [NOTEBOOK ...]   # write COURSE_DIR/source/<id>/<notebook>
    sudo make hub-assignments                                     # the same into the teacher's ~/course (root)

Every exercise of the course is three cells: the learner's cell (a TODO, then the checker call, e.g.
`passed = al.checks.check_score_matrix(score_matrix)`), a markdown label ("Solution (click to expand)",
"参考答案（点击展开）") and the collapsed solution cell (the same definitions, done, and the checker again). Each triple
becomes two nbgrader cells, generated from the notebook as it is:
  - a solution cell: the learner's code, then the solution between ### BEGIN SOLUTION / ### END SOLUTION, then
    the checker call. Released (the stub is empty), it is exactly the learner's cell; in the source, the solution
    runs after the TODO and replaces its definitions.
  - a test cell worth POINTS: the checker call as a visible test (`assert al.checks.check_…(…)`), and hidden
    tests that call the same checker from a fresh copy of its module, so a notebook that changed
    `al.checks` cannot pass them.
Every other cell is copied as it is (lesson cells run too when nbgrader grades). Assignment ids: the notebook's
name (01_introduction), zh_ + the name for notebooks/zh/.
"""
from __future__ import annotations

import argparse
import ast
import copy
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POINTS = 1
CHECKER = "al.checks.check_"
TEST_LABEL = {"en": "# Test: the exercise's checker, for the grade ({points} point)",
              "zh": "# 测试：练习的检查函数，用于评分（{points} 分）"}


def _source(cell: dict) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def is_solution(cells: list[dict], i: int) -> bool:
    """Cell i is a collapsed solution cell after an exercise cell and its label (the course's exercise layout)."""
    c = cells[i]
    return (i >= 2 and c["cell_type"] == "code" and c.get("metadata", {}).get("jupyter", {}).get("source_hidden")
            and CHECKER in _source(c) and cells[i - 1]["cell_type"] == "markdown"
            and cells[i - 2]["cell_type"] == "code" and CHECKER in _source(cells[i - 2]))


def split_checker(code: str) -> tuple[str, str, str]:
    """(the code before the first checker statement, that statement and the rest, its call al.checks.check_x(…))."""
    tree = ast.parse(code)
    lines = code.splitlines()
    for k, statement in enumerate(tree.body):
        calls = [ast.get_source_segment(code, node) or "" for node in ast.walk(statement) if isinstance(node, ast.Call)]
        calls = [c for c in calls if c.startswith(CHECKER)]
        if calls:
            start = statement.lineno - 1
            while start > 0 and tree.body[k - 1].end_lineno <= start and lines[start - 1].lstrip().startswith("#"):
                start -= 1  # a comment just above the checker belongs to it
            return "\n".join(lines[:start]).rstrip(), "\n".join(lines[start:]).strip(), calls[0]
    raise ValueError(f"code must call {CHECKER}…, got {code[-120:]!r}")


def checker_module(call: str) -> str:
    """The attnlib.checks module that defines the checker named in `call`."""
    import attnlib.checks

    name = call[len("al.checks."):].split("(", 1)[0]
    return getattr(attnlib.checks, name).__module__


def exercise_cells(exercise: dict, solution: dict, grade_id: str, lang: str) -> list[dict]:
    """The nbgrader solution cell and test cell for one exercise."""
    todo, check, call = split_checker(_source(exercise))
    done = split_checker(_source(solution))[0]
    answer = {"cell_type": "code", "execution_count": None, "outputs": [], "id": f"{grade_id}-answer",
              "metadata": {"nbgrader": {"grade": False, "solution": True, "locked": False, "task": False,
                                        "grade_id": f"{grade_id}-answer", "schema_version": 3}},
              "source": f"{todo}\n### BEGIN SOLUTION\n{done}\n### END SOLUTION\n\n\n{check}"}
    module, name = checker_module(call), call[len("al.checks."):]
    test = {"cell_type": "code", "execution_count": None, "outputs": [], "id": f"{grade_id}-test",
            "metadata": {"nbgrader": {"grade": True, "solution": False, "locked": True, "task": False,
                                      "points": POINTS, "grade_id": f"{grade_id}-test", "schema_version": 3}},
            "source": "\n".join([TEST_LABEL[lang].format(points=POINTS), f"assert {call}",
                                 "### BEGIN HIDDEN TESTS", "import importlib as _importlib",
                                 f"_fresh = _importlib.reload(_importlib.import_module({module!r}))",
                                 f"assert _fresh.{name}", "### END HIDDEN TESTS"])}
    return [answer, test]


def assignment(notebook: Path, lang: str) -> tuple[dict, int]:
    """The nbgrader source notebook for `notebook` and its number of exercises."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    cells, out, count = nb["cells"], [], 0
    i = 0
    while i < len(cells):
        if i + 2 < len(cells) and is_solution(cells, i + 2):
            count += 1
            out += exercise_cells(cells[i], cells[i + 2], f"exercise{count}", lang)
            i += 3
            continue
        cell = copy.deepcopy(cells[i])
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        out.append(cell)
        i += 1
    nb = {**nb, "cells": out}
    nb.setdefault("metadata", {}).pop("widgets", None)
    return nb, count


def assignment_id(notebook: Path) -> str:
    return ("zh_" if notebook.parent.name == "zh" else "") + notebook.stem


def write_sources(course: Path, notebooks: list[Path]) -> list[str]:
    """Write course/source/<id>/<name>.ipynb for each notebook with exercises; return lines saying what was made."""
    made = []
    for notebook in notebooks:
        lang = "zh" if notebook.parent.name == "zh" else "en"
        nb, count = assignment(notebook, lang)
        if not count:
            made.append(f"{assignment_id(notebook)}: no exercises, skipped")
            continue
        folder = course / "source" / assignment_id(notebook)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / notebook.name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        made.append(f"{assignment_id(notebook)}: {count} exercises, {count * POINTS} points")
    return made


def course_notebooks(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.ipynb")) + sorted((folder / "zh").glob("*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python hub/assignments.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    src = sub.add_parser("source", help="write the assignments' source notebooks into COURSE_DIR/source/")
    src.add_argument("course", type=Path)
    src.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb and notebooks/zh/*.ipynb")
    args = parser.parse_args(argv)
    print("\n".join(write_sources(args.course, args.notebooks or course_notebooks(ROOT / "notebooks"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
