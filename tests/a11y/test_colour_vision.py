"""The course's colour maps under simulated colour-vision deficiency (issue 25 §5), without a browser.

How it is checked: the heatmap scale (attnlib.viz.style.HEATMAP_COLORSCALE, plotly's Viridis) is sampled at 11
steps of the 0-1 weight range, as plotly interpolates it; each colour goes through Machado, Oliveira and Fernandes
(2009)'s full-severity matrices for protanopia and deuteranopia (applied in linear sRGB), then into CIELAB (D65).
Claims: lightness L* rises with the weight under each simulation (so the order of weights survives), adjacent steps
stay apart by CIE76 ΔE >= 5 (easily seen side by side), and the masked-cell grey (MASK_COLOR) stays ΔE >= 10 from
every step. A rainbow scale (plotly's Jet) fails the lightness claim: the check can fail.
"""
from __future__ import annotations

import numpy as np
import plotly.colors as pc
import pytest

from attnlib.viz import style

# Machado et al. 2009, severity 1.0 (linear RGB -> linear RGB).
MACHADO = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
}
STEPS = np.linspace(0, 1, 11)  # weights 0, 0.1, ..., 1
MIN_ADJACENT_DE, MIN_MASK_DE = 5.0, 10.0


def scale_colours(name: str) -> np.ndarray:
    """sRGB (0-1) of plotly's named scale at STEPS, as plotly interpolates its stops; shape [steps, 3]."""
    stops = pc.get_colorscale(name)
    colours = pc.sample_colorscale(stops, list(STEPS), colortype="rgb")
    return np.array([[float(v) for v in c[4:-1].split(",")] for c in colours]) / 255  # [steps, 3]


def hex_colour(h: str) -> np.ndarray:
    """sRGB (0-1) of '#rrggbb'; shape [3]."""
    return np.array([int(h[i:i + 2], 16) for i in (1, 3, 5)]) / 255


def to_linear(srgb: np.ndarray) -> np.ndarray:
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def simulate(srgb: np.ndarray, kind: str) -> np.ndarray:
    """Linear RGB as seen with `kind` ('protanopia', 'deuteranopia' or 'normal'), clipped to the gamut; [..., 3]."""
    lin = to_linear(srgb)
    return lin if kind == "normal" else np.clip(lin @ MACHADO[kind].T, 0, 1)


def lab(lin: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of linear sRGB; [..., 3] (L*, a*, b*)."""
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


@pytest.mark.parametrize("kind", ["normal", "protanopia", "deuteranopia"])
def test_heatmap_scale_keeps_order_and_steps_apart(kind):
    seen = lab(simulate(scale_colours(style.HEATMAP_COLORSCALE), kind))  # [11, 3]
    lightness = seen[:, 0]
    adjacent = np.linalg.norm(np.diff(seen, axis=0), axis=1)  # [10] CIE76 ΔE between neighbouring steps
    mask = lab(simulate(hex_colour(style.MASK_COLOR), kind))  # [3]
    to_mask = np.linalg.norm(seen - mask, axis=1)  # [11]
    # measurement: the claims of the module docstring, on the simulated colours
    assert np.all(np.diff(lightness) > 0), f"{kind}: L* not rising with the weight: {np.round(lightness, 1)}"
    assert adjacent.min() >= MIN_ADJACENT_DE, f"{kind}: adjacent steps ΔE {np.round(adjacent, 1)}"
    assert to_mask.min() >= MIN_MASK_DE, f"{kind}: masked grey within ΔE {to_mask.min():.1f} of a weight's colour"


@pytest.mark.parametrize("kind", ["protanopia", "deuteranopia"])
def test_a_rainbow_scale_fails_the_same_check(kind):
    # illustration that the check can fail: Jet's lightness goes up and down again
    lightness = lab(simulate(scale_colours("Jet"), kind))[:, 0]
    assert not np.all(np.diff(lightness) > 0)


def test_simulation_keeps_greys():
    # identity (checked numerically): each Machado matrix's rows sum to 1, so a grey stays the same grey
    for kind, m in MACHADO.items():
        assert np.allclose(m.sum(axis=1), 1, atol=1e-3), kind
