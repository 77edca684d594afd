"""Exercise checkers: each prints one line of feedback ("✓ Correct" or what is wrong) and returns True/False."""
from __future__ import annotations

# ---- shared helpers ----
from typing import Any, Callable, Optional

import torch


def _say(ok: bool, message: str) -> bool:
    """Print one line of feedback for the learner and return `ok`."""
    print(("✓ Correct: " if ok else "✗ Not yet: ") + message)
    return ok


def _call(fn: Callable[..., Any], *args: Any, what: str = "a function") -> tuple[Any, Optional[str]]:
    """Call the learner's code; return (result, None) or (None, a one-line description of the error)."""
    if not callable(fn):
        return None, f"expected {what}, got {type(fn).__name__}"
    try:
        return fn(*args), None
    except NotImplementedError:
        return None, "it is not written yet (it raises NotImplementedError): replace the TODO with your code"
    except Exception as exc:  # a learner's bug becomes one line of feedback, never a traceback
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return None, f"it raised {type(exc).__name__}: {text}"


def _tensor_problem(got: Any, expected: torch.Tensor, atol: float) -> Optional[str]:
    """Describe how `got` differs from `expected` (type, shape, NaN, largest error and where), or None."""
    if got is None:
        return f"your function returned None; expected a tensor of shape {tuple(expected.shape)} (did you forget `return`?)"
    if not isinstance(got, torch.Tensor):
        return f"expected a torch.Tensor of shape {tuple(expected.shape)}, got {type(got).__name__}"
    if tuple(got.shape) != tuple(expected.shape):
        return f"expected shape {tuple(expected.shape)}, got {tuple(got.shape)}"
    g = got.detach().to(torch.float64)
    if not bool(torch.isfinite(g).all()):
        return "your result contains NaN or inf (a large score overflowed exp: subtract the row max first, or use torch.softmax)"
    err = (g - expected.detach().to(torch.float64)).abs()  # same shape as expected
    if float(err.max()) > atol:
        where = tuple(int(i) for i in torch.nonzero(err == err.max())[0].tolist())
        return (f"largest difference {float(err.max()):.4g} at index {where}: expected "
                f"{float(expected.double()[where]):.4f}, got {float(g[where]):.4f}")
    return None

# ---- 01 / 02 ----
import math
from typing import Any, Callable, Optional

import torch

from . import data as _data








def check_weighted_sum(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check a learner's `weighted_sum(weights, values)`: output row i = Σ_j weights[i, j] · values[j].

    Args:
        fn: takes weights [N_q, N_k] and values [N_k, d_v], returns the outputs [N_q, d_v].

    Returns:
        True when it matches the reference on two cases, else False (after printing what is wrong).
    """
    gen = torch.Generator().manual_seed(1)
    for n_q, n_k, d_v in ((3, 5, 4), (1, 6, 2)):
        weights = torch.softmax(torch.randn(n_q, n_k, generator=gen, dtype=torch.float64), -1)
        values = torch.randn(n_k, d_v, generator=gen, dtype=torch.float64)  # [N_k, d_v]
        expected = weights @ values  # [N_q, d_v]
        got, error = _call(fn, weights.clone(), values.clone())
        if error:
            return _say(False, f"with weights {tuple(weights.shape)} and values {tuple(values.shape)}, {error}")
        problem = _tensor_problem(got, expected, atol=1e-6)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if torch.allclose(g, values.mean(0).expand_as(expected), atol=1e-6):
                problem = "you returned the plain average of the values: each value must be multiplied by its weight"
            elif torch.allclose(g, values.sum(0).expand_as(expected), atol=1e-6):
                problem = "you summed the values without their weights"
        if problem:
            return _say(False, f"with weights {tuple(weights.shape)} and values {tuple(values.shape)}: {problem}")
    return _say(True, "output[i] = Σ_j weights[i, j] · values[j], which is the matrix product weights @ values.")


def check_attention_weights(fn: Callable[..., torch.Tensor]) -> bool:
    """Check a learner's `attention_weights(X, W_q, W_k, sharpness)` = softmax(sharpness · (X W_q)(X W_k)ᵀ) by rows.

    Args:
        fn: takes X [N, d], W_q [d, d_k], W_k [d, d_k] and a number, returns weights [N, N].

    Returns:
        True when it matches the reference on the animal/street sentence and a random input, else False.
    """
    proj = _data.animal_street_projections()["step2"]
    _, x_sent = _data.animal_street_sentence("wide")
    gen = torch.Generator().manual_seed(2)
    cases = [
        ("the 'wide' sentence", x_sent.double(), proj["W_q"].double(), proj["W_k"].double(), 3.0),
        ("a random input", *(torch.randn(*s, generator=gen, dtype=torch.float64) for s in ((5, 4), (4, 3), (4, 3))), 0.5),
    ]
    for label, x, w_q, w_k, sharpness in cases:
        scores = sharpness * (x @ w_q) @ (x @ w_k).T  # [N, N]
        expected = torch.softmax(scores, dim=-1)  # [N, N]
        got, error = _call(fn, x.clone(), w_q.clone(), w_k.clone(), sharpness)
        if error:
            return _say(False, f"on {label}, {error}")
        problem = _tensor_problem(got, expected, atol=1e-6)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if torch.allclose(g, torch.softmax(scores, dim=0), atol=1e-6):
                problem = "your softmax runs down the columns (dim=0): each ROW (one query) must sum to 1, use dim=-1"
            elif torch.allclose(g, expected.T, atol=1e-6) or torch.allclose(g, torch.softmax(scores.T, -1), atol=1e-6):
                problem = "rows and columns are swapped: row i is query i, so use (X W_q) @ (X W_k).T"
            elif torch.allclose(g, scores, atol=1e-6):
                problem = "these are the raw scores: apply torch.softmax(..., dim=-1) so each row sums to 1"
            elif torch.allclose(g, torch.softmax(scores / sharpness, -1), atol=1e-6):
                problem = f"the sharpness ({sharpness}) is missing: multiply the scores by it before the softmax"
        if problem:
            return _say(False, f"on {label}: {problem}")
    return _say(True, "weights = softmax(sharpness · Q Kᵀ) row by row, computed from the input itself.")


def _animal_street_it_row(features: dict[str, float], sharpness: float) -> torch.Tensor:
    """Reference: the two hand-built steps of notebook 01; returns the weights [11] of the row of "it"."""
    tokens, x = _data.animal_street_sentence("your word", features=features)  # x: [11, d]
    proj = _data.animal_street_projections()
    s1 = proj["step1"]
    w1 = torch.softmax(_data.STEP1_SHARPNESS * (x @ s1["W_q"]) @ (x @ s1["W_k"]).T, dim=-1)  # [11, 11]
    h = x + w1 @ (x @ s1["W_v"])  # [11, d]: each token plus what it read
    s2 = proj["step2"]
    w2 = torch.softmax(sharpness * (h @ s2["W_q"]) @ (h @ s2["W_k"]).T, dim=-1)  # [11, 11]
    return w2[tokens.index("it")]  # [11]


def check_undecided_word(features: Any, sharpness: float = 3.0) -> bool:
    """Check hand-built features of a new last word that leave "it" undecided between "animal" and "street".

    Args:
        features: {feature name: value} for the last word (names from al.data.ANIMAL_STREET_FEATURES).
        sharpness: the sharpness of step 2 (the notebook's default, 3.0).

    Returns:
        True when "it" gives animal and street weights within 0.05 of each other and ≥ 0.9 together.
    """
    if features is None or (isinstance(features, dict) and not features):
        return _say(False, "no features yet: fill the dict with {feature name: value}, e.g. {'adjective': 1.0}")
    try:
        row = _animal_street_it_row(features, float(sharpness))  # [11]
    except (ValueError, TypeError) as exc:
        return _say(False, str(exc))
    animal, street = float(row[1]), float(row[5])
    if not (math.isfinite(animal) and math.isfinite(street)):
        return _say(False, "the weights came out NaN: are your feature values finite numbers?")
    msg = f"'it' gives animal {animal:.3f} and street {street:.3f}"
    if animal + street < 0.9:
        return _say(False, f"{msg}: together only {animal + street:.3f} < 0.9, so 'it' still looks at other words. "
                               "Step 1 reads the last word only if it is an adjective, and carries over only its "
                               "'of-living' and 'of-place' values: those are what sharpen the query of 'it'.")
    if abs(animal - street) > 0.05:
        winner = "animal" if animal > street else "street"
        return _say(False, f"{msg}: it still prefers the {winner} (difference {abs(animal - street):.3f} > 0.05).")
    return _say(True, f"{msg}: undecided, because your word says as much about living things as about places.")


def check_score_matrix(fn: Callable[..., torch.Tensor]) -> bool:
    """Check a learner's `score_matrix(X, W_q, W_k)` = (X W_q)(X W_k)ᵀ, rows = queries, columns = keys.

    Args:
        fn: takes X [N, d_model], W_q and W_k [d_model, d_k], returns S [N, N].

    Returns:
        True when it matches the reference for two sizes, else False (after printing what is wrong).
    """
    for d_model, d_k, seed in ((8, 3, 5), (6, 6, 6)):
        _, x = _data.qkv_sentence(d_model, seed=seed)
        w = _data.qkv_projections(d_model, d_k, seed=seed)
        x, w_q, w_k = x.double(), w["W_q"].double(), w["W_k"].double()
        expected = (x @ w_q) @ (x @ w_k).T  # [N, N]
        got, error = _call(fn, x.clone(), w_q.clone(), w_k.clone())
        label = f"d_model={d_model}, d_k={d_k}"
        if error:
            return _say(False, f"with {label}, {error}")
        problem = _tensor_problem(got, expected, atol=1e-6)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if torch.allclose(g, expected.T, atol=1e-6):
                problem = "you returned Sᵀ = K Qᵀ: row i must be query i, so S = Q Kᵀ (and S ≠ Sᵀ in general!)"
            elif torch.allclose(g, expected / math.sqrt(d_k), atol=1e-6):
                problem = "you divided by √d_k: that comes later (notebook 03); here we want the raw scores Q Kᵀ"
            elif torch.allclose(g, (x @ w_q) @ (x @ w_q).T, atol=1e-6):
                problem = "you used W_q twice: the keys come from W_k"
        if problem:
            return _say(False, f"with {label}: {problem}")
    return _say(True, "S = Q Kᵀ with Q = X W_q and K = X W_k; S[i, j] = how much query i matches key j.")


def check_symmetric_pair(W_q: Any, W_k: Any) -> bool:
    """Check W_q, W_k [8, 4] with W_k ≠ W_q whose score matrix X W_q W_kᵀ Xᵀ is symmetric for every X.

    Args:
        W_q: [8, 4] tensor. W_k: [8, 4] tensor, not equal to W_q.

    Returns:
        True when W_q W_kᵀ is symmetric (so every S is) and W_k ≠ W_q, else False.
    """
    for name, w in (("W_q", W_q), ("W_k", W_k)):
        if w is None:
            return _say(False, f"{name} is None: build an [8, 4] tensor")
        if not isinstance(w, torch.Tensor):
            return _say(False, f"{name} must be a torch.Tensor of shape (8, 4), got {type(w).__name__}")
        if tuple(w.shape) != (8, 4):
            return _say(False, f"{name} must have shape (8, 4) [d_model, d_k], got {tuple(w.shape)}")
        if not bool(torch.isfinite(w).all()):
            return _say(False, f"{name} contains NaN or inf")
    w_q, w_k = W_q.detach().double(), W_k.detach().double()
    if float(w_k.abs().max()) < 1e-6 or float(w_q.abs().max()) < 1e-6:
        return _say(False, "a zero matrix gives all-zero scores: symmetric, but no attention at all. Use nonzero matrices.")
    if torch.allclose(w_q, w_k, atol=1e-6):
        return _say(False, "W_k equals W_q: that is the easy case we already saw. Find a W_k that differs from W_q.")
    m = w_q @ w_k.T  # [8, 8], S = X M Xᵀ
    skew = float((m - m.T).norm() / m.norm().clamp_min(1e-12))
    _, x = _data.qkv_sentence(8, seed=9)
    s = (x.double() @ w_q) @ (x.double() @ w_k).T  # [N, N]
    s_skew = float((s - s.T).norm() / s.norm().clamp_min(1e-12))
    if skew > 1e-6:
        return _say(False, f"M = W_q W_kᵀ is not symmetric (‖M − Mᵀ‖ / ‖M‖ = {skew:.3g}), so the scores of a "
                               f"test sentence are not either (‖S − Sᵀ‖ / ‖S‖ = {s_skew:.3g}). Hint: try W_k = W_q @ A.")
    return _say(True, "W_k ≠ W_q, yet M = W_q W_kᵀ is symmetric, so S = X M Xᵀ is symmetric for every X "
                           "(test sentence: ‖S − Sᵀ‖ / ‖S‖ < 1e-6).")


def check_invisible_direction(x: Any, W_q: torch.Tensor) -> bool:
    """Check a nonzero input direction x [d_model] that the query map cannot see: x @ W_q = 0.

    Args:
        x: [d_model] tensor, not zero. W_q: [d_model, d_k] projection with d_k < d_model.

    Returns:
        True when ‖x W_q‖ ≤ 1e-5 · ‖x‖ · ‖W_q‖, else False.
    """
    d_model = W_q.shape[0]
    if x is None:
        return _say(False, f"x is None: build a tensor of shape ({d_model},)")
    if not isinstance(x, torch.Tensor):
        return _say(False, f"x must be a torch.Tensor of shape ({d_model},), got {type(x).__name__}")
    if tuple(x.shape) != (d_model,):
        return _say(False, f"x must have shape ({d_model},) [d_model], got {tuple(x.shape)}")
    xd, wd = x.detach().double(), W_q.detach().double()
    if not bool(torch.isfinite(xd).all()):
        return _say(False, "x contains NaN or inf")
    if float(xd.norm()) < 1e-8:
        return _say(False, "x is the zero vector: every map sends 0 to 0. Find a NONZERO x.")
    q = xd @ wd  # [d_k]
    rel = float(q.norm() / (xd.norm() * wd.norm()))
    if rel > 1e-5:
        return _say(False, f"x @ W_q = {[round(v, 4) for v in q.tolist()]} is not zero (relative size {rel:.3g}). "
                               "Hint: you need x orthogonal to every column of W_q; the last rows of Uᵀ from "
                               "torch.linalg.svd(W_q) are.")
    return _say(True, "x @ W_q = 0 (relative size < 1e-5): the queries cannot tell X from X + x. "
                           f"These invisible directions form a {d_model - int(torch.linalg.matrix_rank(wd))}-dim subspace.")


# ---- 03 / 04 ----
import math
from typing import Any, Callable, Optional

import torch








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
        got, error = _call(fn, Q.clone(), K.clone())
        if error:
            return _say(False, f"with Q {q_shape} and K {k_shape}, {error}")
        problem = _tensor_problem(got, expected, atol=1e-4)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            ratio = float((got.double().flatten() @ expected.double().flatten()) / (expected.double().norm() ** 2))
            for factor, hint in ((math.sqrt(d_k), "did you forget to divide by √d_k?"),
                                 (1 / math.sqrt(d_k), "did you divide by d_k instead of √d_k?")):
                if abs(ratio - factor) < 1e-3 * factor:
                    problem = f"your scores are {ratio:.4g} times the expected ones (d_k = {d_k}): {hint}"
        if problem:
            return _say(False, f"with Q {q_shape} and K {k_shape}: {problem}")
    return _say(True, "scores = Q Kᵀ / √d_k on plain and batched inputs.")


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
            got, error = _call(fn, d_k, var_q, var_k)
            if error:
                return _say(False, f"score_variance({d_k}, {var_q}, {var_k}): {error}")
            try:
                value = float(got)
            except (TypeError, ValueError):
                return _say(False, f"score_variance({d_k}, {var_q}, {var_k}) returned {got!r}; expected a number")
            if not math.isclose(value, expected, rel_tol=1e-6):
                hint = ""
                if math.isclose(value, d_k, rel_tol=1e-6) and expected != d_k:
                    hint = " The component variances matter too: each term q_i k_i has variance var_q · var_k."
                elif math.isclose(value, math.sqrt(d_k) * var_q * var_k, rel_tol=1e-6):
                    hint = " Variances of independent terms add up: a sum of d_k terms has d_k times the variance."
                return _say(False, f"score_variance({d_k}, {var_q}, {var_k}) returned {value:.4g}, expected {expected:.4g}.{hint}")
    return _say(True, "Var(q·k) = d_k · Var(q_i) · Var(k_i) for independent zero-mean components.")


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
        got, error = _call(fn, s.clone())
        if error:
            return _say(False, f"for s = {[round(x, 4) for x in s.tolist()]}, {error}")
        problem = _tensor_problem(got, expected, atol=1e-6)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if torch.allclose(g, torch.diag(s), atol=1e-6):
                problem = "you returned diag(s) only: subtract the outer product s sᵀ"
            elif torch.allclose(g, -torch.outer(s, s), atol=1e-6):
                problem = "you returned −s sᵀ only: add diag(s)"
        if problem:
            return _say(False, f"for s = {[round(x, 4) for x in s.tolist()]}: {problem}")
    return _say(True, "∂s/∂z = diag(s) − s sᵀ matches autograd.")


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
        got, error = _call(fn, query.clone(), keys.clone(), values.clone(), temperature)
        if error:
            return _say(False, f"at temperature {temperature}, {error}")
        problem = _tensor_problem(got, expected, atol=1e-6)
        if problem and isinstance(got, torch.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if torch.allclose(g, torch.softmax(keys @ query * temperature, dim=-1) @ values, atol=1e-6):
                problem = "you multiplied the scores by the temperature: divide by it instead"
            elif torch.allclose(g, (keys @ query / temperature) @ values, atol=1e-6):
                problem = "the scores went into the sum without a softmax"
        if problem:
            return _say(False, f"at temperature {temperature}: {problem}")
    return _say(True, "read = softmax(K q / T) V, also at T = 0.001 where it is a hard lookup.")


def check_causal_mask(fn: Callable[[int], torch.Tensor]) -> bool:
    """Check a learner's `causal_mask(n)`: [n, n], True (or 1) where query i may attend to key j ≤ i.

    Args:
        fn: takes the sequence length n and returns the mask.

    Returns:
        True when it is right for n = 1, 4 and 7, else False.
    """
    for n in (1, 4, 7):
        expected = torch.ones(n, n).tril()  # [n, n], 1 = may attend
        got, error = _call(fn, n)
        if error:
            return _say(False, f"causal_mask({n}): {error}")
        if not isinstance(got, torch.Tensor):
            return _say(False, f"causal_mask({n}) returned {type(got).__name__}; expected a bool tensor of shape ({n}, {n})")
        if tuple(got.shape) != (n, n):
            return _say(False, f"causal_mask({n}) has shape {tuple(got.shape)}; expected ({n}, {n})")
        if got.dtype != torch.bool and not bool(((got == 0) | (got == 1)).all()):
            return _say(False, f"causal_mask({n}) must hold only True/False (or 1/0), found other values")
        g = got.detach().double()
        if torch.equal(g, expected):
            continue
        if torch.equal(g, expected.T):
            return _say(False, f"causal_mask({n}) is transposed: row i is query i and must be True for keys 0..i (lower triangle)")
        if torch.equal(g, expected.tril(-1)):
            return _say(False, f"causal_mask({n}) leaves out the diagonal: a token may attend to itself")
        row = int(torch.nonzero((g != expected).any(dim=1))[0])
        return _say(False, f"causal_mask({n}): row {row} (query {row}) is {g[row].int().tolist()}, expected {expected[row].int().tolist()}")
    return _say(True, "query i may attend to keys 0..i and never to the future.")


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
            got, error = _call(fn, distance, kernel_size)
            if error:
                return _say(False, f"cnn_layers_needed({distance}, {kernel_size}): {error}")
            if isinstance(got, bool) or not isinstance(got, (int, float)) or float(got) != int(float(got)):
                return _say(False, f"cnn_layers_needed({distance}, {kernel_size}) returned {got!r}; expected a whole number of layers")
            if int(got) != expected:
                hint = ""
                if int(got) == -(-distance // (kernel_size - 1)):
                    hint = " Each layer reaches (k − 1)/2 positions to EACH side, not k − 1 to one side."
                elif int(got) == distance // half:
                    hint = " Round up: a partial step still needs a whole layer."
                return _say(False, f"cnn_layers_needed({distance}, {kernel_size}) returned {got}, expected {expected}.{hint}")
    return _say(True, "a stack of L layers with kernel k reaches L·(k − 1)/2 positions to each side.")


# ---- 05 ----
# Checkers for notebook 05 (multi-head attention). Each prints "✓ Correct: …" and returns True,
# or prints what is wrong (shape, which head, by how much) and returns False; never a traceback.
from typing import Callable as _Callable_05, Optional as _Optional_05

import torch as _torch_05

from .modules import MultiHeadAttention as _MHA_05
from .modules import relation_mass as _relation_mass_05








def check_param_count(fn: _Callable_05[[int, int], int]) -> bool:
    """Check a learner's `param_count(d_model, num_heads)` against `MultiHeadAttention`'s real count.

    Args:
        fn: takes d_model and num_heads, returns the number of parameters (weights and biases).

    Returns:
        True when it is right for every case, else False (after printing what is wrong).
    """
    for d_model, heads in ((8, 1), (8, 2), (12, 3), (32, 8), (64, 4)):
        expected = sum(p.numel() for p in _MHA_05(d_model, heads).parameters())
        got, error = _call(fn, d_model, heads)
        if error:
            return _say(False, f"param_count({d_model}, {heads}): {error}")
        if isinstance(got, _torch_05.Tensor) and got.numel() == 1:
            got = got.item()
        if isinstance(got, bool) or not isinstance(got, (int, float)) or got != expected:
            hint = ""
            if got == 4 * d_model * d_model:
                hint = " You counted the four weight matrices; each nn.Linear also has a bias of d_model numbers."
            elif isinstance(got, (int, float)) and heads > 1 and got in (4 * (d_model * d_model // heads + d_model),
                                                                         4 * heads * (d_model * d_model + d_model)):
                hint = " The count must not change with num_heads: the h heads share one d_model × d_model matrix per projection."
            return _say(False, f"param_count({d_model}, {heads}) returned {got!r}, expected {expected}.{hint}")
    return _say(True, "4·(d_model² + d_model) parameters, whatever num_heads is.")


def check_head_contribution(fn: _Callable_05[..., _torch_05.Tensor]) -> bool:
    """Check `head_contribution(head_i, W_o_weight, i)`: what head i adds to the output, head_i · W_O[rows of head i].

    Args:
        fn: takes head_i [B, N, d_k], W_o_weight [d_model, d_model] (nn.Linear layout [out, in]) and
            the head index i; returns [B, N, d_model]. Summed over i, plus the bias, it is the output.

    Returns:
        True when it matches the reference for every head, else False (after printing what is wrong).
    """
    gen = _torch_05.Generator().manual_seed(5)
    d_model, heads, batch, n = 12, 3, 2, 5
    d_k = d_model // heads
    mha = _MHA_05(d_model, heads)
    with _torch_05.no_grad():
        for p in mha.parameters():
            p.copy_(_torch_05.randn(p.shape, generator=gen) / d_model**0.5)
    x = _torch_05.randn(batch, n, d_model, generator=gen)  # [B, N, d_model]
    with _torch_05.no_grad():
        out, _ = mha(x, x, x)  # [B, N, d_model]
        Q, K, V = (mha.split_heads(lin(x)) for lin in (mha.W_q, mha.W_k, mha.W_v))  # [B, h, N, d_k]
        per_head = _torch_05.softmax(Q @ K.transpose(-2, -1) / d_k**0.5, dim=-1) @ V  # [B, h, N, d_k]
    W = mha.W_o.weight.detach().clone()  # [d_model out, d_model in]
    total = mha.W_o.bias.detach().clone().expand(batch, n, d_model)  # [B, N, d_model]
    for i in range(heads):
        head_i = per_head[:, i].clone()  # [B, N, d_k]
        expected = head_i @ W[:, i * d_k:(i + 1) * d_k].T  # [B, N, d_model]
        got, error = _call(fn, head_i, W.clone(), i)
        if error:
            hint = (f" (head_i is [B, N, d_k={d_k}]: multiply it by the d_k rows of W^O that belong to head {i})"
                    if "shape" in error else "")
            return _say(False, f"for head {i} (d_k = {d_k}, d_model = {d_model}): {error}{hint}")
        problem = _tensor_problem(got, expected, atol=1e-5)
        if problem and isinstance(got, _torch_05.Tensor) and got.shape == expected.shape:
            g = got.detach()
            if _torch_05.allclose(g, head_i @ W[i * d_k:(i + 1) * d_k, :], atol=1e-5):
                problem = ("you took ROWS of W_o.weight; nn.Linear stores [out, in], so the rows of W^O are the "
                           "COLUMNS of W_o.weight: use W_o_weight[:, i*d_k:(i+1)*d_k].T")
            elif _torch_05.allclose(g, expected + mha.W_o.bias.detach(), atol=1e-5):
                problem = "you added the bias: it belongs to the sum over heads once, not to every head"
            elif i > 0 and _torch_05.allclose(g, head_i @ W[:, :d_k].T, atol=1e-5):
                problem = f"you used the block of head 0; head {i} owns rows {i * d_k}…{(i + 1) * d_k - 1} of W^O"
        if problem and isinstance(got, _torch_05.Tensor) and got.shape != expected.shape:
            problem += f" (head_i is [B, N, d_k={d_k}]; it meets only the d_k rows of W^O that belong to head {i})"
        if problem:
            return _say(False, f"head {i}: {problem}")
        total = total + got.detach()
    if not _torch_05.allclose(total, out, atol=1e-5):
        return _say(False, "each head looked right but their sum plus the bias differs from the module's output")
    return _say(True, "Σ_i head_i · W_O[rows of head i] + bias equals the module's output: heads are added, not placed side by side.")


def check_relation_mass(fn: _Callable_05[[_torch_05.Tensor, _torch_05.Tensor], _torch_05.Tensor]) -> bool:
    """Check `relation_mass(weights, targets)`: mean weight each head puts on one target key per query.

    Args:
        fn: takes weights [B, heads, N_q, N_k] and targets [B, N_q] (int64), returns [heads].

    Returns:
        True when it matches the reference on two cases, else False (after printing what is wrong).
    """
    gen = _torch_05.Generator().manual_seed(7)
    for batch, heads, n_q, n_k in ((3, 2, 4, 6), (2, 4, 5, 5)):
        weights = _torch_05.softmax(3 * _torch_05.randn(batch, heads, n_q, n_k, generator=gen), dim=-1)
        targets = _torch_05.randint(0, n_k, (batch, n_q), generator=gen)  # [B, N_q]
        expected = _relation_mass_05(weights, targets)  # [heads]
        got, error = _call(fn, weights.clone(), targets.clone())
        if error:
            return _say(False, f"with weights {tuple(weights.shape)} and targets {tuple(targets.shape)}: {error}")
        problem = _tensor_problem(got, expected, atol=1e-5)
        if problem and isinstance(got, _torch_05.Tensor) and got.shape == expected.shape:
            if _torch_05.allclose(got.detach(), expected * n_q * batch, atol=1e-4):
                problem = "you summed over batch and queries; take the mean so that 1 means 'always on the target'"
        elif problem and isinstance(got, _torch_05.Tensor) and got.numel() == 1:
            problem += " (one number for all heads: average over batch and queries only, keep the heads axis)"
        if problem:
            return _say(False, f"with weights {tuple(weights.shape)} and targets {tuple(targets.shape)}: {problem}")
    return _say(True, "weights[b, h, i, targets[b, i]] averaged over b and i, one number per head.")

# ---- 06 ----
# Checkers for notebook 06. Each runs the learner's code on seeded inputs next to a reference,
# prints "✓ Correct: …" and returns True, or prints which step is wrong and returns False.
import copy as _copy_06
import math as _math_06
from typing import Callable as _Callable_06, Optional as _Optional_06, Union as _Union_06

import torch as _torch_06
from torch import nn as _nn_06

from .core import scaled_dot_product_attention as _sdpa_06
from .modules import MultiHeadAttention as _MHA_06

_TOL_06 = 1e-5  # float32 tolerance for every comparison below




def _call_06(fn: _Callable_06, *args: object) -> tuple[object, _Optional_06[str]]:
    """`_call` for code that may be a module too, with hints for the usual view/reshape errors."""
    result, problem = _call(fn, *args, what="a function or module")
    if problem and "view size is not compatible" in problem:
        problem += " (view needs contiguous memory: call .contiguous() after transpose, or use .reshape)"
    elif problem and "invalid for input of size" in problem:
        problem += " (read the sizes from the tensor's .shape, not from notebook variables: the checker uses its own sizes)"
    return result, problem


def _pair_problem_06(result: object, out_shape: tuple, w_shape: tuple) -> _Optional_06[str]:
    """Describe what is wrong with a returned (output, weights) pair's type and shapes, or None."""
    if isinstance(result, _torch_06.Tensor) or not isinstance(result, (tuple, list)) or len(result) != 2:
        got = "one tensor" if isinstance(result, _torch_06.Tensor) else type(result).__name__
        return f"it must return a pair (output, weights), got {got}"
    out, weights = result
    for name, t, shape in (("output", out, out_shape), ("weights", weights, w_shape)):
        if not isinstance(t, _torch_06.Tensor):
            return f"{name} must be a tensor of shape {list(shape)}, got {type(t).__name__}"
    if tuple(weights.shape) != w_shape:
        b, h, n_q, n_k = w_shape
        if tuple(weights.shape) == (b, h, n_k, n_q):
            return (f"weights have shape {list(weights.shape)}, expected {list(w_shape)} [batch, heads, N_q, N_k]: "
                    "the scores must be Q @ K.transpose(-2, -1), one row per query")
        return f"weights have shape {list(weights.shape)}, expected {list(w_shape)} [batch, heads, N_q, N_k]"
    if tuple(out.shape) != out_shape:
        return f"output has shape {list(out.shape)}, expected {list(out_shape)}"
    return None


def _fitted_scale_06(weights: _torch_06.Tensor, raw: _torch_06.Tensor, allowed: _torch_06.Tensor) -> _Optional_06[float]:
    """The factor s with weights = softmax(s · raw) over allowed keys, if one factor fits every row, else None."""
    w = weights.detach().double()
    ok = allowed.expand_as(w) & (w > 1e-30)  # only entries whose log is informative
    if not bool((ok.sum(-1) >= 2).all()):
        return None
    logw = _torch_06.where(ok, w.clamp_min(1e-300).log(), _torch_06.zeros_like(w))  # [..., N_q, N_k]
    z = _torch_06.where(ok, raw.double(), _torch_06.zeros_like(w))  # [..., N_q, N_k]
    count = ok.sum(-1, keepdim=True)  # [..., N_q, 1]
    a = _torch_06.where(ok, logw - logw.sum(-1, keepdim=True) / count, _torch_06.zeros_like(w))  # centred log-weights
    b = _torch_06.where(ok, z - z.sum(-1, keepdim=True) / count, _torch_06.zeros_like(w))  # centred raw scores
    if float((b * b).sum()) == 0.0:
        return None
    s = float((a * b).sum() / (b * b).sum())
    if float((a - s * b).abs().max()) > 1e-3:
        return None
    return s


def _scale_names_06(d_k: int, heads: int) -> list[tuple[float, str]]:
    """Scales a learner might have used, with a readable name for each."""
    d_model = d_k * heads
    return [
        (1 / _math_06.sqrt(d_k), f"1/√d_k = 1/√{d_k}"),
        (1 / _math_06.sqrt(d_model), f"1/√d_model = 1/√{d_model} (d_model = heads · d_k)"),
        (1 / d_k, f"1/d_k = 1/{d_k} (no square root)"),
        (1 / d_model, f"1/d_model = 1/{d_model}"),
        (1.0, "1 (no scaling at all)"),
        (_math_06.sqrt(d_k), f"√d_k = √{d_k} (multiplied instead of divided)"),
    ]


def _weights_problem_06(
    weights: _torch_06.Tensor, Q: _torch_06.Tensor, K: _torch_06.Tensor, mask: _Optional_06[_torch_06.Tensor]
) -> _Optional_06[str]:
    """Say which step produced wrong attention weights (softmax dim, scale, mask, or other), or None if right.

    Q: [B, h, N_q, d_k] and K: [B, h, N_k, d_k] are the per-head queries and keys the weights should come from;
    mask is bool (True = may attend) broadcastable to [B, h, N_q, N_k], or None.
    """
    w = weights.detach().double()  # [B, h, N_q, N_k]
    d_k, heads = Q.size(-1), Q.size(1)
    expected = _sdpa_06(Q.double(), K.double(), K.double(), mask)[1]  # [B, h, N_q, N_k]
    raw = Q.double() @ K.double().transpose(-2, -1)  # [B, h, N_q, N_k] unscaled scores
    allowed = _torch_06.ones_like(raw, dtype=_torch_06.bool) if mask is None else mask.expand_as(raw)
    if mask is not None:
        inverted = _sdpa_06(Q.double(), K.double(), K.double(), ~allowed)[1]  # the opposite convention
        rows = (~allowed).any(-1, keepdim=True) & _torch_06.isfinite(w).all(-1, keepdim=True)  # [B, h, N_q, 1]
        diff = _torch_06.where(rows.expand_as(w), (w - inverted).abs(), _torch_06.zeros_like(w))
        if bool(rows.any()) and float(diff.nan_to_num(1.0).max()) <= _TOL_06:
            return ("the mask is inverted: your weights are 0 exactly where the mask is True. Here (as in the article) "
                    "True/1 means 'may attend', so fill the scores where mask == 0 (PyTorch's nn.MultiheadAttention "
                    "attn_mask uses the opposite convention, True = blocked)")
    if not bool(_torch_06.isfinite(w).all()):
        return "the weights contain NaN or inf (a row whose scores are all −inf gives NaN: fill masked scores with −1e9)"
    if float((w - expected).abs().max()) <= _TOL_06:
        return None
    row_sums = w.sum(-1)  # [B, h, N_q]
    if float((row_sums - 1).abs().max()) > _TOL_06:
        for dim, name in ((-2, "dim 2 of [batch, heads, N_q, N_k], the queries: each key's column sums to 1"),
                          (1, "the heads"), (0, "the batch")):
            if float((w.sum(dim) - 1).abs().max()) <= _TOL_06:
                return (f"rows don't sum to 1 along keys: you normalised over dim={dim} ({name}). "
                        "Each query needs a distribution over the keys: softmax(scores, dim=-1)")
        b, h, i = (int(v) for v in _torch_06.nonzero((row_sums - 1).abs() > _TOL_06)[0])
        extra = ""
        if mask is not None:
            extra = " If you zeroed masked weights after the softmax, mask the scores before it instead."
        return (f"each query's weights must sum to 1 over the keys; row [batch {b}, head {h}, query {i}] sums to "
                f"{float(row_sums[b, h, i]):.4f}.{extra}")
    if mask is not None:
        leak = _torch_06.where(allowed, _torch_06.zeros_like(w), w)  # weight on keys that are masked out
        if float(leak.max()) > _TOL_06:
            b, h, i, j = (int(v) for v in _torch_06.nonzero(leak == leak.max())[0])
            return (f"masked keys still get weight: query {i} may not see key {j} (batch {b}, head {h}) but gets "
                    f"{float(w[b, h, i, j]):.4f}. Fill masked scores with −1e9 before the softmax")
    s = _fitted_scale_06(w, raw, allowed)
    if s is not None:
        for value, name in _scale_names_06(d_k, heads):
            if abs(s - value) <= 1e-3 * value:
                if name.startswith("1/√d_k"):
                    break
                return (f"the scores were multiplied by {s:.4f} = {name}; expected 1/√d_k = 1/√{d_k} = "
                        f"{1 / _math_06.sqrt(d_k):.4f}. Divide by √d_k, the width of ONE head")
        else:
            return (f"the scores were multiplied by {s:.4f} = 1/√{1 / s ** 2:.4g}; expected 1/√d_k = 1/√{d_k} = "
                    f"{1 / _math_06.sqrt(d_k):.4f}. Divide by √d_k, the width of ONE head")
    err = (w - expected).abs()
    b, h, i, j = (int(v) for v in _torch_06.nonzero(err == err.max())[0])
    return (f"weight [batch {b}, head {h}, query {i}, key {j}] is {float(w[b, h, i, j]):.4f}, expected "
            f"{float(expected[b, h, i, j]):.4f} = softmax(Q Kᵀ / √d_k) there")


def _seeded_qkv_06(seed: int, batch: int, heads: int, n_q: int, n_k: int, d_k: int) -> tuple[_torch_06.Tensor, ...]:
    """Seeded float32 per-head Q [B, h, N_q, d_k], K and V [B, h, N_k, d_k]."""
    gen = _torch_06.Generator().manual_seed(seed)
    f32 = _torch_06.float32
    Q = _torch_06.randn(batch, heads, n_q, d_k, generator=gen, dtype=f32)  # [B, h, N_q, d_k]
    K = _torch_06.randn(batch, heads, n_k, d_k, generator=gen, dtype=f32)  # [B, h, N_k, d_k]
    V = _torch_06.randn(batch, heads, n_k, d_k, generator=gen, dtype=f32)  # [B, h, N_k, d_k]
    return Q, K, V


def _test_mask_06(batch: int, n_q: int, n_k: int) -> _torch_06.Tensor:
    """Bool mask [B, 1, N_q, N_k] mixing a causal-like band and padding, with no fully masked row."""
    i = _torch_06.arange(n_q)[:, None]  # [N_q, 1]
    j = _torch_06.arange(n_k)[None, :]  # [1, N_k]
    lengths = _torch_06.tensor([n_k - 2 * b for b in range(batch)]).clamp_min(1)  # [B]
    band = j <= i + (n_k - n_q)  # [N_q, N_k]: query i sees keys up to its own position
    keep = j[None] < lengths[:, None, None]  # [B, 1, N_k]
    return (band[None] & keep)[:, None]  # [B, 1, N_q, N_k]


def _max_diff_06(a: _torch_06.Tensor, b: _torch_06.Tensor) -> float:
    """Largest absolute difference between two tensors of the same shape."""
    return float((a.detach().double() - b.detach().double()).abs().max())


def check_merge_heads(merge_heads: _Callable_06[[_torch_06.Tensor], _torch_06.Tensor]) -> bool:
    """Check a learner's merge_heads: [batch, heads, seq, d_k] -> [batch, seq, heads · d_k] (Concat of the heads).

    Args:
        merge_heads: a function taking one tensor [batch, heads, seq, d_k].

    Returns:
        True when every number lands where the reference puts it, else False (after printing what is wrong).
    """
    B, H, N, D = 2, 4, 5, 3
    tags = _torch_06.arange(B * H * N * D, dtype=_torch_06.float64).view(B, H, N, D)  # each entry = its own id
    expected = tags.transpose(1, 2).contiguous().view(B, N, H * D)  # [B, N, d_model]
    got, error = _call_06(merge_heads, tags.clone())
    if error:
        return _say(False, f"merge_heads on a [{B}, {H}, {N}, {D}] tensor: {error}")
    if not isinstance(got, _torch_06.Tensor):
        return _say(False, f"merge_heads must return a tensor [batch, seq, d_model], got {type(got).__name__}")
    if tuple(got.shape) != (B, N, H * D):
        return _say(False, f"merge_heads turned [{B}, {H}, {N}, {D}] [batch, heads, seq, d_k] into {list(got.shape)}; "
                              f"expected [{B}, {N}, {H * D}] [batch, seq, heads·d_k]")
    g = got.detach().double()
    if _torch_06.equal(g, expected):
        return _say(True, f"[batch, heads, seq, d_k] → [batch, seq, d_model]: token t's row is "
                             f"[head 0 · t | head 1 · t | … | head {H - 1} · t].")
    if not bool(_torch_06.isin(g, tags).all()):
        return _say(False, "merge_heads changed the numbers; it should only move them (transpose, then view)")

    def describe(row: _torch_06.Tensor) -> str:
        """Name the (head, token) pair behind each d_k-wide block of one output row."""
        parts = []
        for blk in row.view(H, D):
            ids = blk.long()
            h, n = int(ids[0] // (N * D) % H), int(ids[0] // D % N)
            same = bool((ids // D == ids[0] // D).all())
            parts.append(f"head {h}·token {n}" if same else "mixed")
        return "[" + " | ".join(parts) + "]"

    b, t = (int(v) for v in _torch_06.nonzero((g != expected).any(-1))[0])
    message = (f"token {t}'s output row must hold every head's result for token {t}, side by side:\n"
               f"    expected {describe(expected[b, t])}\n"
               f"    yours    {describe(g[b, t])}")
    if _torch_06.equal(g, tags.reshape(B, N, H * D)):
        message = ("the heads are mixed across tokens. " + message +
                   "\n    view() reads memory in order, and [batch, heads, seq, d_k] stores each head's whole sequence"
                   "\n    together: transpose(1, 2) first (→ [batch, seq, heads, d_k]), then .contiguous().view(batch, seq, d_model)")
    return _say(False, message)


def check_attention(attention: _Callable_06[..., tuple[_torch_06.Tensor, _torch_06.Tensor]]) -> bool:
    """Check a learner's attention(Q, K, V, mask=None) -> (output, weights) on per-head tensors.

    Args:
        attention: takes Q [B, h, N_q, d_k], K and V [B, h, N_k, d_k] and an optional bool mask (True = may attend)
            broadcastable to [B, h, N_q, N_k]; returns (output [B, h, N_q, d_k], weights [B, h, N_q, N_k]).

    Returns:
        True when forward and gradients match the reference, else False (after printing which step is wrong).
    """
    B, H, N_q, N_k, D = 2, 2, 4, 6, 8
    Q, K, V = _seeded_qkv_06(6, B, H, N_q, N_k, D)
    mask = _test_mask_06(B, N_q, N_k)  # [B, 1, N_q, N_k]
    for case, m in (("without a mask", None), ("with a mask", mask)):
        args = (Q.clone(), K.clone(), V.clone()) + (() if m is None else (m.clone(),))
        result, error = _call_06(attention, *args)
        if error:
            return _say(False, f"{case}, {error}")
        problem = _pair_problem_06(result, (B, H, N_q, D), (B, H, N_q, N_k))
        if problem:
            return _say(False, f"{case}: {problem}")
        out, weights = result
        problem = _weights_problem_06(weights, Q, K, m)
        if problem:
            return _say(False, f"{case}: {problem}")
        ref_out = _sdpa_06(Q.double(), K.double(), V.double(), m)[0]  # [B, h, N_q, d_k]
        if _max_diff_06(out, ref_out) > _TOL_06:
            if _max_diff_06(out, weights.detach().double() @ K.double()) <= _TOL_06:
                return _say(False, f"{case}: the weights are right but the output is weights @ K; it must be weights @ V")
            return _say(False, f"{case}: the weights are right but the output is not weights @ V "
                                  f"(largest difference {_max_diff_06(out, ref_out):.4g})")
    # gradients reach Q, K and V like the reference's
    leaves = [t.clone().requires_grad_() for t in (Q, K, V)]
    result, error = _call_06(attention, *leaves, mask.clone())
    if error:
        return _say(False, f"with inputs that require gradients, {error}")
    out = result[0]
    if not out.requires_grad:
        return _say(False, "the output carries no gradient: avoid .detach(), .data, .numpy() and torch.no_grad() inside")
    grads = _torch_06.autograd.grad(out.sum(), leaves, allow_unused=True)
    refs = [t.clone().double().requires_grad_() for t in (Q, K, V)]
    ref_grads = _torch_06.autograd.grad(_sdpa_06(*refs, mask)[0].sum(), refs)
    for name, g, r in zip("QKV", grads, ref_grads):
        if g is None or _max_diff_06(g, r) > _TOL_06:
            return _say(False, f"the forward pass matches but the gradient with respect to {name} does not: "
                                  "avoid in-place changes to tensors autograd needs")
    # a fully masked row: not an error either way, but worth knowing
    full = mask.clone()
    full[0, 0, 0] = False  # query 0 of batch 0 may see nothing
    result, error = _call_06(attention, Q.clone(), K.clone(), V.clone(), full)
    note = ""
    if error is None and not bool(_torch_06.isfinite(result[1].detach()[0, :, 0]).all()):
        note = " (Note: a fully masked row gives NaN with your fill value; the article's −1e9 gives uniform weights.)"
    return _say(True, f"weights [{B}, {H}, {N_q}, {N_k}] sum to 1 over the keys, scores scaled by 1/√d_k, masked keys "
                         f"get 0, and output and gradients match the reference.{note}")


def check_multi_head_attention(module: _Union_06[_nn_06.Module, type]) -> bool:
    """Check a learner's MultiHeadAttention (class or instance) against attnlib's, with the same weights.

    Args:
        module: a class called as cls(d_model=32, num_heads=4), or an instance with attributes d_model and
            num_heads; either way with submodules W_q, W_k, W_v, W_o and forward(query, key, value, mask=None)
            returning (output [B, N_q, d_model], weights [B, h, N_q, N_k]).

    Returns:
        True when outputs, weights and gradients match on self- and cross-attention, else False.
    """
    if isinstance(module, type):
        try:
            learner = module(32, 4)
        except Exception as exc:
            return _say(False, f"{module.__name__}(d_model=32, num_heads=4) raised {type(exc).__name__}: {exc}")
    elif isinstance(module, _nn_06.Module):
        learner = _copy_06.deepcopy(module)  # loading weights must not touch the learner's own module
    else:
        return _say(False, f"pass your module class or an instance, got {type(module).__name__}")
    d_model, heads = getattr(learner, "d_model", None), getattr(learner, "num_heads", None)
    if not isinstance(d_model, int) or not isinstance(heads, int):
        return _say(False, "the module needs integer attributes d_model and num_heads, as in the article")
    d_k = d_model // heads
    with _torch_06.random.fork_rng():
        _torch_06.manual_seed(60)
        ref = _MHA_06(d_model, heads).float()
    try:
        learner.load_state_dict(ref.state_dict())
        learner.float()  # the checks run in float32, whatever the notebook's default dtype
    except Exception as exc:
        keys = sorted(learner.state_dict().keys())
        return _say(False, f"its state_dict does not load the reference's weights ({type(exc).__name__}). Expected "
                              f"keys W_q.weight, W_q.bias, …, W_o.bias; yours are {keys}")
    gen = _torch_06.Generator().manual_seed(61)
    B, N_q, N_k = 2, 4, 6
    x_q = _torch_06.randn(B, N_q, d_model, generator=gen, dtype=_torch_06.float32)  # [B, N_q, d_model]
    x_kv = _torch_06.randn(B, N_k, d_model, generator=gen, dtype=_torch_06.float32)  # [B, N_k, d_model]
    mask = _test_mask_06(B, N_q, N_k)  # [B, 1, N_q, N_k]
    cases = (("self-attention without a mask", x_kv, x_kv, None),
             ("cross-attention (4 queries, 6 keys) with a mask", x_q, x_kv, mask))
    for case, q_in, kv_in, m in cases:
        n_q = q_in.size(1)
        args = (q_in.clone(), kv_in.clone(), kv_in.clone()) + (() if m is None else (m.clone(),))
        result, error = _call_06(learner, *args)
        if error:
            return _say(False, f"{case}: {error}")
        problem = _pair_problem_06(result, (B, n_q, d_model), (B, heads, n_q, N_k))
        if problem:
            return _say(False, f"{case}: {problem}")
        out, weights = result
        with _torch_06.no_grad():
            ref_out, ref_w = ref(q_in, kv_in, kv_in, m)
            Q = ref.split_heads(ref.W_q(q_in))  # [B, h, N_q, d_k]
            K = ref.split_heads(ref.W_k(kv_in))  # [B, h, N_k, d_k]
            V = ref.split_heads(ref.W_v(kv_in))  # [B, h, N_k, d_k]
            Q_bad = ref.W_q(q_in).reshape(B, heads, n_q, d_k)  # split without transpose
            K_bad = ref.W_k(kv_in).reshape(B, heads, N_k, d_k)
        if _max_diff_06(weights, ref_w) > _TOL_06:
            if _max_diff_06(weights, _sdpa_06(Q_bad, K_bad, K_bad, m)[1]) <= _TOL_06:
                return _say(False, f"{case}: splitting heads went wrong: you viewed [batch, seq, d_model] straight "
                                      "as [batch, heads, seq, d_k], which mixes tokens into heads. view to "
                                      "[batch, seq, heads, d_k] first, then transpose(1, 2)")
            problem = _weights_problem_06(weights, Q, K, m)
            return _say(False, f"{case}: {problem or 'the weights differ from the reference'}")
        if _max_diff_06(out, ref_out) > _TOL_06:
            heads_out = ref_w @ V  # [B, h, N_q, d_k]
            with _torch_06.no_grad():
                no_transpose = ref.W_o(heads_out.reshape(B, n_q, d_model))  # merge without transpose
            concat = ref.merge_heads(heads_out)  # [B, N_q, d_model]
            if _max_diff_06(out, no_transpose) <= _TOL_06:
                return _say(False, f"{case}: weights match, but merging heads mixes tokens: transpose(1, 2) "
                                      "before .contiguous().view(batch, seq, d_model)")
            if _max_diff_06(out, concat) <= _TOL_06:
                return _say(False, f"{case}: weights match, but the output skips the final projection W_o")
            return _say(False, f"{case}: weights match but the output differs from the reference by up to "
                                  f"{_max_diff_06(out, ref_out):.4g}")
    leaves = [t.clone().requires_grad_() for t in (x_q, x_kv, x_kv)]
    result, error = _call_06(learner, *leaves, mask.clone())
    if error:
        return _say(False, f"with inputs that require gradients, {error}")
    out = result[0]
    if not out.requires_grad:
        return _say(False, "the output carries no gradient: avoid .detach(), .data and torch.no_grad() inside forward")
    grads = _torch_06.autograd.grad(out.sum(), leaves, allow_unused=True)
    refs = [t.clone().requires_grad_() for t in (x_q, x_kv, x_kv)]
    ref_grads = _torch_06.autograd.grad(ref(*refs, mask)[0].sum(), refs)
    for name, g, r in zip(("query", "key", "value"), grads, ref_grads):
        if g is None or _max_diff_06(g, r) > _TOL_06:
            return _say(False, f"the forward pass matches but the gradient with respect to {name} does not")
    return _say(True, f"same state_dict as al.MultiHeadAttention({d_model}, {heads}); outputs, weights "
                         f"[B, {heads}, N_q, N_k] and gradients match, with and without a mask.")


# ---- 07 ----
# Checkers for notebook 07 (summary and beyond). Each prints "✓ Correct: …" and returns True, or
# prints what is wrong (which case, expected vs received, by how much) and returns False.
from typing import Any as _Any_07, Callable as _Callable_07, Optional as _Optional_07

import torch as _torch_07








def check_softmax_by_chunks(fn: _Callable_07[[_torch_07.Tensor, int], _torch_07.Tensor]) -> bool:
    """Check a learner's `softmax_by_chunks(scores, chunk)`: the softmax of a 1-D row read chunk by chunk.

    Args:
        fn: takes scores [N] (float64) and a chunk size ≥ 1, returns the softmax [N].

    Returns:
        True when it equals torch.softmax on every case (large scores, chunks that do not divide N,
        chunk 1, one chunk), else False after printing which case fails and how.
    """
    gen = _torch_07.Generator().manual_seed(7)
    row = _torch_07.randn(10, generator=gen, dtype=_torch_07.float64)
    rising = _torch_07.arange(12, dtype=_torch_07.float64)  # every chunk raises the maximum
    cases = [
        ("10 scores, chunks of 4 (the last chunk has 2)", row, 4),
        ("10 scores, chunks of 1", row, 1),
        ("10 scores, one chunk of 16", row, 16),
        ("12 rising scores 0..11, chunks of 5", rising, 5),
        ("large scores (around 1000), chunks of 3", 1000.0 + 5 * row, 3),
    ]
    for label, scores, chunk in cases:
        expected = _torch_07.softmax(scores, dim=0)  # [N]
        got, error = _call(fn, scores.clone(), chunk)
        if error:
            return _say(False, f"on {label}, {error}")
        problem = _tensor_problem(got, expected, atol=1e-9)
        if problem and isinstance(got, _torch_07.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if abs(float(g.sum()) - 1.0) > 1e-6 and bool(_torch_07.isfinite(g).all()):
                problem += (f"; your weights sum to {float(g.sum()):.4f}, not 1: when a chunk raises the maximum "
                            "m, the running sum l must be rescaled by exp(m_old − m_new) before adding")
        if problem:
            return _say(False, f"on {label}: {problem}")
    return _say(True, "one pass keeps only (m, l); rescaling l by exp(m_old − m_new) when the maximum grows "
                         "makes the chunked softmax exact, even for scores near 1000.")


def check_window_pairs(fn: _Callable_07[[int, int], int]) -> bool:
    """Check a learner's `window_pairs(n, w)`: how many (query, key) pairs satisfy |i − j| ≤ w.

    Args:
        fn: takes the sequence length n ≥ 1 and the window w ≥ 0, returns an int.

    Returns:
        True when it equals the count of True cells of `window_mask(n, w)` for every case, else False.
    """
    from .masks import window_mask

    cases = [(8, 0), (8, 1), (8, 3), (5, 4), (5, 10), (1, 0), (64, 7), (4096, 128)]
    for n, w in cases:
        expected = int(window_mask(n, w).sum()) if n <= 512 else n * (2 * w + 1) - w * (w + 1)
        got, error = _call(fn, n, w)
        if error:
            return _say(False, f"window_pairs({n}, {w}): {error}")
        if isinstance(got, _torch_07.Tensor) and got.numel() == 1:
            got = got.item()
        if isinstance(got, float) and got.is_integer():
            got = int(got)
        if isinstance(got, bool) or not isinstance(got, int):
            return _say(False, f"window_pairs({n}, {w}) returned {got!r} ({type(got).__name__}); expected the integer {expected}")
        if got != expected:
            hint = ""
            if got == n * (2 * w + 1):
                hint = (" You counted 2w + 1 keys for every query, but near the two ends of the sequence "
                        "part of the window falls outside it.")
            elif got == n * n:
                hint = " That is every pair: the window must keep only keys with |i − j| ≤ w."
            elif w >= n and got != n * n:
                hint = " When the window is wider than the sequence, every pair is inside it."
            return _say(False, f"window_pairs({n}, {w}) returned {got}, expected {expected}.{hint}")
    return _say(True, "n(2w + 1) − w(w + 1) pairs for w < n: linear in n for a fixed window, against n² "
                         "for full attention.")


def _causal_linear_reference_07(q: _torch_07.Tensor, k: _torch_07.Tensor, v: _torch_07.Tensor, eps: float) -> _torch_07.Tensor:
    """Causal linear attention written with the N×N matrix: row i uses keys 0..i only."""
    phi_q = _torch_07.nn.functional.elu(q) + 1  # [N, d_k]
    phi_k = _torch_07.nn.functional.elu(k) + 1  # [N, d_k]
    sim = (phi_q @ phi_k.T).tril()  # [N, N] zero above the diagonal
    return (sim @ v) / (sim.sum(dim=-1, keepdim=True) + eps)  # [N, d_v]


def check_causal_linear_attention(fn: _Callable_07[..., _torch_07.Tensor]) -> bool:
    """Check a learner's `causal_linear_attention(Q, K, V, eps)`: row i = φ(q_i)·S_i / (φ(q_i)·z_i + eps).

    S_i = Σ_{j≤i} φ(k_j) v_jᵀ and z_i = Σ_{j≤i} φ(k_j) are prefix sums, φ = elu + 1.

    Args:
        fn: takes Q [N, d_k], K [N, d_k], V [N, d_v] (float64) and eps, returns [N, d_v].

    Returns:
        True when it matches the N×N reference on two cases, else False after printing what is wrong.
    """
    from .efficient import linear_attention

    gen = _torch_07.Generator().manual_seed(70)
    for n, d_k, d_v in ((6, 4, 3), (17, 8, 5)):
        q, k, v = (_torch_07.randn(n, d, generator=gen, dtype=_torch_07.float64) for d in (d_k, d_k, d_v))
        eps = 1e-6
        expected = _causal_linear_reference_07(q, k, v, eps)  # [N, d_v]
        got, error = _call(fn, q.clone(), k.clone(), v.clone(), eps)
        if error:
            return _say(False, f"with Q, K {(n, d_k)} and V {(n, d_v)}, {error}")
        problem = _tensor_problem(got, expected, atol=1e-9)
        if problem and isinstance(got, _torch_07.Tensor) and got.shape == expected.shape:
            g = got.detach().double()
            if _torch_07.allclose(g, linear_attention(q, k, v, eps=eps)[0], atol=1e-9):
                problem = ("this is the non-causal version: every row used all keys. Row i may use keys 0..i "
                           "only: take running (prefix) sums with torch.cumsum along the sequence")
            elif _torch_07.allclose(g[0], expected[0], atol=1e-9) and not _torch_07.allclose(g[-1], expected[-1], atol=1e-9):
                problem += "; the first row is right but later rows are not: check the denominator uses the same prefix"
        if problem:
            return _say(False, f"with Q, K {(n, d_k)} and V {(n, d_v)}: {problem}")
    return _say(True, "prefix sums S_i and z_i give causal linear attention in O(N) steps; it is what lets "
                         "linear attention run as a recurrent network, one token at a time.")
