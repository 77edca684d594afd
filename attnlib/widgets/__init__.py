"""Live panels: ipywidgets controls bound to plotly figures; the only package that imports ipywidgets.

panel.py holds LivePanel (and `panel.figures_at(**values)`, the way to check a panel from code), view.py the
one anywidget that draws a panel's figures (panel_view.js: head grids on canvases, others with plotly.js),
explorers.py the two ready-made panels and their control ranges, static.py what a panel becomes on a page
without a kernel.
"""
from .explorers import (
    D_K_OPTIONS,
    EXPLORER_TOKENS,
    MASKS,
    PAD_TOKEN,
    SATURATION_D_K_OPTIONS,
    TEMPERATURE_RANGE,
    AttentionExplorer,
    SaturationExplorer,
    row_stats,
    saturation_curves,
)
from .panel import LivePanel
from .view import LiveFigure, LiveGrid, PanelView

__all__ = [
    "LivePanel", "LiveFigure", "LiveGrid", "PanelView", "AttentionExplorer", "SaturationExplorer", "row_stats",
    "saturation_curves",
    "EXPLORER_TOKENS", "PAD_TOKEN", "D_K_OPTIONS", "SATURATION_D_K_OPTIONS", "MASKS", "TEMPERATURE_RANGE",
]
