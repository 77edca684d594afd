"""Tests for notebook 01/02 helpers: attnlib.data (animal/street sentence, Q/K/V toy inputs) and attnlib.checks."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import attnlib as al
from attnlib import checks, data


# ---- data: 01 ----

def _it_row(last_word: str, sharpness: float = 3.0) -> torch.Tensor:
    """Weights of the row of "it" after the two hand-built steps, via the checker's reference."""
    _, x = data.animal_street_sentence(last_word)
    features = {f: float(v) for f, v in zip(data.ANIMAL_STREET_FEATURES, x[-1].tolist()) if v}
    return checks.nb01.animal_street_it_row(features, sharpness)


def test_animal_street_sentence_shapes_and_features():
    tokens, x = data.animal_street_sentence("tired")
    assert tokens[-1] == "tired" and tokens[7] == "it" and len(tokens) == 11
    assert len(set(tokens)) == 11  # labels must be unique for the heatmap axes
    assert x.shape == (11, len(data.ANIMAL_STREET_FEATURES))
    assert x[1, data.ANIMAL_STREET_FEATURES.index("living")] == 1.0
    assert x[5, data.ANIMAL_STREET_FEATURES.index("place")] == 1.0


def test_animal_street_sentence_custom_and_bad_words():
    tokens, x = data.animal_street_sentence("muddy", features={"adjective": 1, "of-place": 0.5})
    assert tokens[-1] == "muddy"
    assert x[-1, data.ANIMAL_STREET_FEATURES.index("of-place")] == 0.5
    with pytest.raises(ValueError, match="last_word"):
        data.animal_street_sentence("purple")
    with pytest.raises(ValueError, match="last_word"):
        data.animal_street_sentence("it")
    with pytest.raises(ValueError, match="unknown feature"):
        data.feature_vector({"colour": 1.0})
    with pytest.raises(ValueError, match="dict"):
        data.feature_vector([1.0, 0.0])


@pytest.mark.parametrize("word,referent", [("tired", 1), ("hungry", 1), ("wide", 5), ("narrow", 5)])
def test_it_moves_with_the_last_word(word, referent):
    row = _it_row(word)
    assert int(row.argmax()) == referent
    other = 6 - referent  # animal (1) <-> street (5)
    assert float(row[referent] - row[other]) > 0.8


def test_projections_shapes():
    proj = data.animal_street_projections()
    d = len(data.ANIMAL_STREET_FEATURES)
    for step in ("step1", "step2"):
        for name in ("W_q", "W_k", "W_v"):
            assert proj[step][name].shape == (d, d)


# ---- data: 02 ----

def test_qkv_sentence_seeded():
    tokens, x = data.qkv_sentence(8, seed=0)
    _, x2 = data.qkv_sentence(8, seed=0)
    _, x3 = data.qkv_sentence(8, seed=1)
    assert len(tokens) == len(set(tokens)) == x.shape[0] == 10 and x.shape[1] == 8
    assert torch.equal(x, x2) and not torch.equal(x, x3)
    with pytest.raises(ValueError, match="d_model"):
        data.qkv_sentence(0)


def test_qkv_projections_prefix_property_and_bad_inputs():
    small = data.qkv_projections(8, 3, seed=4)
    big = data.qkv_projections(8, 8, seed=4)
    for name in ("W_q", "W_k", "W_v"):
        assert small[name].shape == (8, 3)
        assert torch.equal(small[name], big[name][:, :3])
    assert not torch.equal(small["W_q"], small["W_k"])
    with pytest.raises(ValueError, match="d_k"):
        data.qkv_projections(8, 0)
    with pytest.raises(ValueError, match="d_model"):
        data.qkv_projections(True, 2)


# ---- checks: right answers pass, wrong answers print feedback and return False ----

def _feedback(capsys) -> str:
    return capsys.readouterr().out


def test_check_weighted_sum(capsys):
    assert checks.check_weighted_sum(lambda w, v: w @ v) is True
    assert "✓" in _feedback(capsys)
    assert checks.check_weighted_sum(lambda w, v: v.mean(0).expand(w.shape[0], -1)) is False
    assert "plain average" in _feedback(capsys)
    assert checks.check_weighted_sum(lambda w, v: w.T @ v) is False
    assert checks.check_weighted_sum(lambda w, v: None) is False
    assert "None" in _feedback(capsys)

    def todo(w, v):
        raise NotImplementedError

    assert checks.check_weighted_sum(todo) is False
    assert "not written yet" in _feedback(capsys)
    assert checks.check_weighted_sum("w @ v") is False


def test_check_attention_weights(capsys):
    right = lambda x, wq, wk, b: torch.softmax(b * (x @ wq) @ (x @ wk).T, dim=-1)
    assert checks.check_attention_weights(right) is True
    wrong_dim = lambda x, wq, wk, b: torch.softmax(b * (x @ wq) @ (x @ wk).T, dim=0)
    assert checks.check_attention_weights(wrong_dim) is False
    assert "columns" in _feedback(capsys)
    raw = lambda x, wq, wk, b: b * (x @ wq) @ (x @ wk).T
    assert checks.check_attention_weights(raw) is False
    assert "raw scores" in _feedback(capsys)
    no_sharp = lambda x, wq, wk, b: torch.softmax((x @ wq) @ (x @ wk).T, dim=-1)
    assert checks.check_attention_weights(no_sharp) is False
    assert "sharpness" in _feedback(capsys)


def test_check_undecided_word(capsys):
    assert checks.check_undecided_word({"adjective": 1.0, "of-living": 1.0, "of-place": 1.0}) is True
    assert checks.check_undecided_word({"adjective": 1.0, "of-living": 1.0}) is False
    assert "prefers the animal" in _feedback(capsys)
    assert checks.check_undecided_word({"verb": 1.0}) is False
    assert "< 0.9" in _feedback(capsys)
    assert checks.check_undecided_word({"adjective": 1.0}) is False  # read, but carries no information
    assert checks.check_undecided_word({}) is False
    assert checks.check_undecided_word({"colour": 1.0}) is False
    assert "unknown feature" in _feedback(capsys)


def test_check_score_matrix(capsys):
    assert checks.check_score_matrix(lambda x, wq, wk: (x @ wq) @ (x @ wk).T) is True
    assert checks.check_score_matrix(lambda x, wq, wk: (x @ wk) @ (x @ wq).T) is False
    assert "Sᵀ" in _feedback(capsys)
    assert checks.check_score_matrix(lambda x, wq, wk: (x @ wq) @ (x @ wq).T) is False
    assert "W_q twice" in _feedback(capsys)
    assert checks.check_score_matrix(lambda x, wq, wk: x @ wq @ wk) is False


def test_check_symmetric_pair(capsys):
    w = data.qkv_projections(8, 4, seed=0)["W_q"]
    a = torch.diag(torch.tensor([1.0, -2.0, 3.0, 0.5]))
    assert checks.check_symmetric_pair(w, w @ a) is True
    assert checks.check_symmetric_pair(w, w) is False
    assert "easy case" in _feedback(capsys)
    assert checks.check_symmetric_pair(w, data.qkv_projections(8, 4, seed=1)["W_k"]) is False
    assert "not symmetric" in _feedback(capsys)
    assert checks.check_symmetric_pair(w, torch.zeros(8, 4)) is False
    assert checks.check_symmetric_pair(w, torch.zeros(4, 8)) is False
    assert "shape" in _feedback(capsys)
    assert checks.check_symmetric_pair(None, w) is False


def test_check_invisible_direction(capsys):
    w = data.qkv_projections(8, 3, seed=0)["W_q"]
    u, _, _ = torch.linalg.svd(w)  # u: [8, 8]; its last 5 columns are orthogonal to W_q's columns
    assert checks.check_invisible_direction(u[:, -1], w) is True
    assert "5-dim" in _feedback(capsys)
    assert checks.check_invisible_direction(torch.zeros(8), w) is False
    assert "zero vector" in _feedback(capsys)
    assert checks.check_invisible_direction(u[:, 0], w) is False
    assert checks.check_invisible_direction(torch.zeros(3), w) is False
    assert checks.check_invisible_direction(None, w) is False


def test_core_attention_matches_two_step_reference():
    """The notebook's step 2 equals al.scaled_dot_product_attention with scale = sharpness."""
    tokens, x = data.animal_street_sentence("wide")
    p2 = data.animal_street_projections()["step2"]
    _, w = al.scaled_dot_product_attention(x @ p2["W_q"], x @ p2["W_k"], x @ p2["W_v"], scale=3.0)
    ref = torch.softmax(3.0 * (x @ p2["W_q"]) @ (x @ p2["W_k"]).T, dim=-1)
    assert torch.allclose(w, ref, atol=1e-6)


# ---- viz: query space and key space (added for notebook 02) ----

def test_qk_space_figure_exact_for_two_dims():
    tokens, x = data.qkv_sentence(8, seed=0)
    w = data.qkv_projections(8, 2, seed=0)
    q, k = x @ w["W_q"], x @ w["W_k"]  # [N, 2]
    fig = al.viz.qk_space_figure(q, k, tokens)
    qxy = torch.tensor(np.array([fig.data[0].x, fig.data[0].y])).T.double()  # [N, 2]
    kxy = torch.tensor(np.array([fig.data[1].x, fig.data[1].y])).T.double()
    assert torch.allclose(qxy @ kxy.T, (q @ k.T).double(), atol=1e-3)  # the picture's dot products are the scores
    assert "exact" in fig.layout.title.text and list(fig.data[0].text) == tokens
    assert fig.layout.meta["shown"] == 1.0


def test_qk_space_figure_plane_and_update():
    tokens, x = data.qkv_sentence(8, seed=0)
    w = data.qkv_projections(8, 6, seed=0)
    fig = al.viz.qk_space_figure(x @ w["W_q"], x @ w["W_k"], tokens, title="spaces")
    assert fig.layout.title.text.startswith("spaces (d_k = 6, best plane")
    assert 0 < fig.layout.meta["shown"] < 1
    w1 = data.qkv_projections(8, 1, seed=0)
    al.viz.update_qk_space(fig, x @ w1["W_q"], x @ w1["W_k"])  # tokens kept
    assert "d_k = 1, exact" in fig.layout.title.text and set(fig.data[0].y) == {0.0}
    assert list(fig.data[1].text) == tokens


def test_qk_space_figure_rejects_bad_input():
    q = torch.randn(4, 3)
    with pytest.raises(ValueError, match="same shape"):
        al.viz.qk_space_figure(q, torch.randn(4, 2), list("abcd"))
    with pytest.raises(ValueError, match="one label per position"):
        al.viz.qk_space_figure(q, q, list("abc"))
    with pytest.raises(ValueError, match="width"):
        al.viz.qk_space_figure(q, q, list("abcd"), width=50)
    with pytest.raises(ValueError, match="qk_space_figure"):
        al.viz.update_qk_space(al.viz.heatmap_figure(torch.eye(2), ["a", "b"], ["a", "b"]), q, q)
