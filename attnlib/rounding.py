"""One rounding rule for every number the course commits: printed text, figure JSON, titles.

A float32 result rounded to 4 decimals can still flip on another CPU when it lies near a rounding
boundary. To find such numbers, set ATTNLIB_ROUNDING_AUDIT to a file path before Python starts:
every call of `rounded` then appends what it rounded to that file (scripts/cpu_audit.py reads it).
Unset (the default), the audit costs one `if` per call.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

DECIMALS = 4  # committed numbers keep 4 decimals unless a caller asks for fewer
AUDIT_ENV = "ATTNLIB_ROUNDING_AUDIT"
AUDIT_PATH = os.environ.get(AUDIT_ENV) or None  # read once, at import


def rounded(x: Any, decimals: int = DECIMALS) -> Any:
    """`x` (number, tensor, array or nested list) rounded to `decimals` in float64, with -0.0 as 0.0.

    Each value is rounded as Python's `round` does: the exact binary value, ties to even.

    Args:
        x: a Python number, a torch tensor, a numpy array or a nested list of numbers.
        decimals: decimals to keep, an integer ≥ 0.

    Returns:
        a Python float for a scalar input, else a float64 numpy array of the same shape.
    """
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:  # no _validate: this file
        raise ValueError(f"decimals must be an integer ≥ 0, got {decimals!r}")  # also runs alone, without torch
    if hasattr(x, "detach"):  # torch.Tensor
        x = x.detach().cpu().double().numpy()
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"x must be numeric (a number, tensor, array or list), got {type(x).__name__}") from exc
    if AUDIT_PATH:
        record(AUDIT_PATH, arr, decimals)
    with np.errstate(invalid="ignore", over="ignore"):  # inf, nan and huge values are never near a tie
        out = np.array(np.round(arr, decimals))  # rint(x·10^d) / 10^d: can round the wrong way within an ulp of a tie
        scaled = arr * 10.0**decimals
        near_tie = np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6
        whole = ~(np.abs(arr) < 1e15)  # already whole numbers (and inf, nan): rint(x·10^d) could overflow
    out[whole] = arr[whole]
    if near_tie.any():  # there, round the exact binary value like Python's round (correct on every machine)
        out[near_tie] = [round(float(v), decimals) for v in arr[near_tie]]
    out = out + 0.0  # + 0.0 turns -0.0 into 0.0
    return float(out) if out.ndim == 0 else out


def record(path: str, values: np.ndarray, decimals: int) -> None:
    """Append one audit record to `path` (pickled dicts, one per call) for the values about to be rounded.

    A record is {"values", "decimals", "cell": the execution count of the IPython cell or None,
    "stack": [(file, line, function), …] innermost last, rounding.py excluded}.
    """
    import pickle
    import sys
    import traceback

    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    history = getattr(shell, "history_manager", None)  # the running cell is stored before it runs
    cell = len(history.input_hist_raw) - 1 if history is not None else None  # its execution count
    stack = [(f.filename, f.lineno, f.name) for f in traceback.extract_stack(limit=12) if f.filename != __file__]
    entry = {"values": np.array(values, dtype=np.float64), "decimals": decimals, "cell": cell, "stack": stack}
    with open(path, "ab") as f:
        pickle.dump(entry, f)
