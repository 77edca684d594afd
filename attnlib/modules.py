"""The article's MultiHeadAttention module (section 6), written our own way."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from ._validate import positive_int, tensor
from .core import scaled_dot_product_attention


class MultiHeadAttention(nn.Module):
    """Concat(head_1..head_h) W_o with head_i = Attention(Q W_q^i, K W_k^i, V W_v^i).

    Submodules `W_q`, `W_k`, `W_v`, `W_o` (nn.Linear with bias): a state_dict loads into the article's class.
    """

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        positive_int("d_model", d_model)
        positive_int("num_heads", num_heads)
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model must be divisible by num_heads: got d_model={d_model}, num_heads={num_heads} "
                f"(d_k = d_model / num_heads must be a whole number)"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _check_input(self, name: str, x: torch.Tensor) -> None:
        """Raise unless `x` is [batch, seq, d_model]."""
        tensor(name, x, 0, f"[batch, seq, d_model={self.d_model}]")
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(f"{name} must have shape [batch, seq, d_model={self.d_model}], got {tuple(x.shape)}")

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """[batch, seq, d_model] -> [batch, heads, seq, d_k]."""
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.num_heads, self.d_k).transpose(1, 2)  # [batch, heads, seq, d_k]

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """[batch, heads, seq, d_k] -> [batch, seq, d_model] (the Concat of the heads)."""
        batch, _, seq, _ = x.shape
        return x.transpose(1, 2).contiguous().view(batch, seq, self.d_model)  # [batch, seq, d_model]

    def forward(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: Optional[torch.Tensor] = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Multi-head attention of `query` over `key`/`value`.

        Args:
            query: [B, N_q, d_model]. key, value: [B, N_k, d_model].
            mask: bool or 0/1 broadcastable to [B, h, N_q, N_k]; True/1 = may attend.

        Returns:
            (output [B, N_q, d_model], attn_weights [B, h, N_q, N_k]).
        """
        self._check_input("query", query)
        self._check_input("key", key)
        self._check_input("value", value)
        shapes = f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"key and value must share [batch, N_k]: {shapes}")
        if query.size(0) != key.size(0):
            raise ValueError(f"query and key must share the batch size: {shapes}")
        Q = self.split_heads(self.W_q(query))  # [B, h, N_q, d_k]
        K = self.split_heads(self.W_k(key))  # [B, h, N_k, d_k]
        V = self.split_heads(self.W_v(value))  # [B, h, N_k, d_k]
        heads, attn_weights = scaled_dot_product_attention(Q, K, V, mask)  # [B, h, N_q, d_k], [B, h, N_q, N_k]
        output = self.W_o(self.merge_heads(heads))  # [B, N_q, d_model]
        return output, attn_weights
