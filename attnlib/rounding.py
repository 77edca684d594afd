"""One rounding rule for every number the course commits: printed text, figure JSON, titles."""
from __future__ import annotations

from typing import Any

import numpy as np

DECIMALS = 4  # committed numbers keep 4 decimals unless a caller asks for fewer


def rounded(x: Any, decimals: int = DECIMALS) -> Any:
    """`x` (number, tensor, array or nested list) rounded to `decimals` in float64, with -0.0 as 0.0.

    Args:
        x: a Python number, a torch tensor, a numpy array or a nested list of numbers.
        decimals: decimals to keep, an integer ≥ 0.

    Returns:
        a Python float for a scalar input, else a float64 numpy array of the same shape.
    """
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be an integer ≥ 0, got {decimals!r}")
    if hasattr(x, "detach"):  # torch.Tensor
        x = x.detach().cpu().double().numpy()
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"x must be numeric (a number, tensor, array or list), got {type(x).__name__}") from exc
    out = np.round(arr, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    return float(out) if out.ndim == 0 else out
