"""Exercise checkers of notebook 02: right answers pass, wrong ones get one clear line, never a traceback."""
import pytest
import torch

from attnlib import checks, data

W_Q = data.qkv_projections(8, 4, seed=0)["W_q"]  # [8, 4]
A_SYM = torch.diag(torch.tensor([1.0, -2.0, 3.0, 0.5]))  # symmetric, not a multiple of the identity


def test_score_matrix_accepts_q_k_transpose(run):
    ok, out = run(checks.check_score_matrix, lambda x, wq, wk: (x @ wq) @ (x @ wk).T)
    assert ok is True and out.startswith("✓ Correct")


@pytest.mark.parametrize(
    "answer, hint",
    [
        (lambda x, wq, wk: (x @ wk) @ (x @ wq).T, "Sᵀ"),
        (lambda x, wq, wk: (x @ wq) @ (x @ wq).T, "W_q twice"),
        (lambda x, wq, wk: (x @ wq) @ (x @ wk).T / wq.shape[1] ** 0.5, "divided by √d_k"),
        (lambda x, wq, wk: x @ wq @ wk, "raised RuntimeError"),
    ],
)
def test_score_matrix_explains_mistakes(run, answer, hint):
    ok, out = run(checks.check_score_matrix, answer)
    assert ok is False and out.startswith("✗ Not yet") and hint in out and out.count("\n") == 1


def _pair(W_k):
    return checks.check_symmetric_pair(W_Q, W_k)


def test_symmetric_pair_accepts_w_q_times_a_symmetric_a(run):
    ok, out = run(_pair, W_Q @ A_SYM)
    assert ok is True and out.startswith("✓ Correct") and "not a multiple of W_q" in out


@pytest.mark.parametrize("c", [2.5, -1.0, 0.01])
def test_symmetric_pair_rejects_a_multiple_of_w_q(run, c):
    """W_k = c·W_q is symmetric for the trivial reason: every score is c times the tied one."""
    ok, out = run(_pair, c * W_Q)
    assert ok is False and out.startswith("✗ Not yet") and out.count("\n") == 1
    assert "W_k = c·W_q" in out and "tied weights again" in out and "not a multiple of the identity" in out


@pytest.mark.parametrize(
    "W_k, hint",
    [
        (W_Q.clone(), "easy case"),
        (data.qkv_projections(8, 4, seed=1)["W_k"], "not symmetric"),
        (torch.zeros(8, 4), "zero matrix"),
        (torch.zeros(4, 8), "shape"),
        (None, "W_k is None"),
        ([[0.0] * 4] * 8, "torch.Tensor"),
        (torch.full((8, 4), float("nan")), "NaN"),
    ],
)
def test_symmetric_pair_explains_mistakes(run, W_k, hint):
    ok, out = run(_pair, W_k)
    assert ok is False and out.startswith("✗ Not yet") and hint in out and out.count("\n") == 1


def test_symmetric_pair_checks_w_q_too(run):
    ok, out = run(lambda w_q: checks.check_symmetric_pair(w_q, W_Q), None)
    assert ok is False and "W_q is None" in out


def test_invisible_direction(run):
    w = data.qkv_projections(8, 3, seed=0)["W_q"]
    u, _, _ = torch.linalg.svd(w)  # u: [8, 8]; its last 5 columns are orthogonal to W_q's columns
    invisible = lambda x: checks.check_invisible_direction(x, w)  # noqa: E731
    ok, out = run(invisible, u[:, -1])
    assert ok is True and "5-dim" in out
    for x, hint in ((torch.zeros(8), "zero vector"), (u[:, 0], "is not zero"), (torch.zeros(3), "shape"),
                    (None, "x is None"), (torch.full((8,), float("inf")), "NaN or inf")):
        ok, out = run(invisible, x)
        assert ok is False and hint in out and out.count("\n") == 1
