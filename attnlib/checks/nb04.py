"""Checkers for notebook 04 (memory retrieval): each prints one line of feedback, returns a bool."""
from __future__ import annotations

from typing import Callable, Optional

import torch

from ..i18n import t
from .feedback import call, say, tensor_problem


def check_soft_read(fn: Callable[..., torch.Tensor]) -> bool:
    """Check a learner's `soft_read(query, keys, values, temperature)` = softmax(keys·query / T) · values.

    Args:
        fn: takes query [d_k], keys [n, d_k], values [n, d_v] and a temperature > 0, returns [d_v].

    Returns:
        True when it matches the reference for warm, cold and hot temperatures, else False.
    """
    gen = torch.Generator().manual_seed(4)
    keys = torch.randn(6, 8, generator=gen, dtype=torch.float64)  # [n, d_k]
    values = torch.randn(6, 3, generator=gen, dtype=torch.float64)  # [n, d_v]
    query = keys[2] + 0.3 * torch.randn(8, generator=gen, dtype=torch.float64)  # [d_k]
    where = t("on the checker's memory (6 slots, d_k = 8, d_v = 3)")  # not the notebook's: shapes refer to this one
    for temperature in (1.0, 5.0, 0.001):
        weights = torch.softmax(keys @ query / temperature, dim=-1)  # [n]
        expected = weights @ values  # [d_v]
        got, error = call(fn, query.clone(), keys.clone(), values.clone(), temperature)
        if error:
            return say(False, t("at T = {T} {where}, {error}", T=temperature, where=where, error=error))
        problem = tensor_problem(got, expected, atol=1e-6)
        if problem and isinstance(got, torch.Tensor):
            problem = _soft_read_hint(got.detach().double(), query, keys, values, temperature) or problem
        if problem:
            return say(False, t("at T = {T} {where}: {problem}", T=temperature, where=where, problem=problem))
    return say(True, t("read = softmax(K q / T) V, also at T = 0.001 where it is a hard lookup."))


def _soft_read_hint(got: torch.Tensor, query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    temperature: float) -> Optional[str]:
    """Name the likely mistake when `got` equals a known wrong read, else None."""
    scores = keys @ query  # [n]
    if got.shape == scores.shape and torch.allclose(got, torch.softmax(scores / temperature, dim=-1), atol=1e-6):
        return t("you returned the weights; the read is their weighted sum of the values, weights @ values")
    if got.shape != values.shape[1:]:
        return None
    wrong = {
        t("you multiplied the scores by the temperature: divide by it instead"):
            torch.softmax(scores * temperature, dim=-1) @ values,
        t("the scores went into the sum without a softmax"): (scores / temperature) @ values,
        t("the temperature has no effect in your read: divide the scores by it before the softmax"):
            torch.softmax(scores, dim=-1) @ values,
        t("you also divided by √d_k: here the temperature alone scales the scores (attention is the case T = √d_k)"):
            torch.softmax(scores / (temperature * keys.shape[-1] ** 0.5), dim=-1) @ values,
    }
    for hint, read in wrong.items():
        if torch.allclose(got, read, atol=1e-6):
            return hint
    return None


def check_causal_mask(fn: Callable[[int], torch.Tensor]) -> bool:
    """Check a learner's `causal_mask(n)`: [n, n], True (or 1) where query i may attend to key j ≤ i.

    Args:
        fn: takes the sequence length n and returns the mask.

    Returns:
        True when it is right for n = 4, 7 and 1, else False.
    """
    for n in (4, 7, 1):  # n = 4 first: its feedback shows a whole pattern
        expected = torch.ones(n, n).tril()  # [n, n], 1 = may attend
        got, error = call(fn, n)
        if error:
            return say(False, f"causal_mask({n}): {error}")
        if got is None:
            return say(False, t("for n = {n} your function returned None; expected a bool tensor of shape ({n}, {n}) "
                                "(did you forget `return`?)", n=n))
        if not isinstance(got, torch.Tensor):
            return say(False, t("for n = {n} your function returned a {type}; expected a bool tensor of shape "
                                "({n}, {n})", n=n, type=type(got).__name__))
        if tuple(got.shape) != (n, n):
            return say(False, t("causal_mask({n}) has shape {shape}; expected ({n}, {n})", n=n, shape=tuple(got.shape)))
        if got.dtype != torch.bool and not bool(((got == 0) | (got == 1)).all()):
            if bool(((got == 0) | (got == float("-inf"))).all()):
                return say(False, t("causal_mask({n}) is an additive mask (0 / −inf); here the mask is boolean, "
                                    "True (or 1) where query i may attend", n=n))
            return say(False, t("causal_mask({n}) must hold only True/False (or 1/0), found other values", n=n))
        g = got.detach().double()
        if torch.equal(g, expected):
            continue
        if torch.equal(g, 1 - expected):
            return say(False, t("causal_mask({n}) marks the cells to hide: here True means 'may attend' (the "
                                "opposite of PyTorch's boolean attn_mask), so the diagonal and below are True", n=n))
        if torch.equal(g, expected.T):
            return say(False, t("causal_mask({n}) is transposed: row i is query i and must be True for keys 0..i "
                                "(lower triangle)", n=n))
        if torch.equal(g, expected.tril(-1)):
            return say(False, t("causal_mask({n}) leaves out the diagonal: a token may attend to itself", n=n))
        row = int(torch.nonzero((g != expected).any(dim=1))[0])
        return say(False, t("causal_mask({n}): row {row} (query {row}) is {got}, expected {expected}", n=n, row=row,
                            got=g[row].int().tolist(), expected=expected[row].int().tolist()))
    return say(True, t("query i may attend to keys 0..i and never to the future."))


def check_cnn_layers_needed(fn: Callable[[int, int], int]) -> bool:
    """Check a learner's `cnn_layers_needed(distance, kernel_size)`: the fewest conv layers linking two positions.

    Args:
        fn: takes a distance ≥ 0 and an odd kernel size ≥ 3, returns a whole number of layers.

    Returns:
        True when it equals ceil(distance / ((kernel_size − 1) / 2)) on a grid of inputs, else False.
    """
    for kernel_size in (3, 5, 7):
        half = (kernel_size - 1) // 2
        for distance in (0, 1, 2, 3, 7, 10, 31):
            expected = -(-distance // half)  # ceil(distance / half)
            got, error = call(fn, distance, kernel_size)
            what = f"cnn_layers_needed({distance}, {kernel_size})"
            if error:
                return say(False, f"{what}: {error}")
            if isinstance(got, bool) or not isinstance(got, (int, float)) or float(got) != int(float(got)):
                forgot = t(" (did you forget `return`?)") if got is None else ""
                return say(False, t("{call} returned {got!r}; expected a whole number of layers{forgot}", call=what,
                                    got=got, forgot=forgot))
            if int(got) != expected:
                hint = ""
                if int(got) == -(-distance // (kernel_size - 1)):
                    hint = t(" Each layer reaches (k − 1)/2 positions to EACH side, not k − 1 to one side"
                             " (that is a causal convolution; this one is centred).")
                elif int(got) == distance // half:
                    hint = t(" Round up: a partial step still needs a whole layer.")
                elif int(got) == -(-distance // kernel_size):
                    hint = t(" A kernel of k covers the position itself and (k − 1)/2 to each side: "
                             "divide by (k − 1)/2, not k.")
                elif int(got) == distance:
                    hint = t(" Your answer does not change with kernel_size: a wider kernel reaches further per "
                             "layer.")
                elif int(got) == expected + 1:
                    hint = t(" One layer too many: distance 0 needs no layer, and each layer adds (k − 1)/2.")
                return say(False, t("{call} returned {got}, expected {expected}.{hint}", call=what, got=got,
                                    expected=expected, hint=hint))
    return say(True, t("a stack of L layers with kernel k reaches L·(k − 1)/2 positions to each side."))
