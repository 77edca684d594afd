"""Notebook outputs compared as nbval (strict) compares them: which cells differ from the committed ones, and how.

cpu_audit.py uses it to tell outputs that differ on this machine from those that differ only under a CPU variant.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict

import nbformat
from nbrun import ROOT
from nbval.plugin import find_comment_markers, find_metadata_tags

SKIP_KEYS = ("metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
             "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg")  # as nbval (strict) skips


def sanitizers() -> list[tuple[re.Pattern, str]]:
    """The regex/replace pairs of tests/nbval_sanitize.cfg."""
    pairs, regex = [], None
    for line in (ROOT / "tests" / "nbval_sanitize.cfg").read_text().splitlines():
        if line.startswith("regex:"):
            regex = re.compile(line.split(":", 1)[1].strip())
        elif line.startswith("replace:") and regex is not None:
            pairs.append((regex, line.split(":", 1)[1].strip()))
            regex = None
    return pairs


def comparable(outputs: list, rules: list[tuple[re.Pattern, str]]) -> dict[str, list[str]]:
    """Outputs as nbval compares them: {key: [value, …]} with streams merged by name, strings sanitized."""
    merged: dict[str, list[str]] = defaultdict(list)
    streams: dict[str, str] = {}
    for o in outputs:
        if o.get("output_type") == "stream":
            streams[o["name"]] = streams.get(o["name"], "") + o["text"]
            continue
        items = dict(o.get("data", {}))
        items.update({k: v for k, v in o.items() if k != "data"})
        for key, value in items.items():
            if key in SKIP_KEYS:
                continue
            text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                text = "".join(value)
            for regex, replace in rules:
                text = regex.sub(replace, text)
            merged[key].append(text)
    for name, text in streams.items():
        for regex, replace in rules:
            text = regex.sub(replace, text)
        merged[f"stream:{name}"].append(text)
    return dict(merged)


def markers(cell: dict) -> dict[str, bool]:
    """nbval's options for a code cell, read as nbval 0.11 reads them: its cell tags (`nbval-ignore-output`,
    `nbval-skip`, ...), then its `# NBVAL_*` comments, which win. E.g. {"check": False} or {"skip": True}."""
    options = dict(find_metadata_tags(cell.get("metadata", {})))
    options.update(find_comment_markers(cell["source"]))
    return options


def checked(cell: dict) -> bool:
    """False for cells nbval (strict) does not compare: markdown, tagged nbval-ignore-output or nbval-skip."""
    if cell["cell_type"] != "code":
        return False
    options = markers(cell)
    return options.get("check", True) and not options.get("skip", False)


def first_difference(ref: dict[str, list[str]], got: dict[str, list[str]]) -> str:
    """A one-line account of where two comparable outputs differ."""
    for key in sorted(set(ref) | set(got)):
        a, b = ref.get(key, []), got.get(key, [])
        if a == b:
            continue
        if len(a) != len(b):
            return f"{key}: {len(a)} output(s) committed, {len(b)} now"
        for x, y in zip(a, b):
            if x != y:
                if key == "application/vnd.plotly.v1+json":
                    return f"{key}: {json_difference(json.loads(x), json.loads(y))}"
                for line_x, line_y in zip(x.splitlines() + [""], y.splitlines() + [""]):
                    if line_x != line_y:
                        return f"{key}: committed {line_x.strip()[:90]!r} / now {line_y.strip()[:90]!r}"
    return "differs"


def json_difference(a, b, path: str = "") -> str:
    """Path and values of the first difference between two JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return json_difference(a.get(key), b.get(key), f"{path}.{key}" if path else key)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return json_difference(x, y, f"{path}[{i}]")
    return f"{path}: committed {json.dumps(a)[:60]} / now {json.dumps(b)[:60]}"


def output_differences(committed: nbformat.NotebookNode, run: nbformat.NotebookNode) -> dict[int, str]:
    """{cell index: what differs} for the compared cells of a run against the committed notebook."""
    rules = sanitizers()
    diffs = {}
    for i, (ref, got) in enumerate(zip(committed.cells, run.cells)):
        if not checked(ref):
            continue
        errors = [o for o in got.get("outputs", []) if o.get("output_type") == "error"]
        a, b = comparable(ref.get("outputs", []), rules), comparable(got.get("outputs", []), rules)
        if errors and not any(o.get("output_type") == "error" for o in ref.get("outputs", [])):
            diffs[i] = f"raised {errors[0]['ename']}: {errors[0]['evalue'][:120]}"
        elif a != b:
            diffs[i] = first_difference(a, b)
    return diffs
