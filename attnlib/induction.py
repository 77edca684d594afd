"""Induction heads (notebook 08): repeated-block data, a small attention-only model, its scores and ablation."""
from __future__ import annotations

import copy

import torch
from torch import nn

from ._validate import integer, positive_int, tensor
from .masks import causal_mask
from .modules import MultiHeadAttention
from .tiny import TinyAttentionModel, train_tiny_model


def repeated_blocks(num_seqs: int, seq_len: int = 32, vocab_size: int = 32, lengths: tuple[int, int] = (6, 15),
                    seed: int = 0) -> dict[str, torch.Tensor]:
    """Sequences that repeat a block of random tokens, its length drawn per sequence from `lengths`.

    Returns: {"tokens": [M, N] inputs, "targets": [M, N] the next tokens, "lengths": [M] block lengths}.
    """
    num_seqs, seq_len = positive_int("num_seqs", num_seqs), positive_int("seq_len", seq_len)
    lo, hi = (integer("lengths", v, minimum=1) for v in lengths)
    if lo > hi:
        raise ValueError(f"lengths must be (shortest, longest) with shortest <= longest, got {lengths}")
    gen = torch.Generator().manual_seed(seed)
    blocks = torch.randint(vocab_size, (num_seqs, hi), generator=gen)  # [M, hi]: random tokens
    block_len = torch.randint(lo, hi + 1, (num_seqs,), generator=gen)  # [M]
    pos = torch.arange(seq_len + 1)  # [N + 1]
    seqs = blocks.gather(1, pos[None] % block_len[:, None])  # [M, N + 1]: block, block, block, ...
    return {"tokens": seqs[:, :-1], "targets": seqs[:, 1:], "lengths": block_len}  # [M, N], [M, N], [M]


class AttentionOnly(TinyAttentionModel):
    """Notebook 05's embeddings and readout around `num_layers` causal attention layers, each added to its input."""

    def __init__(self, vocab_size: int = 32, seq_len: int = 32, d_model: int = 32, num_heads: int = 2,
                 num_layers: int = 2):
        super().__init__(vocab_size, seq_len, d_model, num_heads, num_classes=vocab_size)  # the next token's scores
        positive_int("num_layers", num_layers)
        del self.attn  # 05's one layer: replaced by the stack
        self.layers = nn.ModuleList(MultiHeadAttention(d_model, num_heads) for _ in range(num_layers))
        self.mask = causal_mask(seq_len)  # [N, N]: the buffer of 05's model, now causal

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(next-token logits [B, N, vocab], attention weights [B, layers, heads, N, N]) for tokens [B, N]."""
        if tensor("tokens", tokens, 0, "of token ids").dim() != 2 or tokens.size(1) != self.seq_len:
            raise ValueError(f"tokens must be [batch, seq_len={self.seq_len}] token ids, got {tuple(tokens.shape)}")
        x = self.token_emb(tokens) + self.pos_emb.weight  # [B, N, d_model]: the residual stream
        weights = []
        for attn in self.layers:
            y, w = attn(x, x, x, self.mask)  # [B, N, d_model], [B, h, N, N]
            x = x + y  # [B, N, d_model]
            weights.append(w)
        return self.readout(x), torch.stack(weights, dim=1)  # [B, N, vocab], [B, layers, h, N, N]


def prefix_matching(weights: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Mean attention from a repeated token to the tokens right after its earlier copies, per layer and head.

    Args: weights: [B, layers, heads, N, N] on `repeated_blocks` sequences. lengths: [B] their block lengths.
    Returns: [layers, heads], averaged over the queries that repeat an earlier token (position >= block length).
    """
    tensor("weights", weights, 5, "[B, layers, heads, N, N]")
    if tensor("lengths", lengths, 1, "[B]").shape != (weights.size(0),):
        raise ValueError(f"lengths must be [B={weights.size(0)}] block lengths, got {tuple(lengths.shape)}")
    n, L = weights.size(-1), lengths[:, None, None]  # L: [B, 1, 1]
    q, k = torch.arange(n)[:, None], torch.arange(n)[None]  # [N, 1], [1, N]
    after = (k >= 1) & (k <= q) & ((q + 1 - k) % L == 0)  # [B, N_q, N_k]: key k - 1 is an earlier copy of query q
    rows = (q >= L).squeeze(-1).float()  # [B, N_q]: queries inside a repeat
    mass = (weights * after[:, None, None]).sum(-1)  # [B, layers, heads, N_q]
    return (mass * rows[:, None, None]).sum(dim=(0, 3)) / rows.sum()  # [layers, heads]


def previous_token(weights: torch.Tensor) -> torch.Tensor:
    """Mean attention from each token to the token just before it, per layer and head: [layers, heads]."""
    tensor("weights", weights, 5, "[B, layers, heads, N, N]")
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 3))  # [layers, heads]


def position_losses(model: AttentionOnly, data: dict[str, torch.Tensor]) -> torch.Tensor:
    """Cross-entropy of the next token at every position, averaged over the sequences: [N]."""
    with torch.no_grad():
        logits, _ = model(data["tokens"])  # [B, N, vocab]
        loss = nn.functional.cross_entropy(logits.transpose(1, 2), data["targets"], reduction="none")  # [B, N]
    return loss.mean(0)  # [N]


def scores(model: AttentionOnly, data: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Copy loss, in-context-learning score, prefix-matching and previous-token scores on held-out `data`."""
    with torch.no_grad():
        logits, w = model(data["tokens"])  # [B, N, vocab], [B, layers, h, N, N]
        loss = nn.functional.cross_entropy(logits.transpose(1, 2), data["targets"], reduction="none")  # [B, N]
    copy = torch.arange(1, loss.size(1) + 1) >= data["lengths"][:, None]  # [B, N]: the target repeats a token
    by_pos = loss.mean(0)  # [N]
    return {"copy_loss": loss[copy].mean(), "in_context": by_pos[-5:].mean() - by_pos[:5].mean(),
            "prefix": prefix_matching(w, data["lengths"]), "previous": previous_token(w)}


def ablated(model: AttentionOnly, layer: int, head: int) -> AttentionOnly:
    """A copy of `model` whose head `head` of layer `layer` outputs zeros (its value projection set to 0)."""
    layer = integer("layer", layer, minimum=0, maximum=len(model.layers) - 1)
    attn = model.layers[layer]
    head = integer("head", head, minimum=0, maximum=attn.num_heads - 1)
    out = copy.deepcopy(model)
    rows = slice(head * attn.d_k, (head + 1) * attn.d_k)  # the head's output features of W_v
    with torch.no_grad():
        out.layers[layer].W_v.weight[rows] = 0  # [d_k, d_model]
        out.layers[layer].W_v.bias[rows] = 0  # [d_k]
    return out


def train_induction(model: AttentionOnly, data: dict[str, torch.Tensor], probe: dict[str, torch.Tensor], *,
                    batch_size: int = 64, lr: float = 3e-3, seed: int = 0, every: int = 25
                    ) -> tuple[list[float], list[dict]]:
    """Train on `data` in order; at the start and every `every` steps log the scores and first row of `probe`.

    Returns: (loss of every step, checkpoints [{"step", "copy_loss", "in_context", "prefix", "previous",
    "pattern" [layers, heads, N, N]}]).
    """
    every = positive_int("every", every)
    checkpoints = []

    def log(steps: int) -> None:
        with torch.no_grad():
            _, w = model(probe["tokens"][:1])  # [1, layers, h, N, N]
        checkpoints.append({"step": steps, **scores(model, probe), "pattern": w[0]})

    log(0)
    losses = train_tiny_model(model, data["tokens"], data["targets"], batch_size=batch_size, lr=lr, seed=seed,
                              on_step=lambda step: (step + 1) % every == 0 and log(step + 1))
    return losses, checkpoints
