"""attnlib.MultiHeadAttention against torch.nn.MultiheadAttention and the article's own class."""
import re
from pathlib import Path

import pytest
import torch
from torch import nn

import attnlib as al

ARTICLE = Path(__file__).resolve().parents[2] / "shared" / "seed" / "article.zh.txt"
TOL = {torch.float32: 1e-5, torch.float64: 1e-9}


def torch_reference(mha: al.MultiHeadAttention) -> nn.MultiheadAttention:
    """An nn.MultiheadAttention holding the same weights as `mha`."""
    ref = nn.MultiheadAttention(mha.d_model, mha.num_heads, batch_first=True, dtype=mha.W_q.weight.dtype)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.W_q.weight, mha.W_k.weight, mha.W_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.W_q.bias, mha.W_k.bias, mha.W_v.bias]))
        ref.out_proj.weight.copy_(mha.W_o.weight)
        ref.out_proj.bias.copy_(mha.W_o.bias)
    return ref


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("d_model, num_heads, n_q, n_k", [(16, 4, 5, 5), (12, 3, 4, 7), (8, 1, 1, 3), (32, 8, 9, 6)])
def test_matches_torch_multihead_attention(dtype, d_model, num_heads, n_q, n_k):
    torch.manual_seed(d_model + n_k)
    mha = al.MultiHeadAttention(d_model, num_heads).to(dtype)
    ref = torch_reference(mha)
    q = torch.randn(2, n_q, d_model, dtype=dtype, requires_grad=True)  # [B, N_q, d_model]
    kv = torch.randn(2, n_k, d_model, dtype=dtype, requires_grad=True)  # [B, N_k, d_model]
    lengths = [n_k, max(1, n_k - 2)]
    pad = al.padding_mask(lengths, n_k)  # [B, 1, 1, N_k], True = may attend

    out, w = mha(q, kv, kv, pad)  # [B, N_q, d_model], [B, h, N_q, N_k]
    # nn.MultiheadAttention's key_padding_mask uses the opposite convention: True = ignore.
    ref_out, ref_w = ref(q, kv, kv, key_padding_mask=~pad[:, 0, 0, :], average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=TOL[dtype], rtol=0)
    torch.testing.assert_close(w, ref_w, atol=TOL[dtype], rtol=0)

    g = torch.randn_like(out)
    grads = torch.autograd.grad(out, [q, kv, mha.W_q.weight, mha.W_o.weight], g)
    ref_grads = torch.autograd.grad(ref_out, [q, kv, ref.in_proj_weight, ref.out_proj.weight], g)
    torch.testing.assert_close(grads[0], ref_grads[0], atol=TOL[dtype] * 10, rtol=0)
    torch.testing.assert_close(grads[1], ref_grads[1], atol=TOL[dtype] * 10, rtol=0)
    torch.testing.assert_close(grads[2], ref_grads[2][:d_model], atol=TOL[dtype] * 10, rtol=0)
    torch.testing.assert_close(grads[3], ref_grads[3], atol=TOL[dtype] * 10, rtol=0)


def test_causal_mask_matches_torch_attn_mask():
    torch.manual_seed(0)
    mha = al.MultiHeadAttention(16, 4)
    x = torch.randn(3, 6, 16)  # [B, N, d_model]
    out, w = mha(x, x, x, al.causal_mask(6))
    ref_out, _ = torch_reference(mha)(x, x, x, attn_mask=~al.causal_mask(6))  # True = not allowed there
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    assert bool((w.triu(1) == 0).all())
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 4, 6))


def test_output_shapes_and_row_sums():
    mha = al.MultiHeadAttention(512, 8)
    x = torch.randn(2, 10, 512)
    out, w = mha(x, x, x)
    assert out.shape == (2, 10, 512) and w.shape == (2, 8, 10, 10)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 8, 10))


def test_self_attention_is_permutation_equivariant():
    torch.manual_seed(1)
    mha = al.MultiHeadAttention(16, 2).double()
    x = torch.randn(1, 7, 16, dtype=torch.float64)
    perm = torch.randperm(7)
    out, _ = mha(x, x, x)
    out_p, _ = mha(x[:, perm], x[:, perm], x[:, perm])
    torch.testing.assert_close(out_p, out[:, perm], atol=1e-12, rtol=0)


def article_class():
    """The article's MultiHeadAttention, read from the article's text (for reading, never copied)."""
    if not ARTICLE.exists():
        pytest.skip(f"the article is not beside this clone ({ARTICLE})")
    text = ARTICLE.read_text(encoding="utf-8")
    code = re.search(r"^import torch\n.*?(?=^# =+ 测试代码)", text, re.S | re.M)
    if code is None:
        pytest.fail("could not find the article's code block")
    namespace: dict = {}
    exec(compile(code.group(0), str(ARTICLE), "exec"), namespace)
    return namespace["MultiHeadAttention"]


def test_state_dicts_are_interchangeable_with_the_article_class_and_outputs_equal():
    ArticleMHA = article_class()
    torch.manual_seed(2)
    ours = al.MultiHeadAttention(32, 4).double()
    theirs = ArticleMHA(32, 4).double()
    theirs.load_state_dict(ours.state_dict())
    back = al.MultiHeadAttention(32, 4).double()
    back.load_state_dict(theirs.state_dict())
    x = torch.randn(2, 9, 32, dtype=torch.float64)
    mask = (al.causal_mask(9) & al.padding_mask([9, 6], 9)).int()  # 0/1, the article's mask == 0 test
    for m in (None, mask):
        out, w = ours(x, x, x, m)
        ref_out, ref_w = theirs(x, x, x, m)
        torch.testing.assert_close(out, ref_out, atol=1e-9, rtol=0)
        torch.testing.assert_close(w, ref_w, atol=1e-9, rtol=0)
        torch.testing.assert_close(back(x, x, x, m)[0], out, atol=0, rtol=0)


def test_parameter_count_does_not_depend_on_heads():
    counts = {h: sum(p.numel() for p in al.MultiHeadAttention(64, h).parameters()) for h in (1, 2, 4, 8)}
    assert len(set(counts.values())) == 1 and counts[1] == 4 * (64 * 64 + 64)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: al.MultiHeadAttention(10, 3), "d_model must be divisible by num_heads: got d_model=10, num_heads=3"),
        (lambda: al.MultiHeadAttention(0, 1), "d_model must be a positive integer"),
        (lambda: al.MultiHeadAttention(8, 0), "num_heads must be a positive integer"),
        (lambda: al.MultiHeadAttention(8, 2)(torch.randn(2, 3, 6), torch.randn(2, 3, 8), torch.randn(2, 3, 8)),
         r"query must have shape \[batch, seq, d_model=8\], got \(2, 3, 6\)"),
        (lambda: al.MultiHeadAttention(8, 2)(torch.randn(3, 8), torch.randn(3, 8), torch.randn(3, 8)),
         r"query must have shape \[batch, seq, d_model=8\], got \(3, 8\)"),
        (lambda: al.MultiHeadAttention(8, 2)(torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 5, 8)),
         "key and value must share"),
        (lambda: al.MultiHeadAttention(8, 2)(torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(2, 3, 8),
                                             torch.ones(3, 3, 3, dtype=torch.bool)), "does not broadcast"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()
