"""Checkers for notebook 02 (Q, K, V): each prints one line of feedback, returns a bool."""
from __future__ import annotations

import math
from typing import Any, Callable

import torch

from .. import data
from ..i18n import t
from .feedback import call, compare, say


def check_score_matrix(fn: Callable[..., torch.Tensor]) -> bool:
    """Check a learner's `score_matrix(X, W_q, W_k)` = (X W_q)(X W_k)ᵀ, rows = queries, columns = keys.

    Args:
        fn: takes X [N, d_model], W_q and W_k [d_model, d_k], returns S [N, N].

    Returns:
        True when it matches the reference for two sizes, else False (after printing what is wrong).
    """
    for d_model, d_k, seed in ((8, 3, 5), (6, 6, 6)):
        _, x = data.qkv_sentence(d_model, seed=seed)
        w = data.qkv_projections(d_model, d_k, seed=seed)
        x, w_q, w_k = x.double(), w["W_q"].double(), w["W_k"].double()
        expected = (x @ w_q) @ (x @ w_k).T  # [N, N]
        got, error = call(fn, x.clone(), w_q.clone(), w_k.clone())
        label = f"d_model={d_model}, d_k={d_k}"
        if error:
            return say(False, t("with {label}, {error}", label=label, error=error))
        problem, g = compare(got, expected, atol=1e-6)
        if g is not None:
            if torch.allclose(g, expected.T, atol=1e-6):
                problem = t("you returned Sᵀ = K Qᵀ: row i must be query i, so S = Q Kᵀ (and S ≠ Sᵀ in general!)")
            elif torch.allclose(g, expected / math.sqrt(d_k), atol=1e-6):
                problem = t("you divided by √d_k: that comes later (notebook 03); here we want the raw scores Q Kᵀ")
            elif torch.allclose(g, (x @ w_q) @ (x @ w_q).T, atol=1e-6):
                problem = t("you used W_q twice: the keys come from W_k")
        if problem:
            return say(False, t("with {label}: {problem}", label=label, problem=problem))
    return say(True, t("S = Q Kᵀ with Q = X W_q and K = X W_k; S[i, j] = how much query i matches key j."))


def check_symmetric_pair(W_q: Any, W_k: Any) -> bool:
    """Check W_q, W_k [8, 4] with W_k ≠ c·W_q whose score matrix X W_q W_kᵀ Xᵀ is symmetric for every X.

    Args:
        W_q: [8, 4] tensor. W_k: [8, 4] tensor, neither W_q nor a multiple c·W_q (the tied case).

    Returns:
        True when W_q W_kᵀ is symmetric (so every S is) and W_k is not a multiple of W_q, else False.
    """
    for name, w in (("W_q", W_q), ("W_k", W_k)):
        if w is None:
            return say(False, t("{name} is None: build an [8, 4] tensor", name=name))
        if not isinstance(w, torch.Tensor):
            return say(False, t("{name} must be a torch.Tensor of shape (8, 4), got {type}", name=name,
                                type=type(w).__name__))
        if tuple(w.shape) != (8, 4):
            return say(False, t("{name} must have shape (8, 4) [d_model, d_k], got {shape}", name=name,
                                shape=tuple(w.shape)))
        if not bool(torch.isfinite(w).all()):
            return say(False, t("{name} contains NaN or inf", name=name))
    w_q, w_k = W_q.detach().double(), W_k.detach().double()
    if float(w_k.abs().max()) < 1e-6 or float(w_q.abs().max()) < 1e-6:
        return say(False, t("a zero matrix gives all-zero scores: symmetric, but no attention at all. Use nonzero "
                            "matrices."))
    c = float((w_q * w_k).sum() / (w_q * w_q).sum())  # the best c in W_k ≈ c·W_q
    if float((w_k - c * w_q).norm()) <= 1e-6 * float(w_k.norm()):
        if abs(c - 1) <= 1e-6:
            return say(False, t("W_k equals W_q: that is the easy case we already saw. Find a W_k that differs from "
                                "W_q."))
        return say(False, t("W_k = c·W_q with c = {c:.3g}: a multiple of W_q only multiplies every score by c, so "
                            "this is tied weights again (the trivial case). Use W_k = W_q @ A with a symmetric A "
                            "that is not a multiple of the identity.", c=c))
    m = w_q @ w_k.T  # [8, 8], S = X M Xᵀ
    skew = float((m - m.T).norm() / m.norm().clamp_min(1e-12))
    _, x = data.qkv_sentence(8, seed=9)
    s = (x.double() @ w_q) @ (x.double() @ w_k).T  # [N, N]
    s_skew = float((s - s.T).norm() / s.norm().clamp_min(1e-12))
    if skew > 1e-6:
        return say(False, t("M = W_q W_kᵀ is not symmetric (‖M − Mᵀ‖ / ‖M‖ = {skew:.3g}), so the scores of a "
                            "test sentence are not either (‖S − Sᵀ‖ / ‖S‖ = {s_skew:.3g}). Hint: try W_k = W_q @ A.",
                            skew=skew, s_skew=s_skew))
    return say(True, t("W_k is not a multiple of W_q, yet M = W_q W_kᵀ is symmetric, so S = X M Xᵀ is symmetric "
                       "for every X (test sentence: ‖S − Sᵀ‖ / ‖S‖ < 1e-6)."))


def check_invisible_direction(x: Any, W_q: torch.Tensor) -> bool:
    """Check a nonzero input direction x [d_model] that the query map cannot see: x @ W_q = 0.

    Args:
        x: [d_model] tensor, not zero. W_q: [d_model, d_k] projection with d_k < d_model.

    Returns:
        True when ‖x W_q‖ ≤ 1e-5 · ‖x‖ · ‖W_q‖, else False.
    """
    d_model = W_q.shape[0]
    if x is None:
        return say(False, t("x is None: build a tensor of shape ({d_model},)", d_model=d_model))
    if not isinstance(x, torch.Tensor):
        return say(False, t("x must be a torch.Tensor of shape ({d_model},), got {type}", d_model=d_model,
                            type=type(x).__name__))
    if tuple(x.shape) != (d_model,):
        return say(False, t("x must have shape ({d_model},) [d_model], got {shape}", d_model=d_model,
                            shape=tuple(x.shape)))
    xd, wd = x.detach().double(), W_q.detach().double()
    if not bool(torch.isfinite(xd).all()):
        return say(False, t("x contains NaN or inf"))
    if float(xd.norm()) < 1e-8:
        return say(False, t("x is the zero vector: every map sends 0 to 0. Find a NONZERO x."))
    q = xd @ wd  # [d_k]
    rel = float(q.norm() / (xd.norm() * wd.norm()))
    if rel > 1e-5:
        return say(False, t("x @ W_q = {q} is not zero (relative size {rel:.3g}). Hint: you need x orthogonal to "
                            "every column of W_q; the last rows of Uᵀ from torch.linalg.svd(W_q) are.",
                            q=[round(v, 4) for v in q.tolist()], rel=rel))
    return say(True, t("x @ W_q = 0 (relative size < 1e-5): the queries cannot tell X from X + x. These invisible "
                       "directions form a {dim}-dim subspace.", dim=d_model - int(torch.linalg.matrix_rank(wd))))
