"""Notebook 05: the pairs task, the tiny attention model and head algebra (its checkers: test_checks_05.py)."""
from __future__ import annotations

import pytest
import torch

import attnlib as al
from attnlib.modules import MultiHeadAttention
from attnlib.tiny import TinyAttentionModel, relation_mass, train_tiny_model

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py: tiny tensors on one thread


# ---------------------------------------------------------------- data


def test_two_relation_task_labels_match_a_direct_loop():
    d = al.data.two_relation_task(40, num_symbols=5, num_colors=3, seed=4)
    n = 10
    for b in range(40):
        sym, col = d["symbols"][b].tolist(), d["colors"][b].tolist()
        assert sorted(sym) == sorted(list(range(5)) * 2)  # every symbol exactly twice
        for i in range(n):
            assert d["tokens"][b, i] == sym[i] * 3 + col[i]
            prev = (i - 1) % n
            partner = [j for j in range(n) if j != i and sym[j] == sym[i]]
            assert len(partner) == 1 and partner[0] != prev  # twins are never neighbours
            assert d["prev"][b, i] == prev and d["partner"][b, i] == partner[0]
            assert d["labels"][b, i] == col[prev] * 3 + col[partner[0]]


def test_two_relation_task_is_seeded_and_prefix_stable():
    a = al.data.two_relation_task(300, seed=9)
    b = al.data.two_relation_task(300, seed=9)
    c = al.data.two_relation_task(2500, seed=9)  # more than one chunk of candidates
    other = al.data.two_relation_task(300, seed=10)
    for key in a:
        assert a[key].dtype == torch.int64 and a[key].shape == (300, 16)
        assert torch.equal(a[key], b[key]) and torch.equal(a[key], c[key][:300])
    assert not torch.equal(a["tokens"], other["tokens"])
    assert int(a["labels"].max()) < 64 and int(a["tokens"].max()) < 64


@pytest.mark.parametrize("kwargs", [dict(num_examples=0), dict(num_examples=2.5), dict(num_examples=True),
                                    dict(num_examples=3, num_symbols=1), dict(num_examples=3, num_symbols=27),
                                    dict(num_examples=3, num_colors=0), dict(num_examples=3, num_colors=11)])
def test_two_relation_task_rejects_bad_sizes(kwargs):
    name = [k for k in kwargs if k != "num_examples"] or ["num_examples"]
    with pytest.raises(ValueError, match=name[-1]):
        al.data.two_relation_task(**kwargs)


def test_two_relation_names():
    tokens = torch.tensor([0, 9, 17, 63])
    assert al.data.two_relation_names(tokens) == ["A0", "B1", "C1", "H7"]
    assert al.data.two_relation_names(torch.tensor([5]), num_colors=2) == ["C1"]
    with pytest.raises(ValueError, match="tokens"):
        al.data.two_relation_names(torch.zeros(2, 3, dtype=torch.long))


# ---------------------------------------------------------------- the model


def test_tiny_model_shapes_and_no_self_attention():
    torch.manual_seed(0)
    model = TinyAttentionModel(vocab_size=64, seq_len=16, d_model=32, num_heads=4, num_classes=64)
    tokens = al.data.two_relation_task(3, seed=0)["tokens"]
    with torch.no_grad():
        logits, weights = model(tokens)
    assert logits.shape == (3, 16, 64) and weights.shape == (3, 4, 16, 16)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 4, 16))
    assert float(weights.diagonal(dim1=-2, dim2=-1).abs().max()) == 0.0  # a token never reads itself


@pytest.mark.parametrize("bad", [torch.zeros(2, 15, dtype=torch.long), torch.zeros(16, dtype=torch.long), "abc"])
def test_tiny_model_rejects_bad_tokens(bad):
    model = TinyAttentionModel(64, 16, 32, 2, 64)
    with pytest.raises(ValueError, match="tokens"):
        model(bad)


def test_tiny_model_rejects_bad_sizes():
    with pytest.raises(ValueError, match="seq_len"):
        TinyAttentionModel(64, 0, 32, 2, 64)
    with pytest.raises(ValueError, match="d_model must be divisible"):
        TinyAttentionModel(64, 16, 30, 4, 64)


def test_parameter_count_does_not_depend_on_heads():
    for d_model in (8, 32, 64):
        counts = {h: sum(p.numel() for p in MultiHeadAttention(d_model, h).parameters()) for h in (1, 2, 4, 8)}
        assert set(counts.values()) == {4 * (d_model * d_model + d_model)}
        tiny = {h: sum(p.numel() for p in TinyAttentionModel(64, 16, d_model, h, 64).parameters())
                for h in (1, 2, 4, 8)}
        assert len(set(tiny.values())) == 1


@pytest.mark.parametrize("heads", [1, 2, 4, 8])
def test_concat_times_W_o_is_the_sum_of_per_head_projections(heads):
    torch.manual_seed(heads)
    d_model, d_k = 32, 32 // heads
    mha = MultiHeadAttention(d_model, heads)
    x = torch.randn(2, 7, d_model)  # [B, N, d_model]
    with torch.no_grad():
        out, weights = mha(x, x, x)
        Q, K, V = (mha.split_heads(lin(x)) for lin in (mha.W_q, mha.W_k, mha.W_v))  # [B, h, N, d_k]
        per_head, w = al.scaled_dot_product_attention(Q, K, V)  # [B, h, N, d_k]
        concat = mha.merge_heads(per_head)  # [B, N, d_model]
        W_O = mha.W_o.weight.T  # [d_model in, d_model out]: rows i*d_k.. belong to head i
        summed = sum(per_head[:, i] @ W_O[i * d_k:(i + 1) * d_k] for i in range(heads)) + mha.W_o.bias
        # head i's queries come from its own d_k columns of the big projection
        for i in range(heads):
            rows = slice(i * d_k, (i + 1) * d_k)  # head i's rows of W_q
            assert torch.allclose(Q[:, i], x @ mha.W_q.weight[rows].T + mha.W_q.bias[rows], atol=1e-5)
    assert torch.allclose(concat @ W_O + mha.W_o.bias, out, atol=1e-5)
    assert torch.allclose(summed, out, atol=1e-5)
    assert torch.equal(w, weights)


def test_relation_mass():
    w = torch.zeros(1, 2, 3, 3)
    w[0, 0, [0, 1, 2], [1, 2, 0]] = 1.0  # head 0: always on the target
    w[0, 1] = 1 / 3  # head 1: uniform
    targets = torch.tensor([[1, 2, 0]])
    assert torch.allclose(relation_mass(w, targets), torch.tensor([1.0, 1 / 3]))
    with pytest.raises(ValueError, match="targets"):
        relation_mass(w, torch.tensor([1, 2, 0]))


def test_short_training_reduces_the_loss_and_is_repeatable():
    data = al.data.two_relation_task(50 * 64, seed=1)

    def run():
        torch.manual_seed(0)
        model = TinyAttentionModel(64, 16, 32, 2, 64)
        return model, train_tiny_model(model, data["tokens"], data["labels"], batch_size=64, lr=2e-2, seed=0)

    model, losses = run()
    assert len(losses) == 50
    assert abs(losses[0] - torch.log(torch.tensor(64.0)).item()) < 0.3  # starts near chance: ln 64
    assert sum(losses[-5:]) / 5 < losses[0] - 1.5  # ~ln 8 + a little: the previous colour is learned first
    assert not model.training and torch.get_num_threads() == 1  # eval mode after training, threads restored
    assert run()[1] == losses


def test_train_tiny_model_rejects_mismatched_data():
    model = TinyAttentionModel(64, 16, 32, 2, 64)
    with pytest.raises(ValueError, match="tokens and labels"):
        train_tiny_model(model, torch.zeros(64, 16, dtype=torch.long), torch.zeros(64, 15, dtype=torch.long))
    with pytest.raises(ValueError, match="batch_size"):
        train_tiny_model(model, torch.zeros(8, 16, dtype=torch.long), torch.zeros(8, 16, dtype=torch.long))
