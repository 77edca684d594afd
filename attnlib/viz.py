"""Pure figure builders: arrays in, plotly figures out; nothing is displayed here.

Every builder returns a `plotly.graph_objects.Figure` with a title, axis titles and
colour-blind-safe colours (Viridis for weights, Okabe-Ito for lines); numbers are rounded to
4 decimals so that saved notebooks are identical across machines. Importing this module sets
`plotly.io.renderers.default = "plotly_mimetype"` (figures store only plotly JSON).

Public API (inputs may be torch tensors or numpy arrays):

    heatmap_figure(weights, q_tokens, k_tokens, *, mask=None, title="Attention weights") -> go.Figure
        weights [N_q, N_k]. Trace 0: the weights (z == weights rounded to 4 decimals, masked
        cells included as their weight); trace 1: the mask layer, drawn on top, z = 1 on masked
        cells (mask False) and NaN elsewhere, shown grey. customdata[i][j] = [query token, key
        token, "" or " (masked)"]. Axes are numeric positions 0..N-1 with token tick labels.
    head_grid_figure(weights, q_tokens, k_tokens, *, mask=None, title="Attention weights per head",
                     slots=None) -> go.Figure
        weights [heads, N_q, N_k]; one subplot per head (traces 2h and 2h+1 as above) sharing
        one colour bar (layout.coloraxis). `slots` ≥ heads reserves subplots so a live panel can
        later show more heads in place with `update_head_grid`.
    update_head_grid(fig, weights, q_tokens, k_tokens, *, mask=None) -> None
        Rewrite a figure from `head_grid_figure`/`heatmap_figure` (or its FigureWidget) in place
        for new weights [heads ≤ slots, N_q, N_k] (a 2-D array counts as one head). Call it
        inside `fig.batch_update()` for a single front-end message.
    saturation_figure(row_weights, *, k_tokens=None, d_k=None, n_keys=16,
                      d_k_values=(1, 2, 4, ..., 512), current=None, seed=0,
                      title="Softmax saturation") -> go.Figure
        2x2 panel: the weight distribution of one query row (bars, trace 0), then mean entropy,
        max weight and Jacobian norm of a softmax row vs d_k from `al.saturation_curve`, scaled
        (solid) against unscaled (dashed) (traces 1-6), a vertical marker line at `d_k`, and
        optional markers `current={"entropy": e, "max_weight": m, "jacobian_norm": j}` measured
        at `d_k` (traces 7-9).
    update_saturation(fig, row_weights, *, k_tokens=None, d_k=None, n_keys=None, current=None,
                      seed=0, row_label=None) -> None
        Rewrite a figure from `saturation_figure` in place.
    score_histogram_figure(scores, *, bins=40, title="q·k scores against the standard normal")
        -> go.Figure
        scores: one array, or a mapping {label: array} to overlay several (e.g. unscaled vs
        scaled). Histograms are computed in numpy (density, shared bins) and drawn as bars,
        with the N(0, 1) density as a line (last trace).
    convex_hull_figure(values, weights, *, tokens=None, title="Output inside the convex hull of the values")
        -> go.Figure
        values [N, 2], weights [N] (one attention row). Traces: 0 hull outline (closed),
        1 value points (marker size grows with weight), 2 the output point weights @ values.
    convex_hull(points) -> np.ndarray
        Vertices [M, 2] of the convex hull of points [N, 2], counter-clockwise (monotone chain).
    complexity_figure(results, *, title="Cost of attention against sequence length N") -> go.Figure
        results: {method: {"n": [...], "time_ms": [...], "memory_mb": [...]}} (memory_mb may be
        missing or contain None), or a list of rows {"method", "n", "time_ms", "memory_mb"}.
        Two log-log subplots: time vs N, peak memory vs N; one colour per method.

Colours: `OKABE_ITO` (8 colours), `HEATMAP_COLORSCALE` ("Viridis"), `MASK_COLOR`.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

pio.renderers.default = "plotly_mimetype"

OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]
HEATMAP_COLORSCALE = "Viridis"  # perceptually uniform, readable with colour-vision deficiencies
MASK_COLOR = "#c8c8c8"  # light grey: not on the Viridis scale, so "masked" never reads as a weight
DECIMALS = 4
FONT = dict(family="Arial, sans-serif", size=12)

ArrayLike = Any  # torch.Tensor, np.ndarray or nested lists


# ---------------------------------------------------------------- helpers


def _to_numpy(name: str, x: ArrayLike, ndim: Optional[int] = None) -> np.ndarray:
    """Return `x` (tensor, array or list) as a float64 numpy array, checking its rank."""
    if hasattr(x, "detach"):  # torch.Tensor
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric (tensor, array or list), got {type(x).__name__}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(arr.shape)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold only finite numbers, found NaN or inf")
    return arr


def _round(x: np.ndarray) -> np.ndarray:
    """Round to DECIMALS and turn -0.0 into 0.0, so that saved JSON is stable."""
    return np.round(x, DECIMALS) + 0.0


def _tokens(name: str, tokens: Sequence[Any], n: int) -> list[str]:
    """Return the token labels as strings, checking there is one per position."""
    if isinstance(tokens, str) or not hasattr(tokens, "__len__"):
        raise ValueError(f"{name} must be a sequence of {n} token labels, got {type(tokens).__name__}")
    if len(tokens) != n:
        raise ValueError(f"{name} must have one label per position: expected {n}, got {len(tokens)}")
    return [str(t) for t in tokens]


def _weights(name: str, weights: ArrayLike, ndim: int) -> np.ndarray:
    """Check attention weights: rank `ndim`, non-empty, every value in [0, 1]."""
    w = _to_numpy(name, weights, ndim)
    if w.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(w.shape)}")
    if w.min() < -1e-6 or w.max() > 1 + 1e-6:
        raise ValueError(
            f"{name} must be attention weights in [0, 1] (the colour range is fixed to 0–1), "
            f"got values from {w.min():.4g} to {w.max():.4g}"
        )
    return w


def _mask(mask: ArrayLike, shape: tuple[int, ...]) -> np.ndarray:
    """Return `mask` as a bool array of `shape` (True = may attend); leading size-1 dims are dropped."""
    if hasattr(mask, "detach"):
        mask = mask.detach().cpu().numpy()
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        if not np.all((m == 0) | (m == 1)):
            raise ValueError("mask must hold only bool or 0/1 values (True/1 = may attend)")
        m = m != 0
    while m.ndim > len(shape) and m.shape[0] == 1:
        m = m[0]
    try:
        return np.broadcast_to(m, shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {tuple(np.shape(mask))} does not broadcast to the weights' shape {shape}"
        ) from None


def _layout_base(title: str, **kwargs: Any) -> dict:
    """Common layout: title, white background, readable font."""
    layout = dict(
        title=dict(text=title, x=0.02, xanchor="left", font=dict(size=15)),
        font=FONT,
        template="plotly_white",
        margin=dict(l=60, r=20, t=60, b=50),
    )
    layout.update(kwargs)
    return layout


# ---------------------------------------------------------------- heatmaps and head grids

_GRID_W = 480  # default pixel width of a head-grid figure
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 80, 60, 80  # margins in px (right leaves room for the colour bar)


def _grid_shape(heads: int) -> tuple[int, int]:
    """(rows, cols) for `heads` subplots: as square as possible."""
    cols = math.ceil(math.sqrt(heads))
    return math.ceil(heads / cols), cols


def _grid_geometry(heads: int, n_q: int, n_k: int, width: int) -> dict:
    """Pixel height, axis domains and tick density for `heads` heatmaps in a figure `width` wide."""
    rows, cols = _grid_shape(heads)
    gap = 0.06 if cols > 1 else 0.0
    plot_w = width - _LEFT - _RIGHT
    cell_w = plot_w * (1 - gap * (cols - 1)) / cols  # px per subplot
    cell_h = cell_w * min(max(n_q / n_k, 0.5), 1.5)  # roughly square cells
    vgap_px = 34 if rows > 1 else 0  # room for the next subplot's "head i" label
    plot_h = rows * cell_h + (rows - 1) * vgap_px
    height = int(round(plot_h + _TOP + _BOTTOM))
    vgap = vgap_px / plot_h if plot_h else 0.0
    domains = []
    for h in range(heads):
        r, c = divmod(h, cols)
        x0 = c * (1 + gap) / cols
        x1 = x0 + (1 - gap * (cols - 1)) / cols
        y1 = 1 - r * (1 + vgap) / rows
        y0 = y1 - (1 - vgap * (rows - 1)) / rows
        domains.append(([round(x0, 4), round(min(x1, 1.0), 4)], [round(max(y0, 0.0), 4), round(y1, 4)]))
    return dict(rows=rows, cols=cols, height=height, domains=domains, cell_w=cell_w, cell_h=cell_h)


def _ticks(tokens: list[str], px: float) -> tuple[list[int], list[str]]:
    """Tick positions and labels: every token if they fit in `px` pixels, else every k-th."""
    n = len(tokens)
    step = max(1, math.ceil(n * 13 / max(px, 1.0)))  # ~13 px per label
    vals = list(range(0, n, step))
    return vals, [tokens[i] for i in vals]


def _axis_name(prefix: str, i: int) -> str:
    """'xaxis', 'xaxis2', ... for subplot i (0-based)."""
    return f"{prefix}axis" if i == 0 else f"{prefix}axis{i + 1}"


def _base_grid(slots: int, title: str, width: int) -> go.Figure:
    """An empty figure with `slots` heatmap subplots (two traces each) and a shared colour axis."""
    fig = go.Figure()
    for i in range(slots):
        ref = "" if i == 0 else str(i + 1)
        fig.add_trace(
            go.Heatmap(
                z=[[0.0]], coloraxis="coloraxis", xaxis=f"x{ref}", yaxis=f"y{ref}", name=f"head {i + 1}",
                hovertemplate=(
                    "query <b>%{customdata[0]}</b> → key <b>%{customdata[1]}</b><br>"
                    "weight %{z:.4f}%{customdata[2]}<extra>" + f"head {i + 1}" + "</extra>"
                ),
                xgap=0, ygap=0,
            )
        )
        fig.add_trace(
            go.Heatmap(
                z=[[None]], xaxis=f"x{ref}", yaxis=f"y{ref}", name=f"masked (head {i + 1})",
                colorscale=[[0, MASK_COLOR], [1, MASK_COLOR]], zmin=0, zmax=1, showscale=False,
                hoverinfo="skip", hoverongaps=False, texttemplate="%{text}",
                textfont=dict(color="#555555", size=11),
            )
        )
        fig.layout[_axis_name("x", i)] = dict(anchor=f"y{ref}", showgrid=False, zeroline=False,
                                              tickangle=-60, tickfont=dict(size=10), constrain="domain")
        fig.layout[_axis_name("y", i)] = dict(anchor=f"x{ref}", showgrid=False, zeroline=False,
                                              autorange=False, tickfont=dict(size=10), constrain="domain")
    fig.update_layout(
        **_layout_base(title, width=width, margin=dict(l=_LEFT, r=_RIGHT, t=_TOP, b=_BOTTOM)),
        coloraxis=dict(cmin=0, cmax=1, colorscale=HEATMAP_COLORSCALE,
                       colorbar=dict(title=dict(text="weight"), thickness=14, len=0.9, x=1.02,
                                     tickvals=[0, 0.25, 0.5, 0.75, 1])),
        plot_bgcolor="white",
        annotations=[
            dict(text=f"head {i + 1}", showarrow=False, xref="paper", yref="paper",
                 xanchor="center", yanchor="bottom", font=dict(size=11), visible=False, x=0, y=0)
            for i in range(slots)
        ] + [
            dict(text="", showarrow=False, xref="paper", yref="paper", x=0, y=0, xanchor="left",
                 yanchor="top", font=dict(size=11, color="#444444"), visible=False),  # axis-title note
        ],
    )
    fig.layout.meta = dict(kind="head_grid", slots=slots)
    return fig


def update_head_grid(
    fig: go.Figure,
    weights: ArrayLike,
    q_tokens: Sequence[Any],
    k_tokens: Sequence[Any],
    *,
    mask: Optional[ArrayLike] = None,
) -> None:
    """Rewrite a head-grid (or single heatmap) figure in place for new attention weights.

    Args:
        fig: a figure made by `head_grid_figure` or `heatmap_figure`, or its FigureWidget.
        weights: [heads, N_q, N_k] (or [N_q, N_k] for one head), heads ≤ the figure's slots.
        q_tokens, k_tokens: N_q and N_k labels. mask: bool/0-1 broadcastable to weights, True = may attend.

    Returns:
        None; only properties that changed are sent to the front end.
    """
    meta = fig.layout.meta or {}
    slots = int(meta.get("slots", 0)) if isinstance(meta, dict) else 0
    if slots < 1:
        raise ValueError("fig must be a figure made by head_grid_figure or heatmap_figure")
    w = _to_numpy("weights", weights)
    if w.ndim == 2:
        w = w[None]  # [1, N_q, N_k]
    w = _weights("weights", w, 3)  # [heads, N_q, N_k]
    heads, n_q, n_k = w.shape
    if heads > slots:
        raise ValueError(f"weights has {heads} heads but the figure has only {slots} slots (use slots ≥ heads)")
    qt = _tokens("q_tokens", q_tokens, n_q)
    kt = _tokens("k_tokens", k_tokens, n_k)
    allowed = np.ones(w.shape, dtype=bool) if mask is None else _mask(mask, w.shape)
    single = bool(meta.get("single", False))
    width = fig.layout.width or _GRID_W
    geo = _grid_geometry(heads, n_q, n_k, width)
    z = _round(w)
    xs = np.arange(n_k)
    ys = np.arange(n_q)
    cell_px = min(geo["cell_w"] / n_k, geo["cell_h"] / n_q)
    mark = "×" if cell_px >= 14 else ""
    any_masked = not bool(allowed.all())
    for h in range(slots):
        xa, ya = fig.layout[_axis_name("x", h)], fig.layout[_axis_name("y", h)]
        tw, tm = fig.data[2 * h], fig.data[2 * h + 1]
        visible = h < heads
        tw.visible = visible
        tm.visible = visible and any_masked
        xa.visible = visible
        ya.visible = visible
        fig.layout.annotations[h].visible = visible and not single
        if not visible:
            continue
        xdom, ydom = geo["domains"][h]
        xa.domain, ya.domain = xdom, ydom
        row, col = divmod(h, geo["cols"])
        xvals, xtext = _ticks(kt, geo["cell_w"])
        yvals, ytext = _ticks(qt, geo["cell_h"])
        xa.update(range=[-0.5, n_k - 0.5], tickvals=xvals, ticktext=xtext,
                  showticklabels=(row == geo["rows"] - 1 or h + geo["cols"] >= heads))
        ya.update(range=[n_q - 0.5, -0.5], tickvals=yvals, ticktext=ytext, showticklabels=(col == 0))
        fig.layout.annotations[h].update(x=round((xdom[0] + xdom[1]) / 2, 4), y=ydom[1])
        masked_h = ~allowed[h]  # [N_q, N_k]
        custom = np.empty((n_q, n_k, 3), dtype=object)  # [N_q, N_k, (query, key, note)]
        custom[..., 0] = np.asarray(qt, dtype=object)[:, None]
        custom[..., 1] = np.asarray(kt, dtype=object)[None, :]
        custom[..., 2] = np.where(masked_h, " (masked)", "")
        tw.update(z=z[h], x=xs, y=ys, customdata=custom)
        if any_masked:
            tm.update(z=np.where(masked_h, 1.0, np.nan), x=xs, y=ys,
                      text=np.where(masked_h, mark, ""))
    # axis titles: on the bottom-left subplot only (paper annotations would drift as domains change)
    bottom_left = (geo["rows"] - 1) * geo["cols"]
    for h in range(slots):
        fig.layout[_axis_name("x", h)].title = dict(text="key →" if h == min(bottom_left, heads - 1) else "")
        fig.layout[_axis_name("y", h)].title = dict(text="← query" if h == bottom_left or (h == 0 and single) else "")
    note = fig.layout.annotations[slots]
    plot_h = geo["height"] - _TOP - _BOTTOM
    note.update(visible=any_masked, text="grey cells: masked (never a weight of 0)",
                x=0.0, y=-round((_BOTTOM - 16) / max(plot_h, 1), 4))  # under the key axis title
    fig.layout.height = geo["height"]


def head_grid_figure(
    weights: ArrayLike,
    q_tokens: Sequence[Any],
    k_tokens: Sequence[Any],
    *,
    mask: Optional[ArrayLike] = None,
    title: str = "Attention weights per head",
    slots: Optional[int] = None,
    width: int = _GRID_W,
) -> go.Figure:
    """One attention heatmap per head, sharing a fixed 0–1 colour bar.

    Args:
        weights: [heads, N_q, N_k] attention weights (tensor or array).
        q_tokens, k_tokens: labels for the N_q queries (rows, top to bottom) and N_k keys (columns).
        mask: bool/0-1 broadcastable to [heads, N_q, N_k], True = may attend; False cells are grey.
        title: figure title. slots: subplots to reserve (≥ heads, default heads). width: pixels.

    Returns:
        go.Figure; traces 2h (weights, z rounded to 4 decimals) and 2h+1 (mask layer) per head.
    """
    w = _weights("weights", weights, 3)  # [heads, N_q, N_k]
    slots = w.shape[0] if slots is None else slots
    if isinstance(slots, bool) or not isinstance(slots, int) or slots < w.shape[0]:
        raise ValueError(f"slots must be an integer ≥ the number of heads ({w.shape[0]}), got {slots!r}")
    if isinstance(width, bool) or not isinstance(width, int) or width < 200:
        raise ValueError(f"width must be an integer number of pixels ≥ 200, got {width!r}")
    fig = _base_grid(slots, title, width)
    update_head_grid(fig, w, q_tokens, k_tokens, mask=mask)
    return fig


def heatmap_figure(
    weights: ArrayLike,
    q_tokens: Sequence[Any],
    k_tokens: Sequence[Any],
    *,
    mask: Optional[ArrayLike] = None,
    title: str = "Attention weights",
    width: int = 460,
) -> go.Figure:
    """One attention heatmap: queries top to bottom, keys left to right, fixed 0–1 colours.

    Args:
        weights: [N_q, N_k] attention weights (tensor or array).
        q_tokens, k_tokens: N_q and N_k token labels.
        mask: bool/0-1 broadcastable to [N_q, N_k], True = may attend; False cells are drawn grey.
        title: figure title. width: pixels.

    Returns:
        go.Figure; trace 0 holds the weights (z rounded to 4 decimals), trace 1 the mask layer.
    """
    w = _weights("weights", weights, 2)  # [N_q, N_k]
    if isinstance(width, bool) or not isinstance(width, int) or width < 200:
        raise ValueError(f"width must be an integer number of pixels ≥ 200, got {width!r}")
    fig = _base_grid(1, title, width)
    fig.layout.meta = dict(kind="head_grid", slots=1, single=True)
    update_head_grid(fig, w[None], q_tokens, k_tokens, mask=None if mask is None else _mask(mask, w.shape)[None])
    return fig
