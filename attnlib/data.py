"""Toy sentences, hand-built embeddings and synthetic tasks; everything random is seeded."""
from __future__ import annotations

import torch

from ._validate import choice, integer, positive_int, tensor

# ---- 01: the "animal / street" sentence with HAND-BUILT features (a trained model learns such directions;
# written by hand, each is a named yes/no feature, so notebook 01's lesson fits in a 9-number vector) ----

ANIMAL_STREET_FEATURES: list[str] = [
    "noun", "living", "place", "pronoun", "verb", "adjective", "function", "of-living", "of-place",
]
# Feature values per word; unlisted features are 0. "of-living": a property only living things have.
ANIMAL_STREET_LEXICON: dict[str, dict[str, float]] = {
    "The": {"function": 1.0}, "animal": {"noun": 1.0, "living": 1.0}, "didn't": {"verb": 1.0},
    "cross": {"verb": 1.0}, "the": {"function": 1.0}, "street": {"noun": 1.0, "place": 1.0},
    "because": {"function": 1.0}, "it": {"pronoun": 1.0}, "was": {"verb": 1.0}, "too": {"function": 1.0},
    "tired": {"adjective": 1.0, "of-living": 1.0}, "wide": {"adjective": 1.0, "of-place": 1.0},
    "hungry": {"adjective": 1.0, "of-living": 1.0}, "narrow": {"adjective": 1.0, "of-place": 1.0},
}
ANIMAL_STREET_PREFIX: list[str] = ["The", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too"]

# The Chinese edition's sentence, 这只动物没有过马路，因为它太累了 / ……太宽了, on the same nine features. Words as a
# Chinese reader groups them: 这只 (demonstrative + measure word, like "The"), 没有 / 过 (the two verbs), the comma (a
# token of its own, as in most tokenizers; a function token like "the"), 太 ("too"), and the predicate 累了 as ONE
# word (太……了 is a construction of degree; keeping 累了 whole means only the last word differs). No copula (English
# "was"), no second article: 10 tokens, and the last word is two positions after 它 (three after "it" in English).
# 堵了 ("jammed") is the second place word: a street too narrow is an odd reason not to cross, a jammed one is not.
ANIMAL_STREET_LEXICON_ZH: dict[str, dict[str, float]] = {
    "这只": {"function": 1.0}, "动物": {"noun": 1.0, "living": 1.0}, "没有": {"verb": 1.0},
    "过": {"verb": 1.0}, "马路": {"noun": 1.0, "place": 1.0}, "，": {"function": 1.0},
    "因为": {"function": 1.0}, "它": {"pronoun": 1.0}, "太": {"function": 1.0},
    "累了": {"adjective": 1.0, "of-living": 1.0}, "宽了": {"adjective": 1.0, "of-place": 1.0},
    "饿了": {"adjective": 1.0, "of-living": 1.0}, "堵了": {"adjective": 1.0, "of-place": 1.0},
}
ANIMAL_STREET_PREFIX_ZH: list[str] = ["这只", "动物", "没有", "过", "马路", "，", "因为", "它", "太"]
ANIMAL_STREET_LANGUAGES = ("en", "zh")
# The pronoun and the two nouns it may refer to, per language: tokens.index(...) finds them in either sentence.
ANIMAL_STREET_ROLES: dict[str, tuple[str, str, str]] = {"en": ("it", "animal", "street"), "zh": ("它", "动物", "马路")}
STEP1_SHARPNESS = 5.0  # fixed sharpness of step 1 ("it" reads the last word), see animal_street_projections


def feature_vector(features: dict[str, float]) -> torch.Tensor:
    """Turn {feature name: value} into a vector over ANIMAL_STREET_FEATURES.

    Args:
        features: values by name; names must be in ANIMAL_STREET_FEATURES, missing ones are 0.

    Returns:
        [d] float64 vector, d = len(ANIMAL_STREET_FEATURES).
    """
    if not isinstance(features, dict):
        raise ValueError(f"features must be a dict {{feature name: number}}, got {type(features).__name__}")
    x = torch.zeros(len(ANIMAL_STREET_FEATURES), dtype=torch.float64)  # [d]
    for name, value in features.items():
        if name not in ANIMAL_STREET_FEATURES:
            raise ValueError(f"features: unknown feature {name!r}; expected one of {ANIMAL_STREET_FEATURES}")
        x[ANIMAL_STREET_FEATURES.index(name)] = float(value)
    return x


def animal_street_sentence(
    last_word: str = "tired", features: dict[str, float] | None = None, *, language: str | None = None
) -> tuple[list[str], torch.Tensor]:
    """"The animal didn't cross the street because it was too <last_word>" with hand-built features.

    The Chinese edition's sentence, "这只动物没有过马路，因为它太<last_word>", comes from a Chinese last word
    (animal_street_sentence("累了")): the same lesson on a sentence a Chinese reader parses natively.

    Args:
        last_word: a word of ANIMAL_STREET_LEXICON ("tired", "wide", "hungry", "narrow") or of
            ANIMAL_STREET_LEXICON_ZH ("累了", "宽了", "饿了", "堵了"), or any new word when `features` is given.
        features: {feature name: value} for the last word; None looks it up in the lexicon.
        language: "en" or "zh"; None: "zh" for a word of the Chinese lexicon, else "en".

    Returns:
        (tokens: 11 strings (Chinese: 10), X: [N, d] float64 features, one row per token: the same digits on
        every CPU).
    """
    if language is None:
        language = "zh" if last_word in ANIMAL_STREET_LEXICON_ZH else "en"
    language = choice("language", language, ANIMAL_STREET_LANGUAGES)
    lexicon, prefix = ((ANIMAL_STREET_LEXICON, ANIMAL_STREET_PREFIX) if language == "en"
                       else (ANIMAL_STREET_LEXICON_ZH, ANIMAL_STREET_PREFIX_ZH))
    if features is None:
        if last_word not in lexicon or last_word in prefix:
            known = [w for w in lexicon if w not in prefix]
            raise ValueError(f"last_word {last_word!r} has no hand-built features; use one of {known} "
                             "or pass features=")
        features = lexicon[last_word]
    tokens = prefix + [str(last_word)]
    rows = [feature_vector(lexicon[t]) for t in prefix] + [feature_vector(features)]
    return tokens, torch.stack(rows)  # [N, d]


def _feature_map(pairs: list[tuple[str, str, float]]) -> torch.Tensor:
    """[d, d] matrix with entry (a, b) = v for each (a, b, v): input feature a feeds output slot b."""
    names = ANIMAL_STREET_FEATURES
    w = torch.zeros(len(names), len(names), dtype=torch.float64)  # [d, d]
    for a, b, v in pairs:
        w[names.index(a), names.index(b)] = v
    return w


def animal_street_projections() -> dict[str, dict[str, torch.Tensor]]:
    """Hand-built W_q, W_k, W_v [d, d] of the two attention steps used in notebook 01.

    Step 1: a pronoun's query asks for "adjective"; the value copies only "of-living"/"of-place",
    so "it" picks up what the sentence says about it (a real model does this in earlier layers).
    Step 2: a pronoun asks for a "noun", and "of-living"/"of-place" ask for "living"/"place".
    Keys are the features themselves (W_k = identity), so query slot b matches key feature b.

    Returns:
        {"step1": {"W_q", "W_k", "W_v"}, "step2": {"W_q", "W_k", "W_v"}}, each [d, d] float64.
    """
    eye = torch.eye(len(ANIMAL_STREET_FEATURES), dtype=torch.float64)  # [d, d]
    step1 = {
        "W_q": _feature_map([("pronoun", "adjective", 1.0)]),
        "W_k": eye.clone(),
        "W_v": _feature_map([("of-living", "of-living", 1.0), ("of-place", "of-place", 1.0)]),
    }
    step2 = {
        "W_q": _feature_map([("pronoun", "noun", 1.0), ("of-living", "living", 1.0), ("of-place", "place", 1.0)]),
        "W_k": eye.clone(),
        "W_v": eye.clone(),
    }
    return {"step1": step1, "step2": step2}


# ---- 02-04: toy inputs ----

QKV_TOKENS: list[str] = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "sleeping", "dog"]

# From 16 float32 normals on, PyTorch's sampler vectorises, so their last bits depend on the CPU (measured: 32
# of 80 differ by up to 6e-7, AVX2 vs ATEN_CPU_CAPABILITY=default); float64 draws are the same on every CPU.
DRAW_DTYPES = (torch.float32, torch.float64)


def qkv_sentence(
    d_model: int = 8, seed: int = 0, *, dtype: torch.dtype = torch.float32
) -> tuple[list[str], torch.Tensor]:
    """Ten distinct tokens with seeded random embeddings (notebook 02's input X).

    Args:
        d_model: embedding width d, ≥ 1. seed: the random seed; entries are N(0, 1).
        dtype: torch.float32 or torch.float64 (drawn in float64: the same on every CPU, other numbers than float32).

    Returns:
        (tokens: QKV_TOKENS, X: [10, d_model] of `dtype`).
    """
    d_model = positive_int("d_model", d_model)
    dtype = choice("dtype", dtype, DRAW_DTYPES)
    gen = torch.Generator().manual_seed(int(seed))
    x = torch.randn(len(QKV_TOKENS), d_model, generator=gen, dtype=dtype)  # [N, d_model]
    return list(QKV_TOKENS), x


def qkv_projections(
    d_model: int, d_k: int, seed: int = 0, *, dtype: torch.dtype = torch.float32
) -> dict[str, torch.Tensor]:
    """Seeded random W_q, W_k, W_v [d_model, d_k] with N(0, 1/d_model) entries.

    With unit-variance inputs every query and key coordinate then has variance 1, so q·k/√d_k does too (not
    nn.Linear's default U(±1/√d_model), variance 1/(3 d_model); notebook 02 measures both). Column c is the
    same whatever d_k is, so a d_k slider adds or removes directions instead of reshuffling them.

    Args:
        d_model: input width d, ≥ 1. d_k: projection width, ≥ 1. seed: the random seed.
        dtype: torch.float32 (default) or torch.float64 (drawn in float64: the same on every CPU).

    Returns:
        {"W_q", "W_k", "W_v"}: each [d_model, d_k] of `dtype`; Q = X @ W_q.
    """
    d_model, d_k = positive_int("d_model", d_model), positive_int("d_k", d_k)
    dtype = choice("dtype", dtype, DRAW_DTYPES)
    gen = torch.Generator().manual_seed(int(seed))
    cols = [torch.randn(3, d_model, generator=gen, dtype=dtype) for _ in range(d_k)]  # d_k × [3, d_model]
    w = torch.stack(cols, dim=-1) / d_model**0.5  # [3, d_model, d_k]
    return {"W_q": w[0], "W_k": w[1], "W_v": w[2]}


# ---- 05: synthetic multi-relation task ----
# "Pairs": a sequence of 2·S tokens in which each of S symbols occurs exactly twice, each occurrence
# with a random colour. The label of position i needs TWO relations at once:
#   prev(i)    = i - 1 (cyclic)                               -> a fixed-offset, positional relation
#   partner(i) = the other position holding the same symbol   -> a content-based relation
#   label(i)   = colour[prev(i)] · C + colour[partner(i)]
# The two occurrences of a symbol are never neighbours (cyclically), so prev(i) != partner(i).

PAIRS_SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def two_relation_task(
    num_examples: int, *, num_symbols: int = 8, num_colors: int = 8, seed: int = 0
) -> dict[str, torch.Tensor]:
    """Seeded batch of the "pairs" task: label(i) = (colour of token i-1, colour of i's partner).

    Args:
        num_examples: number of sequences B, ≥ 1.
        num_symbols: S, 2..26; each sequence has N = 2·S tokens. num_colors: C, 1..10.
        seed: the random seed (the same seed always gives the same batch).

    Returns:
        {"tokens" [B, N] (symbol·C + colour), "labels" [B, N] (colour[prev]·C + colour[partner]),
         "symbols" [B, N], "colors" [B, N], "prev" [B, N], "partner" [B, N]}: all int64.
    """
    num_examples = positive_int("num_examples", num_examples)
    num_symbols = integer("num_symbols", num_symbols, minimum=2, maximum=len(PAIRS_SYMBOLS))
    num_colors = integer("num_colors", num_colors, minimum=1, maximum=10)
    n = 2 * num_symbols
    # Two generators and fixed-size chunks: the first k sequences are the same whatever B is.
    gen = torch.Generator().manual_seed(int(seed))
    kept, have = [], 0
    while have < num_examples:  # rejection sampling: about 1 in 3 random orders has no adjacent twins
        order = torch.argsort(torch.rand(1024, n, generator=gen), dim=1)  # [1024, N] slot at each position
        sym = order // 2  # [1024, N] slots 2s and 2s+1 hold symbol s: each symbol twice
        ok = ~(sym == sym.roll(1, dims=1)).any(dim=1)  # [1024] no symbol next to its twin (cyclic)
        kept.append(order[ok])
        have += int(ok.sum())
    order = torch.cat(kept)[:num_examples]  # [B, N]
    symbols = order // 2  # [B, N]
    colour_gen = torch.Generator().manual_seed(int(seed) + 7919)
    colors = torch.randint(0, num_colors, (num_examples, n), generator=colour_gen)  # [B, N]
    prev = ((torch.arange(n) - 1) % n).expand(num_examples, n).clone()  # [B, N] i - 1, cyclic
    where = torch.empty_like(order).scatter_(1, order, torch.arange(n).expand_as(order))  # [B, N] position of each slot
    partner = where.gather(1, order ^ 1)  # [B, N] position of the twin slot (2s <-> 2s+1)
    labels = colors.gather(1, prev) * num_colors + colors.gather(1, partner)  # [B, N]
    return {"tokens": symbols * num_colors + colors, "labels": labels, "symbols": symbols,
            "colors": colors, "prev": prev, "partner": partner}


def two_relation_names(tokens: torch.Tensor, num_colors: int = 8) -> list[str]:
    """Readable labels "A3", "F0", … for one sequence of the pairs task (symbol letter, colour digit).

    Args:
        tokens: [N] token ids (symbol·num_colors + colour). num_colors: C used to build them.

    Returns:
        N strings.
    """
    if tensor("tokens", tokens, 1, "[N] of token ids").dim() != 1:
        raise ValueError(f"tokens must be a 1-D tensor of token ids [N], got shape {tuple(tokens.shape)}")
    return [f"{PAIRS_SYMBOLS[t // num_colors]}{t % num_colors}" for t in tokens.tolist()]
