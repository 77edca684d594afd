"""attnlib.data for notebooks 01 and 02: the animal/street sentence, the Q/K/V toy inputs, their figure."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import attnlib as al
from attnlib import checks, data

# ---- 01: the animal/street sentence ----

def _it_row(last_word: str, sharpness: float = 3.0) -> torch.Tensor:
    """Weights of the row of "it" after the two hand-built steps, via the checker's reference."""
    _, x = data.animal_street_sentence(last_word)
    features = {f: float(v) for f, v in zip(data.ANIMAL_STREET_FEATURES, x[-1].tolist()) if v}
    return checks.nb01.animal_street_it_row(features, sharpness)


def test_animal_street_sentence_shapes_and_features():
    tokens, x = data.animal_street_sentence("tired")
    assert tokens[-1] == "tired" and tokens[7] == "it" and len(tokens) == 11
    assert len(set(tokens)) == 11  # labels must be unique for the heatmap axes
    assert x.shape == (11, len(data.ANIMAL_STREET_FEATURES)) and x.dtype == torch.float64
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
            assert proj[step][name].shape == (d, d) and proj[step][name].dtype == torch.float64


def test_raw_features_of_it_are_orthogonal_to_both_nouns():
    """Notebook 01, section 7: only W_Q makes the query of "it" match a noun."""
    tokens, x = data.animal_street_sentence("tired")
    it, animal, street = tokens.index("it"), tokens.index("animal"), tokens.index("street")
    assert float(x[it] @ x[animal]) == 0 and float(x[it] @ x[street]) == 0
    w_q = data.animal_street_projections()["step2"]["W_q"]
    assert float((x[it] @ w_q) @ x[animal]) == 1.0  # the pronoun's query asks for "noun"


def test_core_attention_matches_two_step_reference():
    """The notebook's step 2 equals al.scaled_dot_product_attention with scale = sharpness."""
    tokens, x = data.animal_street_sentence("wide")
    p2 = data.animal_street_projections()["step2"]
    _, w = al.scaled_dot_product_attention(x @ p2["W_q"], x @ p2["W_k"], x @ p2["W_v"], scale=3.0)
    ref = torch.softmax(3.0 * (x @ p2["W_q"]) @ (x @ p2["W_k"]).T, dim=-1)
    assert torch.allclose(w, ref, atol=1e-12)


# ---- 01 in Chinese: 这只动物没有过马路，因为它太累了 / ……太宽了 ----

def _two_steps(x: torch.Tensor, sharpness: float = 3.0) -> torch.Tensor:
    """The step-2 weights [N, N] after the two hand-built steps, written out here (not the checker's code)."""
    proj = data.animal_street_projections()
    s1, s2 = proj["step1"], proj["step2"]
    w1 = torch.softmax(data.STEP1_SHARPNESS * (x @ s1["W_q"]) @ (x @ s1["W_k"]).T, dim=-1)  # [N, N]
    h = x + w1 @ (x @ s1["W_v"])  # [N, d]
    return torch.softmax(sharpness * (h @ s2["W_q"]) @ (h @ s2["W_k"]).T, dim=-1)  # [N, N]


def test_chinese_sentence_tokens_and_features():
    tokens, x = data.animal_street_sentence("累了")
    assert tokens == ["这只", "动物", "没有", "过", "马路", "，", "因为", "它", "太", "累了"]
    assert len(set(tokens)) == 10 and x.shape == (10, len(data.ANIMAL_STREET_FEATURES)) and x.dtype == torch.float64
    f = data.ANIMAL_STREET_FEATURES.index
    assert x[tokens.index("它"), f("pronoun")] == 1.0 and x[tokens.index("动物"), f("living")] == 1.0
    assert x[tokens.index("马路"), f("place")] == 1.0 and x[-1, f("of-living")] == 1.0
    for zh, en in (("动物", "animal"), ("马路", "street"), ("它", "it"), ("累了", "tired"), ("宽了", "wide")):
        assert data.ANIMAL_STREET_LEXICON_ZH[zh] == data.ANIMAL_STREET_LEXICON[en]  # the same hand-built features


def test_roles_name_the_pronoun_and_both_nouns_in_each_language():
    for language, word in (("en", "tired"), ("zh", "累了")):
        tokens, x = data.animal_street_sentence(word)
        it, animal, street = (tokens.index(w) for w in data.ANIMAL_STREET_ROLES[language])
        f = data.ANIMAL_STREET_FEATURES.index
        assert x[it, f("pronoun")] == 1 and x[animal, f("living")] == 1 and x[street, f("place")] == 1


def test_chinese_sentences_differ_only_in_the_last_word():
    tokens_t, x_t = data.animal_street_sentence("累了")
    tokens_w, x_w = data.animal_street_sentence("宽了")
    assert tokens_t[:-1] == tokens_w[:-1] and tokens_w[-1] == "宽了"
    assert (x_t != x_w).any(dim=1).nonzero().flatten().tolist() == [len(tokens_t) - 1]


@pytest.mark.parametrize("word,referent", [("累了", "动物"), ("饿了", "动物"), ("宽了", "马路"), ("堵了", "马路")])
def test_chinese_it_moves_with_the_last_word(word, referent):
    tokens, x = data.animal_street_sentence(word)
    row = _two_steps(x)[tokens.index("它")]  # [N]
    other = {"动物": "马路", "马路": "动物"}[referent]
    assert tokens[int(row.argmax())] == referent
    assert float(row[tokens.index(referent)] - row[tokens.index(other)]) > 0.8


def test_two_steps_reference_agrees_with_the_checker_in_english():
    """_two_steps above is the same computation as the checker's reference, on the English sentence."""
    tokens, x = data.animal_street_sentence("wide")
    assert torch.allclose(_two_steps(x)[tokens.index("it")], _it_row("wide"), atol=1e-12)


def test_chinese_language_choice_and_bad_words():
    tokens, x = data.animal_street_sentence("泥泞", features={"adjective": 1, "of-place": 1}, language="zh")
    assert tokens[:-1] == data.ANIMAL_STREET_PREFIX_ZH and tokens[-1] == "泥泞"
    assert data.animal_street_sentence("泥泞", features={"adjective": 1})[0][0] == "The"  # a new word: English
    with pytest.raises(ValueError, match="last_word"):
        data.animal_street_sentence("tired", language="zh")
    with pytest.raises(ValueError, match="last_word"):
        data.animal_street_sentence("它")
    with pytest.raises(ValueError, match="language"):
        data.animal_street_sentence("累了", language="fr")


# ---- 02: the Q/K/V toy inputs ----

def test_qkv_sentence_seeded():
    tokens, x = data.qkv_sentence(8, seed=0)
    _, x2 = data.qkv_sentence(8, seed=0)
    _, x3 = data.qkv_sentence(8, seed=1)
    assert len(tokens) == len(set(tokens)) == x.shape[0] == 10 and x.shape[1] == 8
    assert torch.equal(x, x2) and not torch.equal(x, x3) and x.dtype == torch.float32
    with pytest.raises(ValueError, match="d_model"):
        data.qkv_sentence(0)


def test_qkv_float64_is_drawn_in_float64():
    _, x32 = data.qkv_sentence(8, seed=0)
    _, x64 = data.qkv_sentence(8, seed=0, dtype=torch.float64)
    w64 = data.qkv_projections(8, 4, seed=0, dtype=torch.float64)
    assert x64.dtype == torch.float64 and w64["W_q"].dtype == torch.float64
    assert not torch.allclose(x64, x32.double(), atol=1e-3)  # other numbers, not a cast of the float32 draw
    assert abs(float(x64.std()) - 1) < 0.3 and abs(float(w64["W_q"].std()) * 8**0.5 - 1) < 0.4
    with pytest.raises(ValueError, match="dtype"):
        data.qkv_sentence(8, dtype=torch.float16)
    with pytest.raises(ValueError, match="dtype"):
        data.qkv_projections(8, 4, dtype="float64")


def test_float64_draws_do_not_depend_on_the_cpu_kernels():
    """The draw qkv_sentence/qkv_projections make in float64 is bit-identical with PyTorch's
    non-vectorised kernels (ATEN_CPU_CAPABILITY=default) and with this CPU's best ones."""
    code = ("import torch; g = torch.Generator().manual_seed(0); "
            "print(torch.randn(10, 64, generator=g, dtype=torch.float64).sum().item().hex())")
    outs = set()
    for capability in ("default", None):
        env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
        if capability:
            env["ATEN_CPU_CAPABILITY"] = capability
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        outs.add(run.stdout)
    assert len(outs) == 1, outs


def test_qkv_projections_prefix_property_and_bad_inputs():
    for dtype in (torch.float32, torch.float64):
        small = data.qkv_projections(8, 3, seed=4, dtype=dtype)
        big = data.qkv_projections(8, 8, seed=4, dtype=dtype)
        for name in ("W_q", "W_k", "W_v"):
            assert small[name].shape == (8, 3)
            assert torch.equal(small[name], big[name][:, :3])
        assert not torch.equal(small["W_q"], small["W_k"])
    with pytest.raises(ValueError, match="d_k"):
        data.qkv_projections(8, 0)
    with pytest.raises(ValueError, match="d_model"):
        data.qkv_projections(True, 2)


# ---- viz: the query/key space figure of notebook 02, on its data ----

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
