"""Colour contrast of what the site's CSS sets (WCAG 2.1's formula, AA: 4.5:1 for text), without a browser.

The code colours come from the accessible-pygments theme scripts/sitebuild/assets.py writes into code_a11y.css;
every colour in that CSS is measured against the theme's background. The same formula applied to JupyterLab's old
comment colour (#408080 on #f5f5f5) gives 4.17 and fails, as axe found: the check can fail.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from sitebuild.assets import CODE_STYLE, code_css  # noqa: E402

AA = 4.5


def luminance(hex_colour: str) -> float:
    """WCAG relative luminance of '#rgb' or '#rrggbb'."""
    h = hex_colour.lstrip("#")
    h = "".join(c * 2 for c in h) if len(h) == 3 else h
    channels = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_formula_matches_what_axe_measured():
    # measurement: axe reported these ratios on the old pages (issue 25), cut to two decimals
    assert int(contrast("#408080", "#f5f5f5") * 100) == 417
    assert int(contrast("#b0b0b0", "#ffffff") * 100) == 216
    assert contrast("#408080", "#f5f5f5") < AA  # the old comment colour fails AA


def test_every_code_colour_meets_aa_on_the_code_background():
    css = code_css()
    background = re.search(r"--jp-cell-editor-background:\s*(#[0-9a-fA-F]{3,6})", css).group(1)
    colours = set(re.findall(r"(?<!background-)color:\s*(#[0-9a-fA-F]{3,6})", css))
    assert len(colours) >= 5, f"{CODE_STYLE}: expected a palette, found {colours}"
    weak = {c: round(contrast(c, background), 2) for c in colours if contrast(c, background) < AA}
    assert not weak, f"{CODE_STYLE} colours below {AA}:1 on {background}: {weak}"


@pytest.mark.parametrize("colour", ["#616161"])  # JupyterLab's --md-grey-700, the inactive prompts at opacity 1
def test_prompt_colour_meets_aa_on_white(colour):
    assert contrast(colour, "#ffffff") >= AA
