"""attnlib.widgets: controls set in code change the figures to the right values, errors stay in the panel.

Traces are read by name (viz.trace), as notebooks read them.
"""
import json
import math
import shutil
import subprocess

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import pytest
import torch

import attnlib as al
from attnlib import viz, widgets
from attnlib.viz.saturation import MARKER_NAME
from attnlib.widgets import explorers, static


def _z(fig, name="head 1"):
    """The z of the trace called `name` (default: the weights of head 1)."""
    return np.asarray(viz.trace(fig, name).z, dtype=np.float64)


def _marker_y(fig, axis):
    """The y of the saturation figure's marker in the subplot of `axis` (x2 entropy, x3 max weight, x4 Jacobian)."""
    return viz.trace(fig, MARKER_NAME, xaxis=axis).y[0]


def _variance(histogram):
    """The variance in the name of the first bar series of a score histogram."""
    bar = next(t for t in histogram.data if t.type == "bar")
    return float(bar.name.split("var ")[1].rstrip(")"))


# ---------------------------------------------------------------- LivePanel


def _simple_panel(**kwargs):
    tokens = ["a", "b", "c"]
    calls = []

    def update(figures, n, boom):
        calls.append((n, boom))
        if boom:
            raise ValueError(f"boom at n={n}")
        w = torch.softmax(torch.arange(9.0).view(3, 3) * n, dim=-1)  # [3, 3]
        viz.update_head_grid(figures[0], w, tokens, tokens)

    controls = {"n": W.IntSlider(value=0, min=0, max=3), "boom": W.Checkbox(value=False)}
    fig = viz.heatmap_figure(torch.full((3, 3), 1 / 3), tokens, tokens)
    return widgets.LivePanel(controls, [fig], update, **kwargs), calls


def test_live_panel_updates_in_place_on_every_change():
    panel, calls = _simple_panel(title="Demo")
    assert calls == [(0, False)]  # once at start
    fig = panel.figures[0]
    assert isinstance(fig, go.Figure)
    np.testing.assert_allclose(_z(fig), 1 / 3, atol=1e-4)
    panel.controls["n"].value = 2
    assert calls[-1] == (2, False)
    assert panel.figures[0] is fig  # same widget, updated in place
    expected = torch.softmax(torch.arange(9.0).view(3, 3) * 2, dim=-1).numpy()
    np.testing.assert_allclose(_z(fig), np.round(expected, 4))
    assert panel.status == "" and panel.last_error is None


def test_live_panel_error_shows_in_status_and_panel_keeps_working():
    panel, calls = _simple_panel(title="Demo")
    before = _z(panel.figures[0]).copy()
    panel.controls["boom"].value = True  # must not raise
    assert panel.status == "⚠ ValueError: boom at n=0"
    assert isinstance(panel.last_error, ValueError)
    assert "boom at n=0" in panel.status_widget.value and "Traceback" not in panel.status_widget.value
    np.testing.assert_array_equal(_z(panel.figures[0]), before)
    panel.controls["n"].value = 1  # still failing: message updated
    assert "n=1" in panel.status
    panel.controls["boom"].value = False  # fixed: next change works and clears the status
    assert panel.status == "" and panel.last_error is None and panel.status_widget.value == ""
    expected = torch.softmax(torch.arange(9.0).view(3, 3) * 1, dim=-1).numpy()
    np.testing.assert_allclose(_z(panel.figures[0]), np.round(expected, 4))


def test_live_panel_error_at_start_is_caught():
    def update(figures, n):
        raise RuntimeError("no data yet")

    panel = widgets.LivePanel({"n": W.IntSlider()}, [go.Figure()], update, title="Start")
    assert panel.status == "⚠ RuntimeError: no data yet"


def test_live_panel_display_is_short_and_stable():
    panel, _ = _simple_panel(title="Demo")
    bundle = panel._repr_mimebundle_()
    assert bundle["text/plain"] == "LivePanel: Demo"
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert repr(widgets.LivePanel({}, [], lambda figures: None)) == "LivePanel"


def test_live_panel_main_css_classes():
    panel, _ = _simple_panel(title="Demo", main=True)
    assert "al-main-panel" in panel.widget._dom_classes
    assert "al-main-slider" in panel.controls["n"]._dom_classes
    assert "al-main-slider" not in panel.controls["boom"]._dom_classes
    other, _ = _simple_panel(title="Other")
    assert "al-main-panel" not in other.widget._dom_classes


def test_figures_at_runs_update_on_copies_and_leaves_the_view_alone():
    panel, calls = _simple_panel(title="Demo")
    shown, updates = _z(panel.figures[0]).copy(), panel.updates
    figs = panel.figures_at(n=2)  # boom keeps its current value, False
    assert calls[-1] == (2, False) and len(figs) == 1
    assert type(figs[0]) is go.Figure and figs[0] is not panel.figures[0]
    expected = torch.softmax(torch.arange(9.0).view(3, 3) * 2, dim=-1).numpy()
    np.testing.assert_allclose(_z(figs[0]), np.round(expected, 4))
    np.testing.assert_array_equal(_z(panel.figures[0]), shown)  # the displayed figure did not move
    assert panel.controls["n"].value == 0 and panel.updates == updates and panel.status == ""
    with pytest.raises(ValueError, match="boom at n=3"):  # what update raised
        panel.figures_at(n=3, boom=True)
    assert panel.status == ""  # and the panel knows nothing of it
    with pytest.raises(ValueError, match="values must name controls"):
        panel.figures_at(m=1)


def test_explorer_figures_at_equals_moving_the_controls():
    ex = widgets.AttentionExplorer(seq_len=6, heads=2)
    settings = dict(d_k=32, mask="window", window=1, seed=5, query=3)
    figs = ex.figures_at(**settings)
    for name, value in settings.items():
        ex.controls[name].value = value
    for static_fig, live in zip(figs, ex.figures):
        assert static_fig.to_json() == go.Figure(live).to_json()


def test_static_constants_shared_with_the_site_builder_are_stable():
    assert (static.STATIC_ENV, static.SNAPSHOT_MIME, static.NOTE_CLASS, static.BINDER_SLOT) == (
        "ATTNLIB_STATIC", "application/vnd.attnlib.panel-snapshot+json", "al-static-note", "<!--binder-->")


def test_snapshot_names_the_settings_of_enabled_controls(monkeypatch):
    panel, _ = _simple_panel(title="A <b> title", caption="cap")
    panel.controls["boom"].disabled = True
    bundle = static.panel_bundle(panel)
    assert bundle == panel.static_bundle()
    note = bundle["text/html"]
    assert note.startswith(f'<div class="{static.NOTE_CLASS}"><b>A &lt;b&gt; title</b>')
    assert "(static snapshot at n = 0)." in note and static.BINDER_SLOT in note and "boom" not in note
    assert bundle[static.SNAPSHOT_MIME]["figures"][0]["layout"]["meta"]["kind"] == "head_grid"
    monkeypatch.setenv(static.STATIC_ENV, "1")
    assert panel._repr_mimebundle_() == bundle


@pytest.mark.parametrize("args, word", [
    (({"n": 3}, [], lambda f: None), "controls"),
    (({"n": W.IntSlider()}, go.Figure(), lambda f, n: None), "figures"),
    (({"n": W.IntSlider()}, [1], lambda f, n: None), "figures"),
    (({"n": W.IntSlider()}, [], "update"), "update"),
    (({"n": W.HBox()}, [], lambda f, n: None), "controls"),
])
def test_live_panel_bad_input(args, word):
    with pytest.raises(ValueError, match=word):
        widgets.LivePanel(*args)


# ---------------------------------------------------------------- AttentionExplorer


@pytest.fixture(scope="module")
def explorer():
    return widgets.AttentionExplorer(main=True)


def _reference(ex, values):
    """The weights from a direct al.scaled_dot_product_attention call on the explorer's Q, K, V."""
    res = ex.compute(**values)
    n = values["seq_len"]
    if values["mask"] == "causal":
        mask = al.causal_mask(n)
    elif values["mask"] == "window":
        mask = al.window_mask(n, values["window"])
    elif values["mask"] == "padding":
        mask = al.padding_mask([n - min(values["pad"], n)], n)[0]  # [1, 1, n]
    else:
        mask = None
    scale = (1 / math.sqrt(values["d_k"]) if values["scaled"] else 1.0) / values["temperature"]
    _, weights = al.scaled_dot_product_attention(res["q"], res["k"], res["v"], mask, scale=scale)
    return res, weights  # weights [heads, N, N]


def test_explorer_figures_follow_the_controls(explorer):
    ex = explorer
    changes = dict(seq_len=6, heads=3, d_k=32, mask="window", window=1, scaled=False, temperature=10 ** 0.5,
                   seed=7, query=2)
    for name, value in changes.items():
        ex.controls[name].value = value
        assert ex.status == "", ex.status
    values = ex.values()
    res, ref = _reference(ex, values)
    assert ref.shape == (3, 6, 6)
    grid, sat = ex.figures
    for h in range(3):
        np.testing.assert_allclose(_z(grid, f"head {h + 1}"), np.round(ref[h].numpy(), 4), atol=1e-4)
        np.testing.assert_array_equal(_z(grid, f"masked (head {h + 1})"), (~al.window_mask(6, 1)).numpy().astype(float))
        assert viz.trace(grid, f"head {h + 1}").visible
    assert not any(viz.trace(grid, f"head {h + 1}").visible for h in range(3, ex.max_heads))
    assert list(grid.layout.xaxis.ticktext) == res["tokens"] == widgets.EXPLORER_TOKENS[:6]
    # saturation panel: row `query` of head 1, markers at the current d_k with this panel's statistics
    np.testing.assert_allclose(np.asarray(viz.trace(sat, "weight").y, dtype=float), np.round(ref[0, 2].numpy(), 4),
                               atol=1e-4)
    assert viz.trace(sat, MARKER_NAME, xaxis="x2").x == (32,)
    assert _marker_y(sat, "x2") == pytest.approx(float(al.softmax_entropy(ref).mean()), abs=1e-4)
    assert _marker_y(sat, "x3") == pytest.approx(float(al.max_weight(ref).mean()), abs=1e-4)
    assert _marker_y(sat, "x4") == pytest.approx(float(al.jacobian_norm(ref).mean()), abs=1e-4)
    curve = al.saturation_curve(list(widgets.D_K_OPTIONS), scaled=True, n_keys=6, n_queries=explorers.SAT_N_QUERIES)
    entropy = viz.trace(sat, "scaled by 1/√d_k", xaxis="x2").y
    np.testing.assert_allclose(np.asarray(entropy), np.round(curve["entropy"], 4), atol=1e-12)


def test_explorer_temperature_and_scaling_act_on_the_scores(explorer):
    ex = explorer
    ex.controls["mask"].value = "none"
    ex.controls["temperature"].value = 1.0
    ex.controls["scaled"].value = True
    base = _reference(ex, ex.values())[1]
    # scaling off at d_k = 4 is the same as temperature 1/2 with scaling on
    ex.controls["d_k"].value = 4
    ex.controls["scaled"].value = False
    off = _z(ex.figures[0])
    ex.controls["scaled"].value = True
    ex.controls["temperature"].value = 10 ** ex.controls["temperature"].min  # coldest: sharper than before
    cold = _z(ex.figures[0])
    assert cold.max(axis=1).mean() > off.max(axis=1).mean() - 1e-9
    assert ex.status == ""
    assert base.shape[0] == ex.controls["heads"].value


def test_explorer_mask_cells_zero_and_marked(explorer):
    ex = explorer
    ex.controls["seq_len"].value = 8
    ex.controls["mask"].value = "causal"
    z = _z(ex.figures[0])
    upper = ~al.causal_mask(8).numpy()
    assert np.all(z[upper] == 0) and np.allclose(z.sum(axis=1), 1, atol=1e-3)
    np.testing.assert_array_equal(_z(ex.figures[0], "masked (head 1)"), upper.astype(float))
    assert viz.trace(ex.figures[0], "masked (head 1)").visible
    assert ex.controls["window"].disabled and ex.controls["pad"].disabled
    ex.controls["mask"].value = "padding"
    ex.controls["pad"].value = 3
    res = ex.compute(**ex.values())
    assert res["tokens"][-3:] == [widgets.PAD_TOKEN] * 3
    assert not ex.controls["pad"].disabled and ex.controls["window"].disabled
    z = _z(ex.figures[0])
    assert np.all(z[:, -3:] == 0)


def _extremes(control):
    if isinstance(control, W.SelectionSlider) or isinstance(control, W.Dropdown):  # options: values or (label, value)
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return values[:1] + values[-1:]
    if isinstance(control, W.Checkbox):
        return [False, True]
    if isinstance(control, W.FloatLogSlider):
        return [control.base ** control.min, control.base ** control.max]
    return [control.min, control.max]


@pytest.mark.parametrize("mask", widgets.MASKS)
def test_explorer_every_control_extreme_renders(mask):
    ex = widgets.AttentionExplorer(mask=mask, seq_len=4, heads=2)
    for name, control in ex.controls.items():
        for value in _extremes(control):
            control.value = value
            assert ex.status == "", f"{name}={value}: {ex.status}"
            values = ex.values()
            n, heads = values["seq_len"], values["heads"]
            z = _z(ex.figures[0])
            assert z.shape == (n, n) and np.isfinite(z).all()
            assert np.allclose(z.sum(axis=1), 1, atol=2e-3)
            assert sum(bool(viz.trace(ex.figures[0], f"head {h + 1}").visible) for h in range(ex.max_heads)) == heads
            assert ex.controls["query"].max == n - 1


def test_explorer_all_padding_and_window_zero():
    ex = widgets.AttentionExplorer(mask="padding", seq_len=5, pad=32, heads=1)
    assert ex.status == ""
    res = ex.compute(**ex.values())
    assert res["tokens"] == [widgets.PAD_TOKEN] * 5
    # every key masked: -1e9 everywhere gives uniform rows (not zeros); every cell is marked
    np.testing.assert_allclose(_z(ex.figures[0]), 0.2, atol=1e-4)
    assert _z(ex.figures[0], "masked (head 1)").min() == 1
    ex.controls["mask"].value = "window"
    ex.controls["window"].value = 0
    np.testing.assert_allclose(_z(ex.figures[0]), np.eye(5), atol=1e-4)  # only the diagonal


def test_explorer_error_in_update_stays_in_panel(explorer, monkeypatch):
    ex = explorer

    def broken(**values):
        raise RuntimeError("compute failed")

    monkeypatch.setattr(ex, "compute", broken)
    ex.controls["seed"].value = 11
    assert ex.status == "⚠ RuntimeError: compute failed"
    monkeypatch.undo()
    ex.controls["seed"].value = 12
    assert ex.status == ""
    np.testing.assert_allclose(_z(ex.figures[0]), np.round(_reference(ex, ex.values())[1][0].numpy(), 4),
                               atol=1e-4)


def test_explorer_bad_arguments():
    with pytest.raises(ValueError, match="d_k"):
        widgets.AttentionExplorer(d_k=3)
    with pytest.raises(ValueError, match="heads"):
        widgets.AttentionExplorer(heads=9)
    with pytest.raises(ValueError, match="mask"):
        widgets.AttentionExplorer(mask="future")
    with pytest.raises(ValueError, match="temperature"):
        widgets.AttentionExplorer(temperature=100.0)
    with pytest.raises(ValueError, match="tokens"):
        widgets.AttentionExplorer(tokens=["a", "b"], max_seq=4)


def test_explorer_display_and_main_classes(explorer):
    assert explorer._repr_mimebundle_()["text/plain"] == "AttentionExplorer: Attention explorer"
    assert "al-main-panel" in explorer.widget._dom_classes
    assert "al-main-slider" in explorer.controls["d_k"]._dom_classes


# ---------------------------------------------------------------- SaturationExplorer


def test_saturation_explorer_follows_controls():
    sx = widgets.SaturationExplorer(d_k=64, scaled=False, n_keys=8)
    assert sx.status == ""
    assert 0.8 * 64 < _variance(sx.figures[1]) < 1.2 * 64  # unscaled: Var(q·k) ≈ d_k
    sx.controls["scaled"].value = True
    assert 0.8 < _variance(sx.figures[1]) < 1.2  # scaled: ≈ 1
    res = sx.compute(**sx.values())
    np.testing.assert_allclose(np.asarray(viz.trace(sx.figures[0], "weight").y, dtype=float),
                               np.round(res["weights"][0].numpy(), 4), atol=1e-4)
    assert _marker_y(sx.figures[0], "x2") == pytest.approx(float(al.softmax_entropy(res["weights"]).mean()), abs=1e-4)
    assert viz.trace(sx.figures[0], MARKER_NAME, xaxis="x2").x == (64,)
    # the weights are the softmax of the scores divided by the temperature
    sx.controls["temperature"].value = 10.0 ** 1.0
    res = sx.compute(**sx.values())
    scores = torch.as_tensor(sx._raw) / 8 / 10.0  # [rows, N]
    torch.testing.assert_close(res["weights"], torch.softmax(scores, dim=-1))


def test_saturation_explorer_extremes_render():
    sx = widgets.SaturationExplorer()
    for name, control in sx.controls.items():
        for value in _extremes(control):
            control.value = value
            assert sx.status == "", f"{name}={value}: {sx.status}"
            assert np.isfinite(np.asarray(viz.trace(sx.figures[0], "weight").y, dtype=float)).all()


# ---------------------------------------------------------------- PanelView (what goes to the browser)


def _sent(panel, monkeypatch):
    """The comm messages the panel's view sends from now on (a list that fills up)."""
    sent = []
    monkeypatch.setattr(panel.view, "_send", lambda msg, buffers=None: sent.append((msg, buffers)))
    return sent


def test_every_figure_in_one_message_with_float32_weights(monkeypatch):
    panel, _ = _simple_panel(title="Demo")
    sent = _sent(panel, monkeypatch)
    panel.controls["n"].value = 2
    assert len(sent) == 1  # the heatmap as soon as it is recorded; the panel has no other figure to send after it
    state = sent[0][0]["state"]
    assert {"figures", "revision", "python_ms"} <= set(state) and state["revision"] == 2
    (grid,) = panel.view.figures
    assert grid["kind"] == "grid" and grid["q_tokens"] == ["a", "b", "c"] and grid["masked"] is None
    expected = torch.softmax(torch.arange(9.0).view(3, 3) * 2, dim=-1).numpy()
    weights = np.frombuffer(grid["weights"], dtype="<f4").reshape(1, 3, 3)  # [heads, N_q, N_k]
    np.testing.assert_allclose(weights[0], np.round(expected, 4), atol=1e-7)
    assert sent[0][1]  # the weights travel as a binary buffer, not as JSON


def test_a_view_drawn_after_updates_gets_the_latest_state():
    panel, _ = _simple_panel(title="Demo")
    for n in (1, 2, 3):
        panel.controls["n"].value = n
    state = panel.view.get_state()  # what a view created now draws from: the whole figure, never a diff
    weights = np.frombuffer(state["figures"][0]["weights"], dtype="<f4")
    expected = torch.softmax(torch.arange(9.0).view(3, 3) * 3, dim=-1).numpy()
    np.testing.assert_allclose(weights, np.round(expected, 4).ravel(), atol=1e-7)
    assert state["revision"] == panel.view.revision == 4


def test_masked_cells_and_other_figures_reach_the_view():
    ex = widgets.AttentionExplorer(seq_len=5, heads=2, mask="causal")
    grid, sat = ex.view.figures
    masked = np.frombuffer(grid["masked"], dtype=np.uint8).reshape(2, 5, 5)  # [heads, N, N]
    np.testing.assert_array_equal(masked[1], (~al.causal_mask(5)).numpy())
    assert grid["note"] and len(grid["domains"]) == 2 and grid["labels"] == ["head 1", "head 2"]
    assert sat["kind"] == "chart" and json.loads(sat["json"])["layout"]["meta"]["kind"] == "saturation"


def _chart(panel, i):
    """The plotly JSON the view draws figure i from, on a canvas (panel_view.js Chart)."""
    part = panel.view.figures[i]
    assert part["kind"] == "chart"
    return json.loads(part["json"])


def _plotly_json(fig):
    """A figure's data and layout as plotly JSON, without the template (the canvas draws plotly_white's look)."""
    figure = json.loads(widgets.view.LiveFigure(fig).part()["json"])  # as the view gets any other figure
    figure["layout"].pop("template")
    return figure


def test_saturation_chart_is_the_plotly_figure():
    ex = widgets.AttentionExplorer(seq_len=5, heads=2, mask="causal", query=1)
    ex.controls["d_k"].value = 64
    chart = _chart(ex, 1)  # what the canvas draws, recorded without plotly's validation ...
    assert chart == _plotly_json(ex.figures[1])  # ... is the plotly figure, brought up to date when code reads it
    bars = chart["data"][0]
    assert bars["marker"]["color"] == [viz.saturation.BAR_COLOR] * 2 + [viz.style.MASK_COLOR] * 3  # keys 3-5 masked
    assert [d["x"] for d in chart["data"] if d["name"] == MARKER_NAME] == [[64]] * 3
    shapes = chart["layout"]["shapes"]  # the dotted line at the current d_k, on each curve plot
    assert [s["x0"] for s in shapes] == [64] * 3 and all(s["visible"] for s in shapes)


def test_histogram_chart_follows_the_controls_and_the_plotly_figure_catches_up():
    sx = widgets.SaturationExplorer(d_k=16, n_keys=8)
    before = list(sx._figures[1].data[0].y)
    sx.controls["d_k"].value = 256
    assert list(sx._figures[1].data[0].y) == before  # while the view draws the chart, plotly's copy waits ...
    hist = _chart(sx, 1)
    assert hist == _plotly_json(sx.figures[1]) and hist["data"][0]["y"] != before  # ... and catches up when read
    assert _chart(sx, 0) == _plotly_json(sx.figures[0])


def test_chart_changes_apply_to_copies():
    data, layout = [{"y": [1]}], {"xaxis": {"title": {"text": "a"}}}
    changes = {("data", 0, "y"): [2], ("layout", "xaxis", "range"): [0, 1], ("layout", "shapes", 0, "x0"): 3}
    new_data, new_layout = widgets.view.patched(data, layout | {"shapes": [{"x0": 1}]}, changes)
    assert new_data[0]["y"] == [2] and new_layout["xaxis"] == {"title": {"text": "a"}, "range": [0, 1]}
    assert new_layout["shapes"] == [{"x0": 3}]
    assert data == [{"y": [1]}] and layout == {"xaxis": {"title": {"text": "a"}}}  # the figure's own dicts untouched


def test_row_stats_jacobian_norm_is_the_closed_form_of_al_jacobian_norm():
    w = torch.softmax(torch.randn(50, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 4, -1)
    assert explorers.row_stats(w)["jacobian_norm"] == pytest.approx(float(al.jacobian_norm(w).mean()), abs=1e-12)


def _two_figure_panel(after_grid):
    """A heatmap and a bar chart; update draws the heatmap, calls after_grid(n), then rewrites the bars."""
    tokens = ["a", "b", "c"]

    def update(figures, n):
        viz.update_head_grid(figures[0], torch.softmax(torch.arange(9.0).view(3, 3) * n, dim=-1), tokens, tokens)
        after_grid(n)
        figures[1].data[0].y = [n, n, n]

    bars = go.Figure(go.Bar(x=tokens, y=[0, 0, 0]))
    heat = viz.heatmap_figure(torch.full((3, 3), 1 / 3), tokens, tokens)
    return widgets.LivePanel({"n": W.IntSlider(value=0, min=0, max=3)}, [heat, bars], update)


def test_heatmaps_go_out_before_the_rest_of_the_update(monkeypatch):
    seen = []
    panel = _two_figure_panel(lambda n: seen.append([m["state"].get("revision") for m, _ in sent]))
    sent = _sent(panel, monkeypatch)
    panel.controls["n"].value = 2
    assert seen == [[2]]  # the heatmap was sent before the bars were computed ...
    grid, bars = sent[0][0]["state"]["figures"]
    assert json.loads(bars["json"])["data"][0]["y"] == [0, 0, 0]  # ... with the bars as the view had them
    grid, bars = panel.view.figures  # then every figure
    assert json.loads(bars["json"])["data"][0]["y"] == [2, 2, 2] and panel.view.revision == 3


def test_update_failing_after_the_heatmaps_went_out_restores_the_view():
    def fail_at_3(n):
        if n == 3:
            raise ValueError("bars failed")

    panel = _two_figure_panel(fail_at_3)
    panel.controls["n"].value = 1
    shown = list(panel.view.figures)
    panel.controls["n"].value = 3
    assert panel.status == "⚠ ValueError: bars failed" and panel.view.figures == shown


def test_failed_update_leaves_the_view_as_it_was(monkeypatch):
    panel, _ = _simple_panel(title="Demo")
    before = (panel.view.revision, panel.view.figures)
    sent = _sent(panel, monkeypatch)
    panel.controls["boom"].value = True
    assert (panel.view.revision, panel.view.figures) == before and not any("figures" in m["state"] for m, _ in sent
                                                                            if "state" in m)
    assert panel.status.startswith("⚠ ValueError")


def test_a_view_that_drew_nothing_gets_the_whole_state_again(monkeypatch):
    panel, _ = _simple_panel(title="Demo")
    view = panel.view
    sent = _sent(panel, monkeypatch)
    view._on_msg(view, {"drawn": view.revision}, [])  # a view that drew the newest revision: nothing to resend
    assert sent == []
    view._on_msg(view, {"drawn": 0}, [])  # a view drew revision 0 (empty) although revision 1 went out
    (msg, buffers), = sent
    assert msg["state"]["revision"] == view.revision == 1 and msg["state"]["figures"][0]["kind"] == "grid"
    assert buffers  # the weights again, as a binary buffer


def test_panel_replaces_a_view_the_browser_stopped_answering():
    panel, _ = _simple_panel(title="Demo")
    old = panel.view
    old._on_msg(old, {"drawn": old.revision}, [])  # a browser view drew it
    assert old.drawn == 1 and not old.stalled
    panel.controls["n"].value = 1  # sent, never answered ...
    old._waiting_since -= old.STALL_SECONDS + 1  # ... for longer than STALL_SECONDS
    assert old.stalled
    panel.controls["n"].value = 3
    assert panel.view is not old and panel.figures_box.children == (panel.view,) and old.comm is None
    expected = torch.softmax(torch.arange(9.0).view(3, 3) * 3, dim=-1).numpy()
    weights = np.frombuffer(panel.view.figures[0]["weights"], dtype="<f4")
    np.testing.assert_allclose(weights, np.round(expected, 4).ravel(), atol=1e-7)
    assert panel.status == ""


def test_view_module_is_small_and_loads_plotly_once_per_kernel():
    # anywidget rejects a module that has not loaded within 2 s: the view's own module stays small, and plotly.js
    # (5 MB) comes once per kernel through one shared PlotlySource model, imported once per page
    assert len(widgets.PanelView._esm) < 60_000  # 60 kB with the figures' descriptions, tables and keyboard
    a, b = _two_figure_panel(lambda n: None), _two_figure_panel(lambda n: None)  # a plain plotly bar chart each
    assert a.view.plotly is b.view.plotly and len(a.view.plotly.source) > 1_000_000
    assert widgets.SaturationExplorer().view.plotly is None  # canvases only: plotly.js is not sent at all


def test_figures_read_from_code_are_up_to_date_and_recording_resumes():
    panel, _ = _simple_panel(title="Demo")
    panel.controls["n"].value = 3
    grid = panel.figures[0]  # brought up to date on reading
    expected = torch.softmax(torch.arange(9.0).view(3, 3) * 3, dim=-1).numpy()
    np.testing.assert_allclose(_z(grid), np.round(expected, 4))
    assert grid.recording
    panel.controls["n"].value = 1
    expected = torch.softmax(torch.arange(9.0).view(3, 3), dim=-1).numpy()
    np.testing.assert_allclose(_z(panel.figures[0]), np.round(expected, 4))


def test_static_grid_is_kept_and_checked():
    panel, _ = _simple_panel(title="Demo", static_grid={"n": (0, 3)})
    assert panel.static_grid == {"n": [0, 3]} and panel.main is False and panel.title == "Demo"
    assert _simple_panel()[0].static_grid is None
    with pytest.raises(ValueError, match="static_grid"):
        _simple_panel(static_grid={"m": [1]})
    with pytest.raises(ValueError, match="static_grid"):
        _simple_panel(static_grid={"n": []})


def test_static_display_calls_static_panel_bundle(monkeypatch):
    panel, _ = _simple_panel(title="Demo")
    monkeypatch.setenv(static.STATIC_ENV, "1")
    monkeypatch.setattr(static, "panel_bundle", lambda p: {"text/plain": repr(p), "seen": p is panel}, raising=False)
    assert panel._repr_mimebundle_() == {"text/plain": "LivePanel: Demo", "seen": True}


@pytest.mark.parametrize("grid, says", [
    ({"nope": [1]}, "static_grid must name controls of the panel ['boom', 'n'], got 'nope'"),
    ({"n": []}, "static_grid['n'] must be a non-empty list of values, got []"),
    ([("n", [1])], "static_grid must be a dict of control name → values, got list"),
])
def test_static_grid_names_what_is_wrong(grid, says):
    with pytest.raises(ValueError) as err:
        _simple_panel(static_grid=grid)
    assert str(err.value) == says


def test_static_grid_set_later_is_checked_by_the_site_states():
    panel, _ = _simple_panel(static_grid={"n": (0, 2)})
    assert panel.static_grid == {"n": [0, 2]}
    panel.static_grid = {"typo": [1]}
    with pytest.raises(ValueError, match="static_grid must name controls of the panel"):
        widgets.states.panel_states(panel)


# ---------------------------------------------------------------- what a screen reader hears (issue 25)

NODE = shutil.which("node")


def _view_js(call: str, **data):
    """`call` evaluated by node against panel_view.js's functions (the module without its widget export)."""
    head = (widgets.view.HERE / "panel_view.js").read_text(encoding="utf-8").partition("\nexport default {")[0]
    script = f"{head}\nconst data = {json.dumps(data)};\nprocess.stdout.write(JSON.stringify({call}));"
    return json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True).stdout)


def _summary(panel, language):
    """The description the view gives the panel's first figure (a head grid), and the weights it was drawn from."""
    part = panel.view.figures[0]
    view = {k: v for k, v in part.items() if k not in ("weights", "masked")}
    weights = np.frombuffer(part["weights"], dtype="<f4")  # [heads * N_q * N_k]
    masked = None if part["masked"] is None else list(part["masked"])
    al.set_language(language)
    try:
        said = _view_js("gridSummary(data.f, new Float32Array(data.w), data.m, data.t)", f=view,
                        w=weights.tolist(), m=masked, t=widgets.view.texts())
    finally:
        al.set_language("en")
    return said, weights.reshape(-1, len(view["q_tokens"]), len(view["k_tokens"])), view


@pytest.mark.skipif(NODE is None, reason="needs node to run the view's JavaScript")
@pytest.mark.parametrize("language, row, sep", [("en", "{q} → {a} {wa}, {b} {wb}", "; "),
                                                ("zh", "{q} → {a} {wa}，{b} {wb}", "；")])
def test_heatmap_description_names_each_querys_strongest_keys_with_the_weights_drawn(language, row, sep):
    tokens = ["it", "animal", "road"] if language == "en" else ["它", "动物", "马路"]
    scores = torch.tensor([[3.0, 5.0, 1.0], [0.0, 4.0, 2.0], [1.0, 0.0, 0.5]])  # [3, 3]: not the diagonal
    fig = viz.heatmap_figure(torch.softmax(scores, -1), tokens, tokens, title="T")
    panel = widgets.LivePanel({"n": W.IntSlider(1)}, [fig], lambda f, n: viz.update_head_grid(
        f[0], torch.softmax(scores * n, -1), tokens, tokens))
    said, w, _ = _summary(panel, language)
    expected = []  # measurement: the two largest weights of each row, read from the buffer the view draws
    for i, q in enumerate(tokens):
        a, b = np.argsort(-w[0, i], kind="stable")[:2]
        expected.append(row.format(q=q, a=tokens[a], wa=f"{w[0, i, a]:.2f}", b=tokens[b], wb=f"{w[0, i, b]:.2f}"))
    assert sep.join(expected) in said, said
    assert expected[0].startswith(f"{tokens[0]} → {tokens[1]} 0.87")  # softmax([3, 5, 1])[1] = 0.867
    panel.controls["n"].value = 0  # uniform rows: the numbers follow the data
    assert f"{tokens[0]} → {tokens[0]} 0.33" in _summary(panel, language)[0]


@pytest.mark.skipif(NODE is None, reason="needs node to run the view's JavaScript")
def test_heatmap_description_skips_masked_keys_and_names_each_head():
    ex = widgets.AttentionExplorer(seq_len=4, heads=2, mask="causal")
    said, w, view = _summary(ex, "en")
    assert said.count(". ") == 1 and said.startswith(view["labels"][0]) and view["labels"][1] in said
    first = f"{view['q_tokens'][0]} → {view['k_tokens'][0]} 1.00;"  # causal: the first query sees only itself
    assert first in said, said
    tables = _view_js("gridTables.length")  # the table builder exists (its DOM is checked in the browser test)
    assert tables == 4


@pytest.mark.skipif(NODE is None, reason="needs node to run the view's JavaScript")
@pytest.mark.parametrize("language, words", [("en", ("entropy {e} nats", "largest weight {m}")),
                                             ("zh", ("熵 {e} 奈特", "最大权重 {m}"))])
def test_saturation_description_gives_the_rows_entropy_and_largest_weight(language, words):
    sx = widgets.SaturationExplorer(d_k=16, n_keys=6)
    chart = _chart(sx, 0)
    y = np.asarray(chart["data"][0]["y"], dtype=np.float64)  # the bars drawn: one row of weights
    entropy = float(al.softmax_entropy(torch.tensor(y)))  # measurement: the library's entropy of that row
    al.set_language(language)
    try:
        said = _view_js("chartSummary(data.c, data.t)", c=_chart(sx, 0), t=widgets.view.texts())
    finally:
        al.set_language("en")
    for word in words:
        assert word.format(e=f"{entropy:.2f}", m=f"{y.max():.2f}") in said, said
    marker = _marker_y(sx.figures[0], "x2")  # the panel's mean entropy, drawn as the marker at d_k = 16
    assert "d_k = 16" in said and f"{marker:.2f}" in said, said
