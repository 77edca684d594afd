"""attnlib.core: parity with PyTorch's fused attention, softmax diagnostics, and rejected inputs."""
import math

import pytest
import torch
import torch.nn.functional as F

import attnlib as al

TOL = {torch.float32: 1e-5, torch.float64: 1e-9}


def random_case(gen, dtype):
    """A random batch shape, N_q, N_k, d_k, d_v and a mask with no fully masked row."""
    batch = tuple(int(s) for s in torch.randint(1, 4, (int(torch.randint(0, 3, (1,), generator=gen)),), generator=gen))
    n_q, n_k, d_k, d_v = (int(x) for x in torch.randint(1, 12, (4,), generator=gen))
    q = torch.randn(*batch, n_q, d_k, generator=gen, dtype=dtype)
    k = torch.randn(*batch, n_k, d_k, generator=gen, dtype=dtype)
    v = torch.randn(*batch, n_k, d_v, generator=gen, dtype=dtype)
    mask = torch.rand(*batch, n_q, n_k, generator=gen) > 0.4
    mask[..., 0] = True  # every query may attend to at least one key
    return q, k, v, mask


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", range(12))
def test_matches_fused_sdpa_forward_and_backward(dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v, mask = random_case(gen, dtype)
    scale = [None, 1.0, 0.37][seed % 3]
    use_mask = seed % 2 == 0
    ours_in = [t.clone().requires_grad_() for t in (q, k, v)]
    ref_in = [t.clone().requires_grad_() for t in (q, k, v)]
    out, weights = al.scaled_dot_product_attention(*ours_in, mask if use_mask else None, scale=scale)
    ref = F.scaled_dot_product_attention(*ref_in, attn_mask=mask if use_mask else None, scale=scale)
    torch.testing.assert_close(out, ref, atol=TOL[dtype], rtol=0)
    grad = torch.randn(out.shape, generator=gen, dtype=dtype)
    out.backward(grad)
    ref.backward(grad)
    for a, b in zip(ours_in, ref_in):
        torch.testing.assert_close(a.grad, b.grad, atol=TOL[dtype] * 10, rtol=0)
    assert weights.shape == (*q.shape[:-1], k.shape[-2])


def test_scale_none_is_inverse_sqrt_dk_and_one_turns_it_off():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(3, 16, generator=gen, dtype=torch.float64) for _ in range(3))
    _, w_default = al.scaled_dot_product_attention(q, k, v)
    _, w_off = al.scaled_dot_product_attention(q, k, v, scale=1.0)
    scores = q @ k.T
    torch.testing.assert_close(w_default, torch.softmax(scores / 4.0, -1), atol=1e-12, rtol=0)
    torch.testing.assert_close(w_off, torch.softmax(scores, -1), atol=1e-12, rtol=0)


def test_rows_are_distributions_and_masked_weights_exactly_zero():
    gen = torch.Generator().manual_seed(2)
    q, k, v, mask = random_case(gen, torch.float32)
    q, k, v = q * 10, k * 10, v  # large scores: still exact zeros where masked
    _, w = al.scaled_dot_product_attention(q, k, v, mask)
    assert bool((w >= 0).all())
    torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-6, rtol=0)
    assert bool((w[~mask.expand_as(w)] == 0).all())


def test_zero_one_mask_equals_bool_mask():
    gen = torch.Generator().manual_seed(3)
    q, k, v, mask = random_case(gen, torch.float32)
    a = al.scaled_dot_product_attention(q, k, v, mask)[0]
    b = al.scaled_dot_product_attention(q, k, v, mask.to(torch.int64))[0]
    c = al.scaled_dot_product_attention(q, k, v, mask.to(torch.float32))[0]
    assert torch.equal(a, b) and torch.equal(a, c)


def test_fully_masked_row_is_uniform_not_nan():
    q, k, v = torch.randn(4, 8), torch.randn(5, 8), torch.randn(5, 3)
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[2] = False
    out, w = al.scaled_dot_product_attention(q, k, v, mask)
    assert not torch.isnan(out).any()
    torch.testing.assert_close(w[2], torch.full((5,), 0.2))
    torch.testing.assert_close(out[2], v.mean(0))


def test_self_attention_is_permutation_equivariant():
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(7, 6, generator=gen, dtype=torch.float64)
    perm = torch.randperm(7, generator=gen)
    out, w = al.scaled_dot_product_attention(x, x, x)
    out_p, w_p = al.scaled_dot_product_attention(x[perm], x[perm], x[perm])
    torch.testing.assert_close(out_p, out[perm], atol=1e-12, rtol=0)
    torch.testing.assert_close(w_p, w[perm][:, perm], atol=1e-12, rtol=0)


def test_diagnostics_match_definitions_and_autograd():
    gen = torch.Generator().manual_seed(5)
    z = torch.randn(3, 6, generator=gen, dtype=torch.float64)
    s = torch.softmax(z, -1)
    for row in range(3):
        jac = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, -1), z[row])
        torch.testing.assert_close(al.softmax_jacobian(s)[row], jac, atol=1e-12, rtol=0)
        assert math.isclose(float(al.jacobian_norm(s)[row]), float(torch.linalg.norm(jac)), rel_tol=1e-12)
        expected_entropy = -sum(float(p) * math.log(float(p)) for p in s[row])
        assert math.isclose(float(al.softmax_entropy(s)[row]), expected_entropy, rel_tol=1e-12)
    torch.testing.assert_close(al.max_weight(s), s.max(-1).values)


def test_diagnostics_at_the_extremes():
    uniform = torch.full((1, 8), 1 / 8, dtype=torch.float64)
    one_hot = torch.tensor([[0.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    assert math.isclose(float(al.softmax_entropy(uniform)), math.log(8), rel_tol=1e-12)
    assert float(al.softmax_entropy(one_hot)) == 0.0
    assert float(al.jacobian_norm(one_hot)) == 0.0
    assert float(al.max_weight(one_hot)) == 1.0


def test_saturation_curve_variance_and_shrinking_jacobian():
    d_ks = [4, 64, 1024]
    raw = al.saturation_curve(d_ks, scaled=False, n_queries=2048, seed=0)
    scaled = al.saturation_curve(d_ks, scaled=True, n_queries=2048, seed=0)
    for d_k, var_raw, var_scaled in zip(d_ks, raw["score_var"], scaled["score_var"]):
        assert abs(var_raw / d_k - 1) < 0.1
        assert abs(var_scaled - 1) < 0.1
    assert raw["jacobian_norm"][0] > raw["jacobian_norm"][1] > raw["jacobian_norm"][2]
    assert raw["max_weight"][-1] > 0.9 > scaled["max_weight"][-1]
    assert max(scaled["entropy"]) - min(scaled["entropy"]) < 0.1


@pytest.mark.parametrize(
    "q_shape, k_shape, v_shape, mask, match",
    [
        ((3, 4), (5, 6), (5, 2), None, "query and key must share d_k"),
        ((3, 4), (5, 4), (6, 2), None, "key and value must share N_k"),
        ((4,), (5, 4), (5, 2), None, "query must have at least 2 dimensions"),
        ((3, 4), (5, 4), (5, 2), torch.ones(2, 5, dtype=torch.bool), r"mask of shape \(2, 5\) does not broadcast"),
        ((3, 4), (5, 4), (5, 2), torch.full((3, 5), 2), "mask must hold only bool or 0/1"),
        ((3, 4), (5, 4), (5, 2), torch.ones(2, 3, 5, dtype=torch.bool), "does not broadcast"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_argument(q_shape, k_shape, v_shape, mask, match):
    with pytest.raises(ValueError, match=match):
        al.scaled_dot_product_attention(torch.randn(q_shape), torch.randn(k_shape), torch.randn(v_shape), mask)


def test_saturation_curve_rejects_bad_d_k():
    with pytest.raises(ValueError, match="d_k_values"):
        al.saturation_curve([4, 0], scaled=True)
