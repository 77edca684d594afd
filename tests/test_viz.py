"""attnlib.viz builders: every figure's data equals attnlib's computation; bad inputs raise ValueError.

Traces are read by name (viz.trace), as notebooks read them. The conversions are tested in test_viz_convert.py.
"""
import ast
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

import attnlib as al
from attnlib import viz
from attnlib.viz.saturation import BAR_COLOR, MARKER_NAME

TOKENS = ["The", "cat", "sat", "on", "the", "mat"]


def _attention(n=6, heads=1, d_k=4, mask=None, seed=0):
    """Real attention weights [heads, n, n] from al.scaled_dot_product_attention."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(heads, n, d_k, generator=gen)  # [heads, n, d_k]
    k = torch.randn(heads, n, d_k, generator=gen)  # [heads, n, d_k]
    v = torch.randn(heads, n, d_k, generator=gen)  # [heads, n, d_k]
    return al.scaled_dot_product_attention(q, k, v, mask)[1]  # [heads, n, n]


def _titles(fig):
    """Figure title and the titles of all visible axes."""
    layout = fig.layout
    axes = [layout[name] for name in layout if name.startswith(("xaxis", "yaxis"))]
    return layout.title.text, [a.title.text for a in axes if a.visible is not False]


def _head(fig, h=1):
    """The weights trace of head h (1-based) of a heatmap or head grid."""
    return viz.trace(fig, f"head {h}")


def _masked(fig, h=1):
    """The mask layer of head h."""
    return viz.trace(fig, f"masked (head {h})")


def _curves(d_ks, n_keys, seed=0):
    """Scaled and unscaled saturation curves, as the caller of saturation_figure computes them."""
    return {kind: al.saturation_curve(list(d_ks), scaled=kind == "scaled", n_keys=n_keys, n_queries=64, seed=seed)
            for kind in ("scaled", "unscaled")}


def test_importing_viz_changes_no_plotly_setting():
    # In a Jupyter kernel plotly's own default, "plotly_mimetype", saves figures as JSON only (nbval checks
    # the committed outputs); viz must not override it, e.g. where another renderer is the right one.
    code = ("import plotly.io as pio; before = pio.renderers.default; import attnlib.viz; "
            "assert pio.renderers.default == before, (before, pio.renderers.default)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_figure_modules_never_compute_attention():
    for path in Path(viz.__file__).parent.glob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add("." * node.level + (node.module or ""))
        assert not imported & {"torch", "..core", "attnlib.core", "..modules", "..efficient"}, (path.name, imported)


# ---------------------------------------------------------------- heatmap


def test_heatmap_z_equals_weights_and_layout():
    w = _attention()[0]  # [6, 6]
    fig = viz.heatmap_figure(w, TOKENS, TOKENS)
    assert isinstance(fig, go.Figure)
    np.testing.assert_array_equal(np.asarray(_head(fig).z), np.round(w.numpy().astype(np.float64), 4))
    # queries top to bottom, keys left to right, token labels (duplicates like "the"/"The" kept apart)
    assert list(fig.layout.yaxis.range) == [5.5, -0.5]
    assert list(fig.layout.xaxis.range) == [-0.5, 5.5]
    assert list(fig.layout.xaxis.ticktext) == TOKENS and list(fig.layout.yaxis.ticktext) == TOKENS
    # fixed 0-1 colour range on a colour-blind-safe scale, shared by the weight trace
    assert _head(fig).coloraxis == "coloraxis"
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0, 1)
    assert fig.layout.coloraxis.colorscale[0][1].lower() == "#440154"  # Viridis
    # hover: query token, key token and weight
    custom = np.asarray(_head(fig).customdata)
    assert custom[2, 4].tolist() == ["sat", "the"]
    assert "customdata[0]" in _head(fig).hovertemplate and "customdata[1]" in _head(fig).hovertemplate
    assert "%{z" in _head(fig).hovertemplate
    # no mask: the mask layer is hidden
    assert _masked(fig).visible is False
    title, axis_titles = _titles(fig)
    assert title and "key →" in axis_titles and "← query" in axis_titles


def test_heatmap_marks_masked_cells():
    mask = al.causal_mask(6)  # [6, 6]
    w = _attention(mask=mask)[0]  # [6, 6]
    fig = viz.heatmap_figure(w, TOKENS, TOKENS, mask=mask)
    z = np.asarray(_head(fig).z)
    np.testing.assert_array_equal(z, np.round(w.numpy().astype(np.float64), 4))
    assert np.all(z[~mask.numpy()] == 0)  # the weight under a masked cell is exactly 0 ...
    layer = np.asarray(_masked(fig).z)
    np.testing.assert_array_equal(layer, (~mask).numpy().astype(float))  # ... and it is marked
    assert _masked(fig).visible is True
    assert _masked(fig).colorscale[-1][1] == viz.MASK_COLOR
    assert _masked(fig).colorscale[0][1] == "rgba(0,0,0,0)"  # unmasked cells show the weight through
    text = np.asarray(_masked(fig).text)
    assert text[0, 5] == "×" and text[5, 0] == ""  # cells are large at N = 6: marked without colour too
    assert any(a.visible and "masked" in a.text for a in fig.layout.annotations)


def test_heatmap_accepts_padding_mask_shape():
    mask = al.padding_mask([4], 6)  # [1, 1, 1, 6]
    w = _attention(mask=mask[0])[0]  # [6, 6]
    fig = viz.heatmap_figure(w, TOKENS, TOKENS, mask=mask)
    layer = np.asarray(_masked(fig).z)
    assert layer[:, 4:].min() == 1 and layer[:, :4].max() == 0


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(weights=torch.rand(2, 6, 6)), "weights"),  # 3-D for a single heatmap
        (dict(weights=torch.full((6, 6), 2.0)), "weights"),  # not weights in [0, 1]
        (dict(weights=torch.full((6, 6), float("nan"))), "weights"),
        (dict(q_tokens=TOKENS[:5]), "q_tokens"),
        (dict(k_tokens="abcdef"), "k_tokens"),
        (dict(mask=torch.ones(5, 6, dtype=torch.bool)), "mask"),
        (dict(mask=torch.full((6, 6), 3)), "mask"),
        (dict(width=50), "width"),
    ],
)
def test_heatmap_bad_input_names_the_argument(kwargs, word):
    args = dict(weights=torch.full((6, 6), 1 / 6), q_tokens=TOKENS, k_tokens=TOKENS)
    args.update(kwargs)
    extra = {k: args.pop(k) for k in ("mask", "width") if k in args}
    with pytest.raises(ValueError, match=word):
        viz.heatmap_figure(args["weights"], args["q_tokens"], args["k_tokens"], **extra)


# ---------------------------------------------------------------- head grid


def test_head_grid_one_subplot_per_head_shared_colour_bar():
    mask = al.window_mask(6, 1)  # [6, 6]
    w = _attention(heads=3, mask=mask)  # [3, 6, 6]
    fig = viz.head_grid_figure(w, TOKENS, TOKENS, mask=mask, slots=4)
    for h in range(3):
        np.testing.assert_array_equal(np.asarray(_head(fig, h + 1).z), np.round(w[h].numpy().astype(np.float64), 4))
        np.testing.assert_array_equal(np.asarray(_masked(fig, h + 1).z), (~mask).numpy().astype(float))
        assert _head(fig, h + 1).xaxis == _masked(fig, h + 1).xaxis == ("x" if h == 0 else f"x{h + 1}")
        assert _head(fig, h + 1).visible and fig.layout.annotations[h].text == f"head {h + 1}"
    # one colour axis for all heads, and no trace has its own colour bar
    assert {_head(fig, h).coloraxis for h in (1, 2, 3)} == {"coloraxis"}
    assert all(_masked(fig, h).showscale in (None, False) for h in (1, 2, 3, 4))
    # the spare slot is hidden and parked so it cannot cover the others
    assert _head(fig, 4).visible is False and fig.layout.xaxis4.visible is False
    assert fig.layout.xaxis4.domain[0] > 0.99
    # visible subplots do not overlap
    boxes = [(tuple(fig.layout[f"xaxis{'' if h == 0 else h + 1}"].domain),
              tuple(fig.layout[f"yaxis{'' if h == 0 else h + 1}"].domain)) for h in range(3)]
    for i in range(3):
        for j in range(i + 1, 3):
            (ax0, ax1), (ay0, ay1) = boxes[i]
            (bx0, bx1), (by0, by1) = boxes[j]
            assert ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0


def test_update_head_grid_in_place_changes_heads_and_values():
    w = _attention(heads=2)  # [2, 6, 6]
    fig = viz.head_grid_figure(w, TOKENS, TOKENS, slots=4)
    w2 = _attention(n=4, heads=4, seed=1)  # [4, 4, 4]
    viz.update_head_grid(fig, w2, TOKENS[:4], TOKENS[:4], mask=al.causal_mask(4))
    assert len(fig.data) == 8  # same figure, same traces
    for h in range(4):
        np.testing.assert_array_equal(np.asarray(_head(fig, h + 1).z), np.round(w2[h].numpy().astype(np.float64), 4))
        assert _head(fig, h + 1).visible and _masked(fig, h + 1).visible
    assert list(fig.layout.xaxis3.ticktext) == TOKENS[:4]
    # only the weights changed: the fast path rewrites z
    w3 = _attention(n=4, heads=4, seed=2)
    viz.update_head_grid(fig, w3, TOKENS[:4], TOKENS[:4], mask=al.causal_mask(4))
    np.testing.assert_array_equal(np.asarray(_head(fig, 4).z), np.round(w3[3].numpy().astype(np.float64), 4))


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(weights=torch.full((6, 6), 1 / 6)), "weights"),  # 2-D for a grid
        (dict(slots=1), "slots"),
        (dict(mask=torch.ones(3, 6, 6, dtype=torch.bool)), "mask"),
        (dict(k_tokens=TOKENS + ["x"]), "k_tokens"),
    ],
)
def test_head_grid_bad_input_names_the_argument(kwargs, word):
    args = dict(weights=torch.full((2, 6, 6), 1 / 6), q_tokens=TOKENS, k_tokens=TOKENS)
    args.update(kwargs)
    extra = {k: args.pop(k) for k in ("mask", "slots") if k in args}
    with pytest.raises(ValueError, match=word):
        viz.head_grid_figure(args["weights"], args["q_tokens"], args["k_tokens"], **extra)


def test_update_head_grid_rejects_other_figures_and_too_many_heads():
    with pytest.raises(ValueError, match="fig"):
        viz.update_head_grid(go.Figure(), torch.full((1, 2, 2), 0.5), ["a", "b"], ["a", "b"])
    fig = viz.head_grid_figure(torch.full((2, 2, 2), 0.5), ["a", "b"], ["a", "b"])
    with pytest.raises(ValueError, match="slots"):
        viz.update_head_grid(fig, torch.full((3, 2, 2), 0.5), ["a", "b"], ["a", "b"])


# ---------------------------------------------------------------- saturation


def test_saturation_figure_curves_equal_saturation_curve():
    d_ks = (1, 4, 16, 64)
    row = _attention(n=8)[0, 3]  # [8]
    current = {"entropy": 1.23456, "max_weight": 0.5, "jacobian_norm": 0.25}
    curves = _curves(d_ks, n_keys=8, seed=3)
    fig = viz.saturation_figure(row, curves, k_tokens=list("abcdefgh"), d_k=16, current=current)
    np.testing.assert_array_equal(np.asarray(viz.trace(fig, "weight").y), np.round(row.numpy().astype(np.float64), 4))
    for scaled, name in ((True, "scaled by 1/√d_k"), (False, "unscaled")):
        ref = curves["scaled" if scaled else "unscaled"]
        for axis, key in zip(("x2", "x3", "x4"), ("entropy", "max_weight", "jacobian_norm")):
            trace = viz.trace(fig, name, xaxis=axis)
            assert list(trace.x) == list(d_ks)
            np.testing.assert_allclose(np.asarray(trace.y), np.round(ref[key], 4), atol=1e-12)
            assert trace.line.dash == ("solid" if scaled else "dash")
    # unscaled attention saturates: entropy falls and max weight rises with d_k; scaled stays put
    unscaled_entropy = np.asarray(viz.trace(fig, "unscaled", xaxis="x2").y)
    assert unscaled_entropy[-1] < 0.5 * unscaled_entropy[0]
    scaled_entropy = np.asarray(viz.trace(fig, "scaled by 1/√d_k", xaxis="x2").y)
    assert scaled_entropy.min() > 0.8 * scaled_entropy.max()
    assert [viz.trace(fig, MARKER_NAME, xaxis=a).y[0] for a in ("x2", "x3", "x4")] == [1.2346, 0.5, 0.25]
    assert all(s.visible and s.x0 == 16 for s in fig.layout.shapes)
    assert fig.layout.title.text
    for axis in ("xaxis", "xaxis2", "xaxis3", "xaxis4", "yaxis", "yaxis2", "yaxis3", "yaxis4"):
        assert fig.layout[axis].title.text, axis
    assert fig.layout.xaxis2.type == "log"


def test_update_saturation_marks_masked_keys_and_moves_marker():
    fig = viz.saturation_figure(torch.full((4,), 0.25), _curves((1, 4, 16), n_keys=4), d_k=4)
    viz.update_saturation(fig, torch.tensor([0.5, 0.5, 0.0, 0.0]), row_mask=torch.tensor([1, 1, 0, 0]), d_k=1)
    assert list(viz.trace(fig, "weight").marker.color) == [BAR_COLOR] * 2 + [viz.MASK_COLOR] * 2
    assert fig.layout.shapes[0].x0 == 1
    assert viz.trace(fig, MARKER_NAME, xaxis="x2").x == (None,)  # no `current` given: markers hidden


def _fake_curves(scaled_d_k=(1, 2), unscaled_d_k=(1, 2)):
    """Curves of the right form on the given d_k grids (values arbitrary)."""
    def curve(d_ks):
        return {"d_k": list(d_ks), **{key: [0.5] * len(d_ks) for key in ("entropy", "max_weight", "jacobian_norm")}}
    return {"scaled": curve(scaled_d_k), "unscaled": curve(unscaled_d_k)}


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(row_weights=torch.full((2, 4), 0.25)), "row_weights"),
        (dict(curves=_fake_curves((4, 2), (4, 2))), "curves"),  # not increasing
        (dict(curves=_fake_curves((0, 2), (0, 2))), "curves"),  # d_k < 1
        (dict(curves=_fake_curves((1, 2), (1, 4))), "curves"),  # two grids
        (dict(curves={"scaled": _fake_curves()["scaled"]}), "curves"),  # unscaled missing
        (dict(d_k=0), "d_k"),
        (dict(k_tokens=["a"]), "k_tokens"),
        (dict(d_k=4, current={"entropy": 1.0}), "current"),
    ],
)
def test_saturation_bad_input_names_the_argument(kwargs, word):
    args = dict(row_weights=torch.full((4,), 0.25), curves=_fake_curves())
    args.update(kwargs)
    with pytest.raises(ValueError, match=word):
        viz.saturation_figure(args.pop("row_weights"), args.pop("curves"), **args)


def test_update_saturation_rejects_curves_of_another_grid_and_other_figures():
    fig = viz.saturation_figure(torch.full((4,), 0.25), _fake_curves())
    with pytest.raises(ValueError, match="curves"):
        viz.update_saturation(fig, torch.full((4,), 0.25), curves=_fake_curves((1, 4), (1, 4)))
    with pytest.raises(ValueError, match="fig"):
        viz.update_saturation(viz.heatmap_figure(torch.eye(2), ["a", "b"], ["a", "b"]), torch.full((4,), 0.25))


# ---------------------------------------------------------------- score histogram


def test_score_histogram_densities_and_normal_curve():
    gen = torch.Generator().manual_seed(0)
    d_k = 64
    q, k = torch.randn(2000, d_k, generator=gen), torch.randn(2000, d_k, generator=gen)
    raw = (q * k).sum(-1)  # [2000] q·k
    fig = viz.score_histogram_figure({"unscaled": raw, "scaled": raw / math.sqrt(d_k)}, bins=30)
    assert len(fig.data) == 3
    lo, hi = min(float(raw.min()), -4.0), max(float(raw.max()), 4.0)
    edges = np.linspace(lo, hi, 31)
    bars = [t for t in fig.data if t.type == "bar"]  # one per series, in order
    for trace, series in zip(bars, (raw, raw / math.sqrt(d_k))):
        density, _ = np.histogram(series.numpy().astype(np.float64), bins=edges, density=True)
        np.testing.assert_allclose(np.asarray(trace.y), np.round(density, 4), atol=1e-12)
    assert "unscaled (var" in bars[0].name and "scaled (var" in bars[1].name
    var_unscaled = float(bars[0].name.split("var ")[1].rstrip(")"))
    var_scaled = float(bars[1].name.split("var ")[1].rstrip(")"))
    assert abs(var_unscaled / d_k - 1) < 0.15 and abs(var_scaled - 1) < 0.15  # Var(q·k) ≈ d_k
    normal = viz.trace(fig, "N(0, 1) density")
    assert max(normal.y) == pytest.approx(1 / math.sqrt(2 * math.pi), abs=1e-3)
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text and fig.layout.title.text
    viz.update_score_histogram(fig, {"a": raw * 0.5, "b": raw})
    first = next(t for t in fig.data if t.type == "bar")
    assert first.name.startswith("a (var")
    viz.update_score_histogram(fig, {"<b>": raw, "b": raw})
    assert "<extra>&lt;b&gt;</extra>" in first.hovertemplate  # labels escaped in hover text


@pytest.mark.parametrize("scores, kwargs, word", [
    ({}, {}, "scores"), (np.zeros(1), {}, "scores"), (np.zeros(10), dict(bins=1), "bins"),
    ({"x": np.array([1.0, np.inf])}, {}, "scores"),
])
def test_score_histogram_bad_input(scores, kwargs, word):
    with pytest.raises(ValueError, match=word):
        viz.score_histogram_figure(scores, **kwargs)


# ---------------------------------------------------------------- convex hull


def _inside(point, hull):
    """True if `point` is inside or on the counter-clockwise polygon `hull`."""
    for a, b in zip(hull, np.roll(hull, -1, axis=0)):
        if (b[0] - a[0]) * (point[1] - a[1]) - (b[1] - a[1]) * (point[0] - a[0]) < -1e-9:
            return False
    return True


def test_convex_hull_square_collinear_and_single():
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.2, 0.7]])
    hull = viz.convex_hull(square)
    assert {tuple(p) for p in hull} == {(0, 0), (1, 0), (1, 1), (0, 1)}
    area = 0.5 * sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(hull, np.roll(hull, -1, axis=0)))
    assert area == pytest.approx(1.0)  # counter-clockwise: positive area
    assert len(viz.convex_hull([[0, 0], [1, 1], [2, 2]])) == 2
    assert len(viz.convex_hull([[3, 4]])) == 1


def test_convex_hull_figure_output_is_weighted_sum_inside_hull():
    gen = torch.Generator().manual_seed(0)
    values = torch.randn(7, 2, generator=gen)  # [7, 2]
    q, k = torch.randn(1, 2, generator=gen), torch.randn(7, 2, generator=gen)
    out, w = al.scaled_dot_product_attention(q, k, values)  # [1, 2], [1, 7]
    fig = viz.convex_hull_figure(values, w[0], tokens=list("abcdefg"))
    output = viz.trace(fig, "output Σ w_j v_j")
    assert (output.x[0], output.y[0]) == pytest.approx((float(out[0, 0]), float(out[0, 1])), abs=1e-4)
    hull = viz.convex_hull(values.numpy())
    outline = viz.trace(fig, "convex hull")
    closed = np.stack([outline.x, outline.y], axis=1)
    np.testing.assert_allclose(closed[:-1], np.round(hull, 4))
    np.testing.assert_allclose(closed[0], closed[-1])
    assert _inside(out[0].numpy(), hull)
    assert list(viz.trace(fig, "value vectors v_j").text) == list("abcdefg")
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text and fig.layout.title.text


@pytest.mark.parametrize("values, weights, word", [
    (np.zeros((3, 3)), np.full(3, 1 / 3), "values"),
    (np.zeros((3, 2)), np.full(2, 0.5), "weights"),
    (np.zeros((3, 2)), np.full(3, 0.5), "weights"),
])
def test_convex_hull_figure_bad_input(values, weights, word):
    with pytest.raises(ValueError, match=word):
        viz.convex_hull_figure(values, weights)


# ---------------------------------------------------------------- complexity


def test_complexity_figure_data_and_log_axes():
    results = {"naive": {"n": [128, 256], "time_ms": [1.0, 4.0], "memory_mb": [2.0, 8.0]},
               "linear": {"n": [128, 256, 512], "time_ms": [1.0, 2.0, 4.123456]}}
    fig = viz.complexity_figure(results)
    assert [t.name for t in fig.data] == ["naive", "naive", "linear", "linear"]
    assert list(viz.trace(fig, "linear", xaxis="x").y) == [1.0, 2.0, 4.1235]
    assert list(viz.trace(fig, "linear", xaxis="x2").y) == [None, None, None]
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == fig.layout.yaxis2.type == "log"
    for axis in ("xaxis", "xaxis2", "yaxis", "yaxis2"):
        assert fig.layout[axis].title.text
    assert list(viz.trace(fig, "naive", xaxis="x").x) == [128, 256]
    assert list(viz.trace(fig, "naive", xaxis="x2").y) == [2.0, 8.0]


@pytest.mark.parametrize("results", [
    {}, "naive", [{"method": "naive", "n": 1, "time_ms": 1.0}], {"naive": {"n": [1, 2], "time_ms": [1.0]}},
    {"naive": {"time_ms": [1.0]}}, {"naive": {"n": [1], "time_ms": [-1.0]}},
])
def test_complexity_figure_bad_input(results):
    with pytest.raises(ValueError, match="results"):
        viz.complexity_figure(results)


# ---------------------------------------------------------------- every number is CPU-independent


def _floats(node, path=""):
    """(path, value) of every float in a figure's JSON dict, lists flattened into their parent's path."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _floats(value, f"{path}.{key}" if path else key)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _floats(value, path)
    elif isinstance(node, float):
        yield path, node


def _every_figure():
    """One figure from each builder, on float32 data whose raw values have many digits."""
    w = _attention(n=5, heads=5)  # [5, 5, 5]; 5 heads: 3 columns, so subplot centres at ties such as 0.14665
    gen = torch.Generator().manual_seed(1)
    yield viz.head_grid_figure(w, TOKENS[:5], TOKENS[:5], mask=al.causal_mask(5), slots=8)
    yield viz.heatmap_figure(w[0], TOKENS[:5], TOKENS[:5])
    yield viz.saturation_figure(w[0, 2], _curves((1, 2, 4, 8, 16, 32, 64), n_keys=5), d_k=16,
                                current={"entropy": 1 / 3, "max_weight": 2 / 3, "jacobian_norm": math.pi})
    yield viz.score_histogram_figure({"raw": torch.randn(500, generator=gen) * 4,
                                      "scaled": torch.randn(500, generator=gen)})
    yield viz.convex_hull_figure(torch.randn(6, 2, generator=gen), torch.softmax(torch.randn(6, generator=gen), 0))
    yield viz.qk_space_figure(torch.randn(5, 8, generator=gen), torch.randn(5, 8, generator=gen), TOKENS[:5])
    yield viz.complexity_figure({"naive": {"n": [64, 128], "time_ms": [1 / 3, 2 / 3], "memory_mb": [None, math.e]}})


# Floats that are not computed from data: plotly's colour scales, make_subplots' domains and subplot-title
# positions (IEEE arithmetic on literal spacings, the same on every CPU) and the literal log10(4) tick step.
_LITERAL_PATHS = ("colorscale", "layout.template.")


def test_every_number_in_a_figure_is_rounded_or_a_literal():
    for fig in _every_figure():
        kind = fig.layout.meta["kind"] if fig.layout.meta else "complexity"
        made_by_subplots = kind in ("saturation", "complexity")
        for path, value in _floats(fig.to_plotly_json()):
            if any(part in path for part in _LITERAL_PATHS) or al.rounded(value) == value:
                continue
            if made_by_subplots and (path.endswith(".domain") or path == "layout.annotations.y"):
                continue
            assert path.endswith(".dtick") and value == math.log10(4), f"{kind}: {path} = {value!r} is not rounded"

