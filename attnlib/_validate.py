"""Every argument check of attnlib, written once: a ValueError names the argument, what it got and what was
expected; otherwise the check returns the value in the form the caller goes on with (int, float, bool mask)."""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Optional, Sequence

import torch


def integer(name: str, value: object, minimum: Optional[int] = None, maximum: Optional[int] = None) -> int:
    """Return `value` as an int if it is an integer (not a bool) in minimum..maximum (inclusive), else raise."""
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
        return int(value)
    bounds = ("" if minimum is None else f" ≥ {minimum}") if maximum is None else f" in {minimum}..{maximum}"
    expected = "a positive integer" if (minimum, maximum) == (1, None) else "an integer" + bounds
    raise ValueError(f"{name} must be {expected}, got {value!r}")


def positive_int(name: str, value: object) -> int:
    """Return `value` as an int if it is an integer ≥ 1, else raise naming `name`."""
    return integer(name, value, minimum=1)


def pixels(name: str, value: object, minimum: int = 200) -> int:
    """Return a figure size in pixels as an int if it is an integer ≥ minimum, else raise naming `name`."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= minimum:
        return int(value)
    raise ValueError(f"{name} must be an integer number of pixels ≥ {minimum}, got {value!r}")


def number(name: str, value: object, minimum: Optional[float] = None) -> float:
    """Return `value` as a float if it is a finite real number (not a bool) ≥ minimum, else raise."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok and (minimum is None or value >= minimum):
        return float(value)
    expected = "a finite number" + ("" if minimum is None else f" ≥ {minimum:g}")
    raise ValueError(f"{name} must be {expected}, got {value!r}")


def flag(name: str, value: object) -> bool:
    """Return `value` if it is True or False, else raise naming `name`."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def grid_values(name: str, grid: Any, controls: dict) -> Optional[dict[str, list]]:
    """Return None, or `grid` as {control name: list of values} if it names only `controls`, each with values."""
    if grid is None:
        return None
    if not isinstance(grid, dict):
        raise ValueError(f"{name} must be a dict of control name → values, got {type(grid).__name__}")
    for key, values in grid.items():
        if key not in controls:
            raise ValueError(f"{name} must name controls of the panel {sorted(controls)}, got {key!r}")
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError(f"{name}[{key!r}] must be a non-empty list of values, got {values!r}")
    return {key: list(values) for key, values in grid.items()}


def choice(name: str, value: Any, options: Sequence[Any]) -> Any:
    """Return `value` if it is one of `options`, else raise naming `name` and listing the options."""
    if value not in options:
        raise ValueError(f"{name} must be one of {list(options)!r}, got {value!r}")
    return value


def function(name: str, fn: object) -> Callable[..., Any]:
    """Return `fn` if it is callable, else raise naming `name`."""
    if not callable(fn):
        raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
    return fn


def tensor(name: str, x: object, min_dims: int = 0, what: str = "[..., seq, features]") -> torch.Tensor:
    """Return `x` if it is a torch.Tensor of at least `min_dims` dimensions (`what`: their names), else raise."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor {what}, got {type(x).__name__}")
    if x.dim() < min_dims:
        raise ValueError(f"{name} must have at least {min_dims} dimensions {what}, got shape {tuple(x.shape)}")
    return x


def bool_mask(mask: object, shape: Sequence[int], name: str = "mask") -> torch.Tensor:
    """Return `mask` as bool (True = may attend) if it holds only 0/1 and broadcasts to `shape`, else raise."""
    if not isinstance(mask, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor of bool or 0/1 values, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        if not bool(((mask == 0) | (mask == 1)).all()):
            bad = mask[(mask != 0) & (mask != 1)].flatten()[:3].tolist()
            raise ValueError(f"{name} must hold only bool or 0/1 values (1 = may attend), found {bad}")
        mask = mask != 0
    try:
        broadcast = torch.broadcast_shapes(mask.shape, tuple(shape))
    except RuntimeError:
        broadcast = None
    if broadcast != torch.Size(shape):
        raise ValueError(
            f"{name} of shape {tuple(mask.shape)} does not broadcast to the scores' shape {tuple(shape)} [..., N_q, "
            f"N_k]"
        )
    return mask


def qkv(query: object, key: object, value: object, floating: bool = False) -> tuple[int, ...]:
    """Check query [..., N_q, d_k], key [..., N_k, d_k], value [..., N_k, d_v] fit; return their batch shape.

    With floating=True they must also share one floating-point dtype.
    """
    for name, x in (("query", query), ("key", key), ("value", value)):
        tensor(name, x, 2)
        if floating and not x.is_floating_point():
            raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if floating and not (query.dtype == key.dtype == value.dtype):
        raise ValueError(f"query, key, value must share a dtype, got {query.dtype}, {key.dtype}, {value.dtype}")
    if query.size(-1) != key.size(-1):
        raise ValueError(
            f"query and key must share d_k (last dimension): query {tuple(query.shape)}, key {tuple(key.shape)}"
        )
    if key.size(-2) != value.size(-2):
        raise ValueError(
            f"key and value must share N_k (second-to-last dimension): key {tuple(key.shape)}, "
            f"value {tuple(value.shape)}"
        )
    if key.size(-2) < 1:
        raise ValueError(f"key must hold at least one position (N_k ≥ 1), got shape {tuple(key.shape)}")
    try:
        return tuple(torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2]))
    except RuntimeError:
        raise ValueError(
            f"the leading (batch) dimensions of query {tuple(query.shape)}, key {tuple(key.shape)} and "
            f"value {tuple(value.shape)} do not broadcast together"
        ) from None
