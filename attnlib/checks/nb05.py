"""Checkers for notebook 05 (multi-head attention): each prints one line of feedback, returns a bool."""
from __future__ import annotations

from typing import Callable

import torch

from ..i18n import t
from ..modules import MultiHeadAttention
from ..tiny import relation_mass
from .feedback import call, compare, say


def check_param_count(fn: Callable[[int, int], int]) -> bool:
    """Check a learner's `param_count(d_model, num_heads)` against `MultiHeadAttention`'s real count.

    Args:
        fn: takes d_model and num_heads, returns the number of parameters (weights and biases).

    Returns:
        True when it is right for every case, else False (after printing what is wrong).
    """
    for d_model, heads in ((8, 1), (8, 2), (12, 3), (32, 8), (64, 4)):
        expected = sum(p.numel() for p in MultiHeadAttention(d_model, heads).parameters())
        got, error = call(fn, d_model, heads)
        if error:
            return say(False, t("{call}: {error}", call=f"param_count({d_model}, {heads})", error=error))
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = got.item()
        if isinstance(got, bool) or not isinstance(got, (int, float)) or got != expected:
            hint = ""
            if got == 4 * d_model * d_model:
                hint = t(" You counted the four weight matrices; each nn.Linear also has a bias of d_model numbers.")
            elif got == 3 * (d_model * d_model + d_model):
                hint = t(" You counted W_q, W_k and W_v but forgot W_o, the output projection that mixes the heads:"
                         " it has d_model × d_model weights and d_model biases too.")
            elif got == 3 * d_model * d_model:
                hint = t(" You counted three weight matrices and no biases: W_o, the output projection that mixes the"
                         " heads, is missing, and each of the four nn.Linear layers also has a bias of d_model "
                         "numbers.")
            elif isinstance(got, (int, float)) and heads > 1 and got in (4 * (d_model * d_model // heads + d_model),
                                                                         4 * heads * (d_model * d_model + d_model)):
                hint = t(" The count must not change with num_heads: the h heads share one d_model × d_model "
                         "matrix per projection.")
            return say(False, t("{call} returned {got!r}, expected {expected}.{hint}",
                                call=f"param_count({d_model}, {heads})", got=got, expected=expected, hint=hint))
    return say(True, t("4·(d_model² + d_model) parameters, whatever num_heads is."))


def check_head_contribution(fn: Callable[..., torch.Tensor]) -> bool:
    """Check `head_contribution(head_i, W_o_weight, i)`: what head i adds to the output, head_i · W_O[rows of head i].

    Args:
        fn: takes head_i [B, N, d_k], W_o_weight [d_model, d_model] (nn.Linear layout [out, in]) and
            the head index i; returns [B, N, d_model]. Summed over i, plus the bias, it is the output.

    Returns:
        True when it matches the reference for every head, else False (after printing what is wrong).
    """
    gen = torch.Generator().manual_seed(5)
    d_model, heads, batch, n = 12, 3, 2, 5
    d_k = d_model // heads
    mha = MultiHeadAttention(d_model, heads)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) / d_model**0.5)
    x = torch.randn(batch, n, d_model, generator=gen)  # [B, N, d_model]
    with torch.no_grad():
        out, _ = mha(x, x, x)  # [B, N, d_model]
        Q, K, V = (mha.split_heads(lin(x)) for lin in (mha.W_q, mha.W_k, mha.W_v))  # [B, h, N, d_k]
        per_head = torch.softmax(Q @ K.transpose(-2, -1) / d_k**0.5, dim=-1) @ V  # [B, h, N, d_k]
    W = mha.W_o.weight.detach().clone()  # [d_model out, d_model in]
    total = mha.W_o.bias.detach().clone().expand(batch, n, d_model)  # [B, N, d_model]
    for i in range(heads):
        head_i = per_head[:, i].clone()  # [B, N, d_k]
        expected = head_i @ W[:, i * d_k:(i + 1) * d_k].T  # [B, N, d_model]
        got, error = call(fn, head_i, W.clone(), i)
        if error:
            hint = (t(" (head_i is [B, N, d_k={d_k}]: multiply it by the d_k rows of W^O that belong to head {i})",
                      d_k=d_k, i=i) if "shape" in error else "")
            return say(False, t("for head {i} (d_k = {d_k}, d_model = {d_model}): {error}{hint}", i=i, d_k=d_k,
                                d_model=d_model, error=error, hint=hint))
        problem, g = compare(got, expected, atol=1e-5)
        if g is not None:
            if torch.allclose(g, head_i @ W[i * d_k:(i + 1) * d_k, :], atol=1e-5):
                problem = t("you took ROWS of W_o.weight; nn.Linear stores [out, in], so the rows of W^O are the "
                            "COLUMNS of W_o.weight: use W_o_weight[:, i*d_k:(i+1)*d_k].T")
            elif torch.allclose(g, expected + mha.W_o.bias.detach(), atol=1e-5):
                problem = t("you added the bias: it belongs to the sum over heads once, not to every head")
            elif i > 0 and torch.allclose(g, head_i @ W[:, :d_k].T, atol=1e-5):
                problem = t("you used the block of head 0; head {i} owns rows {first}…{last} of W^O", i=i,
                            first=i * d_k, last=(i + 1) * d_k - 1)
        if problem and isinstance(got, torch.Tensor) and got.shape != expected.shape:
            problem += t(" (head_i is [B, N, d_k={d_k}]; it meets only the d_k rows of W^O that belong to head {i})",
                         d_k=d_k, i=i)
        if problem:
            return say(False, t("head {i}: {problem}", i=i, problem=problem))
        total = total + got.detach()
    if not torch.allclose(total, out, atol=1e-5):
        return say(False, t("each head looked right but their sum plus the bias differs from the module's output"))
    return say(True, t("Σ_i head_i · W_O[rows of head i] + bias equals the module's output: the concatenation places "
                       "the heads side by side, W_O adds them."))


def check_relation_mass(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check `relation_mass(weights, targets)`: mean weight each head puts on one target key per query.

    Args:
        fn: takes weights [B, heads, N_q, N_k] and targets [B, N_q] (int64), returns [heads].

    Returns:
        True when it matches the reference on two cases, else False (after printing what is wrong).
    """
    gen = torch.Generator().manual_seed(7)
    for batch, heads, n_q, n_k in ((3, 2, 4, 6), (2, 4, 5, 5)):
        weights = torch.softmax(3 * torch.randn(batch, heads, n_q, n_k, generator=gen), dim=-1)
        targets = torch.randint(0, n_k, (batch, n_q), generator=gen)  # [B, N_q]
        expected = relation_mass(weights, targets)  # [heads]
        got, error = call(fn, weights.clone(), targets.clone())
        shapes = dict(weights=tuple(weights.shape), targets=tuple(targets.shape))
        problem, g = (error, None) if error else compare(got, expected, atol=1e-5)
        if g is not None:
            if torch.allclose(g, expected * n_q * batch, atol=1e-4):
                problem = t("you summed over batch and queries; take the mean so that 1 means 'always on the target'")
        elif problem and not error and isinstance(got, torch.Tensor) and got.numel() == 1:
            problem += t(" (one number for all heads: average over batch and queries only, keep the heads axis)")
        if problem:
            return say(False, t("with weights {weights} and targets {targets}: {problem}", **shapes, problem=problem))
    return say(True, t("weights[b, h, i, targets[b, i]] averaged over b and i, one number per head."))
