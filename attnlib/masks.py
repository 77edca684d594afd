"""Attention masks, all bool with one convention: True = may attend. Combine them with `&`."""
from __future__ import annotations

from typing import Sequence, Union

import torch

from ._validate import integer, positive_int


def causal_mask(n: int) -> torch.Tensor:
    """Query i may attend to keys 0..i (no peeking at the future).

    Args:
        n: sequence length, ≥ 1.

    Returns:
        [n, n] bool, lower-triangular True.
    """
    n = positive_int("n", n)
    return torch.ones(n, n, dtype=torch.bool).tril()  # [n, n]


def padding_mask(lengths: Union[Sequence[int], torch.Tensor], n: int) -> torch.Tensor:
    """Each sequence b may attend only to its first lengths[b] keys; the rest is padding.

    Args:
        lengths: B real lengths, each in 0..n.
        n: padded sequence length, ≥ 1.

    Returns:
        [B, 1, 1, n] bool, broadcasting over heads and queries.
    """
    n = positive_int("n", n)
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or lengths.numel() == 0 or lengths.is_floating_point():
        raise ValueError(f"lengths must be a non-empty 1-D sequence of integers, got shape {tuple(lengths.shape)}")
    if bool((lengths < 0).any()) or bool((lengths > n).any()):
        raise ValueError(f"lengths must each lie in 0..n={n}, got {lengths.tolist()}")
    positions = torch.arange(n)  # [n]
    keep = positions.unsqueeze(0) < lengths.unsqueeze(1)  # [B, n]
    return keep[:, None, None, :]  # [B, 1, 1, n]


def window_mask(n: int, window: int) -> torch.Tensor:
    """Query i may attend to keys j with |i − j| ≤ window (a sliding window).

    Args:
        n: sequence length, ≥ 1.
        window: how far each side a query sees, ≥ 0; 0 keeps only the diagonal.

    Returns:
        [n, n] bool band matrix. `causal_mask(n) & window_mask(n, w)` looks back w steps only.
    """
    n = positive_int("n", n)
    window = integer("window", window, minimum=0)
    i = torch.arange(n).unsqueeze(1)  # [n, 1]
    j = torch.arange(n).unsqueeze(0)  # [1, n]
    return (i - j).abs() <= window  # [n, n]
