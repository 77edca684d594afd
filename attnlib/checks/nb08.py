"""Checkers for notebook 08 (beyond the article): each prints one line of feedback, returns a bool."""
from __future__ import annotations

import math
from typing import Callable

import torch

from ..i18n import t
from ..masks import causal_mask
from ..positions import frequencies, rope
from .feedback import call, compare, say


def _rope_mistake(got: torch.Tensor, x: torch.Tensor) -> str:
    """A hint naming the usual RoPE mistake that `got` matches, or ""."""
    seq, d = x.shape
    positions = torch.arange(seq)
    half = d // 2
    split = torch.cat([x[:, :half], x[:, half:]], dim=-1)  # pairs (i, i + d/2) instead of (2i, 2i + 1)
    angles = positions[:, None].to(x.dtype) * frequencies(d, dtype=x.dtype)  # [seq, d/2]
    rotated_halves = torch.cat([split[:, :half] * angles.cos() - split[:, half:] * angles.sin(),
                                split[:, :half] * angles.sin() + split[:, half:] * angles.cos()], dim=-1)
    candidates = [
        (rope(x, -positions), t("the right angles, turned the wrong way: x′₂ᵢ = x₂ᵢ cos − x₂ᵢ₊₁ sin, "
                                "x′₂ᵢ₊₁ = x₂ᵢ sin + x₂ᵢ₊₁ cos")),
        (rotated_halves, t("you rotated the pairs (i, i + d/2); this exercise pairs neighbours (2i, 2i + 1)")),
        (rope(x, positions, base=10000.0 ** 0.5), t("ω_i = 10000^(−2i/d): the exponent has 2i, not i")),
        (rope(x, positions + 1), t("the first token sits at position 0 and is not rotated")),
    ]
    for candidate, hint in candidates:
        if torch.allclose(got, candidate, atol=1e-9):
            return "; " + hint
    return ""


def check_rope(fn: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    """Check a learner's `rope_rotate(x)`: x [seq, d] with token m's pairs (2i, 2i+1) rotated by m·10000^(−2i/d).

    Args:
        fn: takes a float64 tensor [seq, d] (d even), returns the rotated tensor of the same shape.

    Returns:
        True when it equals attnlib.positions.rope on every case (d = 2, 8, 64; 1 to 40 tokens), else False
        after printing which case fails, and the usual mistake when it recognises one.
    """
    gen = torch.Generator().manual_seed(8)
    for seq, d in [(5, 8), (1, 2), (40, 64), (12, 2)]:
        x = torch.randn(seq, d, generator=gen, dtype=torch.float64)  # [seq, d]
        got, error = call(fn, x.clone())
        label = t("x of shape ({seq}, {d})", seq=seq, d=d)
        if error:
            return say(False, t("with {case}, {error}", case=label, error=error))
        problem, g = compare(got, rope(x), atol=1e-9)
        if problem:
            hint = _rope_mistake(g, x) if g is not None else ""
            return say(False, t("with {case}: {problem}{hint}", case=label, problem=problem, hint=hint))
    return say(True, t("every pair turned by m·ω_i: rotated queries and keys score by their offset only."))


def _cache_hint(fn: Callable, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: object) -> str:
    """A hint for the usual KV-cache mistakes, or "": attending before appending (the first token then reads an
    empty cache: zeros or NaN), or scores not divided by √d."""
    if isinstance(out, torch.Tensor) and (not bool(torch.isfinite(out).all()) or not bool(out.any())):
        return t(" Append k and v to the cache before attending: the new token attends to itself too.")
    second, _ = call(fn, q[1], k[1], v[1], k[:1], v[:1])
    unscaled = torch.softmax(k[:2] @ q[1], dim=0) @ v[:2]  # [d] the second step without 1/√d
    if isinstance(second, tuple) and len(second) == 3 and isinstance(second[0], torch.Tensor) \
            and second[0].shape == unscaled.shape and torch.allclose(second[0].double(), unscaled, atol=1e-9):
        return t(" Divide the scores by √d, as in every attention of this course.")
    return ""


def check_kv_cache_step(fn: Callable[..., tuple]) -> bool:
    """Check a learner's `cache_step(q, k, v, K, V)`: one decoding step of a single head with a KV cache.

    Args:
        fn: takes q, k, v [d] and the caches K, V [t, d]; returns (output [d], K [t + 1, d], V [t + 1, d]).

    Returns:
        True when, fed a sequence token by token, every output equals causal attention over the whole sequence
        and the caches equal the stacked keys and values, else False after printing the first wrong step.
    """
    gen = torch.Generator().manual_seed(9)
    for seq, d in [(6, 4), (9, 16)]:
        q, k, v = torch.randn(3, seq, d, generator=gen, dtype=torch.float64)  # [seq, d] each
        weights = torch.softmax((q @ k.T / math.sqrt(d)).masked_fill(~causal_mask(seq), float("-inf")), dim=-1)
        expected = weights @ v  # [seq, d] the causal pass, all tokens at once
        K, V = k[:0], v[:0]  # [0, d] each: the empty caches
        for step in range(seq):
            got, error = call(fn, q[step], k[step], v[step], K, V)
            where = t("at token {step} of {seq} (d = {d})", step=step, seq=seq, d=d)
            if error:
                return say(False, t("{where}, {error}", where=where, error=error))
            if not (isinstance(got, tuple) and len(got) == 3):
                return say(False, t("{where}: return the tuple (output, K, V), not {type}", where=where,
                                    type=type(got).__name__))
            out, K, V = got
            for name, value, reference in (("K", K, k[:step + 1]), ("V", V, v[:step + 1])):
                problem, _ = compare(value, reference, atol=1e-12)
                if problem:
                    return say(False, t("{where}, the returned {name}: {problem} (the cache holds every key and "
                                        "value so far, the new one last)", where=where, name=name, problem=problem))
            problem, _ = compare(out, expected[step], atol=1e-9)
            if problem:
                hint = _cache_hint(fn, q, k, v, out)
                return say(False, t("{where}, the output: {problem}.{hint}", where=where, problem=problem, hint=hint))
    return say(True, t("every step equals the causal pass over the whole sequence: each new token costs one query "
                       "against the cache, O(t), not a new O(t²) pass."))
