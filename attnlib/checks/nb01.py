"""Checkers for notebook 01 (introduction): each prints one line of feedback, returns a bool."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import torch

from .. import data
from ..i18n import get_language, t
from .feedback import call, compare, say

# Each edition's sentence (al.data.animal_street_sentence): a known last word, a new word, "it", "animal", "street"
SENTENCE_WORDS = {"en": ("wide", "your word", "it", "animal", "street"), "zh": ("宽了", "你的词", "它", "动物", "马路")}


def check_weighted_sum(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check a learner's `weighted_sum(weights, values)`: output row i = Σ_j weights[i, j] · values[j].

    Args:
        fn: takes weights [N_q, N_k] and values [N_k, d_v], returns the outputs [N_q, d_v].

    Returns:
        True when it matches the reference on two cases, else False (after printing what is wrong).
    """
    gen = torch.Generator().manual_seed(1)
    for n_q, n_k, d_v in ((3, 5, 4), (1, 6, 2)):
        weights = torch.softmax(torch.randn(n_q, n_k, generator=gen, dtype=torch.float64), -1)
        values = torch.randn(n_k, d_v, generator=gen, dtype=torch.float64)  # [N_k, d_v]
        expected = weights @ values  # [N_q, d_v]
        got, error = call(fn, weights.clone(), values.clone())
        shapes = dict(weights=tuple(weights.shape), values=tuple(values.shape))
        if error:
            return say(False, t("with weights {weights} and values {values}, {error}", **shapes, error=error))
        problem, g = compare(got, expected, atol=1e-6)
        if g is not None:
            if torch.allclose(g, values.mean(0).expand_as(expected), atol=1e-6):
                problem = t("you returned the plain average of the values: each value must be multiplied by its "
                            "weight")
            elif torch.allclose(g, values.sum(0).expand_as(expected), atol=1e-6):
                problem = t("you summed the values without their weights")
        if problem:
            return say(False, t("with weights {weights} and values {values}: {problem}", **shapes, problem=problem))
    return say(True, t("output[i] = Σ_j weights[i, j] · values[j], which is the matrix product weights @ values."))


def check_attention_weights(fn: Callable[..., torch.Tensor]) -> bool:
    """Check a learner's `attention_weights(X, W_q, W_k, sharpness)` = softmax(sharpness · (X W_q)(X W_k)ᵀ) by rows.

    Args:
        fn: takes X [N, d], W_q [d, d_k], W_k [d, d_k] and a number, returns weights [N, N].

    Returns:
        True when it matches the reference on the animal/street sentence (of the current language) and a random
        input, else False.
    """
    proj = data.animal_street_projections()["step2"]
    _, x_sent = data.animal_street_sentence(SENTENCE_WORDS[get_language()][0], language=get_language())
    gen = torch.Generator().manual_seed(2)
    cases = [
        (t("the 'wide' sentence"), x_sent.double(), proj["W_q"].double(), proj["W_k"].double(), 3.0),
        (t("a random input"), *(torch.randn(*s, generator=gen, dtype=torch.float64) for s in ((5, 4), (4, 3), (4, 3))),
         0.5),
    ]
    for label, x, w_q, w_k, sharpness in cases:
        scores = sharpness * (x @ w_q) @ (x @ w_k).T  # [N, N]
        expected = torch.softmax(scores, dim=-1)  # [N, N]
        got, error = call(fn, x.clone(), w_q.clone(), w_k.clone(), sharpness)
        if error:
            return say(False, t("on {case}, {error}", case=label, error=error))
        problem, g = compare(got, expected, atol=1e-6)
        if g is not None:
            if torch.allclose(g, torch.softmax(scores, dim=0), atol=1e-6):
                problem = t("your softmax runs down the columns (dim=0): each ROW (one query) must sum to 1, "
                            "use dim=-1")
            elif torch.allclose(g, expected.T, atol=1e-6) or torch.allclose(g, torch.softmax(scores.T, -1), atol=1e-6):
                problem = t("rows and columns are swapped: row i is query i, so use (X W_q) @ (X W_k).T")
            elif torch.allclose(g, scores, atol=1e-6):
                problem = t("these are the raw scores: apply torch.softmax(..., dim=-1) so each row sums to 1")
            elif torch.allclose(g, torch.softmax(scores / sharpness, -1), atol=1e-6):
                problem = t("the sharpness ({sharpness}) is missing: multiply the scores by it before the softmax",
                            sharpness=sharpness)
        if problem:
            return say(False, t("on {case}: {problem}", case=label, problem=problem))
    return say(True, t("weights = softmax(sharpness · Q Kᵀ) row by row, computed from the input itself."))


def animal_street_steps(features: dict[str, float], sharpness: float,
                        language: Optional[str] = None) -> tuple[list[str], torch.Tensor, torch.Tensor, torch.Tensor]:
    """Reference: the two hand-built steps of notebook 01 with a new last word; returns (tokens, w1, h, scores2).

    Args:
        features: the new last word's features. sharpness: step 2's. language: the sentence's ("en" or "zh");
            None: the current language (al.get_language()).

    Returns:
        tokens (11 in English, 10 in Chinese), step 1's weights [N, N], the tokens after step 1 h [N, d], and
        step 2's scores [N, N] (sharpness included, before the softmax).
    """
    language = language or get_language()
    tokens, x = data.animal_street_sentence(SENTENCE_WORDS[language][1], features=features, language=language)
    proj = data.animal_street_projections()
    s1, s2 = proj["step1"], proj["step2"]
    w1 = torch.softmax(data.STEP1_SHARPNESS * (x @ s1["W_q"]) @ (x @ s1["W_k"]).T, dim=-1)  # [N, N]
    h = x + w1 @ (x @ s1["W_v"])  # [N, d]: each token plus what it read
    return tokens, w1, h, sharpness * (h @ s2["W_q"]) @ (h @ s2["W_k"]).T  # scores2: [N, N]


def animal_street_it_row(features: dict[str, float], sharpness: float, language: Optional[str] = None) -> torch.Tensor:
    """Reference: the row of "it" (Chinese: 它) after step 2 of notebook 01, [N] (see animal_street_steps)."""
    tokens, _, _, scores2 = animal_street_steps(features, sharpness, language)
    return torch.softmax(scores2, dim=-1)[tokens.index(SENTENCE_WORDS[language or get_language()][2])]  # [N]


def check_undecided_word(features: Any, sharpness: float = 3.0) -> bool:
    """Check hand-built features of a new last word that leave "it" undecided between "animal" and "street".

    Args:
        features: {feature name: value} for the last word (names from al.data.ANIMAL_STREET_FEATURES).
        sharpness: the sharpness of step 2 (the notebook's default, 3.0).

    Returns:
        True when "it" gives animal and street weights within 0.05 of each other and ≥ 0.9 together (in the
        sentence of the current language: 它, 动物 and 马路 in Chinese).
    """
    if features is None or (isinstance(features, dict) and not features):
        return say(False, t("no features yet: fill the dict with {{feature name: value}}, e.g. {example}",
                            example="{'adjective': 1.0}"))
    *_, pronoun, animal_word, street_word = SENTENCE_WORDS[get_language()]
    try:
        tokens, w1, h, scores2 = animal_street_steps(features, float(sharpness))
    except (ValueError, TypeError) as exc:
        return say(False, str(exc))
    it, an, st = tokens.index(pronoun), tokens.index(animal_word), tokens.index(street_word)
    row = torch.softmax(scores2[it], dim=-1)  # [N] the row of "it" after step 2
    animal, street = float(row[an]), float(row[st])
    if not (math.isfinite(animal) and math.isfinite(street)):
        return say(False, t("the weights came out NaN: are your feature values finite numbers?"))
    msg = t("'it' gives animal {animal:.3f} and street {street:.3f}", animal=animal, street=street)
    if animal + street < 0.9:
        return say(False, t("{msg}: together only {total:.3f} < 0.9, so 'it' still looks at other words. Step 1 reads "
                            "the last word only if it is an adjective, and carries over only its 'of-living' and "
                            "'of-place' values: those are what sharpen the query of 'it'.",
                            msg=msg, total=animal + street))
    if abs(animal - street) > 0.05:
        winner = t("animal") if animal > street else t("street")
        return say(False, t("{msg}: it still prefers the {winner} (difference {diff:.3f} > 0.05).",
                            msg=msg, winner=winner, diff=abs(animal - street)))
    # Why, from what this word did: the share of step 1's attention of "it" it drew, what "it" picked up, the scores.
    name = data.ANIMAL_STREET_FEATURES.index
    why = dict(msg=msg, read=float(w1[it, -1]), adjective=float(data.feature_vector(features)[name("adjective")]),
               living=float(h[it, name("of-living")]), place=float(h[it, name("of-place")]),
               s_animal=float(scores2[it, an]), s_street=float(scores2[it, st]))
    if why["read"] >= 0.5:
        return say(True, t("{msg}: undecided. In step 1 'it' looks for an adjective; your word's 'adjective' "
                           "({adjective:g}) drew {read:.3f} of its attention, so 'it' picked up of-living {living:.3f} "
                           "and of-place {place:.3f}: as much about living things as about places, so step 2 scores "
                           "animal {s_animal:.2f} and street {s_street:.2f}.", **why))
    return say(True, t("{msg}: undecided, although 'it' hardly read your word in step 1 ({read:.3f} of its attention: "
                       "it looks for an adjective, and your word's 'adjective' is {adjective:g}). Still it picked up "
                       "of-living {living:.3f} and of-place {place:.3f}, as much about living things as about places, "
                       "so step 2 scores animal {s_animal:.2f} and street {s_street:.2f}.", **why))
