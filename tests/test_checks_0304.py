"""Exercise checkers of notebooks 03 and 04: right answers pass, wrong ones get one clear line, never a traceback."""
import math

import pytest
import torch

import attnlib as al


def run(capsys, checker, answer):
    """Run a checker and return (result, printed text)."""
    result = checker(answer)
    return result, capsys.readouterr().out


# ---- 03 ----

def test_scaled_scores_accepts_the_formula(capsys):
    ok, out = run(capsys, al.checks.check_scaled_scores, lambda Q, K: Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1)))
    assert ok is True and out.startswith("✓ Correct")


@pytest.mark.parametrize(
    "answer, hint",
    [
        (lambda Q, K: Q @ K.transpose(-2, -1), "forget to divide by √d_k"),
        (lambda Q, K: Q @ K.transpose(-2, -1) / Q.size(-1), "instead of √d_k"),
        (lambda Q, K: Q @ K / math.sqrt(Q.size(-1)), "raised RuntimeError"),  # forgot the transpose
        (lambda Q, K: None, "returned None"),
        (lambda Q, K: 1 / 0, "ZeroDivisionError"),
        (lambda Q, K: [1, 2], "got list"),
    ],
)
def test_scaled_scores_explains_mistakes(capsys, answer, hint):
    ok, out = run(capsys, al.checks.check_scaled_scores, answer)
    assert ok is False and out.startswith("✗ Not yet") and hint in out
    assert "Traceback" not in out


def test_score_variance(capsys):
    assert run(capsys, al.checks.check_score_variance, lambda d, a, b: d * a * b)[0] is True
    ok, out = run(capsys, al.checks.check_score_variance, lambda d, a, b: d)
    assert ok is False and "component variances matter" in out
    ok, out = run(capsys, al.checks.check_score_variance, lambda d, a, b: math.sqrt(d) * a * b)
    assert ok is False and "add up" in out
    ok, out = run(capsys, al.checks.check_score_variance, lambda d, a, b: "big")
    assert ok is False and "expected a number" in out


def test_softmax_jacobian(capsys):
    assert run(capsys, al.checks.check_softmax_jacobian, lambda s: torch.diag(s) - torch.outer(s, s))[0] is True
    assert run(capsys, al.checks.check_softmax_jacobian, al.softmax_jacobian)[0] is True
    ok, out = run(capsys, al.checks.check_softmax_jacobian, lambda s: torch.diag(s))
    assert ok is False and "diag(s) only" in out
    ok, out = run(capsys, al.checks.check_softmax_jacobian, lambda s: -torch.outer(s, s))
    assert ok is False and "add diag(s)" in out
    ok, out = run(capsys, al.checks.check_softmax_jacobian, lambda s: torch.eye(len(s)) - torch.outer(s, s))
    assert ok is False and "largest difference" in out


# ---- 04 ----

def reference_read(query, keys, values, temperature):
    return torch.softmax(keys @ query / temperature, dim=-1) @ values


def test_soft_read(capsys):
    assert run(capsys, al.checks.check_soft_read, reference_read)[0] is True
    ok, out = run(capsys, al.checks.check_soft_read, lambda q, K, V, T: torch.softmax(K @ q * T, -1) @ V)
    assert ok is False and "divide by it" in out
    ok, out = run(capsys, al.checks.check_soft_read, lambda q, K, V, T: (K @ q / T) @ V)
    assert ok is False and "without a softmax" in out

    def naive(q, K, V, T):  # overflows at T = 0.01
        e = torch.exp(K @ q / T)
        return (e / e.sum()) @ V

    ok, out = run(capsys, al.checks.check_soft_read, naive)
    assert ok is False and "NaN or inf" in out


def test_causal_mask(capsys):
    assert run(capsys, al.checks.check_causal_mask, al.causal_mask)[0] is True
    assert run(capsys, al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.long).tril())[0] is True
    ok, out = run(capsys, al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).triu())
    assert ok is False and "transposed" in out
    ok, out = run(capsys, al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1))
    assert ok is False and "diagonal" in out
    ok, out = run(capsys, al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool))
    assert ok is False and "row 0" in out
    ok, out = run(capsys, al.checks.check_causal_mask, lambda n: torch.ones(n, n + 1, dtype=torch.bool))
    assert ok is False and "shape" in out
    ok, out = run(capsys, al.checks.check_causal_mask, "not a function")
    assert ok is False and "expected a function" in out


def test_cnn_layers_needed(capsys):
    assert run(capsys, al.checks.check_cnn_layers_needed, lambda d, k: math.ceil(d / ((k - 1) // 2)))[0] is True
    ok, out = run(capsys, al.checks.check_cnn_layers_needed, lambda d, k: math.ceil(d / (k - 1)))
    assert ok is False and "EACH side" in out
    ok, out = run(capsys, al.checks.check_cnn_layers_needed, lambda d, k: d // ((k - 1) // 2))
    assert ok is False and "Round up" in out
    ok, out = run(capsys, al.checks.check_cnn_layers_needed, lambda d, k: d / 2.5)
    assert ok is False and "whole number" in out
