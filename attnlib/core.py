"""Scaled dot-product attention and softmax diagnostics (article sections 3.1-3.4)."""
from __future__ import annotations

import math
from typing import Optional, Sequence

import torch

from ._validate import bool_mask, positive_int, qkv, tensor

check_mask = bool_mask  # public: al.check_mask(mask, scores_shape) -> the mask as bool, or a ValueError
MASK_FILL = -1e9  # the article's fill value for masked scores: exp(-1e9) underflows to exactly 0


def scaled_dot_product_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: Optional[torch.Tensor] = None, *,
    scale: Optional[float] = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention(Q, K, V) = softmax(Q Kᵀ · scale) V, masked scores filled with -1e9.

    Args:
        query: [..., N_q, d_k]. key: [..., N_k, d_k]. value: [..., N_k, d_v].
        mask: bool or 0/1, broadcastable to [..., N_q, N_k]; True/1 means "may attend".
        scale: multiplies the scores; None means 1/sqrt(d_k), 1.0 turns scaling off.

    Returns:
        (output [..., N_q, d_v], weights [..., N_q, N_k]); a fully masked row gets uniform weights.
    """
    qkv(query, key, value)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))  # 1/√d_k
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale  # [..., N_q, N_k]
    if mask is not None:
        allowed = bool_mask(mask, scores.shape)  # broadcasts to [..., N_q, N_k]
        scores = scores.masked_fill(~allowed, MASK_FILL)  # [..., N_q, N_k]
    weights = torch.softmax(scores, dim=-1)  # [..., N_q, N_k], rows sum to 1
    output = torch.matmul(weights, value)  # [..., N_q, d_v]
    return output, weights


def _require_probabilities(weights: torch.Tensor) -> torch.Tensor:
    """Check `weights` is a tensor whose last dimension holds a distribution."""
    tensor("weights", weights, 1, "[..., N]")
    if weights.size(-1) == 0:
        raise ValueError(f"weights must have at least one entry per row, got shape {tuple(weights.shape)}")
    return weights


def softmax_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each row, -Σ s log s with 0·log 0 = 0.

    Args:
        weights: [..., N] rows of a softmax.

    Returns:
        [...] entropy per row: log N for uniform, 0 for one-hot.
    """
    _require_probabilities(weights)
    logs = torch.log(weights.clamp_min(torch.finfo(weights.dtype).tiny))  # [..., N]
    return -(weights * logs).sum(-1)  # [...]


def max_weight(weights: torch.Tensor) -> torch.Tensor:
    """Largest weight of each row: 1/N for uniform, 1 for one-hot.

    Args:
        weights: [..., N].

    Returns:
        [...] the row maxima.
    """
    _require_probabilities(weights)
    return weights.max(dim=-1).values  # [...]


def softmax_jacobian(weights: torch.Tensor) -> torch.Tensor:
    """Jacobian ∂s/∂z = diag(s) − s sᵀ of the softmax at each row s.

    Args:
        weights: [..., N] softmax outputs s.

    Returns:
        [..., N, N] one symmetric Jacobian per row.
    """
    _require_probabilities(weights)
    diag = torch.diag_embed(weights)  # [..., N, N]
    outer = weights.unsqueeze(-1) * weights.unsqueeze(-2)  # [..., N, N]
    return diag - outer  # [..., N, N]


def jacobian_norm(weights: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of the softmax Jacobian of each row: 0 exactly when the row is one-hot.

    Args:
        weights: [..., N].

    Returns:
        [...] ‖diag(s) − s sᵀ‖_F per row.
    """
    return torch.linalg.matrix_norm(softmax_jacobian(weights), ord="fro")  # [...]


def saturation_curve(
    d_k_values: Sequence[int], *, scaled: bool, n_keys: int = 16, n_queries: int = 512, seed: int = 0
) -> dict[str, list[float]]:
    """Mean entropy, max weight and Jacobian norm of attention rows as d_k grows.

    Queries and keys have independent N(0, 1) components, the article's assumption in 3.2.

    Args:
        d_k_values: the key widths to try, each ≥ 1.
        scaled: divide the scores by sqrt(d_k) when True.
        n_keys: keys per row (N); n_queries: rows averaged per point; seed: the random seed.

    Returns:
        {"d_k", "entropy", "max_weight", "jacobian_norm", "score_var"}: one value per d_k.
    """
    n_keys, n_queries = positive_int("n_keys", n_keys), positive_int("n_queries", n_queries)
    out: dict[str, list[float]] = {k: [] for k in ("d_k", "entropy", "max_weight", "jacobian_norm", "score_var")}
    gen = torch.Generator().manual_seed(seed)
    for i, d_k in enumerate(d_k_values):
        d_k = positive_int(f"d_k_values[{i}]", d_k)
        q = torch.randn(n_queries, 1, d_k, generator=gen, dtype=torch.float64)  # [rows, 1, d_k]
        k = torch.randn(n_queries, n_keys, d_k, generator=gen, dtype=torch.float64)  # [rows, N, d_k]
        scores = (q @ k.transpose(-2, -1)).squeeze(1)  # [rows, N]
        if scaled:
            scores = scores / math.sqrt(d_k)  # [rows, N]
        s = torch.softmax(scores, dim=-1)  # [rows, N]
        out["d_k"].append(d_k)
        out["entropy"].append(float(softmax_entropy(s).mean()))
        out["max_weight"].append(float(max_weight(s).mean()))
        out["jacobian_norm"].append(float(jacobian_norm(s).mean()))
        out["score_var"].append(float(scores.var()))
    return out
