"""The article's MultiHeadAttention module (section 6), written our own way."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from .core import scaled_dot_product_attention


class MultiHeadAttention(nn.Module):
    """Concat(head_1..head_h) W_o with head_i = Attention(Q W_q^i, K W_k^i, V W_v^i).

    Submodules are named `W_q`, `W_k`, `W_v`, `W_o` (nn.Linear with bias), so a state_dict
    loads into the article's class and back.
    """

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        for name, value in (("d_model", d_model), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
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
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(
                f"{name} must have shape [batch, seq, d_model={self.d_model}], got {tuple(x.shape)}"
            )

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """[batch, seq, d_model] -> [batch, heads, seq, d_k]."""
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.num_heads, self.d_k).transpose(1, 2)  # [batch, heads, seq, d_k]

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """[batch, heads, seq, d_k] -> [batch, seq, d_model] (the Concat of the heads)."""
        batch, _, seq, _ = x.shape
        return x.transpose(1, 2).contiguous().view(batch, seq, self.d_model)  # [batch, seq, d_model]

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
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
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"key and value must share [batch, N_k]: key {tuple(key.shape)}, value {tuple(value.shape)}")
        if query.size(0) != key.size(0):
            raise ValueError(f"query and key must share the batch size: query {tuple(query.shape)}, key {tuple(key.shape)}")
        Q = self.split_heads(self.W_q(query))  # [B, h, N_q, d_k]
        K = self.split_heads(self.W_k(key))  # [B, h, N_k, d_k]
        V = self.split_heads(self.W_v(value))  # [B, h, N_k, d_k]
        heads, attn_weights = scaled_dot_product_attention(Q, K, V, mask)  # [B, h, N_q, d_k], [B, h, N_q, N_k]
        output = self.W_o(self.merge_heads(heads))  # [B, N_q, d_model]
        return output, attn_weights


# ---- 05: a tiny trained attention model ----


class TinyAttentionModel(nn.Module):
    """Token + position embeddings -> one MultiHeadAttention (no self-attention) -> linear classifier.

    The smallest model that has to route information between positions: its only way to see
    another token is through the attention weights, which `forward` also returns.
    """

    def __init__(self, vocab_size: int, seq_len: int, d_model: int, num_heads: int, num_classes: int):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("seq_len", seq_len), ("num_classes", num_classes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.seq_len = seq_len
        self.token_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)  # checks d_model % num_heads
        self.readout = nn.Linear(d_model, num_classes)
        self.register_buffer("mask", ~torch.eye(seq_len, dtype=torch.bool), persistent=False)  # [N, N]

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Class scores for every position.

        Args:
            tokens: [B, N] int64 token ids, N = seq_len.

        Returns:
            (logits [B, N, num_classes], attention weights [B, heads, N, N]).
        """
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.size(1) != self.seq_len:
            raise ValueError(f"tokens must be [batch, seq_len={self.seq_len}] token ids, got {getattr(tokens, 'shape', type(tokens))}")
        x = self.token_emb(tokens) + self.pos_emb.weight  # [B, N, d_model]
        y, weights = self.attn(x, x, x, self.mask)  # [B, N, d_model], [B, h, N, N]
        return self.readout(y), weights  # [B, N, num_classes], [B, h, N, N]


def train_tiny_model(
    model: TinyAttentionModel,
    tokens: torch.Tensor,
    labels: torch.Tensor,
    *,
    batch_size: int = 128,
    lr: float = 3e-3,
    seed: int = 0,
) -> list[float]:
    """One pass of Adam over (tokens, labels) in order, on one CPU thread (fast, and repeatable on one machine).

    Another CPU rounds float32 sums in another order, and training amplifies it: notebook 05 §7 measured
    trained parameters up to 0.03 apart, so only coarse results of a training are the same on every CPU.

    Args:
        model: the model to train in place. tokens, labels: [M, N] int64; M // batch_size steps.
        batch_size: sequences per step. lr: Adam learning rate. seed: seeds torch before training.

    Returns:
        The cross-entropy loss of every step (floats).
    """
    if tokens.shape != labels.shape or tokens.dim() != 2 or tokens.size(0) < batch_size:
        raise ValueError(f"tokens and labels must both be [M ≥ batch_size={batch_size}, N], "
                         f"got {tuple(tokens.shape)} and {tuple(labels.shape)}")
    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: a second thread only adds waiting, and changes rounding
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    try:
        for start in range(0, tokens.size(0) - batch_size + 1, batch_size):
            logits, _ = model(tokens[start:start + batch_size])  # [b, N, classes]
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels[start:start + batch_size].flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    finally:
        torch.set_num_threads(threads)
        model.eval()
    return losses


def relation_mass(weights: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean attention each head puts on one target key per query (1 = always exactly there).

    Args:
        weights: [B, heads, N_q, N_k] attention weights. targets: [B, N_q] the target key of each query.

    Returns:
        [heads]: the mass on the targets, averaged over batch and queries.
    """
    if weights.dim() != 4 or targets.shape != (weights.size(0), weights.size(2)):
        raise ValueError(f"weights must be [B, heads, N_q, N_k] and targets [B, N_q]: got weights "
                         f"{tuple(weights.shape)}, targets {tuple(targets.shape)}")
    idx = targets[:, None, :, None].expand(-1, weights.size(1), -1, 1)  # [B, heads, N_q, 1]
    return weights.gather(3, idx).squeeze(3).mean(dim=(0, 2))  # [heads]
