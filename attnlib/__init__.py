"""attnlib: the helper package of the course "Attention, from dot product to retrieval"."""
from .core import (
    check_mask,
    jacobian_norm,
    max_weight,
    saturation_curve,
    scaled_dot_product_attention,
    softmax_entropy,
    softmax_jacobian,
)
from .masks import causal_mask, padding_mask, window_mask
from .modules import MultiHeadAttention
from .rounding import rounded
from . import checks, data, efficient, viz, widgets  # noqa: E402  (used as al.viz.…, al.widgets.…)

__all__ = [
    "scaled_dot_product_attention",
    "check_mask",
    "softmax_entropy",
    "max_weight",
    "softmax_jacobian",
    "jacobian_norm",
    "saturation_curve",
    "causal_mask",
    "padding_mask",
    "window_mask",
    "MultiHeadAttention",
    "rounded",
]
