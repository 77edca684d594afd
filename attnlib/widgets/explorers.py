"""The two ready-made panels: AttentionExplorer (self-attention of a short text) and SaturationExplorer
(softmax saturation as d_k grows), with what they compute and the ranges of their controls."""
from __future__ import annotations

import functools
import math
from typing import Any, Optional

import ipywidgets as W
import torch

from .. import viz
from .._validate import choice, integer
from ..core import max_weight, saturation_curve, scaled_dot_product_attention, softmax_entropy
from ..data import ANIMAL_STREET_PREFIX_ZH
from ..i18n import get_language, t
from ..masks import causal_mask, padding_mask, window_mask
from ..measure import single_thread
from .panel import LivePanel

# A 32-token text for the explorers: the article's example sentence and a continuation.
EXPLORER_TOKENS: list[str] = (
    "The animal didn't cross the street because it was too tired . It lay down under a tree "
    "and slept until the sun went down behind the quiet hills of the town"
).split()
# The Chinese edition's 32 tokens: notebook 01's sentence (这只动物没有过马路，因为它太累了), words as 01 groups them,
# and the same continuation (它在一棵树下躺了下来，一直睡到太阳落到小镇安静的群山后面。).
EXPLORER_TOKENS_ZH: list[str] = ANIMAL_STREET_PREFIX_ZH + (
    "累了 。 它 在 一棵 树 下 躺 了 下来 ， 一直 睡 到 太阳 落 到 小镇 安静 的 群山 后面 。").split()
PAD_TOKEN = "<pad>"
D_MODEL = 32  # width of the AttentionExplorer's token embeddings
D_K_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # the d_k slider of the AttentionExplorer
SATURATION_D_K_OPTIONS = D_K_OPTIONS + (512,)  # the d_k slider of the SaturationExplorer
MASKS = ("none", "causal", "padding", "window")
MAX_HEADS, MAX_SEQ = 8, 64  # the largest max_heads and max_seq an AttentionExplorer accepts
SEED_RANGE = (0, 99)
N_KEYS_RANGE = (2, 64)  # keys per query row of the SaturationExplorer
TEMPERATURE_EXPONENT = 1.3  # temperature runs from 10**-1.3 ≈ 0.05 to 10**1.3 ≈ 20 on a log slider
TEMPERATURE_RANGE = (10 ** -TEMPERATURE_EXPONENT, 10 ** TEMPERATURE_EXPONENT)
SAT_N_QUERIES = 128  # rows averaged per point of a saturation curve: smooth enough, fast enough to redraw live
SAT_ROWS = 256  # random query rows of the SaturationExplorer (its markers and score histogram)
SAMPLES_KEPT = 32  # (seed, d_k) samples a SaturationExplorer keeps, so that moving back and forth is free


def _slider_style() -> dict:
    return dict(style={"description_width": "initial"}, layout=W.Layout(width="290px"), continuous_update=True)


def _check_temperature(value: float, slack: float = 0.0) -> float:
    """Return `value` if it lies in TEMPERATURE_RANGE (widened by the relative `slack`), else raise."""
    lo, hi = TEMPERATURE_RANGE
    if not lo * (1 - slack) <= value <= hi * (1 + slack):
        raise ValueError(f"temperature must lie in [{lo:.4g}, {hi:.4g}], got {value!r}")
    return value


def _temperature_slider(value: float) -> W.FloatLogSlider:
    """Temperature on a log scale from 0.05 to 20 (1 = plain softmax)."""
    # the exponent grid -1.3, -1.25, …, 1.3 contains 0, so temperature 1 is exactly reachable
    return W.FloatLogSlider(value=_check_temperature(value), base=10, min=-TEMPERATURE_EXPONENT,
                            max=TEMPERATURE_EXPONENT, step=0.05, description=t("temperature"), readout_format=".3g",
                            **_slider_style())


def _int_slider(value: int, lo: int, hi: int, description: str) -> W.IntSlider:
    return W.IntSlider(value=value, min=lo, max=hi, description=description, **_slider_style())


def _mask_options() -> list[tuple[str, str]]:
    """The mask Dropdown's (label, value) options: every kind of MASKS, labelled in the current language."""
    labels = {"none": t("none"), "causal": t("causal"), "padding": t("padding"), "window": t("window")}
    return [(labels[kind], kind) for kind in MASKS]


def _scaled_checkbox(value: bool) -> W.Checkbox:
    return W.Checkbox(value=value, description=t("scale by 1/√d_k"), indent=False, layout=W.Layout(width="160px"))


@functools.lru_cache(maxsize=64)
def saturation_curves(d_k_values: tuple[int, ...], n_keys: int, seed: int = 0) -> dict[str, dict[str, list[float]]]:
    """The curves of the explorers' saturation figure: `al.saturation_curve` scaled and unscaled, cached.

    Args: d_k_values: the d_k grid (a tuple). n_keys: keys per row. seed: the curves' seed.
    Returns: {"scaled": ..., "unscaled": ...}, each as `al.saturation_curve` returns it (SAT_N_QUERIES rows a point).
    """
    with single_thread():
        return {kind: saturation_curve(list(d_k_values), scaled=kind == "scaled", n_keys=n_keys,
                                       n_queries=SAT_N_QUERIES, seed=seed) for kind in ("scaled", "unscaled")}


def row_stats(weights: torch.Tensor) -> dict[str, float]:
    """Mean entropy, max weight and Jacobian norm over all rows of `weights` [..., N].

    Args: weights: attention weights [..., N], each row summing to 1.
    Returns: {"entropy", "max_weight", "jacobian_norm"}: the markers of `viz.update_saturation`.
    """
    p2 = (weights * weights).sum(dim=-1)  # [...] Σ p²
    p3 = (weights * weights * weights).sum(dim=-1)  # [...] Σ p³
    # ‖diag(p) − p pᵀ‖_F² = Σ p² − 2 Σ p³ + (Σ p²)²: al.jacobian_norm without the [..., N, N] Jacobian (tested equal)
    return {"entropy": float(softmax_entropy(weights).mean()), "max_weight": float(max_weight(weights).mean()),
            "jacobian_norm": float((p2 - 2 * p3 + p2 * p2).clamp(min=0).sqrt().mean())}


class AttentionExplorer(LivePanel):
    """Self-attention of a short text: per-head heatmaps and softmax saturation, live.

    Token embeddings (one random vector per distinct word, no positional encoding, so equal words
    have equal keys) are projected by seeded random W_q, W_k, W_v with N(0, 1/d_model) entries,
    so every q and k component is about N(0, 1), the assumption of the article's section 3.2.
    The weights are `al.scaled_dot_product_attention(Q, K, V, mask, scale=s / temperature)` with
    s = 1/√d_k when scaling is on, else 1. figures[0] is the head grid, figures[1] the saturation panel.
    """

    def __init__(self, *, d_k: int = 8, heads: int = 4, mask: str = "causal", window: int = 2, pad: int = 2,
                 seq_len: int = 8, scaled: bool = True, temperature: float = 1.0, seed: int = 0,
                 query: Optional[int] = None, tokens: Optional[list[str]] = None, max_heads: int = 8,
                 max_seq: int = 32, title: Optional[str] = None, caption: Optional[str] = None,
                 main: bool = False):
        """Build the controls and figures.

        Args: d_k: one of D_K_OPTIONS. heads: 1..max_heads. mask: one of MASKS. window: 0..max_seq-1 (keys
            within ±window). pad: padded tokens at the end, 0..max_seq. seq_len: 2..max_seq. scaled: divide the
            scores by √d_k. temperature: in TEMPERATURE_RANGE. seed: in SEED_RANGE. query: the row of the
            saturation panel (default the last token). tokens: at least max_seq words (default EXPLORER_TOKENS, or
            EXPLORER_TOKENS_ZH when the language is "zh").
            max_heads: 1..MAX_HEADS. max_seq: 2..MAX_SEQ. title (default "Attention explorer"), caption, main: as
            for LivePanel.
        """
        self.max_heads = integer("max_heads", max_heads, 1, MAX_HEADS)
        self.max_seq = integer("max_seq", max_seq, 2, MAX_SEQ)
        tokens = list((EXPLORER_TOKENS_ZH if get_language() == "zh" else EXPLORER_TOKENS) if tokens is None else tokens)
        if len(tokens) < max_seq:
            raise ValueError(f"tokens must hold at least max_seq={max_seq} words, got {len(tokens)}")
        self.tokens = [str(t) for t in tokens[:max_seq]]
        self._params: dict[int, tuple] = {}
        values = dict(d_k=d_k, heads=heads, mask=mask, window=window, pad=pad, seq_len=seq_len, scaled=scaled,
                      temperature=temperature, seed=seed)
        first = self.compute(**values)
        query = seq_len - 1 if query is None else integer("query", query, 0, seq_len - 1)
        controls = self._controls(dict(values, query=query))
        figures = [
            viz.head_grid_figure(first["weights"], first["tokens"], first["tokens"], mask=first["mask"],
                                 slots=max_heads, title=t("Attention weights per head"), width=440),
            viz.saturation_figure(first["weights"][0, query], saturation_curves(D_K_OPTIONS, seq_len),
                                  k_tokens=first["tokens"], d_k=d_k, width=400, title=t("Softmax saturation")),
        ]
        if caption is None:
            caption = t("Heatmaps: rows are queries, columns keys, grey cells masked. Saturation panel: "
                        "one query row of head 1, and how softmax saturates as d_k grows.")
        controls["seq_len"].observe(self._on_seq_len, names="value")
        controls["mask"].observe(self._on_mask, names="value")
        title = t("Attention explorer") if title is None else title
        super().__init__(controls, figures, self._draw, title=title, caption=caption, main=main)
        self._on_mask({"new": mask})

    def _controls(self, v: dict) -> dict[str, W.Widget]:
        """The controls, at the (checked) values `v`."""
        return {
            "d_k": W.SelectionSlider(options=D_K_OPTIONS, value=v["d_k"], description="d_k", **_slider_style()),
            "heads": _int_slider(v["heads"], 1, self.max_heads, t("heads")),
            "seq_len": _int_slider(v["seq_len"], 2, self.max_seq, t("sequence length")),
            "temperature": _temperature_slider(v["temperature"]),
            "scaled": _scaled_checkbox(v["scaled"]),
            "mask": W.Dropdown(options=_mask_options(), value=v["mask"], description=t("mask"),
                               style={"description_width": "initial"}, layout=W.Layout(width="170px")),
            "window": _int_slider(v["window"], 0, self.max_seq - 1, t("window ±")),
            "pad": _int_slider(v["pad"], 0, self.max_seq, t("padded tokens")),
            "query": _int_slider(v["query"], 0, v["seq_len"] - 1, t("query row")),
            "seed": _int_slider(v["seed"], *SEED_RANGE, t("seed")),
        }

    def _projections(self, seed: int) -> tuple:
        """Seeded embeddings per word and W_q, W_k, W_v [max_heads, d_model, 256]; cached per seed."""
        if seed not in self._params:
            gen = torch.Generator().manual_seed(seed)
            vocab = sorted(set(self.tokens) | {PAD_TOKEN})
            table = torch.randn(len(vocab), D_MODEL, generator=gen)  # [V, d_model]
            std = D_MODEL ** -0.5  # keeps each q, k component ≈ N(0, 1)
            w = torch.randn(3, self.max_heads, D_MODEL, D_K_OPTIONS[-1], generator=gen) * std  # [3, H, d_model, 256]
            self._params[seed] = ({t: i for i, t in enumerate(vocab)}, table, w)
        return self._params[seed]

    @staticmethod
    def _mask(mask: str, n: int, window: int, n_pad: int) -> torch.Tensor:
        """The [N, N] bool mask (True = may attend) of the chosen kind."""
        if mask == "causal":
            return causal_mask(n)  # [N, N]
        if mask == "window":
            return window_mask(n, window)  # [N, N]
        if mask == "padding":
            return padding_mask([n - n_pad], n)[0, 0].expand(n, n)  # [N, N]
        return torch.ones(n, n, dtype=torch.bool)  # [N, N]

    def compute(self, *, d_k: int, heads: int, mask: str, window: int, pad: int, seq_len: int, scaled: bool,
                temperature: float, seed: int, **_: Any) -> dict[str, Any]:
        """The attention the panel shows for these control values.

        Args: the control values (see __init__); extra keys such as `query` are ignored.
        Returns: {"weights": [heads, N, N], "mask": [N, N] bool (True = may attend), "tokens": N labels
            (PAD_TOKEN at padded positions), "q", "k", "v": [heads, N, d_k]}, tensors.
        """
        n = integer("seq_len", seq_len, 2, self.max_seq)
        heads = integer("heads", heads, 1, self.max_heads)
        choice("d_k", d_k, D_K_OPTIONS)
        choice("mask", mask, MASKS)
        _check_temperature(temperature, slack=0.001)
        integer("seed", seed, *SEED_RANGE)
        window = integer("window", window, 0, self.max_seq - 1)
        n_pad = min(integer("pad", pad, 0, self.max_seq), n) if mask == "padding" else 0
        tokens = self.tokens[: n - n_pad] + [PAD_TOKEN] * n_pad
        index, table, w = self._projections(seed)
        x = table[[index[t] for t in tokens]]  # [N, d_model]
        w_q, w_k, w_v = w[:, :heads, :, :d_k]  # each [heads, d_model, d_k]
        q = torch.einsum("nd,hdk->hnk", x, w_q)  # [heads, N, d_k]
        k = torch.einsum("nd,hdk->hnk", x, w_k)  # [heads, N, d_k]
        v = torch.einsum("nd,hdk->hnk", x, w_v)  # [heads, N, d_k]
        allowed = self._mask(mask, n, window, n_pad)  # [N, N]
        scale = (1.0 / math.sqrt(d_k) if scaled else 1.0) / temperature
        _, weights = scaled_dot_product_attention(q, k, v, allowed, scale=scale)  # [heads, N, N]
        return {"weights": weights, "mask": allowed, "tokens": tokens, "q": q, "k": k, "v": v}

    def _draw(self, figures: list, *, query: int, **values: Any) -> None:
        """LivePanel update: recompute the attention and rewrite both figures in place."""
        n = values["seq_len"]
        with single_thread():
            res = self.compute(**values)
            stats = row_stats(res["weights"])
            curves = saturation_curves(D_K_OPTIONS, n)
        row = min(query, n - 1)
        viz.update_head_grid(figures[0], res["weights"], res["tokens"], res["tokens"], mask=res["mask"])
        viz.update_saturation(
            figures[1], res["weights"][0, row], curves=curves, k_tokens=res["tokens"], d_k=values["d_k"],
            current=stats, row_mask=res["mask"][row], row_label=t("head 1, query “{token}”", token=res["tokens"][row]),
        )

    def _on_seq_len(self, change: dict) -> None:
        """Keep the query-row slider inside the sequence."""
        self.controls["query"].max = change["new"] - 1  # ipywidgets clamps the value, which triggers one more update

    def _on_mask(self, change: dict) -> None:
        """Enable only the size control that the chosen mask uses."""
        self.controls["window"].disabled = change["new"] != "window"
        self.controls["pad"].disabled = change["new"] != "padding"


class SaturationExplorer(LivePanel):
    """Softmax saturation of random N(0, 1) scores as d_k grows, scaled or not, with temperature.

    figures[0] is the saturation figure of the first of SAT_ROWS random query rows against n_keys random
    keys, with markers (means over all rows) at the current d_k; figures[1] the histogram of every score.
    """

    def __init__(self, *, d_k: int = 16, n_keys: int = 16, scaled: bool = False, temperature: float = 1.0,
                 seed: int = 0, title: Optional[str] = None, caption: Optional[str] = None,
                 main: bool = False):
        """Build the controls and figures.

        Args: d_k: one of SATURATION_D_K_OPTIONS. n_keys: keys per query row, in N_KEYS_RANGE. scaled: divide by
            √d_k. temperature: in TEMPERATURE_RANGE. seed: in SEED_RANGE. title (default "Softmax saturation explorer"),
            caption, main: as for LivePanel.
        """
        controls = {
            "d_k": W.SelectionSlider(options=SATURATION_D_K_OPTIONS, value=choice("d_k", d_k, SATURATION_D_K_OPTIONS),
                                     description="d_k", **_slider_style()),
            "n_keys": _int_slider(integer("n_keys", n_keys, *N_KEYS_RANGE), *N_KEYS_RANGE, t("keys per row")),
            "temperature": _temperature_slider(temperature),
            "scaled": _scaled_checkbox(scaled),
            "seed": _int_slider(integer("seed", seed, *SEED_RANGE), *SEED_RANGE, t("seed")),
        }
        first = self.compute(d_k=d_k, n_keys=n_keys, scaled=scaled, temperature=temperature, seed=seed)
        figures = [
            viz.saturation_figure(first["weights"][0], saturation_curves(SATURATION_D_K_OPTIONS, n_keys), d_k=d_k,
                                  width=420, title=t("Softmax saturation")),
            viz.score_histogram_figure(first["scores"], width=400,
                                       title=t("Scores q·k (× scale ÷ temperature) vs N(0, 1)")),
        ]
        if caption is None:
            caption = t("Each row: one random query against random keys, components N(0, 1), averaged over "
                        "{rows} rows. Unscaled, the scores spread like √d_k and softmax saturates.", rows=SAT_ROWS)
        title = t("Softmax saturation explorer") if title is None else title
        super().__init__(controls, figures, self._draw, title=title, caption=caption, main=main)

    def compute(self, *, d_k: int, n_keys: int, scaled: bool, temperature: float, seed: int) -> dict[str, Any]:
        """Scores and softmax weights of SAT_ROWS random query rows for these control values.

        Args: the control values (see __init__).
        Returns: {"scores": [rows, n_keys] (after scale and temperature), "weights": [rows, n_keys]}, tensors.
        """
        _check_temperature(temperature, slack=0.001)
        self._raw = self._sample(seed, d_k)[:, :n_keys]  # [rows, N] unscaled q·k; temperature and scaling reuse it
        scale = (1.0 / math.sqrt(d_k) if scaled else 1.0) / temperature
        scores = self._raw * scale  # [rows, N]
        return {"scores": scores, "weights": torch.softmax(scores, dim=-1)}

    def _sample(self, seed: int, d_k: int) -> torch.Tensor:
        """Unscaled scores q·k of SAT_ROWS random queries against N_KEYS_RANGE[1] random keys, all N(0, 1) in d_k
        dimensions; the first n keys are the sample for n keys.

        Given q, the scores q·k_j of independent keys k_j ~ N(0, I) are independent N(0, ‖q‖²): a row is drawn as
        ‖q‖ times standard normals, exactly the same distribution as explicit keys at a cost that does not grow with
        d_k (a slider event stays within one frame even at d_k = 512).
        """
        samples = self.__dict__.setdefault("_samples", {})  # (seed, d_k) → sample, 128 kB each
        if (seed, d_k) not in samples:
            if len(samples) >= SAMPLES_KEPT:
                samples.pop(next(iter(samples)))  # the oldest
            gen = torch.Generator().manual_seed(seed)
            q = torch.randn(SAT_ROWS, d_k, generator=gen, dtype=torch.float64)  # [rows, d_k]
            z = torch.randn(SAT_ROWS, N_KEYS_RANGE[1], generator=gen, dtype=torch.float64)  # [rows, max keys]
            samples[seed, d_k] = q.norm(dim=-1, keepdim=True) * z  # [rows, max keys]
        return samples[seed, d_k]

    def _draw(self, figures: list, **values: Any) -> None:
        """LivePanel update: resample and rewrite both figures in place."""
        with single_thread():
            res = self.compute(**values)
            stats = row_stats(res["weights"])
            curves = saturation_curves(SATURATION_D_K_OPTIONS, values["n_keys"])
        viz.update_saturation(figures[0], res["weights"][0], curves=curves, d_k=values["d_k"], current=stats,
                              row_label=t("first query row"))
        viz.update_score_histogram(figures[1], res["scores"])
