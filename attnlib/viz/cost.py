"""Measured cost against sequence length N: time and peak memory, one line per method, log-log axes."""
from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .._validate import pixels
from ..i18n import t
from .convert import escape, rounded
from .style import OKABE_ITO, layout_base, legend_below

COLORS = [OKABE_ITO[i] for i in (4, 5, 2, 0, 6, 1, 7, 3)]  # one colour, dash and marker per method
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "solid", "dash", "dot"]
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "cross", "star", "hexagon"]

Results = Mapping[str, Mapping[str, Sequence[Any]]]  # {method: {"n": [...], "time_ms": [...], "memory_mb": [...]}}


def _column(method: str, cols: Mapping[str, Any], key: str, n: list[int]) -> list:
    """One method's times or memory, rounded, with None where missing or 0 (no place on a log axis)."""
    col = cols.get(key) or [None] * len(n)
    if len(col) != len(n):
        raise ValueError(f"results[{method!r}][{key!r}] must have {len(n)} entries (one per N), got {len(col)}")
    y = [None if v is None else rounded(float(v)) for v in col]
    if any(v is not None and (not math.isfinite(v) or v < 0) for v in y):
        raise ValueError(f"results[{method!r}][{key!r}] must be finite and ≥ 0 (None for missing), got {col}")
    return [v if v is None or v > 0 else None for v in y]


def complexity_figure(results: Results, *, title: Optional[str] = None, width: int = 820) -> go.Figure:
    """Time and peak memory against sequence length N, one line per method, log-log axes.

    Args: results: {method: {"n": [...], "time_ms": [...], "memory_mb": [...]}} ("memory_mb" optional, None
        entries are gaps). title: figure title (None: the default, translated). width: pixels.
    Returns: go.Figure: two traces named after each method, time (x axis "x") and memory ("x2").
    """
    if not isinstance(results, Mapping) or not results:
        raise ValueError(f"results must be a non-empty mapping {{method: columns}}, got {type(results).__name__}")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14,
                        subplot_titles=[t("time per forward pass"), t("peak memory")])
    for i, (method, cols) in enumerate((str(k), v) for k, v in results.items()):
        if cols.get("n") is None or "time_ms" not in cols:
            raise ValueError(f"results[{method!r}] must have 'n' and 'time_ms' (and optionally 'memory_mb')")
        n = [int(x) for x in cols["n"]]
        if any(x < 1 for x in n):
            raise ValueError(f"results[{method!r}]['n'] must be positive sequence lengths, got {n}")
        for key, unit, col in (("time_ms", "ms", 1), ("memory_mb", "MB", 2)):
            fig.add_trace(go.Scatter(
                x=n, y=_column(method, cols, key, n), mode="lines+markers", name=method, legendgroup=method,
                showlegend=(key == "time_ms"), line=dict(color=COLORS[i % 8], dash=DASHES[i % 8], width=2),
                marker=dict(symbol=SYMBOLS[i % 8], size=7), connectgaps=False,
                hovertemplate="N %{x}<br>%{y:.4g} " + unit + "<extra>" + escape(method) + "</extra>",
            ), 1, col)
    title = t("Cost of attention against sequence length N") if title is None else title
    fig.update_layout(**layout_base(title, width=pixels("width", width), height=420,
                                    margin=dict(l=65, r=20, t=70, b=110)),
                      legend=legend_below(-0.2))
    fig.update_xaxes(type="log", title_text=t("sequence length N (log scale)"))
    fig.update_yaxes(type="log", title_text=t("time (ms, log scale)"), row=1, col=1)
    fig.update_yaxes(type="log", title_text=t("peak memory (MB, log scale)"), row=1, col=2)
    return fig
