"""Other needs (issue 25 §5) on the built site and decks, in Debian's Chromium, offline: notebook 01's page and deck,
both editions.

- prefers-reduced-motion: reduce: no element has a CSS transition or animation left (reveal.js's slide
  transitions are off for everyone: transition and backgroundTransition "none").
- 200 % zoom: a 640-px-wide window at device scale 2 (a 1280-px screen zoomed to 200 %): the page does not scroll
  sideways and no paragraph, list item or heading of the prose runs past the window's right edge (wide code,
  tables and figures scroll inside their own boxes).
"""
from __future__ import annotations

import pytest

from attnlib.bench.a11y import SETTLED_JS
from attnlib.bench.site import open_offline

pytestmark = pytest.mark.browser

PAGE, EDITIONS = "01_introduction.html", ["", "zh/"]

MOVING_JS = r"""() => [...document.querySelectorAll("*")].flatMap(e => {
  const s = getComputedStyle(e), t = x => x.split(",").some(v => parseFloat(v) > 0);
  const moves = (t(s.transitionDuration) && s.transitionProperty !== "none")
                || (t(s.animationDuration) && s.animationName !== "none");
  return moves ? [`${e.tagName.toLowerCase()}.${[...e.classList].join(".")}: transition ${s.transitionDuration}, `
                  + `animation ${s.animationName} ${s.animationDuration}`] : [];
})"""

OVERFLOW_JS = r"""() => { const w = document.documentElement.clientWidth;
  const prose = [...document.querySelectorAll(".jp-RenderedMarkdown p, .jp-RenderedMarkdown li, "
                 + ".jp-RenderedMarkdown h1, .jp-RenderedMarkdown h2, .jp-RenderedMarkdown h3, .al-nav")];
  return {page: document.documentElement.scrollWidth, window: w, prose: prose.length,
          over: prose.filter(e => e.getBoundingClientRect().right > w + 1).map(e => e.textContent.slice(0, 60))}; }"""


def opened(browser, browser_context_args, page_file, **options):
    """A new context with `options` (reduced_motion, forced_colors, viewport...), the page opened offline in it."""
    context = browser.new_context(**{**browser_context_args, **options})
    tab, blocked, errors = open_offline(context, page_file)
    tab.evaluate(SETTLED_JS)
    return context, tab


@pytest.mark.parametrize("kind", ["site", "slides"])
@pytest.mark.parametrize("edition", EDITIONS)
def test_reduced_motion_leaves_nothing_moving(kind, edition, built, browser, browser_context_args):
    site, slides = built
    page_file = (site if kind == "site" else slides) / edition / PAGE
    context, tab = opened(browser, browser_context_args, page_file, reduced_motion="reduce")
    try:
        moving = tab.evaluate(MOVING_JS)
        reveal = tab.evaluate("() => window.Reveal ? [Reveal.getConfig().transition, "
                              "Reveal.getConfig().backgroundTransition] : null")
    finally:
        context.close()
    assert moving == [], f"{kind}/{edition}{PAGE} still moves under prefers-reduced-motion: {moving[:10]}"
    assert reveal in (None, ["none", "none"]), f"reveal.js transitions: {reveal}"


@pytest.mark.parametrize("edition", EDITIONS)
def test_prose_reflows_at_200_percent_zoom(edition, built, browser, browser_context_args):
    site, _ = built
    context, tab = opened(browser, browser_context_args, site / edition / PAGE,
                          viewport={"width": 640, "height": 450}, device_scale_factor=2)
    try:
        seen = tab.evaluate(OVERFLOW_JS)
        tab.screenshot(path=str(built[0].parent / f"zoom200_{edition.strip('/') or 'en'}.png"))
    finally:
        context.close()
    assert seen["prose"] > 10, seen
    assert seen["over"] == [], f"{edition}{PAGE} at 200 %: prose past the right edge: {seen['over'][:5]}"
    assert seen["page"] <= seen["window"] + 1, f"{edition}{PAGE} at 200 % scrolls sideways: {seen}"

