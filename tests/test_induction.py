"""attnlib.induction: repeated-block data, the attention-only model, its scores, ablation and logged training."""
from __future__ import annotations

import math

import pytest
import torch

from attnlib.induction import (
    AttentionOnly,
    ablated,
    position_losses,
    prefix_matching,
    previous_token,
    repeated_blocks,
    scores,
    train_induction,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py: tiny tensors on one thread


def test_repeated_blocks_repeat_their_block_and_shift_the_targets():
    d = repeated_blocks(50, seq_len=20, vocab_size=7, lengths=(3, 5), seed=2)
    tokens, targets, lengths = d["tokens"], d["targets"], d["lengths"]
    assert tokens.shape == targets.shape == (50, 20) and lengths.shape == (50,)
    assert set(lengths.tolist()) == {3, 4, 5} and int(tokens.max()) < 7
    assert torch.equal(targets[:, :-1], tokens[:, 1:])  # the target of position t is the token at t + 1
    for b in range(50):
        L = int(lengths[b])
        assert torch.equal(tokens[b, L:], tokens[b, :-L])  # periodic with the block's length
    assert torch.equal(repeated_blocks(50, seq_len=20, vocab_size=7, lengths=(3, 5), seed=2)["tokens"], tokens)
    assert repeated_blocks(4, lengths=(16, 16))["lengths"].tolist() == [16] * 4  # the fixed offset


@pytest.mark.parametrize("kwargs, name", [({"num_seqs": 0}, "num_seqs"), ({"lengths": (5, 4)}, "lengths"),
                                          ({"lengths": (0, 4)}, "lengths"), ({"seq_len": -1}, "seq_len")])
def test_repeated_blocks_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        repeated_blocks(**{"num_seqs": 4, **kwargs})


def test_the_model_is_causal_and_returns_every_layers_weights():
    torch.manual_seed(0)
    model = AttentionOnly(vocab_size=11, seq_len=9, d_model=8, num_heads=2, num_layers=3)
    tokens = torch.randint(11, (4, 9))
    with torch.no_grad():
        logits, w = model(tokens)
    assert logits.shape == (4, 9, 11) and w.shape == (4, 3, 2, 9, 9)
    assert torch.allclose(w.sum(-1), torch.ones(4, 3, 2, 9))  # rows sum to 1
    assert float(w.triu(1).abs().max()) == 0.0  # no weight on the future
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 11
    with torch.no_grad():
        assert torch.equal(model(changed)[0][:, :-1], logits[:, :-1])  # the last token changes no earlier prediction
    with pytest.raises(ValueError, match="tokens"):
        model(tokens[:, :5])
    with pytest.raises(ValueError, match="num_layers"):
        AttentionOnly(num_layers=0)


def _pattern(lengths: torch.Tensor, n: int, offset_of) -> torch.Tensor:
    """[B, 1, 1, n, n] weights with all of each query's weight on key q - offset_of(L) (clipped at 0)."""
    w = torch.zeros(len(lengths), 1, 1, n, n)
    for b, L in enumerate(lengths.tolist()):
        for q in range(n):
            w[b, 0, 0, q, max(q - offset_of(L), 0)] = 1.0
    return w


def test_prefix_matching_scores_an_induction_pattern_one_and_a_previous_token_pattern_zero():
    lengths = torch.tensor([3, 5, 7])
    induction = _pattern(lengths, 12, lambda L: L - 1)  # the token after the earlier copy: q - L + 1
    previous = _pattern(lengths, 12, lambda L: 1)
    assert prefix_matching(induction, lengths).tolist() == [[1.0]]
    assert prefix_matching(previous, lengths).tolist() == [[0.0]]
    assert previous_token(previous).tolist() == [[1.0]]
    assert math.isclose(float(previous_token(induction)), 1 / 11, rel_tol=1e-6)  # only row 1, clipped onto key 0
    uniform = torch.ones(3, 1, 1, 12, 12).tril() / torch.arange(1, 13)[:, None]  # row q: 1/(q+1) on keys 0..q
    expected = sum(sum(1 / (q + 1) for k in range(1, q + 1) if (q + 1 - k) % L == 0)
                   for L in (3, 5, 7) for q in range(L, 12)) / sum(12 - L for L in (3, 5, 7))  # by a direct loop
    assert math.isclose(float(prefix_matching(uniform, lengths)), expected, rel_tol=1e-6)
    with pytest.raises(ValueError, match="lengths"):
        prefix_matching(induction, lengths[:2])
    with pytest.raises(ValueError, match="weights"):
        previous_token(induction[0])


def test_ablating_a_head_silences_only_that_head():
    torch.manual_seed(1)
    model = AttentionOnly(vocab_size=10, seq_len=8, d_model=8, num_heads=2, num_layers=2)
    x = torch.randn(3, 8, 8)  # [B, N, d_model]
    quiet = ablated(model, 0, 1)
    layer, copy_layer = model.layers[0], quiet.layers[0]
    with torch.no_grad():
        V = layer.split_heads(copy_layer.W_v(x))  # [B, 2, N, d_k]
        assert float(V[:, 1].abs().max()) == 0.0 and torch.equal(V[:, 0], layer.split_heads(layer.W_v(x))[:, 0])
        assert float(model.layers[0].W_v.weight.abs().min()) > 0  # the original is untouched
    with pytest.raises(ValueError, match="layer"):
        ablated(model, 2, 0)
    with pytest.raises(ValueError, match="head"):
        ablated(model, 0, 2)


def test_scores_of_an_untrained_model_are_at_chance():
    torch.manual_seed(0)
    model = AttentionOnly()
    data = repeated_blocks(200, seed=5)
    s = scores(model, data)
    assert abs(float(s["copy_loss"]) - math.log(32)) < 0.5  # ln 32: nothing learned
    assert abs(float(s["in_context"])) < 0.2
    assert s["prefix"].shape == s["previous"].shape == (2, 2) and float(s["prefix"].max()) < 0.2
    assert position_losses(model, data).shape == (32,)


def test_logged_training_is_repeatable_and_logs_every_checkpoint():
    data, probe = repeated_blocks(40 * 16, seed=1), repeated_blocks(20, seed=2)

    def run():
        torch.manual_seed(0)
        model = AttentionOnly()
        return train_induction(model, data, probe, batch_size=16, lr=1e-2, every=10)

    losses, checkpoints = run()
    assert len(losses) == 40 and [c["step"] for c in checkpoints] == [0, 10, 20, 30, 40]
    assert checkpoints[0]["pattern"].shape == (2, 2, 32, 32)
    assert float(checkpoints[-1]["copy_loss"]) < float(checkpoints[0]["copy_loss"])
    again = run()
    assert again[0] == losses and torch.equal(again[1][-1]["pattern"], checkpoints[-1]["pattern"])
    with pytest.raises(ValueError, match="every"):
        train_induction(AttentionOnly(), data, probe, every=0)
