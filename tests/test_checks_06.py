"""Tests for the notebook-06 checkers: they accept right implementations and name the step a broken one gets wrong."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnlib as al
from attnlib import checks

# ---- merge_heads ----

def merge_right(x: torch.Tensor) -> torch.Tensor:
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).contiguous().view(batch, seq, heads * d_k)  # [batch, seq, d_model]


def merge_no_transpose(x: torch.Tensor) -> torch.Tensor:
    batch, heads, seq, d_k = x.shape
    return x.contiguous().view(batch, seq, heads * d_k)  # heads mixed across tokens


def merge_no_contiguous(x: torch.Tensor) -> torch.Tensor:
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * d_k)  # raises: view of non-contiguous memory


def merge_global_size(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(1, 2).contiguous().view(x.size(0), -1, 32)  # d_model taken from the notebook, not x


@pytest.mark.parametrize(
    "fn",
    [merge_right, lambda x: x.transpose(1, 2).reshape(x.size(0), x.size(2), -1),
     lambda x: x.permute(0, 2, 1, 3).flatten(2)],
)
def test_merge_heads_accepts_right_versions(fn, capsys):
    assert checks.check_merge_heads(fn) is True
    assert capsys.readouterr().out.startswith("✓ Correct")


@pytest.mark.parametrize(
    "fn, words",
    [
        (merge_no_transpose, ["heads are mixed across tokens", "transpose(1, 2) first",
                              "yours    [head 0·token 0 | head 0·token 1"]),
        (merge_no_contiguous, ["raised RuntimeError", "call .contiguous() after transpose"]),
        (merge_global_size, ["invalid for input of size", "read the sizes from the tensor's .shape"]),
        (lambda x: x, ["expected [2, 5, 12] [batch, seq, heads·d_k]"]),
        (lambda x: merge_right(x) * 2, ["changed the numbers"]),
        (lambda x: x.permute(0, 2, 3, 1).reshape(x.size(0), x.size(2), -1), ["token 0's output row", "mixed"]),
        ("not a function", ["expected a function"]),
    ],
)
def test_merge_heads_rejects_broken_versions(fn, words, capsys):
    assert checks.check_merge_heads(fn) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ Not yet")
    assert "Traceback" not in out
    for w in words:
        assert w in out


# ---- attention(Q, K, V, mask) ----

def make_attention(*, scale: str = "d_k", dim: int = -1, inverted: bool = False, fill: float = -1e9,
                   value_is_key: bool = False, mask_after: bool = False):
    """An attention function with one chosen bug (or none)."""

    def attention(Q, K, V, mask=None):
        batch, heads, seq, d_k = Q.shape
        divisor = {"d_k": math.sqrt(d_k), "d_model": math.sqrt(heads * d_k), "none": 1.0, "no_sqrt": d_k,
                   "three": 3.0}[scale]
        scores = Q @ K.transpose(-2, -1) / divisor  # [batch, heads, N_q, N_k]
        if mask is not None and not mask_after:
            scores = scores.masked_fill(mask if inverted else mask == 0, fill)
        weights = F.softmax(scores, dim=dim)
        if mask is not None and mask_after:
            weights = weights * mask
        return weights @ (K if value_is_key else V), weights

    return attention


def test_attention_accepts_article_version_and_attnlib(capsys):
    assert checks.check_attention(make_attention()) is True
    assert checks.check_attention(al.scaled_dot_product_attention) is True
    out = capsys.readouterr().out
    assert out.count("✓ Correct") == 2 and "Note" not in out


def test_attention_accepts_minus_inf_fill_with_a_note(capsys):
    assert checks.check_attention(make_attention(fill=float("-inf"))) is True
    out = capsys.readouterr().out
    assert out.startswith("✓ Correct") and "fully masked row gives NaN" in out


def test_attention_accepts_pytorch_sdpa_wrapper(capsys):
    def sdpa(Q, K, V, mask=None):
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        return out, scores.softmax(-1)

    assert checks.check_attention(sdpa) is True


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(scale="d_model"), ["multiplied by 0.2500 = 1/√d_model = 1/√16", "expected 1/√d_k = 1/√8 = 0.3536"]),
        (dict(scale="none"), ["1 (no scaling at all)"]),
        (dict(scale="no_sqrt"), ["1/d_k = 1/8 (no square root)"]),
        # a scale it cannot name
        (dict(scale="three"), ["multiplied by 0.3333 = 1/√9;", "expected 1/√d_k = 1/√8 = 0.3536"]),
        (dict(dim=-2), ["rows don't sum to 1 along keys: you normalised over dim=-2", "softmax(scores, dim=-1)"]),
        (dict(dim=1), ["you normalised over dim=1 (the heads)"]),
        (dict(inverted=True), ["with a mask", "the mask is inverted", "True/1 means 'may attend'"]),
        (dict(inverted=True, fill=float("-inf")), ["the mask is inverted"]),
        (dict(fill=0.0), ["masked keys still get weight", "−1e9"]),
        (dict(mask_after=True), ["sums to", "mask the scores before it"]),
        (dict(value_is_key=True), ["output is weights @ K"]),
    ],
)
def test_attention_names_the_broken_step(kwargs, words, capsys):
    assert checks.check_attention(make_attention(**kwargs)) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ Not yet") and "Traceback" not in out
    for w in words:
        assert w in out


@pytest.mark.parametrize(
    "fn, words",
    [
        (lambda Q, K, V, mask=None: al.scaled_dot_product_attention(Q, K, V, mask)[1], ["pair (output, weights)"]),
        (lambda Q, K, V, mask=None: tuple(t.detach() for t in al.scaled_dot_product_attention(Q, K, V, mask)),
         ["carries no gradient"]),
        (lambda Q, K, V, mask=None: 1 / 0, ["raised ZeroDivisionError"]),
        (lambda Q, K, V, mask=None: (torch.zeros(2, 2, 4, 8), (K @ Q.transpose(-2, -1)).softmax(-1)),
         ["expected [2, 2, 4, 6]", "Q @ K.transpose(-2, -1)"]),
        (lambda Q, K: None, ["raised TypeError"]),
    ],
)
def test_attention_rejects_wrong_interfaces(fn, words, capsys):
    assert checks.check_attention(fn) is False
    out = capsys.readouterr().out
    for w in words:
        assert w in out


# ---- the whole module ----

class LearnerMHA(nn.Module):
    """The article's module with one optional bug."""

    def __init__(self, d_model: int, num_heads: int, bug: str | None = None):
        super().__init__()
        self.d_model, self.num_heads, self.d_k, self.bug = d_model, num_heads, d_model // num_heads, bug
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B = query.size(0)

        def split(x):
            if self.bug == "split":
                return x.view(B, self.num_heads, -1, self.d_k)
            return x.view(B, -1, self.num_heads, self.d_k).transpose(1, 2)

        Q, K, V = split(self.W_q(query)), split(self.W_k(key)), split(self.W_v(value))
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_model if self.bug == "scale" else self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask if self.bug == "mask" else mask == 0, -1e9)
        weights = F.softmax(scores, dim=-2 if self.bug == "dim" else -1)
        heads = weights @ V  # [B, h, N_q, d_k]
        if self.bug == "merge":
            concat = heads.contiguous().view(B, -1, self.d_model)
        else:
            concat = heads.transpose(1, 2).contiguous().view(B, -1, self.d_model)
        return (concat if self.bug == "no_W_o" else self.W_o(concat)), weights


def test_module_accepts_class_instance_and_attnlib(capsys):
    assert checks.check_multi_head_attention(LearnerMHA) is True
    assert checks.check_multi_head_attention(LearnerMHA(16, 2)) is True
    assert checks.check_multi_head_attention(al.MultiHeadAttention(24, 3)) is True
    assert capsys.readouterr().out.count("✓ Correct") == 3


def test_module_check_leaves_the_learners_weights_alone():
    module = LearnerMHA(16, 2)
    before = {k: v.clone() for k, v in module.state_dict().items()}
    checks.check_multi_head_attention(module)
    assert all(torch.equal(before[k], v) for k, v in module.state_dict().items())


@pytest.mark.parametrize(
    "bug, words",
    [
        ("split", ["splitting heads went wrong", "view to [batch, seq, heads, d_k] first, then transpose(1, 2)"]),
        ("scale", ["1/√d_model = 1/√32", "expected 1/√d_k = 1/√8"]),
        ("mask", ["with a mask", "the mask is inverted"]),
        ("dim", ["you normalised over dim=-2"]),
        ("merge", ["merging heads mixes tokens"]),
        ("no_W_o", ["skips the final projection W_o"]),
    ],
)
def test_module_names_the_broken_step(bug, words, capsys):
    assert checks.check_multi_head_attention(LearnerMHA(32, 4, bug)) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ Not yet") and "Traceback" not in out
    for w in words:
        assert w in out


def test_module_rejects_wrong_names_and_types(capsys):
    class Renamed(nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()
            self.d_model, self.num_heads = d_model, num_heads
            self.q_proj = nn.Linear(d_model, d_model)

    class NoSizes(nn.Module):
        pass

    class Crashes(nn.Module):
        def __init__(self, d_model, num_heads):
            raise ValueError("nope")

    assert checks.check_multi_head_attention(Renamed) is False
    assert checks.check_multi_head_attention(NoSizes()) is False
    assert checks.check_multi_head_attention(Crashes) is False
    assert checks.check_multi_head_attention(42) is False
    out = capsys.readouterr().out
    assert "q_proj.weight" in out and "W_q.weight" in out
    assert "d_model and num_heads" in out
    assert "raised ValueError: nope" in out
    assert "got int" in out


def test_checks_work_under_a_float64_default_dtype(capsys):
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert checks.check_attention(make_attention()) is True
        assert checks.check_multi_head_attention(LearnerMHA) is True
        assert checks.check_multi_head_attention(LearnerMHA(32, 4, "scale")) is False
    finally:
        torch.set_default_dtype(old)
