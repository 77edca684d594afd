"""Checkers for notebook 07 (summary and beyond): each prints one line of feedback, returns a bool."""
from __future__ import annotations

import math
from typing import Callable, Iterator

import torch

from ..i18n import t
from ..measure import measure_peak_memory
from ..rounding import rounded
from .feedback import call, compare, say


def _stream(scores: torch.Tensor, chunk: int) -> Iterator[torch.Tensor]:
    """Yield `scores` `chunk` entries at a time through ONE reused buffer, as a stream reader would."""
    buffer = torch.empty(chunk, dtype=scores.dtype)  # [chunk]
    for start in range(0, len(scores), chunk):
        part = buffer[:len(scores[start:start + chunk])]  # [≤ chunk], the same storage every time
        yield part.copy_(scores[start:start + chunk])
    buffer.fill_(float("nan"))  # a chunk kept past its turn is gone, as in a stream


def check_softmax_by_chunks(fn: Callable[[Iterator[torch.Tensor]], tuple]) -> bool:
    """Check a learner's `softmax_by_chunks(chunks)`: the running (m, ℓ) of a row seen only chunk by chunk.

    Args:
        fn: takes an iterator of 1-D chunks of a row (float64, one reused buffer), returns (m, ℓ).

    Returns:
        True when exp(s − m) / ℓ equals torch.softmax on every case (large scores, chunks that do not divide N,
        chunk 1, one chunk), else False after printing which case fails and how.
    """
    gen = torch.Generator().manual_seed(7)
    row = torch.randn(10, generator=gen, dtype=torch.float64)
    rising = torch.arange(12, dtype=torch.float64)  # every chunk raises the maximum
    cases = [
        (t("10 scores, chunks of 4 (the last chunk has 2)"), row, 4),
        (t("10 scores, chunks of 1"), row, 1),
        (t("10 scores, one chunk of 16"), row, 16),
        (t("12 rising scores 0..11, chunks of 5"), rising, 5),
        (t("large scores (around 1000), chunks of 3"), 1000.0 + 5 * row, 3),
    ]
    for label, scores, chunk in cases:
        expected = torch.softmax(scores, dim=0)  # [N]
        got, error = call(fn, _stream(scores, chunk))
        if error:
            return say(False, t("on {case}, {error}", case=label, error=error))
        try:
            m, ell = (float(v) for v in got)  # a pair of numbers (floats or 0-d tensors)
        except (TypeError, ValueError, RuntimeError):
            return say(False, t("on {case}, return the pair (m, ℓ), not {type}: the checker computes exp(s − m) / ℓ "
                                "itself", case=label, type=type(got).__name__))
        problem, g = compare(torch.exp(scores - m) / ell, expected, atol=1e-9)  # [N] the softmax from (m, ℓ)
        if math.isnan(m) or math.isnan(ell):  # read from the buffer after the stream had moved on
            problem = t("the chunks come in one reused buffer, as from a stream: a chunk kept past its turn is "
                        "overwritten. Update m and ℓ inside the loop and keep nothing else")
        elif g is not None and abs(float(g.sum()) - 1.0) > 1e-6 and bool(torch.isfinite(g).all()):
            problem += t("; your weights sum to {total:.4f}, not 1: when a chunk raises the maximum m, the "
                         "running sum ℓ must be rescaled by exp(m_old − m_new) before adding",
                         total=rounded(float(g.sum())))
        if problem:
            return say(False, t("on {case}: {problem}", case=label, problem=problem))
    return say(True, t("(m, ℓ) updated chunk by chunk: rescaling ℓ by exp(m_old − m_new) when the maximum grows "
                       "makes the chunked softmax exact, even for scores near 1000."))


def check_window_pairs(fn: Callable[[int, int], int]) -> bool:
    """Check a learner's `window_pairs(n, w)`: how many (query, key) pairs satisfy |i − j| ≤ w.

    Args:
        fn: takes the sequence length n ≥ 1 and the window w ≥ 0, returns an int.

    Returns:
        True when it equals the count of True cells of `window_mask(n, w)` for every case, else False.
    """
    from ..masks import window_mask

    cases = [(8, 0), (8, 1), (8, 3), (5, 4), (5, 10), (1, 0), (64, 7), (4096, 128)]
    for n, w in cases:
        expected = int(window_mask(n, w).sum()) if n <= 512 else n * (2 * w + 1) - w * (w + 1)
        got, error = call(fn, n, w)
        what = f"window_pairs({n}, {w})"
        if error:
            return say(False, t("{call}: {error}", call=what, error=error))
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = got.item()
        if isinstance(got, float) and got.is_integer():
            got = int(got)
        if isinstance(got, bool) or not isinstance(got, int):
            return say(False, t("{call} returned {got!r} ({type}); expected the integer {expected}", call=what,
                                got=got, type=type(got).__name__, expected=expected))
        if got != expected:
            hint = ""
            if got == n * (2 * w + 1):
                hint = t(" You counted 2w + 1 keys for every query, but near the two ends of the sequence "
                         "part of the window falls outside it.")
            elif got == n * n:
                hint = t(" That is every pair: the window must keep only keys with |i − j| ≤ w.")
            elif w >= n and got != n * n:
                hint = t(" When the window is wider than the sequence, every pair is inside it.")
            return say(False, t("{call} returned {got}, expected {expected}.{hint}", call=what, got=got,
                                expected=expected, hint=hint))
    return say(True, t("n(2w + 1) − w(w + 1) pairs for w < n: linear in n for a fixed window, against n² "
                       "for full attention."))


def _causal_linear_parts(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Causal linear attention's pieces, written with the N×N matrix: row i uses keys 0..i only.

    Returns (numerator [N, d_v], causal normaliser [N, 1], non-causal normaliser [N, 1]), eps not added.
    """
    phi_q = torch.nn.functional.elu(q) + 1  # [N, d_k]
    phi_k = torch.nn.functional.elu(k) + 1  # [N, d_k]
    sim = phi_q @ phi_k.T  # [N, N] φ(q_i)·φ(k_j)
    causal = sim.tril()  # [N, N] zero above the diagonal
    return causal @ v, causal.sum(dim=-1, keepdim=True), sim.sum(dim=-1, keepdim=True)


def _denominator_hint(got: torch.Tensor, parts: tuple[torch.Tensor, ...], eps: float) -> str:
    """Name the mistake in the normaliser when the numerator is right, or return ""."""
    numerator, normaliser, full_normaliser = parts

    def close(candidate: torch.Tensor) -> bool:
        return torch.allclose(got, candidate, atol=1e-9, rtol=1e-9)

    if close(numerator):
        return t("you returned the numerator φ(q_i)ᵀ S_i only: divide it by the normaliser φ(q_i)ᵀ z_i + eps "
                 "(z_i = Σ_{j≤i} φ(k_j)), which makes the implicit weights of each row sum to 1")
    if close(numerator / (full_normaliser + eps)):
        return t("the numerator is causal but the normaliser is not: it sums φ(k_j) over all keys. Use the prefix sum "
                 "z_i = Σ_{j≤i} φ(k_j) (torch.cumsum), the same keys as the numerator")
    if close(numerator / normaliser):
        return t("almost: add eps to the normaliser, φ(q_i)ᵀ z_i + eps, as in the formula (it guards against 0)")
    return ""


def check_causal_linear_attention(fn: Callable[..., torch.Tensor]) -> bool:
    """Check a learner's `causal_linear_attention(Q, K, V, eps)`: row i = φ(q_i)·S_i / (φ(q_i)·z_i + eps).

    S_i = Σ_{j≤i} φ(k_j) v_jᵀ and z_i = Σ_{j≤i} φ(k_j) are prefix sums, φ = elu + 1.

    Args:
        fn: takes Q [N, d_k], K [N, d_k], V [N, d_v] (float64) and eps, returns [N, d_v].

    Returns:
        True when it matches the N×N reference on two cases, else False after printing what is wrong.
    """
    from ..efficient import linear_attention

    gen = torch.Generator().manual_seed(70)
    for n, d_k, d_v in ((6, 4, 3), (17, 8, 5)):
        q, k, v = (torch.randn(n, d, generator=gen, dtype=torch.float64) for d in (d_k, d_k, d_v))
        eps = 1e-6
        parts = _causal_linear_parts(q, k, v)
        expected = parts[0] / (parts[1] + eps)  # [N, d_v]
        got, error = call(fn, q.clone(), k.clone(), v.clone(), eps)
        shapes = dict(qk=(n, d_k), v=(n, d_v))
        if error:
            return say(False, t("with Q, K {qk} and V {v}, {error}", **shapes, error=error))
        problem, g = compare(got, expected, atol=1e-9)
        if g is not None:
            hint = _denominator_hint(g, parts, eps)
            if torch.allclose(g, linear_attention(q, k, v, eps=eps)[0], atol=1e-9):
                problem = t("this is the non-causal version: every row used all keys. Row i may use keys 0..i "
                            "only: take running (prefix) sums with torch.cumsum along the sequence")
            elif hint:
                problem = hint
            elif torch.allclose(g[0], expected[0], atol=1e-9) and not torch.allclose(g[-1], expected[-1], atol=1e-9):
                problem += t("; the first row is right but later rows are not: check the denominator uses the same "
                             "prefix")
        if problem:
            return say(False, t("with Q, K {qk} and V {v}: {problem}", **shapes, problem=problem))
    n = 4096  # long enough that one N×N float64 matrix (134 MB) stands out
    q, k, v = (torch.randn(n, d, generator=gen, dtype=torch.float64) for d in (4, 4, 2))
    got, peak = measure_peak_memory(call, fn, q, k, v, 1e-6)
    cap = n * n * 8 / 8 / 1e6  # MB: an eighth of one N×N matrix; the prefix sums need about 0.5 MB here
    if got[1] is None and peak / 1e6 > cap:
        return say(False, t("at N = {n} your function's peak memory was {peak:.0f} MB, more than {cap:.0f} MB (an "
                            "eighth of one N×N matrix): use prefix sums (torch.cumsum), which need O(N) memory, not "
                            "an N×N matrix such as torch.tril builds", n=n, peak=peak / 1e6, cap=cap))
    return say(True, t("prefix sums S_i and z_i give causal linear attention in O(N) steps; it is what lets "
                       "linear attention run as a recurrent network, one token at a time."))
