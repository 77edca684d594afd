"""The look every figure shares (colours, font, layout base, ticks) and how figures are read: by trace name."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import plotly.graph_objects as go

from ..i18n import LANGUAGES, catalog

OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]
HEATMAP_COLORSCALE = "Viridis"  # perceptually uniform, readable with colour-vision deficiencies
MASK_COLOR = "#c8c8c8"  # light grey: not on the Viridis scale, so "masked" never reads as a weight
FONT = dict(family="Arial, sans-serif", size=12)


def layout_base(title: str, **kwargs: Any) -> dict:
    """The common layout: title at the top left, white background, readable font.

    Args: title: figure title. kwargs: more layout properties (width, height, margin, ...).
    Returns: a dict for `fig.update_layout(**...)`.
    """
    layout = dict(title=dict(text=title, x=0.02, xanchor="left", font=dict(size=15)), font=FONT,
                  template="plotly_white", margin=dict(l=60, r=20, t=60, b=50))
    layout.update(kwargs)
    return layout


def legend_below(y: float) -> dict:
    """A horizontal legend under the plot, its top `y` (a negative fraction of the plot height) below the plot."""
    return dict(orientation="h", x=0, y=y, xanchor="left", yanchor="top")


def ticks(tokens: list[str], px: float) -> tuple[list[int], list[str]]:
    """Tick positions and labels: every token if they fit in `px` pixels (~13 px each), else every k-th.

    Args: tokens: the labels. px: the pixels the axis has.
    Returns: (tick positions, tick labels).
    """
    step = max(1, math.ceil(len(tokens) * 13 / max(px, 1.0)))
    vals = list(range(0, len(tokens), step))
    return vals, [tokens[i] for i in vals]


def figure_meta(fig: go.Figure, kind: str, builder: str) -> dict:
    """`fig.layout.meta` if `fig` was made by `builder` (its meta names `kind`), else raise naming fig.

    Args: fig: a figure or FigureWidget. kind: the meta kind the builder writes. builder: its name, for the message.
    Returns: the meta dict.
    """
    meta = fig.layout.meta
    if not isinstance(meta, dict) or meta.get("kind") != kind:
        raise ValueError(f"fig must be a figure made by {builder}")
    return meta


def trace(fig: go.Figure, name: str, **props: Any) -> Any:
    """The one trace of `fig` called `name` whose other properties equal `props` (e.g. xaxis="x2").

    Builders and notebooks find traces by name, never by position, so a notebook may add traces of its
    own. Head grids name theirs "head 1", "masked (head 1)", ...; each builder's module lists its names.
    `name` is the English name: a trace drawn with its translation (attnlib.i18n) is found too.

    Args: fig: a figure or FigureWidget. name: the trace's name. props: more properties to match.
    Returns: the trace (assigning to it updates the figure).
    """
    names = {name, *(catalog(language).get(name, name) for language in LANGUAGES)}  # drawn in any language
    found = [t for t in fig.data if t.name in names and all(t[k] == v for k, v in props.items())]
    if len(found) != 1:
        raise ValueError(f"fig must hold exactly one trace named {name!r} with {props}, found {len(found)}")
    return found[0]


def assign(fig: go.Figure, tr: Any, props: dict, layout: Optional[dict] = None) -> None:
    """Set final values on trace `tr` of `fig` and on its layout in one `plotly_update`, without validation.

    plotly's checks of each assignment (~0.2 ms each) dominated the live panels' updates. Callers pass values in the
    form plotly stores them (lists of str or float, float64 arrays, str) on paths the trace has (its builder made
    "marker" before "marker.size"), so the figure's JSON is what `tr.update(**props)` and assigning `layout` give,
    key order included (`tr.update` writes in sorted order). plotly skips values equal to the ones it holds.

    Args: fig: a figure or FigureWidget. tr: one of its traces. props: property path ("x", "marker.size") → value
        (arrays are copied). layout: layout path ("title.text", "meta") → value, or None.
    Returns: None.
    """
    restyle = {path: [np.array(v) if isinstance(v := props[path], np.ndarray) else v] for path in sorted(props)}
    index = next(i for i, d in enumerate(fig.data) if d is tr)
    fig.plotly_update(restyle_data=restyle, relayout_data=layout or None, trace_indexes=[index])


def write_changes(fig: go.Figure, changes: dict) -> None:
    """Apply {("data", i, key, ...) or ("layout", key, ...): value}: recorded for a live panel's view when the figure
    records (`fig.record_chart`, widgets.view.LiveChart), else written as plotly properties, skipping the unchanged.

    Args: fig: a figure. changes: property paths (trace index, or layout keys and list indices) → new values.
    Returns: None.
    """
    record = getattr(fig, "record_chart", None)
    if record is not None and record(changes):
        return
    written = getattr(fig, "_al_written", None) or {}  # lost when the figure is copied: then all is rewritten
    for path, value in changes.items():
        if path in written and np.array_equal(np.asarray(written[path], dtype=object), np.asarray(value, dtype=object)):
            continue
        node = fig.data[path[1]] if path[0] == "data" else fig.layout
        for key in path[2 if path[0] == "data" else 1:-1]:
            node = node[key]
        node[path[-1]] = value
        written[path] = value
    fig._al_written = written


def trace_changes(i: int, **props: Any) -> dict:
    """{("data", i, name): value} for `write_changes`: properties of trace i."""
    return {("data", i, name): value for name, value in props.items()}
