"""Every argument check of attnlib, written once: each raises ValueError naming the argument, what it got
and what was expected, and returns the value in the form the caller uses."""
from __future__ import annotations


import numbers
from typing import Any, Callable, Optional



def integer(name: str, value: object, minimum: Optional[int] = None, maximum: Optional[int] = None) -> int:
    """Return `value` as an int if it is an integer (not a bool) in minimum..maximum, else raise.

    Args:
        name: the argument's name, for the message. value: what the caller passed.
        minimum, maximum: inclusive bounds, None for no bound.

    Returns:
        int(value).
    """
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
        return int(value)
    if minimum == 1 and maximum is None:
        expected = "a positive integer"
    elif maximum is None:
        expected = "an integer" if minimum is None else f"an integer ≥ {minimum}"
    else:
        expected = f"an integer in {minimum}..{maximum}" if minimum is not None else f"an integer ≤ {maximum}"
    raise ValueError(f"{name} must be {expected}, got {value!r}")


def positive_int(name: str, value: object) -> int:
    """Return `value` as an int if it is an integer ≥ 1, else raise naming `name`."""
    return integer(name, value, minimum=1)


def function(name: str, fn: object) -> Callable[..., Any]:
    """Return `fn` if it is callable, else raise naming `name`."""
    if not callable(fn):
        raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
    return fn
