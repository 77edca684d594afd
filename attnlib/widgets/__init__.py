"""Live panels: ipywidgets controls bound to plotly figures; the only package that imports ipywidgets.

panel.py holds LivePanel (and `panel.figures_at(**values)`, the way to check a panel from code),
plotly_widget.py the FigureWidget workarounds, explorers.py the two ready-made panels and their control
ranges, static.py the snapshot a panel becomes on a page without a kernel.
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
from .plotly_widget import LiveFigure

__all__ = [
    "LivePanel", "LiveFigure", "AttentionExplorer", "SaturationExplorer", "row_stats", "saturation_curves",
    "EXPLORER_TOKENS", "PAD_TOKEN", "D_K_OPTIONS", "SATURATION_D_K_OPTIONS", "MASKS", "TEMPERATURE_RANGE",
]
