"""attnlib: the helper package of the course "Attention, from dot product to retrieval".

The math (torch only) loads with `import attnlib`. Figures, panels, exercise checkers and benchmarks
load on first use (`al.viz`, `al.widgets`, `al.checks`, `al.bench`), so a learner who wants only the
math does not wait for plotly and ipywidgets.
"""
from __future__ import annotations

import importlib
from typing import Any

from . import core, data, efficient, i18n, induction, masks, measure, modules, positions, rounding, tiny
from .core import (
    check_mask,
    jacobian_norm,
    max_weight,
    saturation_curve,
    scaled_dot_product_attention,
    softmax_entropy,
    softmax_jacobian,
)
from .i18n import get_language, set_language
from .masks import causal_mask, padding_mask, window_mask
from .modules import MultiHeadAttention
from .rounding import rounded

LAZY_MODULES = ("viz", "widgets", "checks", "bench")  # imported by __getattr__ on first access (PEP 562)

__all__ = [  # the modules, then the names of the core API
    "core", "data", "efficient", "i18n", "induction", "masks", "measure", "modules", "positions", "rounding", "tiny",
    "scaled_dot_product_attention", "check_mask", "softmax_entropy", "max_weight", "softmax_jacobian",
    "jacobian_norm", "saturation_curve", "causal_mask", "padding_mask", "window_mask", "MultiHeadAttention",
    "rounded", "set_language", "get_language",
]


def __getattr__(name: str) -> Any:
    """Import viz, widgets, checks or bench the first time `attnlib.<name>` is read."""
    if name in LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)  # the import also sets attnlib.<name>
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The loaded names plus the lazy modules, so tab completion shows `al.viz` before it is loaded."""
    return sorted(set(globals()) | set(LAZY_MODULES))
