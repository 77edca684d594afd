"""Notebook 05's tiny trained model: one multi-head attention layer that must route between positions."""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from ._validate import number, positive_int, tensor
from .measure import single_thread
from .modules import MultiHeadAttention


class TinyAttentionModel(nn.Module):
    """Token + position embeddings -> one MultiHeadAttention (no self-attention) -> linear classifier.

    The smallest model that must route between positions: it sees other tokens only through attention.
    """

    def __init__(self, vocab_size: int, seq_len: int, d_model: int, num_heads: int, num_classes: int):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("seq_len", seq_len), ("num_classes", num_classes)):
            positive_int(name, value)
        self.seq_len = seq_len
        self.token_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)  # checks d_model, num_heads, d_model % num_heads
        self.readout = nn.Linear(d_model, num_classes)
        self.register_buffer("mask", ~torch.eye(seq_len, dtype=torch.bool), persistent=False)  # [N, N]

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Class scores for every position.

        Args:
            tokens: [B, N] int64 token ids, N = seq_len.

        Returns:
            (logits [B, N, num_classes], attention weights [B, heads, N, N]).
        """
        if tensor("tokens", tokens, 0, "of token ids").dim() != 2 or tokens.size(1) != self.seq_len:
            raise ValueError(f"tokens must be [batch, seq_len={self.seq_len}] token ids, got {tuple(tokens.shape)}")
        x = self.token_emb(tokens) + self.pos_emb.weight  # [B, N, d_model]
        y, weights = self.attn(x, x, x, self.mask)  # [B, N, d_model], [B, h, N, N]
        return self.readout(y), weights  # [B, N, num_classes], [B, h, N, N]


def train_tiny_model(
    model: TinyAttentionModel, tokens: torch.Tensor, labels: torch.Tensor, *,
    batch_size: int = 128, lr: float = 3e-3, seed: int = 0, on_step: Callable[[int], None] = lambda step: None,
) -> list[float]:
    """One pass of Adam over (tokens, labels) in order, on one CPU thread (fast, and repeatable on one machine).

    Another CPU rounds float32 sums in another order, and training amplifies it: only coarse results of a
    training are the same on every CPU (notebook 05 asserts them with tolerances measured across CPUs).

    Args:
        model: the model to train in place. tokens, labels: [M, N] int64; M // batch_size steps.
        batch_size: sequences per step. lr: Adam learning rate. seed: seeds torch before training.
        on_step: called with the step's index after every step (to log the model while it trains).

    Returns:
        The cross-entropy loss of every step (floats).
    """
    batch_size = positive_int("batch_size", batch_size)
    tensor("tokens", tokens, 2, "[M, N]")
    tensor("labels", labels, 2, "[M, N]")
    if tokens.shape != labels.shape or tokens.dim() != 2 or tokens.size(0) < batch_size:
        raise ValueError(f"tokens and labels must both be [M ≥ batch_size={batch_size}, N], "
                         f"got {tuple(tokens.shape)} and {tuple(labels.shape)}")
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=number("lr", lr, minimum=0))
    losses = []
    model.train()
    try:
        with single_thread():  # tiny matrices: a second thread only adds waiting, and changes rounding
            for start in range(0, tokens.size(0) - batch_size + 1, batch_size):
                logits, _ = model(tokens[start:start + batch_size])  # [b, N, classes]
                loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels[start:start + batch_size].flatten())
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
                on_step(len(losses) - 1)  # the index of the step just taken (does nothing unless logging)
    finally:
        model.eval()
    return losses


def relation_mass(weights: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean attention each head puts on one target key per query (1 = always exactly there).

    Args:
        weights: [B, heads, N_q, N_k] attention weights. targets: [B, N_q] the target key of each query.

    Returns:
        [heads]: the mass on the targets, averaged over batch and queries.
    """
    tensor("weights", weights, 4, "[B, heads, N_q, N_k]")
    tensor("targets", targets, 1, "[B, N_q]")
    if weights.dim() != 4 or targets.shape != (weights.size(0), weights.size(2)):
        raise ValueError(f"weights must be [B, heads, N_q, N_k] and targets [B, N_q]: got weights "
                         f"{tuple(weights.shape)}, targets {tuple(targets.shape)}")
    idx = targets[:, None, :, None].expand(-1, weights.size(1), -1, 1)  # [B, heads, N_q, 1]
    return weights.gather(3, idx).squeeze(3).mean(dim=(0, 2))  # [heads]
