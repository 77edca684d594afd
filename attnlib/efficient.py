"""Attention in O(N) memory: exact tiled attention (online softmax) and linear attention (another model).

`tiled_attention` walks over [block_q, block_k] tiles and keeps per query row only the running maximum m,
the denominator ℓ and the unnormalised output; a tile that raises m rescales both by exp(m_old − m_new)
(FlashAttention's trick). `linear_attention` replaces exp(q·k) by φ(q)·φ(k) with φ = elu + 1, so
φ(Q)(φ(K)ᵀ V) never forms the N×N matrix. `attnlib.measure` measures their memory and time.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F

from ._validate import bool_mask, flag, number, positive_int, qkv
from .core import MASK_FILL  # the same fill as attnlib.core: a fully masked row gets uniform weights


def _block_mask(
    mask: Optional[torch.Tensor], causal: bool, batch: tuple[int, ...], i: int, nq: int, j: int, nk: int
) -> Optional[torch.Tensor]:
    """The [B, nq, nk] bool tile of "may attend" for queries i..i+nq and keys j..j+nk, or None if all allowed."""
    allowed = None
    if mask is not None:
        tile = mask if mask.size(-2) == 1 else mask[..., i : i + nq, :]  # [..., nq or 1, N_k or 1]
        tile = tile if tile.size(-1) == 1 else tile[..., j : j + nk]  # [..., nq or 1, nk or 1]
        allowed = tile.expand(*batch, nq, nk).reshape(-1, nq, nk)  # [B, nq, nk] (copies one tile only)
    if causal and j + nk - 1 > i:  # this key block reaches past some query: query r sees keys ≤ r
        rows = torch.arange(i, i + nq).unsqueeze(1)  # [nq, 1]
        cols = torch.arange(j, j + nk).unsqueeze(0)  # [1, nk]
        tri = (cols <= rows).unsqueeze(0)  # [1, nq, nk]
        allowed = tri if allowed is None else allowed & tri  # [B or 1, nq, nk]
    return allowed


def _tiled_forward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: Optional[torch.Tensor], causal: bool,
    batch: tuple[int, ...], scale: float, block_q: int, block_k: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Online-softmax forward pass on flattened inputs q [B, N_q, d], k [B, N_k, d], v [B, N_k, d_v].

    Returns (output [B, N_q, d_v], row maximum m [B, N_q, 1], row denominator ℓ [B, N_q, 1]).
    """
    B, n_q, _ = q.shape
    n_k, d_v = k.size(1), v.size(2)
    out = torch.empty(B, n_q, d_v, dtype=q.dtype)  # [B, N_q, d_v]
    row_max = torch.empty(B, n_q, 1, dtype=q.dtype)  # [B, N_q, 1] kept for the backward pass
    row_sum = torch.empty(B, n_q, 1, dtype=q.dtype)  # [B, N_q, 1]
    tile_buffer = torch.empty(B * min(block_q, n_q) * min(block_k, n_k), dtype=q.dtype)  # one score tile, reused
    acc_buffer = torch.empty(B * min(block_q, n_q) * d_v, dtype=q.dtype)  # one running output, reused
    for i in range(0, n_q, block_q):
        q_blk = q[:, i : i + block_q]  # [B, nq, d]
        nq = q_blk.size(1)
        m = torch.full((B, nq, 1), -math.inf, dtype=q.dtype)  # running row maximum
        denom = torch.zeros(B, nq, 1, dtype=q.dtype)  # running Σ exp(s − m), the ℓ of the online softmax
        acc = acc_buffer[: B * nq * d_v].view(B, nq, d_v).zero_()  # [B, nq, d_v] running Σ exp(s − m) v
        k_end = min(n_k, i + nq) if causal else n_k  # causal: later key blocks are fully masked, skip them
        for j in range(0, k_end, block_k):
            k_blk, v_blk = k[:, j : j + block_k], v[:, j : j + block_k]  # [B, nk, d], [B, nk, d_v]
            nk = k_blk.size(1)
            s = tile_buffer[: B * nq * nk].view(B, nq, nk)  # [B, nq, nk]
            torch.baddbmm(s, q_blk, k_blk.transpose(1, 2), beta=0, alpha=scale, out=s)  # s = scale·q kᵀ
            allowed = _block_mask(mask, causal, batch, i, nq, j, nk)
            if allowed is not None:
                s.masked_fill_(~allowed, MASK_FILL)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # [B, nq, 1]
            p = s.sub_(m_new).exp_()  # [B, nq, nk] exp(s − m_new), in place
            rescale = (m - m_new).exp_()  # [B, nq, 1] exp(m_old − m_new) ≤ 1
            denom.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))  # [B, nq, 1]
            torch.baddbmm(acc.mul_(rescale), p, v_blk, out=acc)  # [B, nq, d_v] acc·rescale + p v, in place
            # (out= rather than acc.baddbmm_: FlopCounterMode counts baddbmm but not its in-place form)
            m = m_new
        out[:, i : i + nq] = acc.div_(denom)  # [B, nq, d_v] normalise once at the end
        row_max[:, i : i + nq], row_sum[:, i : i + nq] = m, denom
    return out, row_max, row_sum


def _tiled_backward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor, row_max: torch.Tensor,
    row_sum: torch.Tensor, grad_out: torch.Tensor, mask: Optional[torch.Tensor], causal: bool,
    batch: tuple[int, ...], scale: float, block_q: int, block_k: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of the tiled forward pass, recomputing each weight tile from the saved row max and sum."""
    n_q, n_k = q.size(1), k.size(1)
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    delta = (grad_out * out).sum(dim=-1, keepdim=True)  # [B, N_q, 1] Σ_c dO·O = Σ_j P_ij dP_ij
    for i in range(0, n_q, block_q):
        q_blk, do_blk = q[:, i : i + block_q], grad_out[:, i : i + block_q]  # [B, nq, d], [B, nq, d_v]
        nq = q_blk.size(1)
        k_end = min(n_k, i + nq) if causal else n_k
        for j in range(0, k_end, block_k):
            k_blk, v_blk = k[:, j : j + block_k], v[:, j : j + block_k]  # [B, nk, d], [B, nk, d_v]
            nk = k_blk.size(1)
            s = torch.bmm(q_blk, k_blk.transpose(1, 2)).mul_(scale)  # [B, nq, nk]
            allowed = _block_mask(mask, causal, batch, i, nq, j, nk)
            if allowed is not None:
                s.masked_fill_(~allowed, MASK_FILL)
            p = s.sub_(row_max[:, i : i + nq]).exp_().div_(row_sum[:, i : i + nq])  # [B, nq, nk] weights
            dv[:, j : j + nk].baddbmm_(p.transpose(1, 2), do_blk)  # [B, nk, d_v]
            ds = p.mul_(torch.bmm(do_blk, v_blk.transpose(1, 2)).sub_(delta[:, i : i + nq]))  # [B, nq, nk] ∂L/∂s
            if allowed is not None:
                ds.masked_fill_(~allowed, 0.0)  # a masked score is a constant: no gradient reaches q or k
            dq[:, i : i + nq].baddbmm_(ds, k_blk, alpha=scale)  # [B, nq, d]
            dk[:, j : j + nk].baddbmm_(ds.transpose(1, 2), q_blk, alpha=scale)  # [B, nk, d]
    return dq, dk, dv


class _TiledAttention(torch.autograd.Function):
    """Autograd wrapper: saves only q, k, v, the output and two numbers per row (all O(N))."""

    @staticmethod
    def forward(ctx, q, k, v, mask, causal, batch, scale, block_q, block_k):  # type: ignore[override]
        out, row_max, row_sum = _tiled_forward(q, k, v, mask, causal, batch, scale, block_q, block_k)
        ctx.save_for_backward(q, k, v, out, row_max, row_sum)
        ctx.settings = (mask, causal, batch, scale, block_q, block_k)
        return out

    @staticmethod
    def backward(ctx, grad_out):  # type: ignore[override]
        q, k, v, out, row_max, row_sum = ctx.saved_tensors
        dq, dk, dv = _tiled_backward(q, k, v, out, row_max, row_sum, grad_out.contiguous(), *ctx.settings)
        return dq, dk, dv, None, None, None, None, None, None


def tiled_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: Optional[torch.Tensor] = None, *,
    causal: bool = False, scale: Optional[float] = None, block_q: int = 1024, block_k: int = 1024,
) -> tuple[torch.Tensor, None]:
    """Exact softmax(Q Kᵀ · scale) V, tile by tile with an online softmax: O(N) extra memory, differentiable.

    Args:
        query: [..., N_q, d_k]. key: [..., N_k, d_k]. value: [..., N_k, d_v]; leading dims broadcast.
        mask: bool or 0/1 broadcastable to [..., N_q, N_k], True/1 = may attend (filled with -1e9, as in core).
        causal: query i sees keys 0..i only (key blocks above the diagonal are skipped); and-ed with mask.
        scale: multiplies the scores; None means 1/sqrt(d_k).
        block_q, block_k: the tile; 1024 × 1024 by default (4 MB in float32).

    Returns:
        (output [..., N_q, d_v], None): there is no weight matrix, that is the point.
    """
    batch = qkv(query, key, value, floating=True)  # broadcast leading shape
    block_q = positive_int("block_q", block_q)
    block_k = positive_int("block_k", block_k)
    flag("causal", causal)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else number("scale", scale)
    n_q, n_k = query.size(-2), key.size(-2)
    if mask is not None:
        mask = bool_mask(mask, (*batch, n_q, n_k))
        mask = mask.reshape((1,) * (2 - mask.dim()) + tuple(mask.shape))  # [..., N_q or 1, N_k or 1]: rank ≥ 2
    q = query.expand(*batch, n_q, query.size(-1)).reshape(-1, n_q, query.size(-1))  # [B, N_q, d_k]
    k = key.expand(*batch, n_k, key.size(-1)).reshape(-1, n_k, key.size(-1))  # [B, N_k, d_k]
    v = value.expand(*batch, n_k, value.size(-1)).reshape(-1, n_k, value.size(-1))  # [B, N_k, d_v]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    if n_q == 0:
        return value.new_zeros(*batch, 0, value.size(-1)), None
    out = _TiledAttention.apply(q, k, v, mask, causal, batch, scale, block_q, block_k)  # [B, N_q, d_v]
    return out.reshape(*batch, n_q, value.size(-1)), None  # [..., N_q, d_v]


def elu_feature_map(x: torch.Tensor) -> torch.Tensor:
    """φ(x) = elu(x) + 1, the positive feature map of Katharopoulos et al. (2020).

    Args:
        x: any floating tensor.

    Returns:
        φ(x), same shape. Positive in exact arithmetic, but (exp(x) − 1) + 1 rounds to 0 below x ≈ −17 in
        float32 (−37 in float64; where exactly depends on the CPU kernel), long before exp(x) underflows.
    """
    return F.elu(x) + 1.0


def linear_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *, eps: float = 1e-6
) -> tuple[torch.Tensor, None]:
    """φ(Q)(φ(K)ᵀ V) / (φ(Q) φ(K)ᵀ 1 + eps) with φ = elu + 1: O(N) memory, a different model from softmax.

    Args:
        query: [..., N_q, d_k]. key: [..., N_k, d_k]. value: [..., N_k, d_v]; leading dims broadcast.
        eps: added to the normaliser, ≥ 0.

    Returns:
        (output [..., N_q, d_v], None). No mask: the causal form needs prefix sums (notebook 07's exercise).
    """
    qkv(query, key, value, floating=True)
    eps = number("eps", eps, minimum=0)
    phi_q = elu_feature_map(query)  # [..., N_q, d_k]
    phi_k = elu_feature_map(key)  # [..., N_k, d_k]
    kv = phi_k.transpose(-2, -1) @ value  # [..., d_k, d_v]  Σ_j φ(k_j) v_jᵀ
    z = phi_k.sum(dim=-2, keepdim=True).transpose(-2, -1)  # [..., d_k, 1]  Σ_j φ(k_j)
    numerator = phi_q @ kv  # [..., N_q, d_v]
    denominator = phi_q @ z + eps  # [..., N_q, 1]
    return numerator / denominator, None  # [..., N_q, d_v]
