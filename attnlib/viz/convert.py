"""What a builder does to its inputs before drawing: numpy arrays, labels, masks, rounding, escaping."""
from __future__ import annotations

import html
from typing import Any, Optional, Sequence

import numpy as np

from ..rounding import rounded  # every number a figure holds goes through al.rounded

ArrayLike = Any  # torch.Tensor, np.ndarray or nested lists
__all__ = ["ArrayLike", "to_numpy", "token_labels", "attention_weights", "bool_mask", "escape", "rounded"]


def to_numpy(name: str, x: ArrayLike, ndim: Optional[int] = None) -> np.ndarray:
    """`x` (tensor, array or list) as a float64 numpy array of finite numbers.

    Args: name: the argument's name, for the message. x: the input. ndim: the rank it must have (None: any).
    Returns: a float64 np.ndarray.
    """
    if hasattr(x, "detach"):  # torch.Tensor
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric (tensor, array or list), got {type(x).__name__}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(arr.shape)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold only finite numbers, found NaN or inf")
    return arr


def token_labels(name: str, tokens: Sequence[Any], n: int) -> list[str]:
    """The token labels as strings, one per position.

    Args: name: the argument's name. tokens: a sequence of labels (not a string). n: the number of positions.
    Returns: a list of n strings.
    """
    if isinstance(tokens, str) or not hasattr(tokens, "__len__"):
        raise ValueError(f"{name} must be a sequence of {n} token labels, got {type(tokens).__name__}")
    if len(tokens) != n:
        raise ValueError(f"{name} must have one label per position: expected {n}, got {len(tokens)}")
    return [str(t) for t in tokens]


def attention_weights(name: str, weights: ArrayLike, ndim: int) -> np.ndarray:
    """Attention weights as float64: rank `ndim`, not empty, every value in [0, 1] (the fixed colour range).

    Args: name: the argument's name. weights: the input. ndim: its rank.
    Returns: a float64 np.ndarray.
    """
    w = to_numpy(name, weights, ndim)
    if w.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(w.shape)}")
    if w.min() < -1e-6 or w.max() > 1 + 1e-6:
        raise ValueError(f"{name} must be attention weights in [0, 1] (the colour range is fixed to 0–1), "
                         f"got values from {w.min():.4g} to {w.max():.4g}")
    return w


def bool_mask(mask: ArrayLike, shape: tuple[int, ...]) -> np.ndarray:
    """A bool or 0/1 mask (True = may attend) broadcast to `shape`; leading size-1 dimensions are dropped.

    Args: mask: tensor, array or list. shape: the weights' shape.
    Returns: a read-only bool np.ndarray of `shape`.
    """
    if hasattr(mask, "detach"):
        mask = mask.detach().cpu().numpy()
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        if not np.all((m == 0) | (m == 1)):
            raise ValueError("mask must hold only bool or 0/1 values (True/1 = may attend)")
        m = m != 0
    while m.ndim > len(shape) and m.shape[0] == 1:
        m = m[0]
    try:
        return np.broadcast_to(m, shape)
    except ValueError:
        shape_got = tuple(np.shape(mask))
        raise ValueError(f"mask of shape {shape_got} does not broadcast to the weights' shape {shape}") from None


def escape(text: Any) -> str:
    """`text` with &, < and > escaped for plotly's hover and label text (quotes are left as they are)."""
    return html.escape(str(text), quote=False)
