"""The static site and the slides: offline pages, local plotly.js/MathJax/reveal.js, static live panels.

`make site` / `make slides` run scripts/build_site.py; here it builds a small notebook with a live panel
(and the introduction notebook, when it exists) into a temporary folder.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import ipywidgets as W
import plotly.graph_objects as go
import pytest

import attnlib as al
from attnlib import widgets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import build_site  # noqa: E402

SNAPSHOT = build_site.SNAPSHOT_MIME


def small_panel(**kwargs) -> widgets.LivePanel:
    """A LivePanel with one slider and one heatmap."""
    def update(figs, sharpness):
        figs[0].data[0].z = [[1 - sharpness / 10, sharpness / 10], [0.5, 0.5]]

    fig = go.Figure(go.Heatmap(z=[[0.5, 0.5], [0.5, 0.5]], zmin=0, zmax=1))
    slider = W.FloatSlider(value=2.0, min=0.0, max=10.0, description="sharpness")
    return widgets.LivePanel({"sharpness": slider}, [fig], update, title="Tiny panel",
                             caption="Watch the top row.", **kwargs)


# ---------------------------------------------------------------- the hook in attnlib/widgets.py


def test_live_panel_shows_a_widget_normally(monkeypatch):
    monkeypatch.delenv("ATTNLIB_STATIC", raising=False)
    bundle = small_panel()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert SNAPSHOT not in bundle
    assert bundle["text/plain"] == "LivePanel: Tiny panel"


def test_live_panel_under_attnlib_static_is_a_snapshot_of_its_state(monkeypatch):
    monkeypatch.setenv("ATTNLIB_STATIC", "1")
    panel = small_panel(main=True)
    bundle = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    assert bundle["text/plain"] == "LivePanel: Tiny panel"  # same as live: nbval sees no difference
    note = bundle["text/html"]
    assert 'class="al-static-note"' in note and build_site.BINDER_SLOT in note
    assert "sharpness = 2" in note and "Watch the top row." in note
    assert "JupyterLab or on Binder" in note
    figs = bundle[SNAPSHOT]["figures"]
    assert len(figs) == 1 and figs[0]["data"][0]["type"] == "heatmap"
    json.dumps(bundle)  # storable in a notebook
    # the snapshot follows the controls: it is the figure after update() ran
    panel.controls["sharpness"].value = 10.0
    z = panel.static_bundle()[SNAPSHOT]["figures"][0]["data"][0]["z"]
    assert z[0] == [0.0, 1.0] or z.get("bdata")  # plain list, or plotly's typed-array encoding
