"""Checkers for notebook 03 (the core formula): each prints one line of feedback, returns a bool."""
from __future__ import annotations

import math
from typing import Callable

import torch

from ..i18n import t
from ..rounding import rounded
from .feedback import call, compare, say


def check_scaled_scores(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check a learner's `scaled_scores(Q, K)` = Q Kᵀ / √d_k on plain and batched inputs.

    Args:
        fn: takes Q [..., N_q, d_k] and K [..., N_k, d_k], returns scores [..., N_q, N_k].

    Returns:
        True when every case matches the reference, else False (after printing what is wrong).
    """
    gen = torch.Generator().manual_seed(3)
    cases = [((5, 16), (7, 16)), ((2, 3, 4, 64), (2, 3, 6, 64))]
    for q_shape, k_shape in cases:
        Q = torch.randn(*q_shape, generator=gen)  # [..., N_q, d_k]
        K = torch.randn(*k_shape, generator=gen)  # [..., N_k, d_k]
        d_k = q_shape[-1]
        expected = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # [..., N_q, N_k]
        got, error = call(fn, Q.clone(), K.clone())
        batched = len(q_shape) > 2
        if batched and (error or (isinstance(got, torch.Tensor) and got.shape != expected.shape)):
            # it passed the 2-D case: the usual cause is a transpose of every dimension
            why = error or t("got shape {shape}", shape=tuple(got.shape))
            return say(False, t("it works on 2-D input but not on batched Q {q_shape} and K {k_shape} ({why}). If "
                                "you wrote `K.T` or `K.t()`: on a batched tensor `K.T` reverses all dimensions "
                                "([2, 3, 6, 64] → [64, 6, 3, 2]) and `K.t()` refuses more than 2; "
                                "`K.transpose(-2, -1)` swaps only the last two.",
                                q_shape=q_shape, k_shape=k_shape, why=why))
        if error:
            return say(False, t("with Q {q_shape} and K {k_shape}, {error}", q_shape=q_shape, k_shape=k_shape,
                                error=error))
        problem, g = compare(got, expected, atol=1e-4)
        if g is not None:
            ratio = float((g.double().flatten() @ expected.double().flatten()) / (expected.double().norm() ** 2))
            for factor, hint in ((math.sqrt(d_k), t("did you forget to divide by √d_k?")),
                                 (1 / math.sqrt(d_k), t("did you divide by d_k instead of √d_k?"))):
                if abs(ratio - factor) < 1e-3 * factor:
                    problem = t("your scores are {ratio:.4g} times the expected ones (d_k = {d_k}): {hint}",
                                ratio=ratio, d_k=d_k, hint=hint)
        if problem:
            return say(False, t("with Q {q_shape} and K {k_shape}: {problem}", q_shape=q_shape, k_shape=k_shape,
                                problem=problem))
    return say(True, t("scores = Q Kᵀ / √d_k on plain and batched inputs."))


def check_score_variance(fn: Callable[[int, float, float], float]) -> bool:
    """Check a learner's `score_variance(d_k, var_q, var_k)`, the variance of q·k for independent zero-mean parts.

    Args:
        fn: takes d_k and the per-component variances of q and k, returns Var(q·k) as a number.

    Returns:
        True when it matches d_k · var_q · var_k on a grid of inputs, else False.
    """
    for d_k in (1, 4, 64, 512):
        for var_q, var_k in ((1.0, 1.0), (4.0, 1.0), (0.25, 9.0)):
            expected = d_k * var_q * var_k
            got, error = call(fn, d_k, var_q, var_k)
            what = f"score_variance({d_k}, {var_q}, {var_k})"
            if error:
                return say(False, f"{what}: {error}")
            try:
                value = float(got)
            except (TypeError, ValueError):
                return say(False, t("{call} returned {got!r}; expected a number", call=what, got=got))
            if not math.isclose(value, expected, rel_tol=1e-6):
                hint = ""
                if math.isclose(value, d_k * math.sqrt(var_q * var_k), rel_tol=1e-6):
                    hint = t(" You took the square root of var_q · var_k, which is the product of the standard"
                             " deviations: Var(q_m k_m) = E[q_m²] E[k_m²] = var_q · var_k, with no square root.")
                elif math.isclose(value, d_k, rel_tol=1e-6) and expected != d_k:
                    hint = t(" The component variances matter too: each term q_m k_m has variance var_q · var_k.")
                elif math.isclose(value, math.sqrt(d_k) * var_q * var_k, rel_tol=1e-6):
                    hint = t(" Variances of independent terms add up: a sum of d_k terms has d_k times the "
                             "variance.")
                return say(False, t("{call} returned {value:.4g}, expected {expected:.4g}.{hint}", call=what,
                                    value=value, expected=expected, hint=hint))
    return say(True, t("Var(q·k) = d_k · Var(q_m) · Var(k_m) for independent zero-mean components."))


def check_softmax_jacobian(fn: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    """Check a learner's `softmax_jacobian(s)` against the autograd Jacobian of softmax.

    Args:
        fn: takes one softmax output s [N] and returns ∂s/∂z [N, N].

    Returns:
        True when it matches autograd for flat, peaked and uniform rows, else False.
    """
    logits = [
        torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0], dtype=torch.float64),
        torch.tensor([8.0, 0.0, 1.0], dtype=torch.float64),
        torch.zeros(4, dtype=torch.float64),
    ]
    for z in logits:
        s = torch.softmax(z, dim=-1)  # [N]
        expected = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=-1), z)  # [N, N]
        got, error = call(fn, s.clone())
        if error:
            return say(False, t("for s = {s}, {error}", s=rounded(s).tolist(), error=error))
        problem, g = compare(got, expected, atol=1e-6)
        if g is not None:
            if torch.allclose(g, -expected, atol=1e-6):
                problem = t("your matrix has the opposite sign: you computed s sᵀ − diag(s). The Jacobian is "
                            "diag(s) − s sᵀ, whose diagonal s_i(1 − s_i) is ≥ 0 (raising a score raises its own "
                            "weight)")
            elif torch.allclose(g, torch.diag(s), atol=1e-6):
                problem = t("you returned diag(s) only: subtract the outer product s sᵀ")
            elif torch.allclose(g, -torch.outer(s, s), atol=1e-6):
                problem = t("you returned −s sᵀ only: add diag(s)")
        if problem:
            return say(False, t("for s = {s}: {problem}", s=rounded(s).tolist(), problem=problem))
    return say(True, t("∂s/∂z = diag(s) − s sᵀ matches autograd."))
