"""Checkers of notebook 07: right answers pass, typical wrong answers get a one-line hint, never a traceback."""
import math

import torch
import torch.nn.functional as F

from attnlib import checks


def softmax_by_chunks(chunks):
    m, ell = float("-inf"), 0.0
    for block in chunks:
        m_new = max(m, float(block.max()))
        ell = ell * math.exp(m - m_new) + float(torch.exp(block - m_new).sum())
        m = m_new
    return m, ell


def no_rescale(chunks):
    m, ell = float("-inf"), 0.0
    for block in chunks:
        m = max(m, float(block.max()))
        ell = ell + float(torch.exp(block - m).sum())  # forgot exp(m_old - m_new)
    return m, ell


def whole_row(chunks):
    row = torch.cat(list(chunks))  # keeps every chunk: the stream has overwritten them by now
    return row.max(), torch.exp(row - row.max()).sum()


def test_softmax_by_chunks(capsys):
    assert checks.check_softmax_by_chunks(softmax_by_chunks) is True
    assert "✓ Correct" in capsys.readouterr().out
    assert checks.check_softmax_by_chunks(no_rescale) is False
    assert "rescaled by exp(m_old − m_new)" in capsys.readouterr().out
    assert checks.check_softmax_by_chunks(lambda chunks: (0.0, float(sum(torch.exp(b).sum() for b in chunks)))) is False
    assert "NaN or inf" in capsys.readouterr().out  # no maximum subtracted: exp(1000) overflows


def test_softmax_by_chunks_sees_only_chunks(capsys):
    # issue 21 §4: a solution that keeps the whole row (torch.softmax on it) must fail
    assert checks.check_softmax_by_chunks(whole_row) is False
    assert "one reused buffer" in capsys.readouterr().out
    assert checks.check_softmax_by_chunks(lambda chunks: torch.softmax(torch.cat(list(chunks)), 0)) is False
    assert "return the pair (m, ℓ)" in capsys.readouterr().out


def test_softmax_by_chunks_unwritten_and_wrong_types(capsys):
    def todo(chunks):
        raise NotImplementedError

    assert checks.check_softmax_by_chunks(todo) is False
    assert "not written yet" in capsys.readouterr().out
    assert checks.check_softmax_by_chunks(lambda chunks: None) is False
    assert "return the pair (m, ℓ), not NoneType" in capsys.readouterr().out
    assert checks.check_softmax_by_chunks(42) is False
    assert "expected a function" in capsys.readouterr().out


def test_window_pairs(capsys):
    def right(n, w):
        w = min(w, n - 1)
        return n * (2 * w + 1) - w * (w + 1)

    assert checks.check_window_pairs(right) is True
    assert "✓ Correct" in capsys.readouterr().out
    assert checks.check_window_pairs(lambda n, w: n * (2 * w + 1)) is False
    assert "near the two ends" in capsys.readouterr().out
    assert checks.check_window_pairs(lambda n, w: n * n) is False
    assert "every pair" in capsys.readouterr().out
    assert checks.check_window_pairs(lambda n, w: "many") is False
    assert "expected the integer" in capsys.readouterr().out
    assert checks.check_window_pairs(lambda n, w: torch.tensor(right(n, w))) is True  # a 0-d tensor is fine


def test_causal_linear_attention(capsys):
    def right(Q, K, V, eps):
        phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
        S = torch.cumsum(phi_k.unsqueeze(-1) * V.unsqueeze(-2), dim=0)  # [N, d_k, d_v]
        z = torch.cumsum(phi_k, dim=0)  # [N, d_k]
        num = torch.einsum("nd,nde->ne", phi_q, S)
        den = (phi_q * z).sum(-1, keepdim=True) + eps
        return num / den

    def non_causal(Q, K, V, eps):
        phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
        return (phi_q @ (phi_k.T @ V)) / (phi_q @ phi_k.sum(0, keepdim=True).T + eps)

    assert checks.check_causal_linear_attention(right) is True
    assert "✓ Correct" in capsys.readouterr().out
    assert checks.check_causal_linear_attention(non_causal) is False
    assert "non-causal" in capsys.readouterr().out
    assert checks.check_causal_linear_attention(lambda Q, K, V, eps: 1 / 0) is False
    assert "ZeroDivisionError" in capsys.readouterr().out


def _causal_pieces(Q, K, V):
    """φ(q_i)ᵀ S_i [N, d_v], the causal normaliser φ(q_i)ᵀ z_i [N, 1] and the non-causal one [N, 1]."""
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    numerator = torch.einsum("nd,nde->ne", phi_q, torch.cumsum(phi_k[:, :, None] * V[:, None, :], dim=0))
    normaliser = (phi_q * torch.cumsum(phi_k, dim=0)).sum(-1, keepdim=True)
    full = phi_q @ phi_k.sum(0, keepdim=True).T
    return numerator, normaliser, full


def test_causal_linear_attention_without_its_denominator_names_the_normaliser(run):
    result, out = run(checks.check_causal_linear_attention, lambda Q, K, V, eps: _causal_pieces(Q, K, V)[0])
    assert result is False and out.startswith("✗ Not yet")
    assert "numerator" in out and "normaliser φ(q_i)ᵀ z_i + eps" in out
    assert out.count("\n") == 1  # one line


def test_causal_linear_attention_with_a_non_causal_normaliser(run):
    def wrong(Q, K, V, eps):
        numerator, _, full = _causal_pieces(Q, K, V)
        return numerator / (full + eps)

    result, out = run(checks.check_causal_linear_attention, wrong)
    assert result is False and "normaliser is not" in out and "prefix sum" in out


def test_causal_linear_attention_without_eps(run):
    def no_eps(Q, K, V, eps):
        numerator, normaliser, _ = _causal_pieces(Q, K, V)
        return numerator / normaliser

    result, out = run(checks.check_causal_linear_attention, no_eps)
    assert result is False and "add eps" in out


def test_causal_linear_attention_with_an_n_by_n_matrix_fails_its_memory_cap(run):
    # issue 21 §4: right values, but the N×N torch.tril matrix is not O(N) memory
    def with_tril(Q, K, V, eps):
        phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
        sim = (phi_q @ phi_k.T).tril()  # [N, N]
        return (sim @ V) / (sim.sum(-1, keepdim=True) + eps)

    result, out = run(checks.check_causal_linear_attention, with_tril)
    assert result is False and "peak memory" in out and "torch.cumsum" in out
