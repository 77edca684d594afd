"""Density histograms of q·k scores against the N(0, 1) density (traces: one bar trace per series, then
"N(0, 1) density")."""
from __future__ import annotations

import math
from typing import Mapping, Optional, Union

import numpy as np
import plotly.graph_objects as go

from .._validate import integer, pixels
from ..i18n import t
from .convert import ArrayLike, escape, rounded, to_numpy
from .style import OKABE_ITO, figure_meta, layout_base, trace, trace_changes, write_changes

NORMAL_NAME = "N(0, 1) density"  # in English: see trace
SERIES_COLORS = [OKABE_ITO[i] for i in (4, 5, 2, 0, 6, 1)]

Scores = Union[ArrayLike, Mapping[str, ArrayLike]]


def score_histogram_figure(scores: Scores, *, bins: int = 40, title: Optional[str] = None,
                           width: int = 560) -> go.Figure:
    """Density histogram(s) of attention scores with the N(0, 1) density on top.

    Args: scores: an array of scores (any shape, flattened), or {label: array} to overlay several.
        bins: number of shared bins, ≥ 2. title: figure title (None: the default, translated). width: pixels.
    Returns: go.Figure: one bar trace per series (named "<label> (var v)"), then the NORMAL_NAME line.
    """
    n_series = len(scores) if isinstance(scores, Mapping) else 1
    if n_series < 1:
        raise ValueError("scores must be an array or a non-empty mapping {label: array}")
    integer("bins", bins, minimum=2)
    fig = go.Figure()
    for i in range(n_series):
        fig.add_trace(go.Bar(x=[0], y=[0], marker_color=SERIES_COLORS[i % 6], opacity=0.6))
    fig.add_trace(go.Scatter(x=[0], y=[0], mode="lines", name=t("N(0, 1) density"), line=dict(color=OKABE_ITO[7],
                             width=2), hovertemplate=t("score %{x:.2f}<br>N(0,1) density %{y:.4f}<extra></extra>")))
    title = t("q·k scores against the standard normal") if title is None else title
    fig.update_layout(**layout_base(title, width=pixels("width", width), height=380), barmode="overlay", bargap=0,
                      xaxis_title=t("score"), yaxis_title=t("density"),
                      legend=dict(x=0.99, xanchor="right", y=0.99, bgcolor="rgba(255,255,255,0.7)"),
                      meta=dict(kind="score_histogram", bins=bins, series=n_series))
    update_score_histogram(fig, scores)
    return fig


def update_score_histogram(fig: go.Figure, scores: Scores) -> None:
    """Rewrite a figure from `score_histogram_figure` in place with new scores (same number of series).

    Args: fig: the histogram figure. scores: an array, or {label: array}, as for the builder.
    Returns: None.
    """
    meta = figure_meta(fig, "score_histogram", "score_histogram_figure")
    series = dict(scores) if isinstance(scores, Mapping) else {"q·k": scores}
    if len(series) != meta["series"]:
        raise ValueError(f"scores must have {meta['series']} series like the figure, got {len(series)}")
    data = {}
    for label, s in series.items():
        arr = to_numpy(f"scores[{label!r}]" if isinstance(scores, Mapping) else "scores", s).ravel()
        if arr.size < 2:
            raise ValueError(f"scores must hold at least 2 values per series, got {arr.size} for {label!r}")
        data[str(label)] = arr
    lo = min(min(float(a.min()) for a in data.values()), -4.0)
    hi = max(max(float(a.max()) for a in data.values()), 4.0)
    edges = np.linspace(lo, hi, int(meta["bins"]) + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    bars = [i for i, tr in enumerate(fig.data) if tr.type == "bar"]  # one per series, renamed with each update
    changes: dict = {}
    for i, (label, arr) in zip(bars, data.items()):
        density, _ = np.histogram(arr, bins=edges, density=True)
        changes |= trace_changes(i, x=rounded(centres), y=rounded(density), width=rounded(edges[1] - edges[0]),
                                 name=t("{label} (var {var:.2f})", label=label, var=rounded(arr.var(), 2)),
                                 hovertemplate=t("score %{{x:.2f}}<br>density %{{y:.4f}}<extra>{label}</extra>",
                                                 label=escape(label)))
    grid = np.linspace(lo, hi, 241)
    normal = next(i for i, tr in enumerate(fig.data) if tr is trace(fig, NORMAL_NAME))
    changes |= trace_changes(normal, x=rounded(grid), y=rounded(np.exp(-grid**2 / 2) / math.sqrt(2 * math.pi)))
    write_changes(fig, changes)
