"""Scaled dot-product attention and softmax diagnostics (article sections 3.1-3.4)."""
from __future__ import annotations

import math
from typing import Optional, Sequence

import torch

MASK_FILL = -1e9  # the article's fill value for masked scores: exp(-1e9) underflows to exactly 0


def _require_tensor(name: str, x: object, min_dims: int) -> torch.Tensor:
    """Raise a clear error unless `x` is a tensor with at least `min_dims` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() < min_dims:
        raise ValueError(
            f"{name} must have at least {min_dims} dimensions [..., seq, features], "
            f"got shape {tuple(x.shape)}"
        )
    return x


def check_mask(mask: torch.Tensor, scores_shape: Sequence[int], name: str = "mask") -> torch.Tensor:
    """Return `mask` as bool (True = may attend) after checking it broadcasts and holds only 0/1."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of bool or 0/1 values, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        if not bool(((mask == 0) | (mask == 1)).all()):
            bad = mask[(mask != 0) & (mask != 1)].flatten()[:3].tolist()
            raise ValueError(f"{name} must hold only bool or 0/1 values (1 = may attend), found {bad}")
        mask = mask != 0
    try:
        shape = torch.broadcast_shapes(mask.shape, tuple(scores_shape))
    except RuntimeError:
        shape = None
    if shape != torch.Size(scores_shape):
        raise ValueError(
            f"{name} of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
            f"{tuple(scores_shape)} [..., N_q, N_k]"
        )
    return mask


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: Optional[torch.Tensor] = None,
    *,
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
    _require_tensor("query", query, 2)
    _require_tensor("key", key, 2)
    _require_tensor("value", value, 2)
    if query.size(-1) != key.size(-1):
        raise ValueError(
            f"query and key must share d_k (last dimension): query {tuple(query.shape)}, key {tuple(key.shape)}"
        )
    if key.size(-2) != value.size(-2):
        raise ValueError(
            f"key and value must share N_k (second-to-last dimension): key {tuple(key.shape)}, value {tuple(value.shape)}"
        )
    d_k = query.size(-1)
    if scale is None:
        scale = 1.0 / math.sqrt(d_k)
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale  # [..., N_q, N_k]
    if mask is not None:
        allowed = check_mask(mask, scores.shape)  # broadcasts to [..., N_q, N_k]
        scores = scores.masked_fill(~allowed, MASK_FILL)  # [..., N_q, N_k]
    weights = torch.softmax(scores, dim=-1)  # [..., N_q, N_k], rows sum to 1
    output = torch.matmul(weights, value)  # [..., N_q, d_v]
    return output, weights


def _require_probabilities(weights: torch.Tensor) -> torch.Tensor:
    """Check `weights` is a tensor whose last dimension holds a distribution."""
    _require_tensor("weights", weights, 1)
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
    d_k_values: Sequence[int],
    *,
    scaled: bool,
    n_keys: int = 16,
    n_queries: int = 512,
    seed: int = 0,
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
    if n_keys < 1 or n_queries < 1:
        raise ValueError(f"n_keys and n_queries must be ≥ 1, got n_keys={n_keys}, n_queries={n_queries}")
    out: dict[str, list[float]] = {k: [] for k in ("d_k", "entropy", "max_weight", "jacobian_norm", "score_var")}
    gen = torch.Generator().manual_seed(seed)
    for d_k in d_k_values:
        if int(d_k) < 1:
            raise ValueError(f"d_k_values must all be ≥ 1, got {d_k}")
        q = torch.randn(n_queries, 1, int(d_k), generator=gen, dtype=torch.float64)  # [rows, 1, d_k]
        k = torch.randn(n_queries, n_keys, int(d_k), generator=gen, dtype=torch.float64)  # [rows, N, d_k]
        scores = (q @ k.transpose(-2, -1)).squeeze(1)  # [rows, N]
        if scaled:
            scores = scores / math.sqrt(d_k)  # [rows, N]
        s = torch.softmax(scores, dim=-1)  # [rows, N]
        out["d_k"].append(int(d_k))
        out["entropy"].append(float(softmax_entropy(s).mean()))
        out["max_weight"].append(float(max_weight(s).mean()))
        out["jacobian_norm"].append(float(jacobian_norm(s).mean()))
        out["score_var"].append(float(scores.var()))
    return out
