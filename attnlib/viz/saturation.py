"""Softmax saturation: one query row's weights, and entropy / max weight / Jacobian norm against d_k.

The curves are computed by the caller (`al.saturation_curve`, scaled and unscaled) and passed in. Traces,
found by name: "weight" (the bars), "scaled by 1/√d_k" and "unscaled" in each curve subplot (x2, x3, x4),
and "this panel (mean of its rows)" there (the markers at the current d_k).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .._validate import integer, pixels
from ..i18n import t
from . import style
from .convert import ArrayLike, attention_weights, bool_mask, rounded, token_labels
from .style import MASK_COLOR, OKABE_ITO, figure_meta, layout_base, legend_below, ticks, trace

CURVE_KEYS = ("entropy", "max_weight", "jacobian_norm")
CURVE_AXES = ("x2", "x3", "x4")  # the subplot of each curve key: its x axis ...
CURVE_CELLS = ((1, 2), (2, 1), (2, 2))  # ... and its (row, col)
BAR_COLOR = OKABE_ITO[4]
LINES = {"scaled": ("scaled by 1/√d_k", OKABE_ITO[4], "solid", "circle"),  # name (English: see trace), colour, dash,
         "unscaled": ("unscaled", OKABE_ITO[5], "dash", "square")}  # marker
MARKER_NAME = "this panel (mean of its rows)"
_LOG10_4 = 0.6020599913279624  # log10(4) correctly rounded, written out so that no libm's log10 reaches the JSON

Curves = Mapping[str, Mapping[str, Sequence[float]]]  # {"scaled": al.saturation_curve(...), "unscaled": ...}


def _d_k_values(curves: Curves) -> list[int]:
    """The d_k grid shared by both curves, checked: integers ≥ 1, increasing."""
    if not isinstance(curves, Mapping) or set(curves) != set(LINES):
        raise ValueError(f"curves must be {{'scaled': ..., 'unscaled': ...}} (al.saturation_curve), got {curves!r:.60}")
    grids = [list(curves[kind].get("d_k", [])) for kind in LINES]
    dks = [integer("curves d_k", v, minimum=1) for v in grids[0]]
    if not dks or dks != sorted(set(dks)) or grids[1] != grids[0]:
        raise ValueError(f"curves must share a non-empty increasing d_k grid of integers ≥ 1, got {grids}")
    return dks


def _curve_titles() -> dict[str, str]:
    """The y-axis title of each curve key, in the current language."""
    return {"entropy": t("entropy (nats)"), "max_weight": t("max weight"), "jacobian_norm": t("‖Jacobian‖_F")}


def _add_traces(fig: go.Figure, dks: list[int]) -> None:
    """The bars, the scaled and unscaled curve of each key, then the markers of each key."""
    fig.add_trace(go.Bar(x=[0], y=[0.0], marker_color=BAR_COLOR, name="weight", showlegend=False,
                         hovertemplate=t("key <b>%{customdata}</b><br>weight %{y:.4f}<extra></extra>")), 1, 1)
    names = {"scaled": (t("scaled by 1/√d_k"), t("scaled")), "unscaled": (t("unscaled"), t("unscaled"))}
    for (r, c), (key, title) in zip(CURVE_CELLS, _curve_titles().items()):
        for kind, (_, colour, dash, symbol) in LINES.items():
            fig.add_trace(go.Scatter(
                x=dks, y=[0.0] * len(dks), mode="lines+markers", name=names[kind][0], legendgroup=kind,
                showlegend=(key == "entropy"), line=dict(color=colour, dash=dash, width=2),
                marker=dict(size=5, symbol=symbol),
                hovertemplate=t("d_k %{{x}}<br>{curve} %{{y:.4f}}<extra>{kind}</extra>", curve=title,
                                kind=names[kind][1]),
            ), r, c)
    for (r, c), (key, title) in zip(CURVE_CELLS, _curve_titles().items()):
        fig.add_trace(go.Scatter(
            x=[None], y=[None], mode="markers", name=t("this panel (mean of its rows)"), legendgroup="current",
            showlegend=(key == "entropy"),
            marker=dict(color=OKABE_ITO[7], size=11, symbol="diamond-open", line=dict(width=2)),
            hovertemplate=t("d_k %{{x}}<br>{curve} %{{y:.4f}}<extra>this panel</extra>", curve=title),
        ), r, c)


def saturation_figure(row_weights: ArrayLike, curves: Curves, *, k_tokens: Optional[Sequence[Any]] = None,
                      d_k: Optional[int] = None, current: Optional[Mapping[str, float]] = None,
                      row_mask: Optional[ArrayLike] = None, row_label: Optional[str] = None,
                      title: Optional[str] = None, width: int = 440) -> go.Figure:
    """A 2x2 panel: the weights of one query row, then entropy, max weight and Jacobian norm against d_k.

    Args: row_weights: [N_k] one attention row. curves: {"scaled": ..., "unscaled": ...}, each as
        `al.saturation_curve` returns it (its "d_k" grid is the x axis). k_tokens: N_k labels (default
        0..N_k-1). d_k: a dotted line there. current: {"entropy", "max_weight", "jacobian_norm"} at `d_k`,
        drawn as markers. row_mask: [N_k] bool, False = masked key (grey bar). row_label: title of the
        bar chart. title: figure title. (None: the defaults, translated.) width: pixels.
    Returns: go.Figure, scaled curves solid and unscaled dashed.
    """
    dks = _d_k_values(curves)
    row_label = t("one query row") if row_label is None else row_label
    fig = make_subplots(
        rows=2, cols=2, horizontal_spacing=0.2, vertical_spacing=0.32,
        subplot_titles=[row_label, t("entropy vs d_k"), t("max weight vs d_k"), t("Jacobian norm vs d_k")],
    )
    _add_traces(fig, dks)
    title = t("Softmax saturation") if title is None else title
    fig.update_layout(**layout_base(title, width=pixels("width", width), height=560,
                                    margin=dict(l=55, r=15, t=70, b=95)),
                      legend=legend_below(-0.2), bargap=0.15, meta=dict(kind="saturation", d_k_values=dks))
    fig.update_annotations(font=dict(size=12))
    fig.update_yaxes(title_text=t("weight"), range=[0, 1.02], row=1, col=1)
    fig.update_xaxes(title_text=t("key"), tickangle=-60, tickfont=dict(size=10), row=1, col=1)
    for (r, c), curve_title in zip(CURVE_CELLS, _curve_titles().values()):
        fig.update_xaxes(type="log", title_text=t("d_k (log scale)"), dtick=_LOG10_4 if len(dks) > 5 else None,
                         row=r, col=c)
        fig.update_yaxes(title_text=curve_title, rangemode="tozero", row=r, col=c)
    for axis in CURVE_AXES:  # vertical marker at the current d_k on each curve plot
        fig.add_shape(type="line", xref=axis, yref=f"{axis.replace('x', 'y')} domain", x0=1, x1=1, y0=0, y1=1,
                      line=dict(color="#777777", width=1, dash="dot"), visible=False)
    update_saturation(fig, row_weights, curves=curves, k_tokens=k_tokens, d_k=d_k, current=current,
                      row_mask=row_mask, row_label=row_label)
    return fig


def _indices(fig: go.Figure) -> dict:
    """Trace index by (English name, x axis), found by name (in any language) once per figure."""
    if getattr(fig, "_al_index", None) is None:
        keys = [("weight", "x")] + [(n, a) for a in CURVE_AXES for n in (LINES["scaled"][0], LINES["unscaled"][0],
                                                                          MARKER_NAME)]
        position = {id(tr): i for i, tr in enumerate(fig.data)}
        fig._al_index = {(name, axis): position[id(trace(fig, name, xaxis=axis))] for name, axis in keys}
    return fig._al_index


def _bar_changes(fig: go.Figure, i: int, row: np.ndarray, toks: list[str], allowed: np.ndarray) -> dict:
    """The bar chart: keys (grey when masked) and their ticks, then the weights."""
    n = len(toks)
    vals, text = ticks(toks, (fig.layout.width or 440) * 0.35)
    return {**style.trace_changes(i, x=np.arange(n), customdata=np.asarray(toks, dtype=object), y=rounded(row)),
            ("data", i, "marker", "color"): np.where(allowed, BAR_COLOR, MASK_COLOR).astype(object),
            ("layout", "xaxis", "tickvals"): vals, ("layout", "xaxis", "ticktext"): text,
            ("layout", "xaxis", "range"): [-0.5, n - 0.5]}


def _curve_changes(fig: go.Figure, index: dict, curves: Curves) -> dict:
    """The six curves."""
    if list(_d_k_values(curves)) != list(fig.layout.meta["d_k_values"]):
        raise ValueError(f"curves must have the figure's d_k grid {list(fig.layout.meta['d_k_values'])}")
    return {("data", index[name, axis], "y"): rounded(curves[kind][key])
            for key, axis in zip(CURVE_KEYS, CURVE_AXES) for kind, (name, *_) in LINES.items()}


def update_saturation(fig: go.Figure, row_weights: ArrayLike, *, curves: Optional[Curves] = None,
                      k_tokens: Optional[Sequence[Any]] = None, d_k: Optional[int] = None,
                      current: Optional[Mapping[str, float]] = None, row_mask: Optional[ArrayLike] = None,
                      row_label: Optional[str] = None) -> None:
    """Rewrite a figure from `saturation_figure` (or its FigureWidget) in place; only what changed is sent.

    Args: fig: the saturation figure. row_weights, k_tokens, d_k, current, row_mask: as for the builder
        (d_k or current None hides the markers). curves, row_label: as for the builder, None keeps them.
    Returns: None.
    """
    figure_meta(fig, "saturation", "saturation_figure")
    row = attention_weights("row_weights", row_weights, 1)  # [N_k]
    n = row.shape[0]
    toks = [str(i) for i in range(n)] if k_tokens is None else token_labels("k_tokens", k_tokens, n)
    allowed = np.ones(n, dtype=bool) if row_mask is None else bool_mask(row_mask, (n,))
    d_k = None if d_k is None else integer("d_k", d_k, minimum=1)
    if current is not None and d_k is not None and not set(CURVE_KEYS) <= set(current):
        raise ValueError(f"current must have the keys {list(CURVE_KEYS)}, got {sorted(current)}")
    index = _indices(fig)
    changes = _bar_changes(fig, index["weight", "x"], row, toks, allowed)
    if row_label is not None:
        changes["layout", "annotations", 0, "text"] = str(row_label)
    if curves is not None:
        changes.update(_curve_changes(fig, index, curves))
    shown = current is not None and d_k is not None
    for key, axis in zip(CURVE_KEYS, CURVE_AXES):
        changes |= style.trace_changes(index[MARKER_NAME, axis], x=[d_k] if shown else [None],
                                 y=[rounded(current[key])] if shown else [None])
    changes |= {("layout", "shapes", j, name): value for j in range(len(fig.layout.shapes))
                for name, value in (("visible", d_k is not None), ("x0", d_k or 1), ("x1", d_k or 1))}
    style.write_changes(fig, changes)
