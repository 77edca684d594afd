"""Attention heatmaps: one head (`heatmap_figure`) or a grid of heads (`head_grid_figure`), updated in place.

Each head has two traces, found by name: "head i" (the weights; hover text HOVER: query token, key token,
weight) and "masked (head i)" (grey where the mask is False, drawn on top). The words drawn are attnlib.i18n
templates, in the language of the moment a figure is built or updated.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np
import plotly.graph_objects as go

from .._validate import integer, pixels
from ..i18n import t
from .convert import ArrayLike, attention_weights, bool_mask, rounded, to_numpy, token_labels
from .style import HEATMAP_COLORSCALE, MASK_COLOR, figure_meta, layout_base, ticks

GRID_WIDTH = 480  # default pixel width of a head-grid figure
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 80, 60, 100  # margins in px (right leaves room for the colour bar)
TICK_FONT, MIN_TICK_FONT = 10, 8  # px of the token labels; small grids shrink them (down to 8 px) to label every one


def hover(h: int) -> str:
    """The hover template of head h's cells (query token, key token, weight), in the current language."""
    template = t("query <b>%{customdata[0]}</b> → key <b>%{customdata[1]}</b><br>"
                 "weight %{z:.4f}<extra>head {h}</extra>")
    return template.replace("{h}", str(h))  # str.format would read plotly's %{…} as fields


def mask_note() -> str:
    """The note under a grid with masked cells, in the current language."""
    return t("grey cells: masked keys")


def _grid_geometry(heads: int, n_q: int, n_k: int, width: int) -> dict:
    """Pixel height, axis domains and cell sizes of `heads` heatmaps in a figure `width` wide, as square as can be."""
    cols = math.ceil(math.sqrt(heads))
    rows = math.ceil(heads / cols)
    gap = 0.06 if cols > 1 else 0.0
    cell_w = (width - _LEFT - _RIGHT) * (1 - gap * (cols - 1)) / cols  # px per subplot
    cell_h = cell_w * min(max(n_q / n_k, 0.5), 1.5)  # roughly square cells
    vgap_px = 34 if rows > 1 else 0  # room for the next subplot's "head i" label
    plot_h = rows * cell_h + (rows - 1) * vgap_px
    vgap = vgap_px / plot_h if plot_h else 0.0
    domains = []
    for h in range(heads):
        r, c = divmod(h, cols)
        x0 = c * (1 + gap) / cols
        x1 = x0 + (1 - gap * (cols - 1)) / cols
        y1 = 1 - r * (1 + vgap) / rows
        y0 = y1 - (1 - vgap * (rows - 1)) / rows
        domains.append((rounded([x0, min(x1, 1.0)]).tolist(), rounded([max(y0, 0.0), y1]).tolist()))
    return dict(rows=rows, cols=cols, height=int(round(plot_h + _TOP + _BOTTOM)), domains=domains,
                cell_w=cell_w, cell_h=cell_h)


def _axis(fig: go.Figure, letter: str, i: int) -> Any:
    """The x or y axis of subplot i (0-based): layout.xaxis, layout.xaxis2, ..."""
    return fig.layout[f"{letter}axis" if i == 0 else f"{letter}axis{i + 1}"]


def _base_grid(slots: int, title: str, width: int) -> go.Figure:
    """An empty figure with `slots` heatmap subplots (two traces each) and a shared colour axis."""
    fig = go.Figure()
    for i in range(slots):
        ref = "" if i == 0 else str(i + 1)
        fig.add_trace(go.Heatmap(z=[[0.0]], coloraxis="coloraxis", xaxis=f"x{ref}", yaxis=f"y{ref}",
                                 name=f"head {i + 1}", hovertemplate=hover(i + 1),
                                 xgap=0, ygap=0))
        fig.add_trace(go.Heatmap(
            z=[[0.0]], xaxis=f"x{ref}", yaxis=f"y{ref}", name=f"masked (head {i + 1})",
            # 0 = transparent, 1 = grey; no NaN gaps, because widgets send JSON and NaN is not JSON
            colorscale=[[0, "rgba(0,0,0,0)"], [1, MASK_COLOR]], zmin=0, zmax=1, showscale=False,
            hoverinfo="skip", texttemplate="%{text}", textfont=dict(color="#555555", size=11)))
        fig.layout[f"xaxis{ref}"] = dict(anchor=f"y{ref}", showgrid=False, zeroline=False,
                                         tickangle=-60, tickfont=dict(size=10), constrain="domain")
        fig.layout[f"yaxis{ref}"] = dict(anchor=f"x{ref}", showgrid=False, zeroline=False,
                                         autorange=False, tickfont=dict(size=10), constrain="domain")
    note = dict(text="", showarrow=False, xref="paper", yref="paper", x=0, y=0, xanchor="left",
                yanchor="bottom", font=dict(size=11, color="#444444"), visible=False)  # under "key →"
    fig.update_layout(
        **layout_base(title, width=width, margin=dict(l=_LEFT, r=_RIGHT, t=_TOP, b=_BOTTOM)),
        coloraxis=dict(cmin=0, cmax=1, colorscale=HEATMAP_COLORSCALE,
                       colorbar=dict(title=dict(text=t("weight"), side="right"), thickness=14, len=0.9, x=1.02,
                                     tickvals=[0, 0.25, 0.5, 0.75, 1])),
        plot_bgcolor="rgba(0,0,0,0)",  # transparent: overlapping subplot backgrounds never hide heatmaps
        annotations=[dict(text=t("head {h}", h=i + 1), showarrow=False, xref="paper", yref="paper", xanchor="center",
                          yanchor="bottom", font=dict(size=11), visible=False, x=0, y=0) for i in range(slots)]
        + [note],
    )
    fig.layout.meta = dict(kind="head_grid", slots=slots)
    return fig


def _slot_traces(fig: go.Figure, slots: int) -> list[tuple[Any, Any]]:
    """(weights trace, mask trace) of every slot, found by name."""
    by_name = {t.name: t for t in fig.data}
    try:
        return [(by_name[f"head {h + 1}"], by_name[f"masked (head {h + 1})"]) for h in range(slots)]
    except KeyError as missing:
        raise ValueError(f"fig has no trace named {missing}: was it made by head_grid_figure?") from None


def _set_geometry(fig: go.Figure, slots: list, geo: dict, shape: tuple[int, int, int], single: bool) -> None:
    """Show `heads` subplots laid out by `geo`, park the others, place the labels and the note."""
    heads, n_q, n_k = shape
    for h, (weights, _) in enumerate(slots):
        xa, ya, label = _axis(fig, "x", h), _axis(fig, "y", h), fig.layout.annotations[h]
        visible = h < heads
        weights.visible = xa.visible = ya.visible = visible
        label.visible = visible and not single
        if not visible:  # a hidden subplot must not cover the others: park it in a corner
            xa.domain, ya.domain = [0.9999, 1.0], [0.0, 0.0001]
            continue
        xdom, ydom = geo["domains"][h]
        row, col = divmod(h, geo["cols"])
        xa.update(domain=xdom, range=[-0.5, n_k - 0.5],
                  showticklabels=(row == geo["rows"] - 1 or h + geo["cols"] >= heads))
        ya.update(domain=ydom, range=[n_q - 0.5, -0.5], showticklabels=(col == 0))
        label.update(x=rounded((xdom[0] + xdom[1]) / 2), y=ydom[1])
    bottom_left = (geo["rows"] - 1) * geo["cols"]  # axis titles only there: "key →", "← query"
    for h in range(len(slots)):
        _axis(fig, "x", h).title = dict(text=t("key →") if h == min(bottom_left, heads - 1) else "")
        _axis(fig, "y", h).title = dict(text=t("← query") if h == bottom_left else "")
    plot_h = geo["height"] - _TOP - _BOTTOM
    fig.layout.annotations[len(slots)].y = -rounded((_BOTTOM - 2) / max(plot_h, 1))  # at the bottom edge
    fig.layout.height = geo["height"]


def _token_ticks(tokens: list[str], px: float) -> tuple[list[int], list[str], int]:
    """Tick positions, labels and font size of one axis `px` pixels long: every token at TICK_FONT px when each has
    room for it; in small grids every token in a smaller font (down to MIN_TICK_FONT px); else every k-th token."""
    pitch = px / max(len(tokens), 1)  # px per token
    if pitch >= MIN_TICK_FONT + 1:
        return list(range(len(tokens))), list(tokens), int(min(TICK_FONT, max(MIN_TICK_FONT, pitch * 0.87)))
    return (*ticks(tokens, px), TICK_FONT)


def _set_tokens(fig: go.Figure, slots: list, geo: dict, qt: list[str], kt: list[str], heads: int) -> None:
    """Token tick labels, cell positions and the hover's (query, key) labels of the shown heads."""
    xs, ys = np.arange(len(kt)), np.arange(len(qt))
    custom = np.empty((len(qt), len(kt), 2), dtype=object)  # [N_q, N_k, (query token, key token)]
    custom[..., 0] = np.asarray(qt, dtype=object)[:, None]
    custom[..., 1] = np.asarray(kt, dtype=object)[None, :]
    xvals, xtext, xfont = _token_ticks(kt, geo["cell_w"])
    yvals, ytext, yfont = _token_ticks(qt, geo["cell_h"])
    for h, (weights, masked) in enumerate(slots[:heads]):
        _axis(fig, "x", h).update(tickvals=xvals, ticktext=xtext, tickfont_size=xfont)
        _axis(fig, "y", h).update(tickvals=yvals, ticktext=ytext, tickfont_size=yfont)
        weights.update(x=xs, y=ys, customdata=custom)
        masked.update(x=xs, y=ys)


def _set_mask(fig: go.Figure, slots: list, geo: dict, allowed: np.ndarray) -> None:
    """Grey the masked cells of the shown heads (with a "×" when cells are large) and show the note."""
    heads, n_q, n_k = allowed.shape
    any_masked = not bool(allowed.all())
    cell_px = min(geo["cell_w"] / n_k, geo["cell_h"] / n_q)
    for h, (_, masked) in enumerate(slots):
        masked.visible = h < heads and any_masked
        if h < heads and any_masked:
            masked_h = ~allowed[h]  # [N_q, N_k]
            # a "×" in each masked cell when cells are large enough, so the mask does not rely on colour
            masked.update(z=masked_h.astype(np.float64), text=np.where(masked_h, "×", "") if cell_px >= 14 else None)
    fig.layout.annotations[len(slots)].update(visible=any_masked, text=mask_note())


def update_head_grid(fig: go.Figure, weights: ArrayLike, q_tokens: Sequence[Any], k_tokens: Sequence[Any], *,
                     mask: Optional[ArrayLike] = None) -> None:
    """Rewrite a head-grid (or single heatmap) figure in place for new attention weights.

    Each group of properties (layout, tokens, mask) is rewritten only when its inputs changed. A figure with a
    `record_head_grid(weights, q_tokens, k_tokens, allowed)` method that returns True (a live panel's, drawn by
    its own view from `grid_view`) only records the checked inputs there.

    Args: fig: a figure made by `head_grid_figure` or `heatmap_figure`, or its FigureWidget.
        weights: [heads, N_q, N_k] (or [N_q, N_k] for one head), heads ≤ the figure's slots.
        q_tokens, k_tokens: N_q and N_k labels. mask: bool/0-1 broadcastable to weights, True = may attend.
    Returns: None.
    """
    meta = figure_meta(fig, "head_grid", "head_grid_figure or heatmap_figure")
    w = to_numpy("weights", weights)
    w = attention_weights("weights", w[None] if w.ndim == 2 else w, 3)  # [heads, N_q, N_k]
    heads, n_q, n_k = w.shape
    if heads > meta["slots"]:
        raise ValueError(f"weights has {heads} heads but the figure has only {meta['slots']} slots (use slots ≥ heads)")
    qt, kt = token_labels("q_tokens", q_tokens, n_q), token_labels("k_tokens", k_tokens, n_k)
    allowed = np.ones(w.shape, dtype=bool) if mask is None else bool_mask(mask, w.shape)
    record = getattr(fig, "record_head_grid", None)  # a live panel's figure: its view draws the grid (grid_view)
    if record is not None and record(rounded(w), qt, kt, allowed):
        return
    slots = _slot_traces(fig, meta["slots"])
    width = fig.layout.width or GRID_WIDTH
    state = getattr(fig, "_al_grid_state", None) or {}  # lost when the figure is copied: then all is rewritten
    geo = _grid_geometry(heads, n_q, n_k, width)
    if state.get("geometry") != (heads, n_q, n_k, width):
        _set_geometry(fig, slots, geo, (heads, n_q, n_k), bool(meta.get("single", False)))
        state = {"geometry": (heads, n_q, n_k, width)}
    if state.get("tokens") != (tuple(qt), tuple(kt)):
        _set_tokens(fig, slots, geo, qt, kt, heads)
        state["tokens"] = (tuple(qt), tuple(kt))
    if state.get("mask") != allowed.tobytes():
        _set_mask(fig, slots, geo, allowed)
        state["mask"] = allowed.tobytes()
    z = rounded(w)  # [heads, N_q, N_k]
    for h in range(heads):
        slots[h][0].z = z[h]
    fig._al_grid_state = state  # plotly allows private attributes on figures


def head_grid_figure(weights: ArrayLike, q_tokens: Sequence[Any], k_tokens: Sequence[Any], *,
                     mask: Optional[ArrayLike] = None, title: Optional[str] = None,
                     slots: Optional[int] = None, width: int = GRID_WIDTH) -> go.Figure:
    """One attention heatmap per head, sharing a fixed 0–1 colour bar.

    Args: weights: [heads, N_q, N_k] attention weights (tensor or array).
        q_tokens, k_tokens: labels of the N_q queries (rows, top to bottom) and N_k keys (columns).
        mask: bool/0-1 broadcastable to [heads, N_q, N_k], True = may attend; False cells are grey.
        title: figure title (default "Attention weights per head"). slots: subplots to reserve (≥ heads, default
        heads) for a panel that shows more heads later. width: pixels.
    Returns: go.Figure with traces "head i" (z: the weights rounded to 4 decimals) and "masked (head i)".
    """
    w = attention_weights("weights", weights, 3)  # [heads, N_q, N_k]
    slots = w.shape[0] if slots is None else integer("slots", slots, minimum=w.shape[0])
    title = t("Attention weights per head") if title is None else title
    fig = _base_grid(slots, title, pixels("width", width))
    update_head_grid(fig, w, q_tokens, k_tokens, mask=mask)
    return fig


def heatmap_figure(weights: ArrayLike, q_tokens: Sequence[Any], k_tokens: Sequence[Any], *,
                   mask: Optional[ArrayLike] = None, title: Optional[str] = None, width: int = 460) -> go.Figure:
    """One attention heatmap: queries top to bottom, keys left to right, fixed 0–1 colours.

    Args: weights: [N_q, N_k] attention weights (tensor or array). q_tokens, k_tokens: N_q and N_k labels.
        mask: bool/0-1 broadcastable to [N_q, N_k], True = may attend; False cells are grey.
        title: figure title (default "Attention weights"). width: pixels.
    Returns: go.Figure with traces "head 1" (z: the weights rounded to 4 decimals) and "masked (head 1)".
    """
    w = attention_weights("weights", weights, 2)  # [N_q, N_k]
    fig = _base_grid(1, t("Attention weights") if title is None else title, pixels("width", width))
    fig.layout.meta = dict(kind="head_grid", slots=1, single=True)
    update_head_grid(fig, w[None], q_tokens, k_tokens, mask=None if mask is None else bool_mask(mask, w.shape)[None])
    return fig


def grid_traces(fig: go.Figure) -> list[tuple[int, Optional[int]]]:
    """Per head a head-grid figure shows now: the index in fig.data of its weights trace and of its mask trace
    (None when that mask is hidden: no cell masked)."""
    meta = figure_meta(fig, "head_grid", "head_grid_figure or heatmap_figure")
    index = {id(t): i for i, t in enumerate(fig.data)}
    return [(index[id(w)], index[id(m)] if m.visible and np.shape(m.z) == np.shape(w.z) else None)
            for w, m in _slot_traces(fig, meta["slots"]) if w.visible is not False]


def grid_record(fig: go.Figure) -> tuple:
    """The (weights, q_tokens, k_tokens, allowed) a head-grid figure shows now, read from its shown traces.

    Args: fig: a figure made by `head_grid_figure` or `heatmap_figure`.
    Returns: weights [heads, N_q, N_k] float64, the query and key labels, allowed [heads, N_q, N_k] bool.
    """
    shown = grid_traces(fig)
    w = np.stack([np.asarray(fig.data[i].z, dtype=np.float64) for i, _ in shown])  # [heads, N_q, N_k]
    n_q, n_k = w.shape[1:]
    custom = fig.data[shown[0][0]].customdata  # [N_q, N_k, (query token, key token)]
    custom = np.asarray(custom, dtype=object) if custom is not None else np.zeros((n_q, n_k, 2), dtype=object)
    qt, kt = [str(c) for c in custom[:, 0, 0]], [str(c) for c in custom[0, :, 1]]
    allowed = np.ones(w.shape, dtype=bool)  # [heads, N_q, N_k]
    for h, (_, m) in enumerate(shown):
        if m is not None:
            allowed[h] = np.asarray(fig.data[m].z) == 0
    return w, qt, kt, allowed


def _get(d: Any, *keys: Any, default: Any = None) -> Any:
    """d[k1][k2]... of plotly JSON, or `default` where a key is missing or None."""
    for k in keys:
        try:
            d = d[k]
        except (KeyError, IndexError, TypeError):
            return default
    return default if d is None else d


def _axis_title(layout: dict, letter: str, slots: int) -> str:
    """The first non-empty title of the x (or y) axes: "key →" (translated) unless code renamed it."""
    names = [f"{letter}axis" + (str(h + 1) if h else "") for h in range(slots)]
    return next((t for t in (_get(layout, n, "title", "text") for n in names) if t), "")


def _markers(traces: list[dict], heads: int) -> list[dict]:
    """The marker traces code added to a grid (plotly JSON), on the shown heads."""
    out = []
    for tr in traces:
        if tr.get("type", "scatter") != "scatter" or tr.get("visible", True) in (False, "legendonly"):
            continue
        head = int(tr.get("xaxis", "x")[1:] or 1) - 1
        if "markers" in tr.get("mode", "markers") and head < heads and tr.get("x") is not None:
            m = tr.get("marker", {})
            out.append(dict(head=head, x=[float(v) for v in tr["x"]], y=[float(v) for v in tr.get("y", ())],
                            symbol=m.get("symbol", "circle"), color=m.get("color", "#000000"),
                            size=m.get("size", 6), line=_get(m, "line", "width", default=1)))
    return out


def grid_view(layout: dict, traces: list[dict], weights: np.ndarray, q_tokens: list[str], k_tokens: list[str],
              allowed: np.ndarray) -> dict:
    """What a head-grid figure shows, laid out as plotly lays it out, for a live view that draws it on a canvas.

    The arrays and labels are those `update_head_grid` checked; the title, head labels, axis and colour-bar
    titles, the mask note, further annotations and marker traces are read from the figure (code may change them).

    Args: layout: the figure's layout as plotly JSON (a dict). traces: its traces (plotly JSON); those after the
        slots' "head i" and "masked (…)" pairs are the ones code added (markers).
        weights: [heads, N_q, N_k]. q_tokens, k_tokens: the labels. allowed: [heads, N_q, N_k] bool, True = may attend.
    Returns: a JSON-able dict (sizes in px, axis domains as fractions, tick positions, texts); not the arrays.
    """
    meta = layout["meta"]
    heads, n_q, n_k = weights.shape
    width, slots = layout.get("width") or GRID_WIDTH, meta["slots"]
    geo = _grid_geometry(heads, n_q, n_k, width)
    notes, bar = layout.get("annotations", []), layout.get("coloraxis", {})
    x_ticks, y_ticks = _token_ticks(k_tokens, geo["cell_w"]), _token_ticks(q_tokens, geo["cell_h"])
    extra = [dict(text=a.get("text", ""), x=a.get("x", 0), y=a.get("y", 0), xanchor=a.get("xanchor", "auto"),
                  yshift=a.get("yshift", 0), size=_get(a, "font", "size", default=12))
             for a in notes[slots + 1:] if a.get("visible", True)]
    return dict(
        width=width, height=geo["height"], margin=[_LEFT, _RIGHT, _TOP, _BOTTOM], cols=geo["cols"],
        rows=geo["rows"], domains=geo["domains"], title=_get(layout, "title", "text", default=""),
        labels=[] if meta.get("single") else [_get(notes, h, "text", default="") for h in range(heads)],
        x_title=_axis_title(layout, "x", slots), y_title=_axis_title(layout, "y", slots),
        x_ticks=x_ticks[0], y_ticks=y_ticks[0], x_font=x_ticks[2], y_font=y_ticks[2],
        crosses=min(geo["cell_w"] / n_k, geo["cell_h"] / n_q) >= 14, q_tokens=q_tokens, k_tokens=k_tokens,
        colorscale=[[float(p), c] for p, c in bar["colorscale"]],
        bar_title=_get(bar, "colorbar", "title", "text", default=""),
        bar_ticks=[float(v) for v in _get(bar, "colorbar", "tickvals", default=())],
        note=(_get(notes, slots, "text", default="") or mask_note()) if not allowed.all() else "", notes=extra,
        markers=_markers(traces[2 * slots:], heads))
