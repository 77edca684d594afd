"""Pure figure builders: arrays in, plotly figures out; nothing is displayed here.

Every builder returns a `plotly.graph_objects.Figure` with a title, axis titles and
colour-blind-safe colours (Viridis for weights, Okabe-Ito for lines). Every number a figure holds
is either computed by `al.rounded` (the one rounding rule, 4 decimals unless said otherwise) or an
exact small integer or literal constant, so that saved notebooks are identical across machines. Importing this module sets
`plotly.io.renderers.default = "plotly_mimetype"` (figures store only plotly JSON).

Public API (inputs may be torch tensors or numpy arrays):

    heatmap_figure(weights, q_tokens, k_tokens, *, mask=None, title="Attention weights", width=460)
        -> go.Figure
        weights [N_q, N_k]. Trace 0: the weights (z == weights rounded to 4 decimals, masked
        cells included as their weight); trace 1: the mask layer, drawn on top, z = 1 on masked
        cells (mask False) and 0 elsewhere; colours: 1 grey, 0 transparent ("×" too when cells are large).
        customdata[i][j] = [query token, key token]. Axes are numeric positions 0..N-1 with token
        tick labels (so repeated tokens stay apart); y reversed (first query on top).
    head_grid_figure(weights, q_tokens, k_tokens, *, mask=None, title="Attention weights per head",
                     slots=None, width=480) -> go.Figure
        weights [heads, N_q, N_k]; one subplot per head (traces 2h and 2h+1 as above) sharing
        one colour bar (layout.coloraxis). `slots` ≥ heads reserves subplots so a live panel can
        later show more heads in place with `update_head_grid`.
    update_head_grid(fig, weights, q_tokens, k_tokens, *, mask=None) -> None
        Rewrite a figure from `head_grid_figure`/`heatmap_figure` (or its FigureWidget) in place
        for new weights [heads ≤ slots, N_q, N_k] (a 2-D array counts as one head). Call it
        inside `fig.batch_update()` for a single front-end message.
    saturation_figure(row_weights, *, k_tokens=None, d_k=None, n_keys=16,
                      d_k_values=(1, 2, 4, ..., 512), current=None, row_mask=None,
                      row_label="one query row", seed=0, title="Softmax saturation", width=440) -> go.Figure
        2x2 panel: the weight distribution of one query row (bars, trace 0; masked keys grey),
        then mean entropy, max weight and Jacobian norm of a softmax row vs d_k from
        `al.saturation_curve(d_k_values, n_keys=n_keys, n_queries=128, seed=seed)`, scaled (solid)
        against unscaled (dashed) (traces 1-6: entropy scaled, unscaled, max weight scaled, …), a
        dotted vertical line at `d_k`, and optional markers
        `current={"entropy": e, "max_weight": m, "jacobian_norm": j}` drawn at `d_k` (traces 7-9).
    update_saturation(fig, row_weights, *, k_tokens=None, d_k=None, n_keys=None, current=None,
                      row_mask=None, seed=0, row_label=None) -> None
        Rewrite a figure from `saturation_figure` in place (n_keys=None keeps the curves).
    score_histogram_figure(scores, *, bins=40, title="q·k scores against the standard normal", width=560)
        -> go.Figure
        scores: one array, or a mapping {label: array} to overlay several (e.g. unscaled vs
        scaled). Histograms are computed in numpy (density, shared bins) and drawn as bars,
        with the N(0, 1) density as a line (last trace).
    update_score_histogram(fig, scores) -> None
        Rewrite a histogram figure in place (same number of series).
    convex_hull_figure(values, weights, *, tokens=None,
                       title="Output inside the convex hull of the values", width=480) -> go.Figure
        values [N, 2], weights [N] (one attention row, sums to 1). Traces: 0 hull outline (closed),
        1 value points (marker size grows with weight), 2 the output point weights @ values.
    update_convex_hull(fig, values, weights, *, tokens=None) -> None
        Rewrite a convex-hull figure in place (e.g. as a query moves).
    convex_hull(points) -> np.ndarray
        Vertices [M, 2] of the convex hull of points [N, 2], counter-clockwise (monotone chain).
    complexity_figure(results, *, title="Cost of attention against sequence length N", width=820)
        -> go.Figure
        results: {method: {"n": [...], "time_ms": [...], "memory_mb": [...]}} (memory_mb may be
        missing or contain None), or a list of rows {"method", "n", "time_ms", "memory_mb"}.
        Two log-log subplots: time vs N, peak memory vs N; one colour, dash and marker per method
        (trace 2i time, 2i+1 memory of method i).

Figures are sized in pixels (`width`) so that two fit side by side in a ~850 px notebook column.

    single_thread() -> context manager
        Run torch on one thread inside the block (live panels compute on tiny tensors).

Colours: `OKABE_ITO` (8 colours), `HEATMAP_COLORSCALE` ("Viridis"), `MASK_COLOR`.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .rounding import rounded

pio.renderers.default = "plotly_mimetype"

OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]
HEATMAP_COLORSCALE = "Viridis"  # perceptually uniform, readable with colour-vision deficiencies
MASK_COLOR = "#c8c8c8"  # light grey: not on the Viridis scale, so "masked" never reads as a weight
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
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 80, 60, 100  # margins in px (right leaves room for the colour bar)


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
        domains.append((rounded([x0, min(x1, 1.0)]).tolist(), rounded([max(y0, 0.0), y1]).tolist()))
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
                    "weight %{z:.4f}<extra>" + f"head {i + 1}" + "</extra>"
                ),
                xgap=0, ygap=0,
            )
        )
        fig.add_trace(
            go.Heatmap(
                z=[[0.0]], xaxis=f"x{ref}", yaxis=f"y{ref}", name=f"masked (head {i + 1})",
                # 0 = transparent, 1 = grey; no NaN gaps, because widgets send JSON and NaN is not JSON
                colorscale=[[0, "rgba(0,0,0,0)"], [1, MASK_COLOR]], zmin=0, zmax=1, showscale=False,
                hoverinfo="skip", texttemplate="%{text}",
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
                       colorbar=dict(title=dict(text="weight", side="right"), thickness=14, len=0.9, x=1.02,
                                     tickvals=[0, 0.25, 0.5, 0.75, 1])),
        plot_bgcolor="rgba(0,0,0,0)",  # transparent: overlapping subplot backgrounds never hide heatmaps
        annotations=[
            dict(text=f"head {i + 1}", showarrow=False, xref="paper", yref="paper",
                 xanchor="center", yanchor="bottom", font=dict(size=11), visible=False, x=0, y=0)
            for i in range(slots)
        ] + [
            dict(text="", showarrow=False, xref="paper", yref="paper", x=0, y=0, xanchor="left",
                 yanchor="bottom", font=dict(size=11, color="#444444"), visible=False),  # note under "key →"
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
    z = rounded(w)  # [heads, N_q, N_k]
    # Live panels call this on every event, so each group of properties is only rewritten when
    # its inputs changed (plotly sends every assigned property to the browser).
    state = getattr(fig, "_al_grid_state", None) or {}
    geo = _grid_geometry(heads, n_q, n_k, width)
    if state.get("geometry") != (heads, n_q, n_k, width):
        for h in range(slots):
            xa, ya = fig.layout[_axis_name("x", h)], fig.layout[_axis_name("y", h)]
            visible = h < heads
            fig.data[2 * h].visible = visible
            xa.visible = visible
            ya.visible = visible
            fig.layout.annotations[h].visible = visible and not single
            if not visible:  # a hidden subplot must not cover the others: park it in a corner
                xa.domain, ya.domain = [0.9999, 1.0], [0.0, 0.0001]
                continue
            xdom, ydom = geo["domains"][h]
            row, col = divmod(h, geo["cols"])
            xa.update(domain=xdom, range=[-0.5, n_k - 0.5],
                      showticklabels=(row == geo["rows"] - 1 or h + geo["cols"] >= heads))
            ya.update(domain=ydom, range=[n_q - 0.5, -0.5], showticklabels=(col == 0))
            fig.layout.annotations[h].update(x=rounded((xdom[0] + xdom[1]) / 2), y=ydom[1])
        bottom_left = (geo["rows"] - 1) * geo["cols"]  # axis titles only there: "key →", "← query"
        for h in range(slots):
            fig.layout[_axis_name("x", h)].title = dict(text="key →" if h == min(bottom_left, heads - 1) else "")
            fig.layout[_axis_name("y", h)].title = dict(text="← query" if h == bottom_left else "")
        plot_h = geo["height"] - _TOP - _BOTTOM
        fig.layout.annotations[slots].y = -rounded((_BOTTOM - 2) / max(plot_h, 1))  # at the bottom edge
        fig.layout.height = geo["height"]
        state["geometry"] = (heads, n_q, n_k, width)
        state.pop("tokens", None)
        state.pop("mask", None)
    if state.get("tokens") != (tuple(qt), tuple(kt)):
        xs, ys = np.arange(n_k), np.arange(n_q)
        custom = np.empty((n_q, n_k, 2), dtype=object)  # [N_q, N_k, (query token, key token)]
        custom[..., 0] = np.asarray(qt, dtype=object)[:, None]
        custom[..., 1] = np.asarray(kt, dtype=object)[None, :]
        xvals, xtext = _ticks(kt, geo["cell_w"])
        yvals, ytext = _ticks(qt, geo["cell_h"])
        for h in range(heads):
            fig.layout[_axis_name("x", h)].update(tickvals=xvals, ticktext=xtext)
            fig.layout[_axis_name("y", h)].update(tickvals=yvals, ticktext=ytext)
            fig.data[2 * h].update(x=xs, y=ys, customdata=custom)
            fig.data[2 * h + 1].update(x=xs, y=ys)
        state["tokens"] = (tuple(qt), tuple(kt))
    any_masked = not bool(allowed.all())
    if state.get("mask") != allowed.tobytes():
        cell_px = min(geo["cell_w"] / n_k, geo["cell_h"] / n_q)
        for h in range(slots):
            tm = fig.data[2 * h + 1]
            tm.visible = h < heads and any_masked
            if h < heads and any_masked:
                masked_h = ~allowed[h]  # [N_q, N_k]
                # a "×" in each masked cell when cells are large enough, so the mask does not rely on colour
                tm.update(z=masked_h.astype(np.float64),
                          text=np.where(masked_h, "×", "") if cell_px >= 14 else None)
        fig.layout.annotations[slots].update(visible=any_masked, text="grey cells: masked (never a weight of 0)")
        state["mask"] = allowed.tobytes()
    for h in range(heads):
        fig.data[2 * h].z = z[h]
    fig._al_grid_state = state  # plotly allows private attributes on figures


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


# ---------------------------------------------------------------- softmax saturation

DEFAULT_D_K_VALUES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
_SCALED_COLOR, _UNSCALED_COLOR, _CURRENT_COLOR = OKABE_ITO[4], OKABE_ITO[5], OKABE_ITO[7]
_BAR_COLOR = OKABE_ITO[4]
_CURVE_KEYS = ("entropy", "max_weight", "jacobian_norm")
_CURVE_TITLES = {"entropy": "entropy (nats)", "max_weight": "max weight", "jacobian_norm": "‖Jacobian‖_F"}
_LOG10_4 = 0.6020599913279624  # log10(4) correctly rounded, written out so that no libm's log10 reaches the JSON
_SAT_N_QUERIES = 128  # rows averaged per point of a curve: smooth enough, and fast enough to redraw live
_curve_cache: dict[tuple, dict[str, list[float]]] = {}


def _saturation_curves(d_k_values: tuple[int, ...], n_keys: int, seed: int) -> dict[bool, dict[str, list[float]]]:
    """`al.saturation_curve` scaled and unscaled, cached by (d_k values, n_keys, seed)."""
    from .core import saturation_curve  # torch import happens here, only when curves are needed

    out = {}
    for scaled in (True, False):
        key = (d_k_values, n_keys, seed, scaled)
        if key not in _curve_cache:
            if len(_curve_cache) > 64:
                _curve_cache.clear()
            with single_thread():
                _curve_cache[key] = saturation_curve(
                    list(d_k_values), scaled=scaled, n_keys=n_keys, n_queries=_SAT_N_QUERIES, seed=seed
                )
        out[scaled] = _curve_cache[key]
    return out


@contextlib.contextmanager
def single_thread():
    """Run torch on one thread inside the `with` block, then restore the thread count.

    Panels compute on tiny tensors: on a busy machine, waiting for a second thread cost 10-25 ms per
    matmul (measured) while the work takes ~0.02 ms.
    """
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    """Return `value` if it is an integer ≥ minimum, else raise naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    return int(value)


def saturation_figure(
    row_weights: ArrayLike,
    *,
    k_tokens: Optional[Sequence[Any]] = None,
    d_k: Optional[int] = None,
    n_keys: int = 16,
    d_k_values: Sequence[int] = DEFAULT_D_K_VALUES,
    current: Optional[Mapping[str, float]] = None,
    row_mask: Optional[ArrayLike] = None,
    row_label: str = "one query row",
    seed: int = 0,
    title: str = "Softmax saturation",
    width: int = 440,
) -> go.Figure:
    """Weight distribution of one query row, and entropy / max weight / Jacobian norm against d_k.

    The curves are `al.saturation_curve(d_k_values, scaled=…, n_keys=n_keys, seed=seed)` (means
    over random N(0, 1) queries and keys), scaled by 1/√d_k (solid) against unscaled (dashed).

    Args:
        row_weights: [N_k] one row of attention weights. k_tokens: N_k labels (default 0..N_k-1).
        d_k: draw a vertical marker at this d_k. n_keys: keys per row for the curves.
        d_k_values: the d_k grid of the curves (each ≥ 1, increasing).
        current: optional {"entropy", "max_weight", "jacobian_norm"} measured at `d_k`, drawn as markers.
        row_mask: [N_k] bool, False = masked key (its bar is grey). row_label: title of the bar chart.
        seed: seed of the curves. title: figure title. width: pixels.

    Returns:
        go.Figure: trace 0 bars; traces 1-6 curves (entropy, max weight, Jacobian norm; scaled then
        unscaled); traces 7-9 the `current` markers.
    """
    dks = tuple(_positive_int("d_k_values", v) for v in d_k_values) if len(d_k_values) else ()
    if not dks or list(dks) != sorted(set(dks)):
        raise ValueError(f"d_k_values must be a non-empty increasing sequence of integers ≥ 1, got {list(d_k_values)!r}")
    if isinstance(width, bool) or not isinstance(width, int) or width < 200:
        raise ValueError(f"width must be an integer number of pixels ≥ 200, got {width!r}")
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=2, cols=2, horizontal_spacing=0.2, vertical_spacing=0.32,
        subplot_titles=[row_label, "entropy vs d_k", "max weight vs d_k", "Jacobian norm vs d_k"],
    )
    fig.add_trace(go.Bar(x=[0], y=[0.0], marker_color=_BAR_COLOR, name="weight", showlegend=False,
                         hovertemplate="key <b>%{customdata}</b><br>weight %{y:.4f}<extra></extra>"), 1, 1)
    cells = [(1, 2), (2, 1), (2, 2)]
    for (r, c), key in zip(cells, _CURVE_KEYS):
        for scaled in (True, False):
            fig.add_trace(go.Scatter(
                x=list(dks), y=[0.0] * len(dks), mode="lines+markers",
                name="scaled by 1/√d_k" if scaled else "unscaled",
                legendgroup="scaled" if scaled else "unscaled", showlegend=(key == "entropy"),
                line=dict(color=_SCALED_COLOR if scaled else _UNSCALED_COLOR, dash="solid" if scaled else "dash", width=2),
                marker=dict(size=5, symbol="circle" if scaled else "square"),
                hovertemplate="d_k %{x}<br>" + _CURVE_TITLES[key] + " %{y:.4f}<extra>"
                + ("scaled" if scaled else "unscaled") + "</extra>",
            ), r, c)
    for (r, c), key in zip(cells, _CURVE_KEYS):
        fig.add_trace(go.Scatter(
            x=[None], y=[None], mode="markers", name="this panel (mean of its rows)", legendgroup="current",
            showlegend=(key == "entropy"), marker=dict(color=_CURRENT_COLOR, size=11, symbol="diamond-open", line=dict(width=2)),
            hovertemplate="d_k %{x}<br>" + _CURVE_TITLES[key] + " %{y:.4f}<extra>this panel</extra>",
        ), r, c)
    fig.update_layout(**_layout_base(title, width=width, height=560,
                                     margin=dict(l=55, r=15, t=70, b=95)),
                      legend=dict(orientation="h", x=0, y=-0.2, xanchor="left", yanchor="top"),
                      bargap=0.15, meta=dict(kind="saturation", d_k_values=list(dks)))
    fig.update_annotations(font=dict(size=12))
    fig.update_yaxes(title_text="weight", range=[0, 1.02], row=1, col=1)
    fig.update_xaxes(title_text="key", tickangle=-60, tickfont=dict(size=10), row=1, col=1)
    for (r, c), key in zip(cells, _CURVE_KEYS):
        fig.update_xaxes(type="log", title_text="d_k (log scale)", dtick=_LOG10_4 if len(dks) > 5 else None,
                         row=r, col=c)
        fig.update_yaxes(title_text=_CURVE_TITLES[key], rangemode="tozero", row=r, col=c)
    for axis in ("x2", "x3", "x4"):  # vertical marker at the current d_k on each curve plot
        fig.add_shape(type="line", xref=axis, yref=f"{axis.replace('x', 'y')} domain", x0=1, x1=1, y0=0, y1=1,
                      line=dict(color="#777777", width=1, dash="dot"), visible=False)
    update_saturation(fig, row_weights, k_tokens=k_tokens, d_k=d_k, n_keys=n_keys, current=current,
                      row_mask=row_mask, seed=seed, row_label=row_label)
    return fig


def update_saturation(
    fig: go.Figure,
    row_weights: ArrayLike,
    *,
    k_tokens: Optional[Sequence[Any]] = None,
    d_k: Optional[int] = None,
    n_keys: Optional[int] = None,
    current: Optional[Mapping[str, float]] = None,
    row_mask: Optional[ArrayLike] = None,
    seed: int = 0,
    row_label: Optional[str] = None,
) -> None:
    """Rewrite a figure from `saturation_figure` (or its FigureWidget) in place.

    Args:
        fig: the saturation figure. row_weights: [N_k] one attention row. k_tokens: N_k labels.
        d_k: marker position (None hides it). n_keys: keys per row of the curves (None keeps them).
        current: {"entropy", "max_weight", "jacobian_norm"} at d_k, or None to hide the markers.
        row_mask: [N_k] bool, False = masked key. seed: seed of the curves. row_label: bar-chart title.

    Returns:
        None.
    """
    meta = fig.layout.meta or {}
    if not isinstance(meta, dict) or meta.get("kind") != "saturation":
        raise ValueError("fig must be a figure made by saturation_figure")
    row = _weights("row_weights", row_weights, 1)  # [N_k]
    n = row.shape[0]
    toks = [str(i) for i in range(n)] if k_tokens is None else _tokens("k_tokens", k_tokens, n)
    allowed = np.ones(n, dtype=bool) if row_mask is None else _mask(row_mask, (n,))
    dks = tuple(meta["d_k_values"])
    if d_k is not None:
        d_k = _positive_int("d_k", d_k)
    seed = _positive_int("seed", seed, 0)
    # Live panels call this on every event: only send the parts that changed since the last call.
    state = getattr(fig, "_al_sat_state", None) or {}
    bars = fig.data[0]
    if state.get("keys") != (tuple(toks), allowed.tobytes()):
        bars.update(x=np.arange(n), customdata=np.asarray(toks, dtype=object),
                    marker_color=np.where(allowed, _BAR_COLOR, MASK_COLOR).astype(object))
        vals, text = _ticks(toks, (fig.layout.width or 440) * 0.35)
        fig.layout.xaxis.update(tickvals=vals, ticktext=text, range=[-0.5, n - 0.5])
        state["keys"] = (tuple(toks), allowed.tobytes())
    bars.y = rounded(row)
    if row_label is not None and state.get("row_label") != row_label:
        fig.layout.annotations[0].text = str(row_label)
        state["row_label"] = row_label
    if n_keys is not None and state.get("curves") != (n_keys, seed):
        curves = _saturation_curves(dks, _positive_int("n_keys", n_keys), seed)
        for i, key in enumerate(_CURVE_KEYS):
            fig.data[1 + 2 * i].y = rounded(curves[True][key])
            fig.data[2 + 2 * i].y = rounded(curves[False][key])
        state["curves"] = (n_keys, seed)
    for i, key in enumerate(_CURVE_KEYS):
        marker = fig.data[7 + i]
        if current is None or d_k is None:
            marker.update(x=[None], y=[None])
        else:
            if key not in current:
                raise ValueError(f"current must have the keys {list(_CURVE_KEYS)}, got {sorted(current)}")
            marker.update(x=[d_k], y=[rounded(current[key])])
    if state.get("d_k", 0) != d_k:
        for shape in fig.layout.shapes:
            shape.update(visible=d_k is not None, x0=d_k or 1, x1=d_k or 1)
        state["d_k"] = d_k
    fig._al_sat_state = state


# ---------------------------------------------------------------- q·k score histogram


def score_histogram_figure(
    scores: Union[ArrayLike, Mapping[str, ArrayLike]],
    *,
    bins: int = 40,
    title: str = "q·k scores against the standard normal",
    width: int = 560,
) -> go.Figure:
    """Density histogram(s) of attention scores with the N(0, 1) density on top.

    Args:
        scores: an array of scores (any shape, flattened), or {label: array} to overlay several.
        bins: number of shared bins, ≥ 2. title: figure title. width: pixels.

    Returns:
        go.Figure: one bar trace per series (name "<label> (var v)"), last trace the N(0, 1) line.
    """
    n_series = len(scores) if isinstance(scores, Mapping) else 1
    if n_series < 1:
        raise ValueError("scores must be an array or a non-empty mapping {label: array}")
    _positive_int("bins", bins, 2)
    if isinstance(width, bool) or not isinstance(width, int) or width < 200:
        raise ValueError(f"width must be an integer number of pixels ≥ 200, got {width!r}")
    fig = go.Figure()
    for i in range(n_series):
        fig.add_trace(go.Bar(x=[0], y=[0], marker_color=OKABE_ITO[[4, 5, 2, 0, 6, 1][i % 6]], opacity=0.6))
    fig.add_trace(go.Scatter(x=[0], y=[0], mode="lines", name="N(0, 1) density",
                             line=dict(color=_CURRENT_COLOR, width=2),
                             hovertemplate="score %{x:.2f}<br>N(0,1) density %{y:.4f}<extra></extra>"))
    fig.update_layout(**_layout_base(title, width=width, height=380), barmode="overlay", bargap=0,
                      xaxis_title="score", yaxis_title="density",
                      legend=dict(x=0.99, xanchor="right", y=0.99, bgcolor="rgba(255,255,255,0.7)"),
                      meta=dict(kind="score_histogram", bins=bins, series=n_series))
    update_score_histogram(fig, scores)
    return fig


def update_score_histogram(fig: go.Figure, scores: Union[ArrayLike, Mapping[str, ArrayLike]]) -> None:
    """Rewrite a figure from `score_histogram_figure` in place with new scores (same number of series).

    Args:
        fig: the histogram figure. scores: an array, or {label: array}, as for the builder.

    Returns:
        None.
    """
    meta = fig.layout.meta or {}
    if not isinstance(meta, dict) or meta.get("kind") != "score_histogram":
        raise ValueError("fig must be a figure made by score_histogram_figure")
    series = dict(scores) if isinstance(scores, Mapping) else {"q·k": scores}
    if len(series) != meta["series"]:
        raise ValueError(f"scores must have {meta['series']} series like the figure, got {len(series)}")
    data = {}
    for label, s in series.items():
        arr = _to_numpy(f"scores[{label!r}]" if isinstance(scores, Mapping) else "scores", s).ravel()
        if arr.size < 2:
            raise ValueError(f"scores must hold at least 2 values per series, got {arr.size} for {label!r}")
        data[str(label)] = arr
    lo = min(min(float(a.min()) for a in data.values()), -4.0)
    hi = max(max(float(a.max()) for a in data.values()), 4.0)
    edges = np.linspace(lo, hi, int(meta["bins"]) + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    for trace, (label, arr) in zip(fig.data, data.items()):
        density, _ = np.histogram(arr, bins=edges, density=True)
        trace.update(x=rounded(centres), y=rounded(density), width=rounded(edges[1] - edges[0]),
                     name=f"{label} (var {rounded(arr.var(), 2):.2f})",
                     hovertemplate="score %{x:.2f}<br>density %{y:.4f}<extra>" + html_escape(label) + "</extra>")
    grid = np.linspace(lo, hi, 241)
    pdf = np.exp(-grid**2 / 2) / math.sqrt(2 * math.pi)
    fig.data[-1].update(x=rounded(grid), y=rounded(pdf))


def html_escape(text: str) -> str:
    """Escape <, > and & for plotly hover/label text."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------- convex hull of the values


def convex_hull(points: ArrayLike) -> np.ndarray:
    """Vertices of the convex hull of 2-D points, counter-clockwise (Andrew's monotone chain).

    Args:
        points: [N, 2], N ≥ 1.

    Returns:
        [M, 2] hull vertices without repetition (M = 1 for one point, 2 for collinear points).
    """
    p = _to_numpy("points", points, 2)
    if p.shape[0] < 1 or p.shape[1] != 2:
        raise ValueError(f"points must have shape [N ≥ 1, 2], got {tuple(p.shape)}")
    pts = np.unique(p, axis=0)  # sorted by x, then y
    if len(pts) <= 2:
        return pts

    def cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
        return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))

    lower: list[np.ndarray] = []
    for q in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], q) <= 0:
            lower.pop()
        lower.append(q)
    upper: list[np.ndarray] = []
    for q in pts[::-1]:
        while len(upper) >= 2 and cross(upper[-2], upper[-1], q) <= 0:
            upper.pop()
        upper.append(q)
    return np.array(lower[:-1] + upper[:-1])  # [M, 2]


def convex_hull_figure(
    values: ArrayLike,
    weights: ArrayLike,
    *,
    tokens: Optional[Sequence[Any]] = None,
    title: str = "Output inside the convex hull of the values",
    width: int = 480,
) -> go.Figure:
    """The value vectors in 2-D, their convex hull, and the attention output Σ w_j v_j.

    Args:
        values: [N, 2] value vectors. weights: [N] one attention row (≥ 0, sums to 1).
        tokens: N labels for the value points. title: figure title. width: pixels.

    Returns:
        go.Figure: trace 0 hull outline (closed polygon), 1 value points (size grows with weight),
        2 the output point weights @ values.
    """
    if isinstance(width, bool) or not isinstance(width, int) or width < 200:
        raise ValueError(f"width must be an integer number of pixels ≥ 200, got {width!r}")
    fig = go.Figure([
        go.Scatter(x=[0], y=[0], mode="lines", fill="toself", fillcolor="rgba(0,114,178,0.12)",
                   line=dict(color=OKABE_ITO[4], width=1.5), name="convex hull", hoverinfo="skip"),
        go.Scatter(x=[0], y=[0], mode="markers+text", name="value vectors v_j", textposition="top center",
                   marker=dict(color=OKABE_ITO[4], line=dict(color="white", width=1)),
                   hovertemplate="<b>%{text}</b> (%{x:.3f}, %{y:.3f})<br>weight %{customdata:.4f}<extra></extra>"),
        go.Scatter(x=[0], y=[0], mode="markers", name="output Σ w_j v_j",
                   marker=dict(color=OKABE_ITO[5], size=16, symbol="star", line=dict(color="black", width=1)),
                   hovertemplate="output (%{x:.4f}, %{y:.4f})<extra></extra>"),
    ])
    fig.update_layout(**_layout_base(title, width=width, height=460),
                      xaxis=dict(title="value dimension 1", zeroline=False),
                      yaxis=dict(title="value dimension 2", zeroline=False, scaleanchor="x", scaleratio=1),
                      legend=dict(orientation="h", x=0, y=-0.18, xanchor="left", yanchor="top"),
                      meta=dict(kind="convex_hull"))
    update_convex_hull(fig, values, weights, tokens=tokens)
    return fig


def update_convex_hull(
    fig: go.Figure,
    values: ArrayLike,
    weights: ArrayLike,
    *,
    tokens: Optional[Sequence[Any]] = None,
) -> None:
    """Rewrite a figure from `convex_hull_figure` in place (e.g. as a query slider moves).

    Args:
        fig: the convex-hull figure. values: [N, 2]. weights: [N] one attention row. tokens: N labels.

    Returns:
        None.
    """
    meta = fig.layout.meta or {}
    if not isinstance(meta, dict) or meta.get("kind") != "convex_hull":
        raise ValueError("fig must be a figure made by convex_hull_figure")
    v = _to_numpy("values", values, 2)  # [N, 2]
    if v.shape[0] < 1 or v.shape[1] != 2:
        raise ValueError(f"values must have shape [N ≥ 1, 2], got {tuple(v.shape)}")
    w = _weights("weights", weights, 1)  # [N]
    if w.shape[0] != v.shape[0]:
        raise ValueError(f"weights must have one entry per value vector: expected {v.shape[0]}, got {w.shape[0]}")
    if abs(w.sum() - 1) > 1e-3:
        raise ValueError(f"weights must sum to 1 (one softmax row), got sum {w.sum():.4f}")
    toks = [f"v{i}" for i in range(len(v))] if tokens is None else _tokens("tokens", tokens, len(v))
    hull = convex_hull(v)
    closed = np.vstack([hull, hull[:1]])  # [M + 1, 2]
    out = w @ v  # [2]
    fig.data[0].update(x=rounded(closed[:, 0]), y=rounded(closed[:, 1]))
    fig.data[1].update(x=rounded(v[:, 0]), y=rounded(v[:, 1]), text=toks, customdata=rounded(w),
                       marker_size=rounded(8 + 28 * np.sqrt(w)))
    fig.data[2].update(x=[rounded(out[0])], y=[rounded(out[1])])


# ---------------------------------------------------------------- cost against N


def complexity_figure(
    results: Union[Mapping[str, Mapping[str, Sequence[Any]]], Sequence[Mapping[str, Any]]],
    *,
    title: str = "Cost of attention against sequence length N",
    width: int = 820,
) -> go.Figure:
    """Time and peak memory against sequence length N, one line per method, log-log axes.

    Args:
        results: {method: {"n": [...], "time_ms": [...], "memory_mb": [...]}} ("memory_mb" optional,
            None entries are gaps), or a list of rows {"method", "n", "time_ms", "memory_mb"}.
        title: figure title. width: pixels.

    Returns:
        go.Figure: for method i, trace 2i is time (left subplot), trace 2i+1 memory (right subplot).
    """
    if isinstance(results, Mapping):
        table = {str(k): dict(v) for k, v in results.items()}
    elif isinstance(results, Sequence) and not isinstance(results, str):
        table = {}
        for i, row in enumerate(results):
            if not isinstance(row, Mapping) or not {"method", "n", "time_ms"} <= set(row):
                raise ValueError(f"results[{i}] must be a mapping with keys method, n, time_ms (memory_mb optional)")
            t = table.setdefault(str(row["method"]), {"n": [], "time_ms": [], "memory_mb": []})
            t["n"].append(row["n"])
            t["time_ms"].append(row["time_ms"])
            t["memory_mb"].append(row.get("memory_mb"))
    else:
        raise ValueError(f"results must be a mapping or a list of rows, got {type(results).__name__}")
    if not table:
        raise ValueError("results must hold at least one method")
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14,
                        subplot_titles=["time per forward pass", "peak memory"])
    symbols = ["circle", "square", "diamond", "triangle-up", "x", "cross", "star", "hexagon"]
    dashes = ["solid", "dash", "dot", "dashdot", "longdash", "solid", "dash", "dot"]
    for i, (method, cols) in enumerate(table.items()):
        n = cols.get("n")
        if n is None or "time_ms" not in cols:
            raise ValueError(f"results[{method!r}] must have 'n' and 'time_ms' (and optionally 'memory_mb')")
        n = [int(x) for x in n]
        if any(x < 1 for x in n):
            raise ValueError(f"results[{method!r}]['n'] must be positive sequence lengths, got {n}")
        for key in ("time_ms", "memory_mb"):
            col = cols.get(key) or [None] * len(n)
            if len(col) != len(n):
                raise ValueError(f"results[{method!r}][{key!r}] must have {len(n)} entries (one per N), got {len(col)}")
            y = [None if v is None else rounded(float(v)) for v in col]
            if any(v is not None and (not math.isfinite(v) or v < 0) for v in y):
                raise ValueError(f"results[{method!r}][{key!r}] must be finite and ≥ 0 (None for missing), got {col}")
            y = [v if v is None or v > 0 else None for v in y]  # 0 has no place on a log axis
            unit = "ms" if key == "time_ms" else "MB"
            fig.add_trace(go.Scatter(
                x=n, y=y, mode="lines+markers", name=method, legendgroup=method, showlegend=(key == "time_ms"),
                line=dict(color=OKABE_ITO[[4, 5, 2, 0, 6, 1, 7, 3][i % 8]], dash=dashes[i % 8], width=2),
                marker=dict(symbol=symbols[i % 8], size=7), connectgaps=False,
                hovertemplate="N %{x}<br>%{y:.4g} " + unit + "<extra>" + html_escape(method) + "</extra>",
            ), 1, 1 if key == "time_ms" else 2)
    fig.update_layout(**_layout_base(title, width=width, height=420, margin=dict(l=65, r=20, t=70, b=110)),
                      legend=dict(orientation="h", x=0, y=-0.2, xanchor="left", yanchor="top"))
    fig.update_xaxes(type="log", title_text="sequence length N (log scale)")
    fig.update_yaxes(type="log", title_text="time (ms, log scale)", row=1, col=1)
    fig.update_yaxes(type="log", title_text="peak memory (MB, log scale)", row=1, col=2)
    return fig


# ---------------------------------------------------------------- query space and key space (notebook 02)


def _qk_plane(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """2-D coordinates of queries and keys drawn together, and the share of squared length they keep.

    For d_k ≤ 2 the coordinates are the vectors themselves (exact); for larger d_k they are the
    projections onto the plane through the origin that keeps most of the stacked points'
    squared length (uncentred SVD, signs fixed so the picture is reproducible).
    """
    both = np.concatenate([q, k])  # [N_q + N_k, d_k]
    if both.shape[1] <= 2:
        xy = np.pad(both, ((0, 0), (0, 2 - both.shape[1])))  # [N_q + N_k, 2]
        shown = 1.0
    else:
        _, s, vh = np.linalg.svd(both, full_matrices=False)
        top = vh[:2]  # [2, d_k]
        top = top * np.sign(top[np.arange(2), np.abs(top).argmax(axis=1)])[:, None]  # largest entry positive
        xy = both @ top.T  # [N_q + N_k, 2]
        total = float((s**2).sum())
        shown = float((s[:2] ** 2).sum() / total) if total > 0 else 1.0
    xy = rounded(xy)
    return xy[: len(q)], xy[len(q):], shown


def update_qk_space(fig: go.Figure, q: ArrayLike, k: ArrayLike, tokens: Optional[Sequence[Any]] = None) -> None:
    """Rewrite a figure from `qk_space_figure` in place for new queries and keys.

    Args:
        fig: a figure made by `qk_space_figure`, or its FigureWidget.
        q: [N, d_k] queries. k: [N, d_k] keys (same N and d_k). tokens: N labels, None keeps the old ones.

    Returns:
        None; the title reports d_k and whether the picture is exact.
    """
    meta = fig.layout.meta or {}
    if not isinstance(meta, dict) or meta.get("kind") != "qk_space":
        raise ValueError("fig must be a figure made by qk_space_figure")
    qa, ka = _to_numpy("q", q, 2), _to_numpy("k", k, 2)
    if qa.shape != ka.shape or qa.shape[0] < 1 or qa.shape[1] < 1:
        raise ValueError(f"q and k must both be [N, d_k] with the same shape, got q {qa.shape} and k {ka.shape}")
    n, d_k = qa.shape
    labels = _tokens("tokens", tokens, n) if tokens is not None else list(fig.data[0].text or [])
    if len(labels) != n:
        raise ValueError(f"tokens must have one label per row: expected {n}, got {len(labels)}")
    q2, k2, shown = _qk_plane(qa, ka)
    fig.data[0].update(x=q2[:, 0], y=q2[:, 1], text=labels)
    fig.data[1].update(x=k2[:, 0], y=k2[:, 1], text=labels)
    how = "exact" if d_k <= 2 else f"best plane, {rounded(100 * shown, 0):.0f}% shown"
    fig.layout.title.text = f"{meta.get('title', '')} (d_k = {d_k}, {how})"
    fig.layout.meta = dict(meta, shown=rounded(shown), d_k=d_k)


def qk_space_figure(
    q: ArrayLike,
    k: ArrayLike,
    tokens: Sequence[Any],
    *,
    title: str = "Q and K space",
    width: int = 460,
) -> go.Figure:
    """Each token's query (circle) and key (diamond) in one 2-D picture.

    Args:
        q: [N, d_k] queries. k: [N, d_k] keys of the same N tokens. tokens: N labels.
        title: start of the title (d_k and exactness are appended). width: pixels.

    Returns:
        go.Figure: trace 0 the queries, trace 1 the keys. For d_k ≤ 2 the coordinates are exact
        (dot products in the picture are the scores); for larger d_k they are the best plane
        through the origin, and layout.meta["shown"] is the share of squared length it keeps.
    """
    if isinstance(width, bool) or not isinstance(width, int) or width < 200:
        raise ValueError(f"width must be an integer number of pixels ≥ 200, got {width!r}")
    fig = go.Figure([
        go.Scatter(x=[0], y=[0], mode="markers+text", name="query q_i", textposition="top center",
                   marker=dict(symbol="circle", size=9, color=OKABE_ITO[4]), textfont=dict(size=10),
                   hovertemplate="query of <b>%{text}</b> (%{x:.3f}, %{y:.3f})<extra></extra>"),
        go.Scatter(x=[0], y=[0], mode="markers+text", name="key k_j", textposition="bottom center",
                   marker=dict(symbol="diamond", size=9, color=OKABE_ITO[5]), textfont=dict(size=10),
                   hovertemplate="key of <b>%{text}</b> (%{x:.3f}, %{y:.3f})<extra></extra>"),
    ])
    fig.update_layout(**_layout_base(title, width=width, height=460, margin=dict(l=60, r=20, t=60, b=90)),
                      xaxis=dict(title="coordinate 1", zeroline=True),
                      yaxis=dict(title="coordinate 2", zeroline=True, scaleanchor="x", scaleratio=1),
                      legend=dict(orientation="h", x=0, y=-0.16, xanchor="left", yanchor="top"),
                      meta=dict(kind="qk_space", title=str(title)))
    update_qk_space(fig, q, k, tokens)
    return fig
