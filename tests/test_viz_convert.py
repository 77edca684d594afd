"""attnlib.viz.convert and viz.style: what every builder does to its inputs, and how traces are found."""
import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from attnlib import viz
from attnlib.viz import convert, style


def test_to_numpy_takes_tensors_arrays_and_lists_as_float64():
    for x in (torch.tensor([[1, 2]], dtype=torch.float32), np.array([[1, 2]]), [[1, 2]]):
        arr = convert.to_numpy("x", x, 2)
        assert arr.dtype == np.float64 and arr.tolist() == [[1.0, 2.0]]
    assert convert.to_numpy("x", torch.ones(2, requires_grad=True)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("x, ndim, message", [
    ([1.0, 2.0], 2, "x must have 2 dimensions"),
    ([1.0, float("nan")], None, "finite"),
    ([1.0, float("inf")], None, "finite"),
    ("ab", None, "numeric"),
    ({"a": 1}, None, "numeric"),
])
def test_to_numpy_rejects(x, ndim, message):
    with pytest.raises(ValueError, match=message):
        convert.to_numpy("x", x, ndim)


def test_token_labels():
    assert convert.token_labels("tokens", ["a", 1, None], 3) == ["a", "1", "None"]
    with pytest.raises(ValueError, match="tokens must be a sequence"):
        convert.token_labels("tokens", "abc", 3)  # a string is not a list of tokens
    with pytest.raises(ValueError, match="expected 3, got 2"):
        convert.token_labels("tokens", ["a", "b"], 3)


def test_attention_weights_are_in_the_fixed_colour_range():
    assert convert.attention_weights("w", [[0.0, 1.0]], 2).shape == (1, 2)
    convert.attention_weights("w", [1 + 1e-7], 1)  # float32 rounding above 1 is accepted
    for bad, message in (([[1.5]], "in \\[0, 1\\]"), ([[-0.1]], "in \\[0, 1\\]"), (np.zeros((0, 2)), "empty")):
        with pytest.raises(ValueError, match=message):
            convert.attention_weights("w", bad, 2)


def test_bool_mask_converts_broadcasts_and_drops_leading_ones():
    m = convert.bool_mask(torch.tensor([[1, 0]]), (3, 2))
    assert m.dtype == np.bool_ and m.shape == (3, 2) and m[:, 0].all() and not m[:, 1].any()
    padding = torch.ones(1, 1, 1, 4, dtype=torch.bool)  # [batch, heads, 1, N] from al.padding_mask
    assert convert.bool_mask(padding, (4, 4)).shape == (4, 4)
    with pytest.raises(ValueError, match="bool or 0/1"):
        convert.bool_mask(np.array([0, 2]), (2,))
    with pytest.raises(ValueError, match="does not broadcast"):
        convert.bool_mask(np.ones((3, 2), dtype=bool), (2, 2))


def test_escape_is_html_escape_of_tags_and_ampersands_only():
    assert convert.escape("<b> & 'x' \"y\"") == "&lt;b&gt; &amp; 'x' \"y\""
    assert convert.escape(3) == "3"


def test_trace_finds_by_name_and_properties():
    fig = go.Figure([go.Scatter(name="a", xaxis="x"), go.Scatter(name="a", xaxis="x2"), go.Bar(name="b")])
    assert viz.trace(fig, "b").type == "bar"
    assert viz.trace(fig, "a", xaxis="x2") is fig.data[1]
    with pytest.raises(ValueError, match="exactly one trace named 'a'"):
        viz.trace(fig, "a")  # two of them
    with pytest.raises(ValueError, match="found 0"):
        viz.trace(fig, "c")


def test_a_notebook_may_add_traces_to_a_figure():
    fig = viz.heatmap_figure(torch.full((2, 2), 0.5), ["a", "b"], ["a", "b"])
    fig.add_trace(go.Scatter(x=[0], y=[0], name="my marker"))  # e.g. notebook 05's target markers
    viz.update_head_grid(fig, torch.eye(2), ["a", "b"], ["a", "b"])
    assert np.asarray(viz.trace(fig, "head 1").z).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_figure_meta_names_the_builder():
    fig = viz.heatmap_figure(torch.full((2, 2), 0.5), ["a", "b"], ["a", "b"])
    assert style.figure_meta(fig, "head_grid", "head_grid_figure")["slots"] == 1
    with pytest.raises(ValueError, match="fig must be a figure made by qk_space_figure"):
        style.figure_meta(fig, "qk_space", "qk_space_figure")
