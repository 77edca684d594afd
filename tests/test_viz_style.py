"""style.assign (one plotly_update without validation) leaves a figure as tr.update would; the geometry figures
that use it update in place; the latency benchmark's control values respect a slider's step."""
from __future__ import annotations

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import pytest

from attnlib import viz
from attnlib.bench.latency import two_values
from attnlib.bench.latency_notebooks import panels_in
from attnlib.viz.style import assign


def _scatter() -> go.Figure:
    fig = go.Figure([go.Scatter(x=[0], y=[0], name="a", mode="markers+text"),
                     go.Scatter(x=[1], y=[1], name="b", marker=dict(color="red"))])
    fig.update_layout(title=dict(text="t"), meta=dict(kind="k"))
    return fig


def test_assign_gives_the_json_of_trace_update_and_layout_assignment():
    x, size = np.array([0.25, -1.5, 2.0]), np.array([8.0, 12.5, 30.0])
    by_update, by_assign = _scatter(), _scatter()
    by_update.data[1].update(x=x, y=x * 2, text=["p", "q", "r"], customdata=size, marker_size=size)
    by_update.layout.title.text = "new"
    by_update.layout.meta = dict(kind="k", shown=0.5)
    assign(by_assign, by_assign.data[1], {"y": x * 2, "x": x, "marker.size": size, "text": ["p", "q", "r"],
                                          "customdata": size},
           layout={"title.text": "new", "meta": dict(kind="k", shown=0.5)})
    assert by_assign.to_json() == by_update.to_json()  # same values, same key order
    assert by_assign.data[0].x == (0,)  # the other trace untouched
    x[0] = 99.0
    assert by_assign.data[1].x[0] == 0.25  # a copy: the caller's array may change afterwards


def test_assign_rejects_a_path_the_trace_does_not_have():
    fig = _scatter()
    with pytest.raises(ValueError, match="notaprop"):
        assign(fig, fig.data[0], {"notaprop": [1]})


def test_update_qk_space_and_convex_hull_match_a_fresh_figure():
    rng = np.random.default_rng(0)
    tokens = [f"t{i}" for i in range(5)]
    fig = viz.qk_space_figure(rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), tokens)
    q, k = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    viz.update_qk_space(fig, q, k)
    assert fig.to_json() == viz.qk_space_figure(q, k, tokens).to_json()
    assert fig.layout.meta["d_k"] == 2 and "exact" in fig.layout.title.text
    values, w = rng.normal(size=(5, 2)), rng.dirichlet(np.ones(5))
    hull = viz.convex_hull_figure(values, np.full(5, 0.2), tokens=tokens)
    viz.update_convex_hull(hull, values, w, tokens=tokens)
    assert hull.to_json() == viz.convex_hull_figure(values, w, tokens=tokens).to_json()


def test_two_values_moves_a_slider_by_its_own_step():
    assert two_values(W.IntSlider(value=32, min=8, max=128, step=8)) == [40, 32]
    assert two_values(W.IntSlider(value=128, min=8, max=128, step=8)) == [120, 128]
    assert two_values(W.Dropdown(options=["a", "b"], value="a")) == ["b", "a"]
    assert two_values(W.Checkbox(value=False)) == [True, False]


def test_panels_in_finds_each_live_panel_once_by_its_public_name():
    from attnlib.widgets import LivePanel

    fig = viz.heatmap_figure(np.full((2, 2), 0.5), ["a", "b"], ["a", "b"])
    panel = LivePanel({"x": W.IntSlider(value=1, min=0, max=2)}, [fig], lambda figs, x: None)
    assert panels_in({"_hidden": panel, "panel": panel, "again": panel, "n": 3}) == {"panel": panel}
