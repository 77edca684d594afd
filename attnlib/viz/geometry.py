"""Vectors in the plane: the attention output inside the convex hull of the values (notebook 03), and
each token's query and key in one picture (notebook 02)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import plotly.graph_objects as go

from .._validate import pixels
from ..i18n import t
from .convert import ArrayLike, attention_weights, rounded, to_numpy, token_labels
from .style import OKABE_ITO, assign, figure_meta, layout_base, legend_below, trace

HULL, VALUES, OUTPUT = "convex hull", "value vectors v_j", "output Σ w_j v_j"  # trace names (in English: see trace)
QUERIES, KEYS = "query q_i", "key k_j"


def convex_hull(points: ArrayLike) -> np.ndarray:
    """Vertices of the convex hull of 2-D points, counter-clockwise (Andrew's monotone chain).

    Args: points: [N, 2], N ≥ 1.
    Returns: [M, 2] hull vertices without repetition (M = 1 for one point, 2 for collinear points).
    """
    p = to_numpy("points", points, 2)
    if p.shape[0] < 1 or p.shape[1] != 2:
        raise ValueError(f"points must have shape [N ≥ 1, 2], got {tuple(p.shape)}")
    pts = np.unique(p, axis=0)  # sorted by x, then y
    if len(pts) <= 2:
        return pts

    def cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
        return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))

    def chain(points: np.ndarray) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for q in points:
            while len(out) >= 2 and cross(out[-2], out[-1], q) <= 0:
                out.pop()
            out.append(q)
        return out[:-1]

    return np.array(chain(pts) + chain(pts[::-1]))  # [M, 2] lower chain, then upper


def convex_hull_figure(values: ArrayLike, weights: ArrayLike, *, tokens: Optional[Sequence[Any]] = None,
                       title: Optional[str] = None, width: int = 480) -> go.Figure:
    """The value vectors in 2-D, their convex hull, and the attention output Σ w_j v_j.

    Args: values: [N, 2] value vectors. weights: [N] one attention row (≥ 0, sums to 1).
        tokens: N labels of the value points. title: figure title (None: the default, translated). width: pixels.
    Returns: go.Figure with traces HULL (closed outline), VALUES (size grows with weight) and OUTPUT.
    """
    fig = go.Figure([
        go.Scatter(x=[0], y=[0], mode="lines", fill="toself", fillcolor="rgba(0,114,178,0.12)",
                   line=dict(color=OKABE_ITO[4], width=1.5), name=t("convex hull"), hoverinfo="skip"),
        go.Scatter(x=[0], y=[0], mode="markers+text", name=t("value vectors v_j"), textposition="top center",
                   marker=dict(color=OKABE_ITO[4], line=dict(color="white", width=1)),
                   hovertemplate=t("<b>%{text}</b> (%{x:.3f}, %{y:.3f})<br>weight %{customdata:.4f}<extra></extra>")),
        go.Scatter(x=[0], y=[0], mode="markers", name=t("output Σ w_j v_j"),
                   marker=dict(color=OKABE_ITO[5], size=16, symbol="star", line=dict(color="black", width=1)),
                   hovertemplate=t("output (%{x:.4f}, %{y:.4f})<extra></extra>")),
    ])
    title = t("Output inside the convex hull of the values") if title is None else title
    fig.update_layout(**layout_base(title, width=pixels("width", width), height=460),
                      xaxis=dict(title=t("value dimension 1"), zeroline=False),
                      yaxis=dict(title=t("value dimension 2"), zeroline=False, scaleanchor="x", scaleratio=1),
                      legend=legend_below(-0.18), meta=dict(kind="convex_hull"))
    update_convex_hull(fig, values, weights, tokens=tokens)
    return fig


def update_convex_hull(fig: go.Figure, values: ArrayLike, weights: ArrayLike, *,
                       tokens: Optional[Sequence[Any]] = None) -> None:
    """Rewrite a figure from `convex_hull_figure` in place (e.g. as a query slider moves).

    Args: fig: the convex-hull figure. values, weights, tokens: as for the builder.
    Returns: None.
    """
    figure_meta(fig, "convex_hull", "convex_hull_figure")
    v = to_numpy("values", values, 2)  # [N, 2]
    if v.shape[0] < 1 or v.shape[1] != 2:
        raise ValueError(f"values must have shape [N ≥ 1, 2], got {tuple(v.shape)}")
    w = attention_weights("weights", weights, 1)  # [N]
    if w.shape[0] != v.shape[0]:
        raise ValueError(f"weights must have one entry per value vector: expected {v.shape[0]}, got {w.shape[0]}")
    if abs(w.sum() - 1) > 1e-3:
        raise ValueError(f"weights must sum to 1 (one softmax row), got sum {w.sum():.4f}")
    toks = [f"v{i}" for i in range(len(v))] if tokens is None else token_labels("tokens", tokens, len(v))
    hull = convex_hull(v)
    closed = np.vstack([hull, hull[:1]])  # [M + 1, 2]
    out = w @ v  # [2]
    assign(fig, trace(fig, HULL), {"x": rounded(closed[:, 0]), "y": rounded(closed[:, 1])})
    assign(fig, trace(fig, VALUES), {"x": rounded(v[:, 0]), "y": rounded(v[:, 1]), "text": toks,
                                     "customdata": rounded(w), "marker.size": rounded(8 + 28 * np.sqrt(w))})
    assign(fig, trace(fig, OUTPUT), {"x": [rounded(out[0])], "y": [rounded(out[1])]})


def _qk_plane(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """2-D coordinates of queries and keys drawn together, and the share of squared length they keep.

    For d_k ≤ 2 the coordinates are the vectors themselves (exact); for larger d_k they are the
    projections onto the plane through the origin that keeps most of the stacked points' squared
    length (uncentred SVD, signs fixed so the picture is reproducible).
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


def qk_space_figure(q: ArrayLike, k: ArrayLike, tokens: Sequence[Any], *, title: Optional[str] = None,
                    width: int = 460) -> go.Figure:
    """Each token's query (circle) and key (diamond) in one 2-D picture.

    Args: q: [N, d_k] queries. k: [N, d_k] keys of the same N tokens. tokens: N labels.
        title: start of the title (d_k and exactness are appended; None: "Q and K space", translated). width: pixels.
    Returns: go.Figure with traces QUERIES and KEYS. For d_k ≤ 2 the coordinates are exact (dot products
        in the picture are the scores); for larger d_k they are the best plane through the origin, and
        layout.meta["shown"] is the share of squared length it keeps.
    """
    fig = go.Figure([
        go.Scatter(x=[0], y=[0], mode="markers+text", name=t("query q_i"), textposition="top center",
                   marker=dict(symbol="circle", size=9, color=OKABE_ITO[4]), textfont=dict(size=10),
                   hovertemplate=t("query of <b>%{text}</b> (%{x:.3f}, %{y:.3f})<extra></extra>")),
        go.Scatter(x=[0], y=[0], mode="markers+text", name=t("key k_j"), textposition="bottom center",
                   marker=dict(symbol="diamond", size=9, color=OKABE_ITO[5]), textfont=dict(size=10),
                   hovertemplate=t("key of <b>%{text}</b> (%{x:.3f}, %{y:.3f})<extra></extra>")),
    ])
    title = t("Q and K space") if title is None else title
    fig.update_layout(**layout_base(title, width=pixels("width", width), height=460,
                                    margin=dict(l=60, r=20, t=60, b=90)),
                      xaxis=dict(title=t("coordinate 1"), zeroline=True),
                      yaxis=dict(title=t("coordinate 2"), zeroline=True, scaleanchor="x", scaleratio=1),
                      legend=legend_below(-0.16), meta=dict(kind="qk_space", title=str(title)))
    update_qk_space(fig, q, k, tokens)
    return fig


def update_qk_space(fig: go.Figure, q: ArrayLike, k: ArrayLike, tokens: Optional[Sequence[Any]] = None) -> None:
    """Rewrite a figure from `qk_space_figure` in place for new queries and keys.

    Args: fig: a figure made by `qk_space_figure`, or its FigureWidget. q, k: as for the builder (same N).
        tokens: N labels, None keeps the old ones.
    Returns: None; the title reports d_k and whether the picture is exact.
    """
    meta = figure_meta(fig, "qk_space", "qk_space_figure")
    qa, ka = to_numpy("q", q, 2), to_numpy("k", k, 2)
    if qa.shape != ka.shape or qa.shape[0] < 1 or qa.shape[1] < 1:
        raise ValueError(f"q and k must both be [N, d_k] with the same shape, got q {qa.shape} and k {ka.shape}")
    n, d_k = qa.shape
    queries, keys = trace(fig, QUERIES), trace(fig, KEYS)
    labels = token_labels("tokens", tokens, n) if tokens is not None else list(queries.text or [])
    if len(labels) != n:
        raise ValueError(f"tokens must have one label per row: expected {n}, got {len(labels)}")
    q2, k2, shown = _qk_plane(qa, ka)
    how = t("exact") if d_k <= 2 else t("best plane, {share:.0f}% shown", share=rounded(100 * shown, 0))
    title = t("{title} (d_k = {d_k}, {how})", title=meta.get("title", ""), d_k=d_k, how=how)
    assign(fig, queries, {"x": q2[:, 0], "y": q2[:, 1], "text": labels},
           layout={"title.text": title, "meta": dict(meta, shown=rounded(shown), d_k=d_k)})
    assign(fig, keys, {"x": k2[:, 0], "y": k2[:, 1], "text": labels})
