"""Exercise checkers: each returns nothing on success and prints/raises clear feedback otherwise."""
from __future__ import annotations

# ---- shared helpers ----

# ---- 01 / 02 ----

# ---- 03 / 04 ----
import math
from typing import Any, Callable, Optional

import torch


def _say_0304(ok: bool, message: str) -> bool:
    """Print one line of feedback for the learner and return `ok`."""
    print(("✓ Correct: " if ok else "✗ Not yet: ") + message)
    return ok


def _call_0304(fn: Callable[..., Any], *args: Any) -> tuple[Any, Optional[str]]:
    """Call the learner's function; return (result, None), or (None, a one-line description of the error)."""
    if not callable(fn):
        return None, f"expected a function, got {type(fn).__name__}"
    try:
        return fn(*args), None
    except Exception as exc:  # a learner's bug becomes one line of feedback, never a traceback
        return None, f"calling it raised {type(exc).__name__}: {exc}"


def _tensor_problem_0304(got: Any, expected: torch.Tensor, atol: float) -> Optional[str]:
    """Describe how `got` differs from `expected` (type, shape, NaN, largest error and where), or None."""
    if got is None:
        return f"your function returned None; expected a tensor of shape {tuple(expected.shape)} (did you forget `return`?)"
    if not isinstance(got, torch.Tensor):
        return f"expected a torch.Tensor of shape {tuple(expected.shape)}, got {type(got).__name__}"
    if tuple(got.shape) != tuple(expected.shape):
        return f"expected shape {tuple(expected.shape)}, got {tuple(got.shape)}"
    got = got.detach().to(torch.float64)
    if not bool(torch.isfinite(got).all()):
        return "your result contains NaN or inf (large exponents overflow: use torch.softmax, or subtract the row max before exp)"
    err = (got - expected.to(torch.float64)).abs()  # same shape as expected
    worst = float(err.max())
    if worst > atol:
        where = tuple(int(i) for i in torch.nonzero(err == err.max())[0].tolist())
        return (
            f"largest difference {worst:.4g} at index {where}: expected {float(expected.double()[where]):.4f}, "
            f"got {float(got[where]):.4f}"
        )
    return None


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
        got, error = _call_0304(fn, Q.clone(), K.clone())
        if error:
            return _say_0304(False, f"with Q {q_shape} and K {k_shape}, {error}")
        problem = _tensor_problem_0304(got, expected, atol=1e-4)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            ratio = float((got.double().flatten() @ expected.double().flatten()) / (expected.double().norm() ** 2))
            for factor, hint in ((math.sqrt(d_k), "did you forget to divide by √d_k?"),
                                 (1 / math.sqrt(d_k), "did you divide by d_k instead of √d_k?")):
                if abs(ratio - factor) < 1e-3 * factor:
                    problem = f"your scores are {ratio:.4g} times the expected ones (d_k = {d_k}): {hint}"
        if problem:
            return _say_0304(False, f"with Q {q_shape} and K {k_shape}: {problem}")
    return _say_0304(True, "scores = Q Kᵀ / √d_k on plain and batched inputs.")


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
            got, error = _call_0304(fn, d_k, var_q, var_k)
            if error:
                return _say_0304(False, f"score_variance({d_k}, {var_q}, {var_k}): {error}")
            try:
                value = float(got)
            except (TypeError, ValueError):
                return _say_0304(False, f"score_variance({d_k}, {var_q}, {var_k}) returned {got!r}; expected a number")
            if not math.isclose(value, expected, rel_tol=1e-6):
                hint = ""
                if math.isclose(value, d_k, rel_tol=1e-6) and expected != d_k:
                    hint = " The component variances matter too: each term q_i k_i has variance var_q · var_k."
                elif math.isclose(value, math.sqrt(d_k) * var_q * var_k, rel_tol=1e-6):
                    hint = " Variances of independent terms add up: a sum of d_k terms has d_k times the variance."
                return _say_0304(False, f"score_variance({d_k}, {var_q}, {var_k}) returned {value:.4g}, expected {expected:.4g}.{hint}")
    return _say_0304(True, "Var(q·k) = d_k · Var(q_i) · Var(k_i) for independent zero-mean components.")


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
        got, error = _call_0304(fn, s.clone())
        if error:
            return _say_0304(False, f"for s = {[round(x, 4) for x in s.tolist()]}, {error}")
        problem = _tensor_problem_0304(got, expected, atol=1e-6)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if torch.allclose(g, torch.diag(s), atol=1e-6):
                problem = "you returned diag(s) only: subtract the outer product s sᵀ"
            elif torch.allclose(g, -torch.outer(s, s), atol=1e-6):
                problem = "you returned −s sᵀ only: add diag(s)"
        if problem:
            return _say_0304(False, f"for s = {[round(x, 4) for x in s.tolist()]}: {problem}")
    return _say_0304(True, "∂s/∂z = diag(s) − s sᵀ matches autograd.")


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
    for temperature in (1.0, 5.0, 0.001):
        weights = torch.softmax(keys @ query / temperature, dim=-1)  # [n]
        expected = weights @ values  # [d_v]
        got, error = _call_0304(fn, query.clone(), keys.clone(), values.clone(), temperature)
        if error:
            return _say_0304(False, f"at temperature {temperature}, {error}")
        problem = _tensor_problem_0304(got, expected, atol=1e-6)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if torch.allclose(g, torch.softmax(keys @ query * temperature, dim=-1) @ values, atol=1e-6):
                problem = "you multiplied the scores by the temperature: divide by it instead"
            elif torch.allclose(g, (keys @ query / temperature) @ values, atol=1e-6):
                problem = "the scores went into the sum without a softmax"
        if problem:
            return _say_0304(False, f"at temperature {temperature}: {problem}")
    return _say_0304(True, "read = softmax(K q / T) V, also at T = 0.001 where it is a hard lookup.")


def check_causal_mask(fn: Callable[[int], torch.Tensor]) -> bool:
    """Check a learner's `causal_mask(n)`: [n, n], True (or 1) where query i may attend to key j ≤ i.

    Args:
        fn: takes the sequence length n and returns the mask.

    Returns:
        True when it is right for n = 1, 4 and 7, else False.
    """
    for n in (1, 4, 7):
        expected = torch.ones(n, n).tril()  # [n, n], 1 = may attend
        got, error = _call_0304(fn, n)
        if error:
            return _say_0304(False, f"causal_mask({n}): {error}")
        if not isinstance(got, torch.Tensor):
            return _say_0304(False, f"causal_mask({n}) returned {type(got).__name__}; expected a bool tensor of shape ({n}, {n})")
        if tuple(got.shape) != (n, n):
            return _say_0304(False, f"causal_mask({n}) has shape {tuple(got.shape)}; expected ({n}, {n})")
        if got.dtype != torch.bool and not bool(((got == 0) | (got == 1)).all()):
            return _say_0304(False, f"causal_mask({n}) must hold only True/False (or 1/0), found other values")
        g = got.detach().double()
        if torch.equal(g, expected):
            continue
        if torch.equal(g, expected.T):
            return _say_0304(False, f"causal_mask({n}) is transposed: row i is query i and must be True for keys 0..i (lower triangle)")
        if torch.equal(g, expected.tril(-1)):
            return _say_0304(False, f"causal_mask({n}) leaves out the diagonal: a token may attend to itself")
        row = int(torch.nonzero((g != expected).any(dim=1))[0])
        return _say_0304(False, f"causal_mask({n}): row {row} (query {row}) is {g[row].int().tolist()}, expected {expected[row].int().tolist()}")
    return _say_0304(True, "query i may attend to keys 0..i and never to the future.")


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
            got, error = _call_0304(fn, distance, kernel_size)
            if error:
                return _say_0304(False, f"cnn_layers_needed({distance}, {kernel_size}): {error}")
            if isinstance(got, bool) or not isinstance(got, (int, float)) or float(got) != int(float(got)):
                return _say_0304(False, f"cnn_layers_needed({distance}, {kernel_size}) returned {got!r}; expected a whole number of layers")
            if int(got) != expected:
                hint = ""
                if int(got) == -(-distance // (kernel_size - 1)):
                    hint = " Each layer reaches (k − 1)/2 positions to EACH side, not k − 1 to one side."
                elif int(got) == distance // half:
                    hint = " Round up: a partial step still needs a whole layer."
                return _say_0304(False, f"cnn_layers_needed({distance}, {kernel_size}) returned {got}, expected {expected}.{hint}")
    return _say_0304(True, "a stack of L layers with kernel k reaches L·(k − 1)/2 positions to each side.")


# ---- 05 ----

# ---- 06 ----

# ---- 07 ----
