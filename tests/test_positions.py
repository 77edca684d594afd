"""attnlib.positions: the sinusoidal table as the paper writes it, RoPE as a rotation whose scores depend only on
the offset, and the bad inputs both reject."""
import math

import pytest
import torch

from attnlib import positions


def test_sinusoidal_matches_the_papers_formula():
    P = positions.sinusoidal(50, 16)  # [50, 16]
    for pos in (0, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert P[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-12)
            assert P[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-12)


def test_rope_rotates_pairs_and_keeps_norms():
    x = torch.randn(3, 10, 8, dtype=torch.float64)  # [batch, seq, d]
    y = positions.rope(x)
    assert y.shape == x.shape
    assert torch.allclose(y.norm(dim=-1), x.norm(dim=-1), atol=1e-12)  # a rotation
    assert torch.equal(y[:, 0], x[:, 0])  # position 0: angle 0
    theta = 3 * 10000 ** (-2 / 8)  # position 3, pair 1 (dimensions 2 and 3)
    a, b = x[0, 3, 2].item(), x[0, 3, 3].item()
    assert y[0, 3, 2].item() == pytest.approx(a * math.cos(theta) - b * math.sin(theta), abs=1e-12)
    assert y[0, 3, 3].item() == pytest.approx(a * math.sin(theta) + b * math.cos(theta), abs=1e-12)


def test_rope_scores_depend_only_on_the_offset():
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 16, generator=gen, dtype=torch.float64)  # [d] each
    def score(m, n):
        return float(positions.rope(q[None], torch.tensor([m]))[0] @ positions.rope(k[None], torch.tensor([n]))[0])
    for offset in (0, 3, -5):
        values = [score(m + offset, m) for m in range(0, 40, 7)]
        assert max(values) - min(values) < 1e-12
    assert abs(score(3, 0) - score(0, 3)) > 1e-3  # the sign of the offset matters


def test_rope_with_explicit_positions_equals_the_default():
    x = torch.randn(2, 4, 6, 8, dtype=torch.float64)  # [batch, heads, seq, d]
    assert torch.equal(positions.rope(x, torch.arange(6)), positions.rope(x))
    last = positions.rope(x[..., 5:, :], torch.tensor([5]))  # one token decoded alone at position 5
    assert torch.allclose(last, positions.rope(x)[..., 5:, :], atol=1e-12)


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="d must be even"):
        positions.sinusoidal(4, 7)
    with pytest.raises(ValueError, match="n must be"):
        positions.sinusoidal(0, 8)
    with pytest.raises(ValueError, match="x must be"):
        positions.rope([1.0, 2.0])
    with pytest.raises(ValueError, match="positions must be"):
        positions.rope(torch.zeros(5, 8), torch.arange(4))
    with pytest.raises(ValueError, match="base must be"):
        positions.frequencies(8, base=0.5)
