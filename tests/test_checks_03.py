"""Exercise checkers of notebook 03: right answers pass, wrong ones get one clear line, never a traceback."""
import math

import pytest
import torch

import attnlib as al


def test_scaled_scores_accepts_the_formula(run):
    ok, out = run(al.checks.check_scaled_scores, lambda Q, K: Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1)))
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
def test_scaled_scores_explains_mistakes(run, answer, hint):
    ok, out = run(al.checks.check_scaled_scores, answer)
    assert ok is False and out.startswith("✗ Not yet") and hint in out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    "answer",
    [lambda Q, K: Q @ K.T / math.sqrt(Q.size(-1)), lambda Q, K: Q @ K.t() / math.sqrt(Q.size(-1))],
    ids=["K.T", "K.t()"],
)
@pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")  # torch's own deprecation note for K.T
def test_scaled_scores_explains_a_transpose_of_every_dimension(run, answer):
    ok, out = run(al.checks.check_scaled_scores, answer)
    assert ok is False and out.startswith("✗ Not yet") and out.count("\n") == 1
    assert "works on 2-D input but not on batched" in out and "K.transpose(-2, -1)" in out
    assert "Traceback" not in out


def test_score_variance(run):
    ok, out = run(al.checks.check_score_variance, lambda d, a, b: d * a * b)
    assert ok is True and "Var(q_m) · Var(k_m)" in out  # the component index m, as in the notebook's derivation
    ok, out = run(al.checks.check_score_variance, lambda d, a, b: d)
    assert ok is False and "component variances matter" in out
    ok, out = run(al.checks.check_score_variance, lambda d, a, b: math.sqrt(d) * a * b)
    assert ok is False and "add up" in out
    ok, out = run(al.checks.check_score_variance, lambda d, a, b: d * math.sqrt(a * b))
    assert ok is False and "square root of var_q · var_k" in out and "Var(q_m k_m) = E[q_m²] E[k_m²]" in out
    ok, out = run(al.checks.check_score_variance, lambda d, a, b: "big")
    assert ok is False and "expected a number" in out


def test_softmax_jacobian(run):
    assert run(al.checks.check_softmax_jacobian, lambda s: torch.diag(s) - torch.outer(s, s))[0] is True
    assert run(al.checks.check_softmax_jacobian, al.softmax_jacobian)[0] is True
    ok, out = run(al.checks.check_softmax_jacobian, lambda s: torch.diag(s))
    assert ok is False and "diag(s) only" in out
    ok, out = run(al.checks.check_softmax_jacobian, lambda s: -torch.outer(s, s))
    assert ok is False and "add diag(s)" in out
    ok, out = run(al.checks.check_softmax_jacobian, lambda s: torch.outer(s, s) - torch.diag(s))
    assert ok is False and "opposite sign" in out and "s sᵀ − diag(s)" in out
    ok, out = run(al.checks.check_softmax_jacobian, lambda s: torch.eye(len(s)) - torch.outer(s, s))
    assert ok is False and "largest difference" in out



def test_the_chinese_edition_explorer_runs_notebook_01s_sentence():
    """In the zh edition, 03's main panel shows 01's Chinese sentence (issue 22), and English stays as it was."""
    from attnlib.data import animal_street_sentence
    from attnlib.widgets.explorers import EXPLORER_TOKENS

    try:
        al.set_language("zh")
        zh = al.widgets.AttentionExplorer(d_k=64, heads=4, mask="none", main=True)
    finally:
        al.set_language("en")
    en = al.widgets.AttentionExplorer(d_k=64, heads=4, mask="none", main=True)
    sentence, _ = animal_street_sentence("累了")
    assert zh.tokens[:len(sentence)] == sentence and len(zh.tokens) == 32
    assert list(zh.figures[0].layout.xaxis.ticktext) == sentence[:8]  # the heatmap's ticks, seq_len 8
    assert zh.tokens[7] == "它" and en.tokens[7] == "it"  # the default query row: the pronoun in both
    assert en.tokens == EXPLORER_TOKENS
