"""Feedback shared by every notebook's checkers: one printed line, errors as text, tensor differences."""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from ..i18n import t


def say(ok: bool, message: str) -> bool:
    """Print one line of feedback for the learner and return `ok`."""
    print(t("✓ Correct: {message}", message=message) if ok else t("✗ Not yet: {message}", message=message))
    return ok


def call(fn: Callable[..., Any], *args: Any, what: Optional[str] = None) -> tuple[Any, Optional[str]]:
    """Call the learner's code; return (result, None) or (None, a one-line description of the error)."""
    if not callable(fn):
        return None, t("expected {what}, got {type}", what=what or t("a function"), type=type(fn).__name__)
    try:
        return fn(*args), None
    except NotImplementedError:
        return None, t("it is not written yet (it raises NotImplementedError): replace the TODO with your code")
    except Exception as exc:  # a learner's bug becomes one line of feedback, never a traceback
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return None, t("it raised {error}: {text}", error=type(exc).__name__, text=text)


def tensor_problem(got: Any, expected: torch.Tensor, atol: float) -> Optional[str]:
    """Describe how `got` differs from `expected` (type, shape, NaN, largest error and where), or None."""
    shape = tuple(expected.shape)
    if got is None:
        return t("your function returned None; expected a tensor of shape {shape} (did you forget `return`?)",
                 shape=shape)
    if not isinstance(got, torch.Tensor):
        return t("expected a torch.Tensor of shape {shape}, got {type}", shape=shape, type=type(got).__name__)
    if tuple(got.shape) != shape:
        return t("expected shape {shape}, got {got}", shape=shape, got=tuple(got.shape))
    g = got.detach().to(torch.float64)
    if not bool(torch.isfinite(g).all()):
        return t("your result contains NaN or inf (a large score overflowed exp: subtract the row max first, "
                 "or use torch.softmax)")
    err = (g - expected.detach().to(torch.float64)).abs()  # same shape as expected
    if float(err.max()) > atol:
        where = tuple(int(i) for i in torch.nonzero(err == err.max())[0].tolist())
        return t("largest difference {err:.4g} at index {where}: expected {expected:.4f}, got {got:.4f}",
                 err=float(err.max()), where=where, expected=float(expected.double()[where]), got=float(g[where]))
    return None


def compare(got: Any, expected: torch.Tensor, atol: float) -> tuple[Optional[str], Optional[torch.Tensor]]:
    """Compare a learner's result with the reference, for a checker that names the likely mistake.

    Args:
        got: what the learner's function returned. expected: the reference tensor. atol: the tolerance.

    Returns:
        (how `got` differs, or None; `got` detached in `expected`'s dtype when it has the right shape but
        wrong values, for a hint to test candidate mistakes against, else None).
    """
    problem = tensor_problem(got, expected, atol)
    if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
        return problem, got.detach().to(expected.dtype)
    return problem, None
