"""Exercise checkers of notebook 04: right answers pass, wrong ones get one clear line, never a traceback."""
import math

import torch

import attnlib as al


def reference_read(query, keys, values, temperature):
    return torch.softmax(keys @ query / temperature, dim=-1) @ values


def test_soft_read(run):
    assert run(al.checks.check_soft_read, reference_read)[0] is True
    ok, out = run(al.checks.check_soft_read, lambda q, K, V, T: None)  # the notebook's stub
    assert ok is False and "checker's memory (6 slots, d_k = 8, d_v = 3)" in out and "shape (3,)" in out
    assert "forget `return`" in out
    ok, out = run(al.checks.check_soft_read, lambda q, K, V, T: torch.softmax(K @ q * T, -1) @ V)
    assert ok is False and "divide by it" in out
    ok, out = run(al.checks.check_soft_read, lambda q, K, V, T: (K @ q / T) @ V)
    assert ok is False and "without a softmax" in out

    def naive(q, K, V, T):  # overflows at T = 0.01
        e = torch.exp(K @ q / T)
        return (e / e.sum()) @ V

    ok, out = run(al.checks.check_soft_read, naive)
    assert ok is False and "NaN or inf" in out
    ok, out = run(al.checks.check_soft_read, lambda q, K, V, T: torch.softmax(K @ q / T, -1))
    assert ok is False and "returned the weights" in out
    ok, out = run(al.checks.check_soft_read, lambda q, K, V, T: torch.softmax(K @ q, -1) @ V)
    assert ok is False and "temperature has no effect" in out
    ok, out = run(al.checks.check_soft_read, lambda q, K, V, T: torch.softmax(K @ q / (T * K.shape[-1] ** 0.5), -1) @ V)
    assert ok is False and "√d_k" in out


def test_causal_mask(run):
    assert run(al.checks.check_causal_mask, al.causal_mask)[0] is True
    assert run(al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.long).tril())[0] is True
    ok, out = run(al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).triu())
    assert ok is False and "transposed" in out
    ok, out = run(al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1))
    assert ok is False and "diagonal" in out
    ok, out = run(al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool))
    assert ok is False and "row 0" in out
    ok, out = run(al.checks.check_causal_mask, lambda n: torch.ones(n, n + 1, dtype=torch.bool))
    assert ok is False and "shape" in out
    ok, out = run(al.checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).triu(1))
    assert ok is False and "marks the cells to hide" in out
    ok, out = run(al.checks.check_causal_mask,
                  lambda n: torch.zeros(n, n).masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf")))
    assert ok is False and "additive mask" in out
    ok, out = run(al.checks.check_causal_mask, lambda n: None)  # the notebook's stub
    assert ok is False and "for n = 4 your function returned None" in out and "forget `return`" in out
    ok, out = run(al.checks.check_causal_mask, lambda n: [[True] * n] * n)
    assert ok is False and "returned a list" in out and "bool tensor of shape (4, 4)" in out
    ok, out = run(al.checks.check_causal_mask, "not a function")
    assert ok is False and "expected a function" in out


def test_cnn_layers_needed(run):
    assert run(al.checks.check_cnn_layers_needed, lambda d, k: math.ceil(d / ((k - 1) // 2)))[0] is True
    ok, out = run(al.checks.check_cnn_layers_needed, lambda d, k: math.ceil(d / (k - 1)))
    assert ok is False and "EACH side" in out
    ok, out = run(al.checks.check_cnn_layers_needed, lambda d, k: d // ((k - 1) // 2))
    assert ok is False and "Round up" in out
    ok, out = run(al.checks.check_cnn_layers_needed, lambda d, k: math.ceil(d / k))
    assert ok is False and "not k" in out
    ok, out = run(al.checks.check_cnn_layers_needed, lambda d, k: d)
    assert ok is False and "does not change with kernel_size" in out
    ok, out = run(al.checks.check_cnn_layers_needed, lambda d, k: math.ceil(d / ((k - 1) // 2)) + 1)
    assert ok is False and "One layer too many" in out
    ok, out = run(al.checks.check_cnn_layers_needed, lambda d, k: d / 2.5)
    assert ok is False and "whole number" in out and "forget" not in out
    ok, out = run(al.checks.check_cnn_layers_needed, lambda d, k: None)  # the notebook's stub
    assert ok is False and "returned None" in out and "forget `return`" in out
