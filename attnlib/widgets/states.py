"""The static site's states of a live panel: a grid of control values and the panel's figures at each one.

`panel_states(panel)` runs the panel's own update over the grid (`panel.static_grid`, or one derived from its
controls and thinned to MAX_STATES and STATE_BUDGET) and stores each state's figures as compact JSON, pieces
shared between states kept once. attnlib.widgets.static puts the result in the panel's display bundle. A panel
provides `controls`, `figures` and `figures_at(**values)`; with `draw_into(figures, **values)` (LivePanel) its
update runs on copies made here without plotly's validation of every property (the slow part of a copy).
"""
from __future__ import annotations

import base64
import itertools
import json
import math
from typing import Any, Optional

import numpy as np
import plotly.graph_objects as go

from .._validate import grid_values
from ..i18n import get_language
from ..rounding import rounded
from ..viz.heatmaps import grid_record, grid_traces, grid_view
from .view import figure_kind, texts

STATE_BUDGET = 1_500_000  # bytes of embedded state JSON per page, at most
MAX_STATES = 256  # states of a derived grid, at most (each one is a run of the panel's update)
MAX_STEPS = 17  # evenly spaced values of a numeric slider in a derived grid, at most (2^k + 1 nest when thinned)


def shown(value: Any) -> str:
    """A control value as the note prints it: on/off, 3 significant digits, or the value."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{rounded(value):.3g}" if isinstance(value, float) else str(value)


def label(name: str, control: Any) -> str:
    """The control's description, or its name."""
    return str(getattr(control, "description", "") or name)


# ---------------------------------------------------------------- figures as compact JSON


def _plain(obj: Any) -> Any:
    """A figure's dict as strict JSON: arrays (numpy, or plotly's typed {"dtype", "bdata", "shape"}) as (nested)
    lists, numpy scalars as numbers, NaN and infinities as null (as plotly's JSON encoder writes them)."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            arr = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
            shape = obj.get("shape")
            if shape:
                dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
                arr = arr.reshape(dims)
            return _plain(arr.tolist())
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (np.ndarray, np.generic)):
        return _plain(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def figure_json(fig: Any) -> dict:
    """A plotly figure as plain JSON (lists, no typed arrays): {"data": [...], "layout": {...}}, from its objects'
    own dicts (plotly's to_dict and to_json encode every array as base64, only for _plain to decode it again)."""
    return _plain(figure_dict(fig))


def figure_dict(fig: Any) -> dict:
    """A figure's properties as set ({"data", "layout"}; arrays as they are), copied."""
    return {"data": [t.to_plotly_json() for t in fig.data], "layout": fig.layout.to_plotly_json()}


def figure_state(fig: Any) -> dict:
    """A figure as plain JSON; a head grid as its canvas draws it: "view" (grid_view's layout, and "cells": per shown
    head the indices of its weights and mask traces in "data") and of its traces only the z of those ({} for others:
    the hover labels, 2.5 times the weights' bytes, are the view's tokens)."""
    out = figure_json(fig)
    if figure_kind(out["layout"].get("meta")) == "grid":
        cells = grid_traces(fig)
        out["view"] = {**grid_view(out["layout"], out["data"], *grid_record(fig)), "cells": cells}
        used = {i for pair in cells for i in pair if i is not None}
        out["data"] = [{"z": tr["z"]} if i in used else {} for i, tr in enumerate(out["data"])]
    return out


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
    count = min(int(round((hi - lo) / step)) + 1, 10_000)
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
    spec = {"name": name, "label": label(name, control), "value": value, "numeric": False}
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
        spec.update(kind="range", values=values, labels=[shown(v) for v in values], numeric=True)
    else:  # text boxes, range sliders ...: not on a page
        spec.update(kind="fixed", values=[value], labels=[shown(value)])
    if spec.get("numeric") and isinstance(value, float):  # the step the value was rounded to is the value itself
        spec["values"] = [value if isinstance(v, float) and rounded(v) == rounded(value) else v for v in spec["values"]]
    if value not in spec["values"]:  # a value between steps: keep it, in order
        spec["values"] = sorted(spec["values"] + [value]) if spec["numeric"] else spec["values"] + [value]
        spec["labels"] = [shown(v) for v in spec["values"]] if spec["numeric"] else spec["labels"] + [shown(value)]
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
                                + ([self.piece(f["view"])] if "view" in f else [])
                                for f, b in zip(figures, self.base)]
        self.size += len(_dumps({key: self.states[key]}).encode())
        if self.size > self.budget:
            raise OverBudget(key)


def copies(base: list[dict]) -> list[go.Figure]:
    """Figures made from plain dicts without plotly's validation of every property (nearly half of a state's time
    when each state copied the panel's figures); what an update sets on them afterwards is validated."""
    figures = [go.Figure(d, _validate=False) for d in base]  # it copies `d`
    for f in figures:
        for obj in (f, f.layout, *f.data):
            obj._validate = True
    return figures


def _compute(panel: Any, values: dict[str, Any], cache: dict) -> tuple[Optional[list[dict]], str]:
    """The panel's figures at `values` as plain JSON (cached), or (None, the error) when its update raised."""
    key = _dumps([[k, v] for k, v in sorted(values.items())])
    if key not in cache:
        try:
            if hasattr(panel, "draw_into"):  # the update on fresh copies of the panel's figures, made cheaply
                cache.setdefault("base", [figure_dict(f) for f in panel.figures])
                figures = copies(cache["base"])
                panel.draw_into(figures, **values)
            else:
                figures = panel.figures_at(**values)
            cache[key] = ([figure_state(f) for f in figures], "")
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
        table.add(",".join(map(str, indices)), figures, error)  # the state's key: 'i,j,..'
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
        layout patch index(, a head grid's canvas view index)] per figure] or {"error": text}}, "kinds": per
        figure "grid", "chart" or "plotly" (view.figure_kind), "texts": the canvas views' words, "bytes": size of
        pool + states} or, over budget,
        {"over_budget": {"control": name to thin, "bytes": at least, "budget", "states": count}}.
    """
    specs = [control_spec(name, c) for name, c in panel.controls.items()]
    explicit = grid_values("static_grid", getattr(panel, "static_grid", None), panel.controls)
    if explicit is not None:
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
        s["labels"] = [labels.get(_dumps(v), shown(v)) for v in s["values"]]
        s["index"] = s["values"].index(current[s["name"]])
        s["value"] = _jsonable(s["value"])
        s["values"] = [_jsonable(v) for v in s["values"]]
    return {"controls": specs, "base": [{k: f[k] for k in ("data", "layout")} for f in base], "pool": table.pool,
            "states": table.states, "kinds": [figure_kind(f["layout"].get("meta")) for f in base], "texts": texts(),
            "bytes": table.size, "language": get_language()}


def _jsonable(value: Any) -> Any:
    """A control value as JSON can hold it (numbers, strings, booleans; anything else as its text)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value.item() if hasattr(value, "item") else value
    return str(value)
