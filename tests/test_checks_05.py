"""Exercise checkers of notebook 05: right answers pass, wrong ones get one clear line, never a traceback."""
import torch

import attnlib as al
from attnlib.tiny import relation_mass


def _not_written(*args):
    raise NotImplementedError


def test_param_count(run):
    ok, out = run(al.checks.check_param_count, lambda d, h: 4 * (d * d + d))
    assert ok is True and "✓ Correct" in out
    ok, out = run(al.checks.check_param_count, lambda d, h: 4 * d * d)
    assert ok is False and "bias" in out
    ok, out = run(al.checks.check_param_count, lambda d, h: 4 * h * (d * d + d))
    assert ok is False and "must not change with num_heads" in out
    ok, out = run(al.checks.check_param_count, _not_written)
    assert ok is False and "not written yet" in out
    ok, out = run(al.checks.check_param_count, 42)
    assert ok is False and "expected a function" in out


def test_param_count_that_forgets_W_o(run):
    ok, out = run(al.checks.check_param_count, lambda d, h: 3 * (d * d + d))  # W_q, W_k, W_v with biases
    assert ok is False and "forgot W_o" in out
    assert out.count("\n") == 1  # one line of feedback
    ok, out = run(al.checks.check_param_count, lambda d, h: 3 * d * d)  # no W_o and no biases
    assert ok is False and "W_o" in out and "missing" in out and "bias of d_model" in out


def test_head_contribution(run):
    def right(h, W, i):
        d_k = h.shape[-1]
        return h @ W[:, i * d_k:(i + 1) * d_k].T

    def rows(h, W, i):
        d_k = h.shape[-1]
        return h @ W[i * d_k:(i + 1) * d_k, :]

    ok, out = run(al.checks.check_head_contribution, right)
    assert ok is True and "✓ Correct" in out and "W_O adds them" in out  # Concat keeps heads apart; W_O sums them
    ok, out = run(al.checks.check_head_contribution, rows)
    assert ok is False and "COLUMNS of W_o.weight" in out
    ok, out = run(al.checks.check_head_contribution, lambda h, W, i: h @ W.T)
    assert ok is False and "d_k rows of W^O" in out
    ok, out = run(al.checks.check_head_contribution, lambda h, W, i: right(h, W, 0))
    assert ok is False and "block of head 0" in out
    ok, out = run(al.checks.check_head_contribution, _not_written)
    assert ok is False and "not written yet" in out


def test_relation_mass(run):
    ok, out = run(al.checks.check_relation_mass, relation_mass)
    assert ok is True and "✓ Correct" in out
    ok, out = run(al.checks.check_relation_mass, lambda w, t: relation_mass(w, t) * t.numel())
    assert ok is False and "take the mean" in out
    ok, out = run(al.checks.check_relation_mass, lambda w, t: relation_mass(w, t).mean())
    assert ok is False and "keep the heads axis" in out
    ok, out = run(al.checks.check_relation_mass, lambda w, t: None)
    assert ok is False and "returned None" in out
    ok, out = run(al.checks.check_relation_mass, lambda w, t: torch.zeros(w.shape[1]))
    assert ok is False and "largest difference" in out
