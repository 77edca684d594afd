"""PanelView: the figures of a live panel in one anywidget (panel_view.js). Head grids, saturation figures and
score histograms are drawn on canvases, every other figure by plotly.js.

One message per update carries every figure: a head grid as its layout (`viz.grid_view`) plus a float32 buffer of
weights and a uint8 buffer of masked cells, any other figure as plotly JSON (a chart without its template).
The browser draws the latest state in its next frame and answers with the revision it drew; `stalled` says when it
stopped answering.
"""
from __future__ import annotations

import json
import pathlib
import time
from typing import Any

import anywidget
import ipywidgets as W
import numpy as np
import plotly
import plotly.graph_objects as go
import traitlets

from ..i18n import t
from ..viz.heatmaps import grid_record, grid_view

HERE = pathlib.Path(__file__).parent
PLOTLY_JS = pathlib.Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _plain(value: Any) -> Any:
    """json.dumps' fallback for what plotly figures hold: numpy arrays and numbers."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot send a {type(value).__name__} to the view")


CHARTS = ("saturation", "score_histogram")  # figures a view draws on a canvas from their plotly JSON (Chart)


def figure_kind(meta: Any) -> str:
    """How a view draws a figure, from its layout's meta: "grid" (a head grid, on canvases), "chart" (a saturation
    figure or score histogram, on a canvas) or "plotly" (by plotly.js)."""
    kind = meta.get("kind") if isinstance(meta, dict) else None
    return "grid" if kind == "head_grid" else "chart" if kind in CHARTS else "plotly"


def patched(data: list, layout: dict, changes: dict) -> tuple[list, dict]:
    """Copies of plotly JSON with `changes` ({("data", i, key, ...) or ("layout", key, ...): value}) applied; only
    the dicts and lists along each path are copied."""
    root: dict = {"data": list(data), "layout": dict(layout)}
    for path, value in changes.items():
        node = root
        for key in path[:-1]:
            child = node[key] if isinstance(node, list) else node.get(key) or {}
            node[key] = child = list(child) if isinstance(child, (list, tuple)) else dict(child)
            node = child
        node[path[-1]] = value
    return root["data"], root["layout"]


class LiveFigure(go.Figure):
    """A panel's own copy of a plotly figure; `part()` is what its view draws: the figure as plotly JSON."""

    def part(self) -> dict:
        """{"kind": "plotly", "json": the figure}, serialized from plotly's own property dicts (no copy)."""
        try:
            text = json.dumps({"data": self._data, "layout": self._layout}, default=_plain, allow_nan=False)
        except (TypeError, ValueError):  # NaN or an exotic value: plotly's own encoder knows them
            text = self.to_json(validate=False)
        return {"kind": "plotly", "json": text}


class LiveGrid(LiveFigure):
    """A head-grid figure of a live panel: while `recording`, `viz.update_head_grid` only records its checked
    inputs in `record` (the view draws them on a canvas); with `recording` off it rewrites the plotly properties."""

    recording = True
    record: tuple = ()
    on_record: Any = None  # called after each recording (the panel sends the new heatmap at once)

    def __init__(self, figure: go.Figure):
        """Copy `figure` (made by viz.head_grid_figure or viz.heatmap_figure) and record what it shows."""
        super().__init__(figure)
        self.record = grid_record(self)

    def record_head_grid(self, weights: np.ndarray, q_tokens: list, k_tokens: list, allowed: np.ndarray) -> bool:
        """Called by viz.update_head_grid with its checked inputs; True when they were recorded."""
        if self.recording:
            self.record = (weights, q_tokens, k_tokens, allowed)
            if self.on_record is not None:
                self.on_record()
        return self.recording

    def part(self) -> dict:
        """{"kind": "grid", the layout (viz grid_view), "weights": float32 bytes, "masked": uint8 bytes or None}."""
        w, qt, kt, allowed = self.record
        masked = None if allowed.all() else (~allowed).astype(np.uint8).tobytes()  # [heads, N_q, N_k]
        return {"kind": "grid", **grid_view(self._layout, self._data, w, qt, kt, allowed),
                "weights": w.astype("<f4").tobytes(), "masked": masked}


class LiveChart(LiveFigure):
    """A saturation figure or score histogram of a live panel: while `recording`, `viz.update_saturation` and
    `viz.update_score_histogram` only record their changes in `record` (the view draws the chart on a canvas, see
    panel_view.js's Chart); with `recording` off they rewrite the plotly properties."""

    recording = True
    record: dict = {}  # path → value (viz.write_changes); replaced, never mutated; empty: the figure as copied

    def record_chart(self, changes: dict) -> bool:
        """Called by viz.write_changes with property paths → values; True when they were recorded."""
        if self.recording:
            self.record = {**self.record, **changes}
        return self.recording

    def part(self) -> dict:
        """{"kind": "chart", "json": the figure with the recorded changes as plotly JSON text, without its template
        (one string: ipywidgets does not walk its thousand numbers looking for buffers)}."""
        data, layout = patched(self._data, self._layout, self.record)
        figure = {"data": data, "layout": {k: v for k, v in layout.items() if k != "template"}}  # the canvas: its own
        return {"kind": "chart", "json": json.dumps(figure, default=_plain, allow_nan=False)}


class PlotlySource(W.Widget):
    """plotly.js as plotly ships it, sent once per kernel for every PanelView that draws a plotly figure."""

    source = traitlets.Unicode().tag(sync=True)


_source: list[PlotlySource] = []  # the kernel's one PlotlySource, made on first use


def plotly_source() -> PlotlySource:
    """The kernel's PlotlySource (a new one if the last was closed)."""
    if not _source or _source[0].comm is None:
        _source[:] = [PlotlySource(source=PLOTLY_JS.read_text(encoding="utf-8"))]
    return _source[0]


def texts() -> dict[str, str]:
    """The view's own words, in the current language (attnlib.i18n)."""
    return {"png": t("PNG"), "png_title": t("Download this heatmap as a PNG image"),
            "hover": t("query {query} → key {key}"), "weight": t("weight {weight}"), "masked": t("masked"),
            "image": t("Attention heatmap: rows are queries, columns are keys."),
            "chart": t("Chart: hover a bar or point for its values."),
            "png_chart": t("Download this chart as a PNG image"), **access_texts()}


def access_texts() -> dict[str, str]:
    """The words a screen reader hears of a figure (its summary, focus cell, table), in the current language."""
    return {"table_show": t("Show as table"), "table_hide": t("Hide table"), "figure": t("Figure"),
            "cell": t("query {query} → key {key}: weight {weight}"), "corner": t("query \\ key"),
            "keys": t("Arrow keys move a focus cell through the weights; Escape leaves the heatmap."),
            "desc_grid": t("Strongest keys of each query: {rows}."), "desc_head": t("{head}: {rows}."),
            "desc_row": t("{query} → {keys}"), "list_sep": t(", "), "row_sep": t("; "),
            "sentence_sep": t("{sentence} ").replace("{sentence}", ""),  # between sentences: none in Chinese
            "desc_saturation": t("{row}: entropy {entropy} nats, largest weight {weight} (key {key})."),
            "desc_current": t("{name}, d_k = {d_k}: {values}."), "desc_trace": t("{name}: largest value {y} at {x}."),
            "table_caption": t("{y} by {x}")}


class PanelView(anywidget.AnyWidget):
    """The figures of one panel. `show(figures)` sends them all in one message; `stalled` is True when a browser
    view has drawn before but left the newest revision unanswered for STALL_SECONDS."""

    STALL_SECONDS = 5.0
    _esm = (HERE / "panel_view.js").read_text(encoding="utf-8")
    _css = (HERE / "panel_view.css").read_text(encoding="utf-8")
    figures = traitlets.List().tag(sync=True)
    revision = traitlets.Int(0).tag(sync=True)
    plotly = anywidget.WidgetTrait().tag(sync=True)
    texts = traitlets.Dict().tag(sync=True)
    python_ms = traitlets.Float(0.0).tag(sync=True)  # the kernel's time for the update shown (for the benchmark)

    def __init__(self) -> None:
        """An empty view; `show` gives it figures."""
        super().__init__(texts=texts())
        self.drawn = 0  # the newest revision a browser view reported drawn (0: none yet)
        self._waiting_since: float | None = None  # when the oldest unanswered revision was sent
        self.on_msg(self._on_msg)

    def show(self, figures: list[LiveFigure], started: float | None = None) -> None:
        """Send every figure as it is now, in one message (none if the view has them already).

        Args: figures: the panel's figures. started: time.perf_counter() when the update began (its duration,
            including this serialization, goes along as `python_ms`), or None.
        """
        parts = [f.part() for f in figures]
        if parts != self.figures or not self.revision:  # unchanged since the heatmaps went out: nothing to send
            self.show_parts(parts, started)

    def show_parts(self, parts: list[dict], started: float | None = None) -> None:
        """Send figure parts (LiveFigure.part) in one message; `started` as for `show`."""
        with self.hold_sync():
            if self.plotly is None and any(p["kind"] == "plotly" for p in parts):
                self.plotly = plotly_source()
            self.figures = parts
            self.revision += 1
            if started is not None:
                self.python_ms = round((time.perf_counter() - started) * 1000, 2)
        if self._waiting_since is None:
            self._waiting_since = time.monotonic()

    @property
    def stalled(self) -> bool:
        """True if a view drew before but has not answered the newest revision for STALL_SECONDS."""
        since = self._waiting_since
        return self.drawn > 0 and since is not None and time.monotonic() - since > self.STALL_SECONDS

    def _on_msg(self, _widget: Any, content: dict, _buffers: Any) -> None:
        """A view drew revision content["drawn"]."""
        if isinstance(content, dict) and isinstance(content.get("drawn"), int):
            if content["drawn"] == 0 and self.revision:  # a view drew nothing, yet figures went out: lost on the way
                self.send_state()  # (a busy browser can miss the update sent right after the widget's creation)
            self.drawn = max(self.drawn, content["drawn"])
            self._waiting_since = None if self.drawn >= self.revision else time.monotonic()
