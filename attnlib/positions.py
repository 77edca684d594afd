"""Position signals: sinusoidal embeddings (added to the tokens) and rotary ones (RoPE, applied to q and k)."""
from __future__ import annotations

from typing import Optional

import torch

from ._validate import number, positive_int, tensor


def frequencies(d: int, base: float = 10000.0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The d/2 angular frequencies ω_i = base^(−2i/d), i = 0 .. d/2 − 1, shared by both encodings.

    Args:
        d: the even width of the vectors that carry the positions. base: 10000 in both papers.

    Returns:
        [d/2] from 1 down to base^(−(d−2)/d).
    """
    if positive_int("d", d) % 2:
        raise ValueError(f"d must be even (the encodings work on pairs of dimensions), got d={d}")
    number("base", base, minimum=1.0)
    return base ** (-torch.arange(0, d, 2, dtype=dtype) / d)  # [d/2]


def sinusoidal(n: int, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Vaswani et al.'s absolute encoding: P[pos, 2i] = sin(pos·ω_i), P[pos, 2i+1] = cos(pos·ω_i).

    Args:
        n: number of positions 0 .. n − 1. d: even width. base: 10000 in the paper.

    Returns:
        [n, d], added to the token embeddings before the first layer.
    """
    angles = torch.arange(positive_int("n", n), dtype=dtype)[:, None] * frequencies(d, base, dtype)  # [n, d/2]
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(n, d)  # [n, d], sin and cos interleaved


def rope(x: torch.Tensor, positions: Optional[torch.Tensor] = None, base: float = 10000.0) -> torch.Tensor:
    """Rotary embedding (Su et al.): rotate each pair (x[2i], x[2i+1]) of the token at position p by angle p·ω_i.

    Args:
        x: [..., seq, d] queries or keys, d even. positions: [seq] integer positions (default 0 .. seq − 1).
        base: 10000 in the paper.

    Returns:
        [..., seq, d] rotated: rope(q, m)·rope(k, n) depends on m − n only.
    """
    tensor("x", x, 2, "[..., seq, d]")
    seq, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(seq)
    if not isinstance(positions, torch.Tensor) or positions.shape != (seq,):
        got = tuple(positions.shape) if isinstance(positions, torch.Tensor) else type(positions).__name__
        raise ValueError(f"positions must be a tensor of shape [seq={seq}], got {got}")
    angles = positions.to(x.dtype)[:, None] * frequencies(d, base, x.dtype)  # [seq, d/2]
    cos, sin = angles.cos(), angles.sin()  # [seq, d/2] each
    even, odd = x[..., 0::2], x[..., 1::2]  # [..., seq, d/2] each: the two coordinates of every pair
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)  # [..., seq, d/2, 2]
    return rotated.flatten(-2)  # [..., seq, d], pairs interleaved again
