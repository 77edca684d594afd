"""Other needs (issue 25 §5) on the built site and decks, in Debian's Chromium, offline: notebook 01's page and deck,
both editions.

- prefers-reduced-motion: reduce: no element has a CSS transition or animation left (reveal.js's slide
  transitions are off for everyone: transition and backgroundTransition "none").
- forced-colors: active (Windows high contrast): the heatmap keeps its colours and a line between every two cells.
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



# Windows high contrast (issue 25 §5): under forced colours the heatmap keeps its colours (forced-color-adjust:
# none) and draws a line between every two cells. Sampled on the main panel's canvas grid: at the middle of every
# inner cell boundary of head 1, the darkest pixel within 1 px; the same points without forced colours.
BOUNDARY_JS = r"""() => {
  const panel = Object.values(window.alStaticPanels).find((p) => p.root.classList.contains("al-main-panel"));
  const grid = panel.canvases.find((c) => c && c.rect && c.cells), f = grid.fig, b = grid.rect(0);
  const canvas = grid.cells, scale = canvas.width / f.width, ctx = canvas.getContext("2d");
  const nq = f.q_tokens.length, nk = f.k_tokens.length, out = [];
  const darkest = (x, y) => { let low = 765;
    const d = ctx.getImageData(Math.round(x * scale) - 1, Math.round(y * scale) - 1, 3, 3).data;
    for (let p = 0; p < d.length; p += 4) low = Math.min(low, d[p] + d[p + 1] + d[p + 2]);
    return low; };
  const cw = b.w / nk, ch = b.h / nq;
  for (let j = 1; j < nk; j++) for (let i = 0; i < nq; i++) out.push(darkest(b.x + j * cw, b.y + (i + 0.5) * ch));
  for (let i = 1; i < nq; i++) for (let j = 0; j < nk; j++) out.push(darkest(b.x + (j + 0.5) * cw, b.y + i * ch));
  return {points: out, adjust: getComputedStyle(canvas).forcedColorAdjust};
}"""


@pytest.mark.parametrize("edition", EDITIONS)
def test_forced_colours_keep_the_cell_boundaries(edition, built, browser, browser_context_args):
    site, _ = built
    seen = {}
    for mode in ("none", "active"):
        context, tab = opened(browser, browser_context_args, site / edition / PAGE, forced_colors=mode)
        try:
            tab.wait_for_function("() => Object.keys(window.alStaticPanels || {}).length > 0")
            seen[mode] = tab.evaluate(BOUNDARY_JS)
            main = tab.locator(".al-main-panel .al-static-figures").first
            main.scroll_into_view_if_needed()
            main.screenshot(path=str(built[0].parent / f"forced_{mode}_{edition.strip('/') or 'en'}.png"))
        finally:
            context.close()
    plain, forced = seen["none"]["points"], seen["active"]["points"]
    assert seen["active"]["adjust"] == "none", seen["active"]["adjust"]  # the colour map is the data: kept
    # measurement: a line crosses the boundary points under forced colours (at most half as bright as without;
    # measured: 217 of 220 in en, 178 of 180 in zh; the others lie under a marker drawn on the cells)
    lined = [f <= 0.52 * p for f, p in zip(forced, plain)]
    assert len(forced) > 20 and lined.count(True) >= 0.95 * len(lined), \
        f"{edition}{PAGE}: {lined.count(False)} of {len(lined)} boundary points " \
        f"without a line (forced {forced[:8]}, plain {plain[:8]})"
