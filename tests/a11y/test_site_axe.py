"""axe-core's WCAG 2.0/2.1 A and AA rules on every page of the static site and every deck, both editions, offline.

Each page and deck is opened from file:// in Debian's Chromium with every other request aborted, and checked as
`python -m attnlib.bench a11y` checks it (attnlib/bench/a11y.py: a deck as projected and in reveal.js's print view,
where every slide shows). No element may break a serious or critical rule; the message names the rule, the
element and the page. Moderate and minor ones are printed (pytest -s shows them).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from attnlib.bench.a11y import audit

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser


def page_names() -> list[str]:
    """What the build writes, per edition: site/index.html and a page per notebook, slides/ likewise (decks)."""
    stems = [p.stem for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]
    zh = [p.stem for p in sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))]
    return [f"{kind}/{edition}{stem}.html" for kind in ("site", "slides")
            for edition, names in (("", stems), ("zh/", zh)) if names for stem in ["index", *names]]


def described(row: dict, impacts: tuple[str, ...]) -> list[str]:
    """One line per element breaking a rule of these impacts: rule, impact, element, axe's reason."""
    return [f"{r['rule']} ({r['impact']}: {r['help']}) at {n['target']}: {n['html']} -- {n['why']}"
            for r in row["rules"] if r["impact"] in impacts for n in r["nodes"]]


@pytest.mark.parametrize("name", page_names())
def test_no_serious_or_critical_violation(name, built, browser, browser_context_args):
    site, slides = built
    page_file = (site if name.startswith("site/") else slides) / name.split("/", 1)[1]
    assert page_file.exists(), f"the build wrote no {name}"
    context = browser.new_context(**browser_context_args)
    try:
        row = audit(context, page_file)
    finally:
        context.close()
    for text in described(row, ("moderate", "minor")):
        print(f"{name}: {text}")
    assert row["blocked"] == [], f"{name} requested {row['blocked']} (the check runs offline)"
    bad = described(row, ("critical", "serious"))
    shown = row["serious"] + row["critical"]  # elements; the first 5 per rule are listed
    assert not bad, (f"{name}: {shown} element(s) break serious/critical WCAG rules (axe {row['axe']}):\n"
                     + "\n".join(bad))
