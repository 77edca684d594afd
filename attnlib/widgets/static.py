"""A live panel on a page without a kernel (the static site and slides): its states, a snapshot and a note.

The site builder (scripts/sitebuild/) executes the notebooks with ATTNLIB_STATIC=1. A panel displayed there
calls `panel_bundle(panel)`: the figures at the panel's current settings (the snapshot the slides show) and, for
the notebook's main panel, every state of a grid of control values, computed with the panel's own
`figures_at`, which the page's HTML controls show with Plotly.react (no kernel, no network). The constants and
the visible strings of the static edition (TEXT, per language) are defined here once, for both sides.
"""
from __future__ import annotations

import base64
import html
import itertools
import json
import os
from typing import Any, Optional

import numpy as np

from ..i18n import get_language
from ..rounding import rounded

STATIC_ENV = "ATTNLIB_STATIC"  # "1": panels display as snapshots
SNAPSHOT_MIME = "application/vnd.attnlib.panel-snapshot+json"  # {"figures": [plotly JSON, ...]}
STATES_MIME = "application/vnd.attnlib.panel-states+json"  # see panel_states
NOTE_CLASS = "al-static-note"  # class of the note's <div>
BINDER_SLOT = "<!--binder-->"  # where the site builder puts the notebook's Binder link
STATE_BUDGET = 1_500_000  # bytes of embedded state JSON per page, at most
MAX_STATES = 256  # states of a derived grid, at most (each one is a run of the panel's update)
MAX_STEPS = 17  # evenly spaced values of a numeric slider in a derived grid, at most (2^k + 1 nest when thinned)

# Every visible string of the static edition, per language (the site builder reads the page strings here too).
TEXT = {
    "en": {
        "snapshot_at": " (static snapshot at {settings}).",
        "snapshot": " (static snapshot).",
        "live_in_lab": " In JupyterLab or on Binder the sliders move these figures live.",
        "live_here": "Live on this page (computed when the site was built, no kernel): {names}.",
        "needs_lab": "Needs JupyterLab or Binder: {names}.",
        "all_live": "Every control of this panel is live here.",
        "steps": "{n} of its values",
        "no_state": "This combination was not computed for the page: move another control, or run it on Binder.",
        "failed": "The notebook's code raised here: {error}",
        "disabled_title": "Moves in JupyterLab or on Binder",
        "binder_link": "Open this notebook on Binder",
        "binder_nav": "Run it live on Binder",
        "all_notebooks": "All notebooks",
        "slides": "Slides",
        "page": "page",
        "twin": "中文",
        "widget_note": "{label}: this interactive panel runs in JupyterLab or on Binder.",
        "index_title": "Course index",
        "slides_title": "Course slides",
        "index_site": ("This is the static edition of the course: nothing here needs a kernel or a network "
                       "connection. On every page the main panel's controls move its figures (computed when "
                       "the site was built); the other panels show their first state, and every panel moves "
                       "freely in JupyterLab (`make lab`) or on Binder."),
        "index_slides": ("These are the slides for the classroom: every figure shows its initial state and "
                         "nothing here needs a kernel or a network connection. The live panels move in "
                         "JupyterLab (`make lab`) or on Binder."),
        "index_header": "| # | Notebook | Article section | What you do | |",
        "continued": "{label} (continued)",
    },
    "zh": {
        "snapshot_at": "（静态快照：{settings}）。",
        "snapshot": "（静态快照）。",
        "live_in_lab": "在 JupyterLab 或 Binder 中，滑块会实时改变这些图。",
        "live_here": "本页可直接操作（建站时已算好，无需内核）：{names}。",
        "needs_lab": "需要 JupyterLab 或 Binder：{names}。",
        "all_live": "本面板的所有控件在本页都可操作。",
        "steps": "取其中 {n} 个值",
        "no_state": "建站时没有计算这个组合：请换一个控件，或在 Binder 上运行。",
        "failed": "笔记本的代码在这里报错：{error}",
        "disabled_title": "在 JupyterLab 或 Binder 中可操作",
        "binder_link": "在 Binder 上打开这个笔记本",
        "binder_nav": "在 Binder 上实时运行",
        "all_notebooks": "全部笔记本",
        "slides": "幻灯片",
        "page": "网页",
        "twin": "English",
        "widget_note": "{label}：这个交互面板需要在 JupyterLab 或 Binder 中运行。",
        "index_title": "课程目录",
        "slides_title": "课程幻灯片",
        "index_site": ("这是课程的静态版：这里的一切都不需要内核，也不需要联网。每一页主面板的控件都能改变它的图"
                       "（建站时已算好）；其他面板显示初始状态。所有面板都可以在 JupyterLab（`make lab`）"
                       "或 Binder 中自由操作。"),
        "index_slides": ("这是课堂用的幻灯片：每幅图显示初始状态，不需要内核，也不需要联网。交互面板可以在 "
                         "JupyterLab（`make lab`）或 Binder 中操作。"),
        "index_header": "| # | 笔记本 | 文章章节 | 内容 | |",
        "continued": "{label}（续）",
    },
}


def text(key: str, language: Optional[str] = None, **values: Any) -> str:
    """The static edition's string `key` in `language` (default: attnlib's current language), filled in."""
    strings = TEXT.get(language or get_language(), TEXT["en"])
    template = strings.get(key, TEXT["en"][key])
    return template.format(**values) if values else template


def is_static() -> bool:
    """True when panels must display as snapshots (the environment variable STATIC_ENV is "1")."""
    return os.environ.get(STATIC_ENV) == "1"


def _shown(value: Any) -> str:
    """A control value as the note prints it: on/off, 3 significant digits, or the value."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{rounded(value):.3g}" if isinstance(value, float) else str(value)


def _label(name: str, control: Any) -> str:
    """The control's description, or its name."""
    return str(getattr(control, "description", "") or name)


def _note(panel: Any) -> str:
    """The note under a panel's title: its settings, its caption, where the sliders move (BINDER_SLOT for the link)."""
    settings = ", ".join(f"{_label(name, c)} = {_shown(c.value)}"
                         for name, c in panel.controls.items() if not getattr(c, "disabled", False))
    parts = [f"<b>{html.escape(panel.title)}</b>" if panel.title else "<b>Live panel</b>",
             html.escape(text("snapshot_at", settings=settings) if settings else text("snapshot")),
             f" {html.escape(panel.caption)}" if getattr(panel, "caption", "") else "",
             f"{html.escape(text('live_in_lab'))} {BINDER_SLOT}"]
    return f'<div class="{NOTE_CLASS}">{"".join(parts)}</div>'


# ---------------------------------------------------------------- figures as compact JSON


def _plain(obj: Any) -> Any:
    """plotly JSON with every typed array ({"dtype", "bdata", "shape"}) written out as (nested) lists."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            arr = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
            shape = obj.get("shape")
            if shape:
                dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
                arr = arr.reshape(dims)
            return arr.tolist()
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


def figure_json(fig: Any) -> dict:
    """A plotly figure as plain JSON (lists, no typed arrays): {"data": [...], "layout": {...}}."""
    return _plain(json.loads(fig.to_json(validate=False)))


def _dumps(obj: Any) -> str:
    """Compact JSON, the form that is embedded and measured."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- the grid of control values


def _options(control: Any) -> tuple[list[str], list[Any]]:
    """(labels, values) of a selection control's options (plain values or (label, value) pairs)."""
    labels, values = [], []
    for opt in control.options:
        if isinstance(opt, (tuple, list)) and len(opt) == 2:
            labels.append(str(opt[0]))
            values.append(opt[1])
        else:
            labels.append(str(opt))
            values.append(opt)
    return labels, values


def _slider_values(control: Any) -> list[Any]:
    """Every value a numeric slider can take (min..max by step; base**exponent for a log slider)."""
    lo, hi, step = control.min, control.max, control.step or 1
    count = int(round((hi - lo) / step)) + 1
    if count > 10_000:
        count = 10_000
    raw = [lo + i * step for i in range(count)]
    kind = type(control).__name__
    if kind == "IntSlider":
        return [int(v) for v in raw]
    if kind == "FloatLogSlider":
        return [float(rounded(control.base ** v, 10)) for v in raw]
    return [float(rounded(v, 10)) for v in raw]


def control_spec(name: str, control: Any) -> dict:
    """How a control appears on a page: kind ('range', 'select', 'checkbox' or 'fixed'), label, values, labels.

    Args: name: the control's name in the panel. control: the ipywidgets control.
    Returns: {"name", "label", "kind", "values": every value it can take (a numeric slider: min..max by step),
        "labels": how each value is shown, "numeric": True for a slider of numbers, "value": its current value}.
    """
    kind = type(control).__name__
    value = control.value
    spec = {"name": name, "label": _label(name, control), "value": value, "numeric": False}
    if kind in ("Checkbox", "ToggleButton"):
        spec.update(kind="checkbox", values=[False, True], labels=["off", "on"])
    elif kind in ("Dropdown", "ToggleButtons", "RadioButtons", "Select"):
        labels, values = _options(control)
        spec.update(kind="select", values=values, labels=labels)
    elif kind == "SelectionSlider":
        labels, values = _options(control)
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        spec.update(kind="range", values=values, labels=labels, numeric=numeric)
    elif kind in ("IntSlider", "FloatSlider", "FloatLogSlider"):
        values = _slider_values(control)
        spec.update(kind="range", values=values, labels=[_shown(v) for v in values], numeric=True)
    else:  # text boxes, range sliders ...: not on a page
        spec.update(kind="fixed", values=[value], labels=[_shown(value)])
    if value not in spec["values"]:  # a value between steps: keep it, in order
        spec["values"] = sorted(spec["values"] + [value]) if spec["numeric"] else spec["values"] + [value]
        spec["labels"] = [_shown(v) for v in spec["values"]] if spec["numeric"] else spec["labels"] + [_shown(value)]
    return spec


def evenly(values: list[Any], count: int, keep: Any) -> list[Any]:
    """`count` evenly spaced entries of `values` (first and last included), plus `keep`, in their order."""
    if count >= len(values):
        return list(values)
    if count <= 1:
        return [keep]
    picks = {round(i * (len(values) - 1) / (count - 1)) for i in range(count)}
    picks.add(values.index(keep))
    return [v for i, v in enumerate(values) if i in picks]


def thinned(values: list[Any], keep: Any) -> list[Any]:
    """About half of `values` (every other one of an evenly spaced list, so 17 -> 9 -> 5 -> 3 -> 2 -> 1 nest), with
    `keep`; always fewer than before."""
    for count in range((len(values) + 1) // 2, 0, -1):
        fewer = evenly(values, count, keep)
        if len(fewer) < len(values):
            return fewer
    return [keep]


def derived_grid(specs: list[dict], max_states: int = MAX_STATES) -> dict[str, list[Any]]:
    """A grid of every control's values: all options; at most MAX_STEPS steps of a numeric slider; thinned to fit.

    While the grid has more than `max_states` states, the control with the most values (the later one of a tie:
    the first controls of a panel are its main ones; the very first is thinned last) is thinned to about half,
    down to its current value alone.
    """
    grid = {}
    for s in specs:
        values = s["values"] if s["kind"] != "fixed" else [s["value"]]
        if s["numeric"] and len(values) > MAX_STEPS:
            values = evenly(values, MAX_STEPS, s["value"])
        grid[s["name"]] = values
    while _count(grid) > max_states:
        name = thinnest_choice(grid, [s["name"] for s in specs])
        grid[name] = thinned(grid[name], next(s["value"] for s in specs if s["name"] == name))
    return grid


def _count(grid: dict[str, list]) -> int:
    """Number of states of a grid."""
    return int(np.prod([len(v) for v in grid.values()], dtype=np.int64)) if grid else 1


def thinnest_choice(grid: dict[str, list], order: list[str]) -> str:
    """The control to thin: the one with the most values in the grid (the later one on a tie), the panel's first
    control (its main one) only when every other one is down to a single value."""
    rest = [n for n in order[1:] if len(grid[n]) > 1]
    return max(reversed(rest), key=lambda n: len(grid[n])) if rest else order[0]


# ---------------------------------------------------------------- states


class OverBudget(Exception):
    """The states of a grid do not fit STATE_BUDGET."""


def _layout_patch(layout: dict, base: dict) -> dict:
    """The top-level layout keys that differ from `base` (a key missing here is null: removed)."""
    patch = {k: v for k, v in layout.items() if base.get(k) != v}
    patch.update({k: None for k in base if k not in layout})
    return patch


class StateTable:
    """States of a panel as a pool of distinct JSON pieces (a trace, a layout patch) and per state their indices."""

    def __init__(self, base: list[dict], budget: int):
        self.base, self.budget = base, budget
        self.pool: list[Any] = []
        self.index: dict[str, int] = {}
        self.states: dict[str, Any] = {}
        self.size = 0

    def piece(self, obj: Any) -> int:
        """Index of `obj` in the pool (added when new)."""
        key = _dumps(obj)
        if key not in self.index:
            self.index[key] = len(self.pool)
            self.pool.append(obj)
            self.size += len(key.encode()) + 1
        return self.index[key]

    def add(self, key: str, figures: Optional[list[dict]], error: str = "") -> None:
        """Record the state `key` ('i,j,k': the index of each control's value): its figures, or the error raised."""
        if figures is None:
            self.states[key] = {"error": error}
        else:
            self.states[key] = [[[self.piece(t) for t in f["data"]],
                                 self.piece(_layout_patch(f["layout"], b["layout"]))]
                                for f, b in zip(figures, self.base)]
        self.size += len(_dumps({key: self.states[key]}).encode())
        if self.size > self.budget:
            raise OverBudget(key)


def _key(indices: tuple[int, ...]) -> str:
    return ",".join(str(i) for i in indices)


def _compute(panel: Any, values: dict[str, Any], cache: dict) -> tuple[Optional[list[dict]], str]:
    """The panel's figures at `values` as plain JSON (cached), or (None, the error) when its update raised."""
    key = _dumps([[k, v] for k, v in sorted(values.items())])
    if key not in cache:
        try:
            cache[key] = ([figure_json(f) for f in panel.figures_at(**values)], "")
        except Exception as exc:  # noqa: BLE001  (a state the code refuses is shown as such on the page)
            cache[key] = (None, f"{type(exc).__name__}: {exc}")
    return cache[key]


def table_for(panel: Any, specs: list[dict], grid: dict[str, list], base: list[dict], budget: int,
              cache: dict) -> StateTable:
    """Every state of `grid` (raises OverBudget as soon as they exceed `budget` bytes)."""
    names = [s["name"] for s in specs]
    table = StateTable(base, budget)
    for indices in itertools.product(*(range(len(grid[n])) for n in names)):
        values = {n: grid[n][i] for n, i in zip(names, indices)}
        figures, error = _compute(panel, values, cache)
        table.add(_key(indices), figures, error)
    return table


def _in_order(chosen: list[Any], every: list[Any]) -> list[Any]:
    """`chosen` in the order of `every` (values not in it last)."""
    keys = [_dumps(v) for v in every]
    return sorted(chosen, key=lambda v: keys.index(_dumps(v)) if _dumps(v) in keys else len(keys))


def panel_states(panel: Any, budget: int = STATE_BUDGET) -> dict:
    """Every state of the panel's grid, for a page with HTML controls and no kernel.

    The grid is `panel.static_grid` (control name -> values; a control it leaves out stays at its value) or,
    when that is None, `derived_grid` of the controls. A derived grid that exceeds `budget` is thinned until it
    fits; an explicit one is not: the result then names the control to thin.
    Args: panel: a LivePanel (controls, figures_at). budget: bytes of state JSON allowed.
    Returns: {"controls": [control_spec + "grid": indices into values that have states], "base": the figures at
        the panel's settings, "pool": distinct traces and layout patches, "states": {"i,j,..": [[trace indices,
        layout patch index] per figure] or {"error": text}}, "bytes": size of pool + states} or, over budget,
        {"over_budget": {"control": name to thin, "bytes": at least, "budget", "states": count}}.
    """
    specs = [control_spec(name, c) for name, c in panel.controls.items()]
    explicit = getattr(panel, "static_grid", None)
    if explicit is not None:
        unknown = sorted(set(explicit) - set(panel.controls))
        if unknown:
            raise ValueError(f"static_grid must name controls of this panel {sorted(panel.controls)}, got {unknown}")
        grid = {s["name"]: list(explicit.get(s["name"], [s["value"]])) for s in specs}
    else:
        grid = derived_grid(specs)
    current = {s["name"]: s["value"] for s in specs}
    for s in specs:
        if current[s["name"]] not in grid[s["name"]]:
            grid[s["name"]] = [current[s["name"]]] + grid[s["name"]]  # the initial state is always there
    for s in specs:
        grid[s["name"]] = _in_order(grid[s["name"]], s["values"])
    cache: dict = {}
    base, error = _compute(panel, current, cache)
    if base is None:
        raise ValueError(f"the panel's update raised at its own settings: {error}")
    names = [s["name"] for s in specs]
    while True:
        try:
            table = table_for(panel, specs, grid, base, budget, cache)
            break
        except OverBudget:  # the bytes, unlike the count, may thin the first control too: it has the most values
            name = max(reversed(names), key=lambda n: len(grid[n]))
            if explicit is not None or len(grid[name]) <= 1:
                return {"over_budget": {"control": name, "values": len(grid[name]), "states": _count(grid),
                                        "budget": budget}}
            grid[name] = thinned(grid[name], current[name])
    for s in specs:
        labels = dict(zip(map(_dumps, s["values"]), s["labels"]))
        s["total"] = len(s["values"])
        s["values"] = grid[s["name"]]
        s["labels"] = [labels.get(_dumps(v), _shown(v)) for v in s["values"]]
        s["index"] = s["values"].index(current[s["name"]])
        s["value"] = _jsonable(s["value"])
        s["values"] = [_jsonable(v) for v in s["values"]]
    return {"controls": specs, "base": base, "pool": table.pool, "states": table.states,
            "bytes": table.size, "language": get_language()}


def _jsonable(value: Any) -> Any:
    """A control value as JSON can hold it (numbers, strings, booleans; anything else as its text)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value.item() if hasattr(value, "item") else value
    return str(value)


def is_main(panel: Any) -> bool:
    """True for the notebook's main panel (panel.main, or the al-main-panel class of its widget)."""
    main = getattr(panel, "main", None)
    if main is not None:
        return bool(main)
    widget = getattr(panel, "widget", None)
    return "al-main-panel" in getattr(widget, "_dom_classes", ())


def panel_bundle(panel: Any) -> dict:
    """The panel for a page without a kernel: note, snapshot at its settings and, for a main panel, its states.

    Args: panel: a LivePanel (its title, caption, controls, figures and figures_at are read, nothing is changed).
    Returns: {"text/plain": repr(panel), "text/html": a note (class NOTE_CLASS, BINDER_SLOT for the link),
        SNAPSHOT_MIME: {"figures": [plotly JSON of each figure]}, STATES_MIME (main panels): panel_states(panel)
        plus "title" and "caption"}.
    """
    bundle = {
        "text/plain": repr(panel),
        "text/html": _note(panel),
        SNAPSHOT_MIME: {"figures": [json.loads(f.to_json(validate=False)) for f in panel.figures]},
    }
    if is_main(panel):
        bundle[STATES_MIME] = dict(panel_states(panel), title=panel.title, caption=getattr(panel, "caption", ""))
    return bundle


snapshot_bundle = panel_bundle  # the name panel.py called before the panel_bundle contract (issue 12)
