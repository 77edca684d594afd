"""Exercise checkers of notebook 01: right answers pass, wrong ones get one clear line, never a traceback."""
import pytest
import torch

from attnlib import checks


def _todo(*args):
    raise NotImplementedError


def test_weighted_sum_accepts_the_matrix_product(run):
    ok, out = run(checks.check_weighted_sum, lambda w, v: w @ v)
    assert ok is True and out.startswith("✓ Correct")


@pytest.mark.parametrize(
    "answer, hint",
    [
        (lambda w, v: v.mean(0).expand(w.shape[0], -1), "plain average"),
        (lambda w, v: v.sum(0).expand(w.shape[0], -1), "without their weights"),
        (lambda w, v: w.T @ v, "raised RuntimeError"),
        (lambda w, v: None, "returned None"),
        (_todo, "not written yet"),
        ("w @ v", "expected a function"),
    ],
)
def test_weighted_sum_explains_mistakes(run, answer, hint):
    ok, out = run(checks.check_weighted_sum, answer)
    assert ok is False and out.startswith("✗ Not yet") and hint in out and out.count("\n") == 1
    assert "Traceback" not in out


def test_attention_weights_accepts_the_formula(run):
    ok, out = run(checks.check_attention_weights, lambda x, wq, wk, b: torch.softmax(b * (x @ wq) @ (x @ wk).T, dim=-1))
    assert ok is True and out.startswith("✓ Correct")


@pytest.mark.parametrize(
    "answer, hint",
    [
        (lambda x, wq, wk, b: torch.softmax(b * (x @ wq) @ (x @ wk).T, dim=0), "columns"),
        (lambda x, wq, wk, b: torch.softmax(b * (x @ wk) @ (x @ wq).T, dim=-1), "swapped"),
        (lambda x, wq, wk, b: b * (x @ wq) @ (x @ wk).T, "raw scores"),
        (lambda x, wq, wk, b: torch.softmax((x @ wq) @ (x @ wk).T, dim=-1), "sharpness"),
        (_todo, "not written yet"),
    ],
)
def test_attention_weights_explains_mistakes(run, answer, hint):
    ok, out = run(checks.check_attention_weights, answer)
    assert ok is False and out.startswith("✗ Not yet") and hint in out and out.count("\n") == 1


def test_undecided_word_accepts_a_balanced_word(run):
    ok, out = run(checks.check_undecided_word, {"adjective": 1.0, "of-living": 1.0, "of-place": 1.0})
    assert ok is True and "animal 0.493 and street 0.493" in out


def test_undecided_word_says_what_this_word_did(run):
    """The success text names the route the learner's features took, with its numbers, not one fixed reason."""
    ok, read = run(checks.check_undecided_word, {"adjective": 1.0, "of-living": 1.0, "of-place": 1.0})
    assert ok and "drew 0.937 of its attention" in read and "of-living 0.937 and of-place 0.937" in read
    assert "street 5.81." in read  # 3 · (1 + 0.937): noun + living, step 2's sharpness 3
    ok, spread = run(checks.check_undecided_word, {"of-living": 5.0, "of-place": 5.0})  # no adjective: 1/11 each
    assert ok and "hardly read your word in step 1 (0.091" in spread and "of-living 0.455 and of-place 0.455" in spread
    ok, big = run(checks.check_undecided_word, {"adjective": 1.0, "of-living": 2.0, "of-place": 2.0})
    assert ok and "of-living 1.874" in big and big != read


@pytest.mark.parametrize(
    "answer, hint",
    [
        ({"adjective": 1.0, "of-living": 1.0}, "prefers the animal"),
        ({"adjective": 1.0, "of-place": 1.0}, "prefers the street"),
        ({"verb": 1.0}, "< 0.9"),
        ({"adjective": 1.0}, "< 0.9"),  # read, but carries no information
        ({}, "no features yet"),
        (None, "no features yet"),
        ({"colour": 1.0}, "unknown feature"),
        ({"adjective": float("nan")}, "NaN"),
    ],
)
def test_undecided_word_explains_mistakes(run, answer, hint):
    ok, out = run(checks.check_undecided_word, answer)
    assert ok is False and out.startswith("✗ Not yet") and hint in out and out.count("\n") == 1
