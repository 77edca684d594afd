"""attnlib.masks: shapes, the True = may-attend convention, composition, and rejected inputs."""
import pytest
import torch

import attnlib as al


def test_causal_mask_lets_query_i_see_keys_up_to_i():
    m = al.causal_mask(5)
    assert m.dtype == torch.bool and m.shape == (5, 5)
    for i in range(5):
        for j in range(5):
            assert bool(m[i, j]) == (j <= i)


def test_padding_mask_shape_and_values():
    m = al.padding_mask([3, 1, 0], 4)
    assert m.shape == (3, 1, 1, 4) and m.dtype == torch.bool
    assert m[:, 0, 0].int().tolist() == [[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]]


def test_window_mask_is_a_band():
    m = al.window_mask(6, 2)
    for i in range(6):
        for j in range(6):
            assert bool(m[i, j]) == (abs(i - j) <= 2)
    assert torch.equal(al.window_mask(4, 0), torch.eye(4, dtype=torch.bool))


def test_masks_compose_with_and_and_broadcast_in_attention():
    look_back = al.causal_mask(6) & al.window_mask(6, 1)
    assert look_back.int().sum(-1).tolist() == [1, 2, 2, 2, 2, 2]
    pad = al.padding_mask([6, 5], 6)  # [2, 1, 1, 6]
    x = torch.randn(2, 3, 6, 8)  # [batch, heads, seq, d_k]
    _, w = al.scaled_dot_product_attention(x, x, x, look_back & pad)  # [2, 3, 6, 6]
    allowed = (look_back & pad).expand_as(w)
    assert bool((w[~allowed] == 0).all())


def test_a_row_left_with_nothing_to_attend_to_is_uniform():
    mask = al.causal_mask(6) & al.window_mask(6, 1) & al.padding_mask([4], 6)  # [1, 1, 6, 6]
    x = torch.randn(1, 1, 6, 8)  # [batch, heads, seq, d_k]
    _, w = al.scaled_dot_product_attention(x, x, x, mask)  # [1, 1, 6, 6]
    assert not bool(mask[0, 0, 5].any())  # query 5 sees keys 4 and 5, both padding
    torch.testing.assert_close(w[0, 0, 5], torch.full((6,), 1 / 6))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: al.causal_mask(0), "n must be a positive integer, got 0"),
        (lambda: al.causal_mask(-3), "n must be a positive integer"),
        (lambda: al.causal_mask(2.5), "n must be a positive integer"),
        (lambda: al.window_mask(4, -1), "window must be an integer ≥ 0, got -1"),
        (lambda: al.window_mask(0, 1), "n must be a positive integer"),
        (lambda: al.padding_mask([2, 5], 4), r"lengths must each lie in 0..n=4, got \[2, 5\]"),
        (lambda: al.padding_mask([-1], 4), "lengths must each lie in 0..n"),
        (lambda: al.padding_mask([], 4), "lengths must be a non-empty 1-D"),
        (lambda: al.padding_mask([[1, 2]], 4), "lengths must be a non-empty 1-D"),
    ],
)
def test_bad_mask_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()
