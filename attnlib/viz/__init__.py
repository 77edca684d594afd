"""Figure builders: computed arrays in, plotly figures out. Nothing here computes attention or displays.

One module per figure family (heatmaps, saturation, histogram, geometry, cost); inputs are converted and
every number rounded in `convert`, colours and layout live in `style`. Each `*_figure` has an `update_*`
that rewrites it in place for a live panel, and traces are found by name (`trace(fig, name)`).
Importing this package changes no plotly setting: in a Jupyter kernel plotly's default renderer,
"plotly_mimetype", already saves figures as plotly JSON only.
"""
from .cost import complexity_figure
from .geometry import convex_hull, convex_hull_figure, qk_space_figure, update_convex_hull, update_qk_space
from .heatmaps import head_grid_figure, heatmap_figure, update_head_grid
from .histogram import score_histogram_figure, update_score_histogram
from .saturation import saturation_figure, update_saturation
from .style import HEATMAP_COLORSCALE, MASK_COLOR, OKABE_ITO, trace

__all__ = [
    "heatmap_figure", "head_grid_figure", "update_head_grid",
    "saturation_figure", "update_saturation",
    "score_histogram_figure", "update_score_histogram",
    "convex_hull", "convex_hull_figure", "update_convex_hull", "qk_space_figure", "update_qk_space",
    "complexity_figure",
    "trace", "OKABE_ITO", "HEATMAP_COLORSCALE", "MASK_COLOR",
]
