"""attnlib.efficient: tiled attention is exact, linear attention is its own (different) formula,
and it never builds the score matrix (measured with attnlib.measure). No timing here."""
import pytest
import torch
import torch.nn.functional as F

import attnlib as al
from attnlib import efficient
from attnlib.measure import measure_peak_memory

TOL = {torch.float32: 1e-5, torch.float64: 1e-9}

# (batch shape, N_q, N_k, d_k, d_v, block_q, block_k): N not a multiple of the block, N = 1, one block, ...
SHAPES = [
    ((), 1, 1, 4, 4, 8, 16),
    ((2,), 1, 33, 8, 8, 4, 8),
    ((2, 3), 37, 45, 8, 5, 8, 16),
    ((1,), 64, 64, 16, 16, 16, 16),
    ((3,), 50, 7, 4, 6, 256, 1024),
    ((), 129, 200, 32, 32, 32, 64),
]


def _qkv(batch, n_q, n_k, d_k, d_v, dtype, seed=0, requires_grad=False):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, n_q, d_k, generator=gen, dtype=dtype)
    k = torch.randn(*batch, n_k, d_k, generator=gen, dtype=dtype)
    v = torch.randn(*batch, n_k, d_v, generator=gen, dtype=dtype)
    return [t.requires_grad_(requires_grad) for t in (q, k, v)]


def _max_err(a, b):
    return (a - b).abs().max().item()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_tiled_equals_core_and_torch(shape, dtype):
    batch, n_q, n_k, d_k, d_v, bq, bk = shape
    q, k, v = _qkv(batch, n_q, n_k, d_k, d_v, dtype)
    out, weights = efficient.tiled_attention(q, k, v, block_q=bq, block_k=bk)
    ref, _ = al.scaled_dot_product_attention(q, k, v)
    assert weights is None
    assert out.shape == ref.shape and out.dtype == dtype
    assert _max_err(out, ref) <= TOL[dtype]
    assert _max_err(out, F.scaled_dot_product_attention(q, k, v)) <= TOL[dtype]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n_q,n_k,bq,bk", [(1, 1, 4, 4), (37, 37, 8, 16), (40, 56, 16, 8), (100, 100, 32, 32)])
def test_tiled_causal_matches_causal_mask_and_torch(n_q, n_k, bq, bk, dtype):
    q, k, v = _qkv((2,), n_q, n_k, 8, 8, dtype, seed=1)
    out, _ = efficient.tiled_attention(q, k, v, causal=True, block_q=bq, block_k=bk)
    mask = torch.ones(n_q, n_k, dtype=torch.bool).tril()  # query i sees keys 0..i
    ref, _ = al.scaled_dot_product_attention(q, k, v, mask)
    assert _max_err(out, ref) <= TOL[dtype]
    assert _max_err(out, F.scaled_dot_product_attention(q, k, v, is_causal=True)) <= TOL[dtype]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tiled_with_masks_matches_core(dtype):
    q, k, v = _qkv((2, 2), 23, 30, 8, 4, dtype, seed=2)
    masks = [
        al.padding_mask([7, 30], 30),  # [B, 1, 1, N_k]
        al.window_mask(30, 3)[:23],  # [N_q, N_k] band
        torch.zeros(23, 30, dtype=torch.bool),  # every row fully masked -> uniform, as in core
        (torch.rand(2, 2, 23, 30, generator=torch.Generator().manual_seed(3)) > 0.5).int(),  # 0/1 ints
    ]
    for mask in masks:
        ref, _ = al.scaled_dot_product_attention(q, k, v, mask)
        out, _ = efficient.tiled_attention(q, k, v, mask, block_q=4, block_k=8)
        assert _max_err(out, ref) <= TOL[dtype]
    # mask and causal combine by "and"
    window = al.window_mask(30, 4)[:23]
    out, _ = efficient.tiled_attention(q, k, v, window, causal=True, block_q=8, block_k=8)
    ref, _ = al.scaled_dot_product_attention(q, k, v, window & torch.ones(23, 30, dtype=torch.bool).tril())
    assert _max_err(out, ref) <= TOL[dtype]


def test_tiled_fully_masked_row_is_uniform_even_across_blocks():
    q, k, v = _qkv((), 6, 20, 4, 3, torch.float32, seed=4)
    mask = torch.ones(6, 20, dtype=torch.bool)
    mask[2] = False  # row 2 sees nothing: -1e9 everywhere gives uniform weights (like core), not NaN
    mask[4, :10] = False  # row 4 sees only the second key block
    out, _ = efficient.tiled_attention(q, k, v, mask, block_q=2, block_k=5)
    assert torch.allclose(out[2], v.mean(dim=0), atol=1e-6)
    ref, _ = al.scaled_dot_product_attention(q, k, v, mask)
    assert _max_err(out, ref) <= 1e-5


def test_tiled_scale_and_broadcast_batch():
    q, k, v = _qkv((3, 2), 9, 11, 4, 4, torch.float64, seed=5)
    out, _ = efficient.tiled_attention(q, k[0, 0], v[0, 0], scale=1.0, block_q=4, block_k=4)  # k, v broadcast
    ref, _ = al.scaled_dot_product_attention(q, k[0, 0], v[0, 0], scale=1.0)
    assert out.shape == (3, 2, 9, 4)
    assert _max_err(out, ref) <= 1e-9


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("causal,use_mask", [(False, False), (True, False), (False, True)])
def test_tiled_gradients_match_core(dtype, causal, use_mask):
    q, k, v = _qkv((2,), 19, 26, 8, 5, dtype, seed=6, requires_grad=True)
    mask = None
    if use_mask:
        mask = al.padding_mask([11, 26], 26)[:, 0] & torch.ones(19, 26, dtype=torch.bool)  # [2, 19, 26]
        mask[0, 3] = False  # one fully masked row: its gradient must still agree
    ref_mask = mask
    if causal:
        ref_mask = torch.ones(19, 26, dtype=torch.bool).tril()
    out, _ = efficient.tiled_attention(q, k, v, mask, causal=causal, block_q=4, block_k=8)
    ref, _ = al.scaled_dot_product_attention(q, k, v, ref_mask)
    grad = torch.randn(ref.shape, generator=torch.Generator().manual_seed(7), dtype=dtype)
    mine = torch.autograd.grad(out, (q, k, v), grad)
    theirs = torch.autograd.grad(ref, (q, k, v), grad)
    for name, a, b in zip("qkv", mine, theirs):
        assert _max_err(a, b) <= 10 * TOL[dtype], name


def test_tiled_gradcheck_float64():
    q, k, v = _qkv((1,), 5, 7, 3, 2, torch.float64, seed=8, requires_grad=True)
    fn = lambda q, k, v: efficient.tiled_attention(q, k, v, causal=True, block_q=2, block_k=3)[0]  # noqa: E731
    assert torch.autograd.gradcheck(fn, (q, k, v))


def _matmul_flops(fn, *args, **kwargs):
    """FLOPs of the matrix products fn runs, counted by PyTorch's FlopCounterMode (notebook 07 relies on it)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return counter.get_total_flops()


@pytest.mark.parametrize("n, block", [(256, 1024), (300, 128), (1024, 256)])
def test_tiled_does_the_naive_arithmetic_and_the_counter_sees_it(n, block):
    """4·N²·d multiply-add FLOPs (Q Kᵀ and P V), like the naive form: tiling changes the memory, not the work."""
    d = 16
    q, k, v = _qkv((1,), n, n, d, d, torch.float32)
    tiled = _matmul_flops(efficient.tiled_attention, q, k, v, block_q=block, block_k=block)
    naive = _matmul_flops(al.scaled_dot_product_attention, q, k, v)
    assert tiled == naive == 4 * n * n * d


def test_linear_attention_flops_grow_linearly():
    d = 16
    counts = [_matmul_flops(efficient.linear_attention, *_qkv((1,), n, n, d, d, torch.float32)) for n in (128, 256)]
    assert counts[1] == 2 * counts[0] and counts[0] == 128 * (4 * d * d + 2 * d)  # φ(K)ᵀV, φ(Q)·, and the normaliser


def test_feature_map_rounds_to_zero_where_the_docstring_says():
    """(exp(x) − 1) + 1 is exactly 0 in float32 below x ≈ −17.3, positive above −16.6; exp itself underflows at −104."""
    x = torch.tensor([-16.0, -18.0, -87.0, -104.0])
    phi = efficient.elu_feature_map(x)
    assert phi[0] > 0 and bool((phi[1:] == 0).all())
    e = torch.exp(x)
    assert e[2] >= torch.finfo(torch.float32).smallest_normal and e[3] == 0


def test_tiled_never_builds_the_score_matrix():
    """Measured peak memory of the tiled call stays far below one N×N float32 matrix."""
    n, d = 2048, 32
    q, k, v = _qkv((), n, n, d, d, torch.float32, seed=9)
    _, tiled_peak = measure_peak_memory(efficient.tiled_attention, q, k, v, block_q=128, block_k=256)
    _, naive_peak = measure_peak_memory(al.scaled_dot_product_attention, q, k, v)
    one_matrix = n * n * 4
    assert naive_peak >= one_matrix
    assert tiled_peak < one_matrix / 20
    assert tiled_peak >= n * d * 4  # the output itself is allocated and alive


def test_tiled_peak_is_output_one_tile_and_one_running_output():
    """The forward pass holds the output, ONE score tile and ONE running output (reused across query blocks),
    plus per-row statistics; notebook 07 §3 states this decomposition. A second running output would fail."""
    n, d, bq, bk = 2048, 64, 256, 256
    q, k, v = _qkv((), n, n, d, d, torch.float32, seed=9)
    _, peak = measure_peak_memory(efficient.tiled_attention, q, k, v, block_q=bq, block_k=bk)
    output, tile, running = n * d * 4, bq * bk * 4, bq * d * 4  # bytes
    rest = peak - (output + tile + running)
    assert 0 <= rest < 2 * n * 4 + 16 * bq * 4 < running  # row max and sum, and a few [bq] vectors


# ---- linear attention ----


def _linear_reference(q, k, v, eps):
    """The formula written with the N×N matrix: φ(Q)φ(K)ᵀ V / (φ(Q)φ(K)ᵀ 1 + eps)."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    sim = phi_q @ phi_k.transpose(-2, -1)  # [..., N_q, N_k]
    return (sim @ v) / (sim.sum(dim=-1, keepdim=True) + eps)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_linear_attention_equals_its_formula(shape, dtype):
    batch, n_q, n_k, d_k, d_v, _, _ = shape
    q, k, v = _qkv(batch, n_q, n_k, d_k, d_v, dtype, seed=10)
    for eps in (1e-6, 0.0, 0.5):
        out, weights = efficient.linear_attention(q, k, v, eps=eps)
        assert weights is None and out.shape == (*batch, n_q, d_v)
        ref = _linear_reference(q, k, v, eps)
        assert _max_err(out, ref) <= TOL[dtype] * max(1.0, ref.abs().max().item())


def test_feature_map_is_positive():
    x = torch.linspace(-30, 50, 81, dtype=torch.float64)
    phi = efficient.elu_feature_map(x)
    assert bool((phi > 0).all())
    assert torch.allclose(phi[x >= 0], x[x >= 0] + 1)
    # exp(x) − 1 + 1 rounds to exactly 0 far below zero: that is why the normaliser has an eps
    assert efficient.elu_feature_map(torch.tensor([-50.0], dtype=torch.float64)).item() == 0.0


def test_linear_attention_is_not_softmax_attention():
    q, k, v = _qkv((2,), 64, 64, 16, 16, torch.float64, seed=11)
    lin, _ = efficient.linear_attention(q, k, v)
    soft, _ = al.scaled_dot_product_attention(q, k, v)
    assert _max_err(lin, soft) > 0.1  # a different model, not a rounding of the same one


def test_linear_attention_memory_is_linear_in_n():
    d = 16
    peaks = []
    for n in (1024, 2048):
        q, k, v = _qkv((), n, n, d, d, torch.float32, seed=12)
        peaks.append(measure_peak_memory(efficient.linear_attention, q, k, v)[1])
    assert peaks[1] / peaks[0] < 2.2  # doubling N about doubles memory (quadratic would give 4x)
    assert peaks[1] < 2048 * 2048 * 4 / 10


# ---- bad inputs ----


@pytest.mark.parametrize("fn", [efficient.tiled_attention, efficient.linear_attention])
def test_bad_inputs_raise_value_error(fn):
    q, k, v = _qkv((), 4, 6, 8, 8, torch.float32)
    with pytest.raises(ValueError, match="query"):
        fn(q.numpy(), k, v)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        fn(q[0], k, v)
    with pytest.raises(ValueError, match="d_k"):
        fn(q, k[:, :4], v)
    with pytest.raises(ValueError, match="N_k"):
        fn(q, k, v[:5])
    with pytest.raises(ValueError, match="dtype"):
        fn(q, k.double(), v)
    with pytest.raises(ValueError, match="floating"):
        fn(q.long(), k.long(), v.long())
    with pytest.raises(ValueError, match="N_k ≥ 1"):
        fn(q, k[:0], v[:0])
    with pytest.raises(ValueError, match="broadcast"):
        fn(torch.randn(2, 4, 8), torch.randn(3, 6, 8), torch.randn(3, 6, 8))


def test_tiled_bad_arguments_raise_value_error():
    q, k, v = _qkv((), 4, 6, 8, 8, torch.float32)
    for kwargs, word in [
        ({"block_q": 0}, "block_q"),
        ({"block_k": 2.5}, "block_k"),
        ({"causal": "yes"}, "causal"),
        ({"scale": float("nan")}, "scale"),
    ]:
        with pytest.raises(ValueError, match=word):
            efficient.tiled_attention(q, k, v, **kwargs)
    with pytest.raises(ValueError, match="does not broadcast"):
        efficient.tiled_attention(q, k, v, torch.ones(4, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="0/1"):
        efficient.tiled_attention(q, k, v, torch.full((4, 6), 2))
    with pytest.raises(ValueError, match="eps"):
        efficient.linear_attention(q, k, v, eps=-1.0)
