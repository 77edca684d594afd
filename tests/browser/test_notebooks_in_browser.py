"""Every notebook, used the way a learner uses it: JupyterLab in headless Chromium (see conftest.py).

Behaviour only; the key-press latency is measured by `python -m attnlib.bench browser`. Per notebook (a copy; the
English ones, then the Chinese edition's in notebooks/zh/): Run All shows no error and no stderr output and raises
no page or console error; every figure draws (plotly figures, and the head grids the live panels draw on
canvases); moving the main panel's slider (`.al-main-slider`, whose handle has an accessible name) with the
keyboard re-renders its heatmap. In notebook 07
every in-notebook link `](#x)` scrolls its anchor into view (JupyterLab 4.6 does not scroll to non-ASCII
heading anchors; explicit ASCII `<a id>` ones work).
"""
from __future__ import annotations

import pytest

from attnlib.bench.browser.notebook import NotebookPage

PRESSES = 3  # key presses on the main slider


def ran_cleanly(ran: NotebookPage) -> None:
    """Stop a test that needs a finished Run All when it did not finish (the first test says why)."""
    if ran.run.problems():
        pytest.fail("Run All did not finish cleanly (see test_run_all_shows_no_error)", pytrace=False)


@pytest.mark.browser
def test_run_all_shows_no_error(ran):
    problems = ran.run.problems()
    problems += [f"page errors: {ran.page_errors}"] if ran.page_errors else []
    problems += [f"console errors: {ran.console_errors}"] if ran.console_errors else []
    assert not problems, "\n".join(problems + [ran.server.log_tail()] if ran.run.dead else problems)


@pytest.mark.browser
def test_every_figure_draws(ran):
    ran_cleanly(ran)
    undrawn = ran.undrawn_figures()
    assert undrawn == [], f"{len(undrawn)} figure(s) not drawn (no trace, no image or no area), in cells: {undrawn}"


@pytest.mark.browser
def test_main_slider_rerenders_heatmap(ran):
    ran_cleanly(ran)
    panel = ran.main_panel()
    assert panel["panels"] == 1, f"expected exactly one .al-main-panel, found {panel['panels']}"
    assert panel["label"], "the main slider's handle has no accessible name (aria-label)"
    presses = [ran.press_main_slider() for _ in range(PRESSES)]
    unchanged = [p for p in presses if not p["changed"]]
    assert not unchanged, f"{len(unchanged)} of {PRESSES} key presses left the heatmap's data unchanged: {unchanged}"
    assert any(p["redrawn"] for p in presses), "the heatmap's data changed but its drawn image never did"
    assert ran.page_errors == [] and ran.console_errors == [], (ran.page_errors, ran.console_errors)


LINKS_NOTEBOOK = "07_summary_and_beyond.ipynb"  # the notebook with the most in-notebook links

# In-notebook links of the rendered markdown (not JupyterLab's own heading permalinks, the "¶" shown on hover).
LINKS_JS = """() => [...document.querySelectorAll(
  '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownOutput a[href^="#"]:not(.jp-InternalAnchorLink)')]
  .map(a => a.getAttribute('href'))"""
# Where a link's target is relative to the scroll area. JupyterLab's sanitizer turns <a id="x"> into
# <a data-jupyter-id="x">, and scrolls to that.
TARGET_JS = """(fragment) => {
  const scope = '.jp-NotebookPanel:not(.lm-mod-hidden) ';
  const outer = document.querySelector(scope + '.jp-WindowedPanel-outer');
  const id = decodeURIComponent(fragment.slice(1));
  const target = [...document.querySelectorAll(`${scope}[data-jupyter-id], ${scope}[id], ${scope}a[name]`)]
                 .find(e => e.getAttribute('data-jupyter-id') === id || e.id === id || e.getAttribute('name') === id);
  const anchors = () => [...document.querySelectorAll(scope + '.jp-MarkdownOutput a:not([href])')]
                        .slice(0, 3).map(a => a.outerHTML);
  if (!outer || !target) return {found: !!target, scroll: outer ? outer.scrollTop : null, anchors: anchors()};
  const box = outer.getBoundingClientRect(), t = target.getBoundingClientRect();
  return {found: true, scroll: outer.scrollTop,
          visible: t.top >= box.top - 2 && t.top < box.bottom,  // an empty <a> has no height
          top: Math.round(t.top - box.top), height: Math.round(box.height)};
}"""


def follow(nb: NotebookPage, href: str) -> str | None:
    """Scroll to the top, click the link `href`, and say what is wrong if its target is not in view (else None)."""
    nb.scroll_to_top()
    link = nb.page.locator(f'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownOutput a[href="{href}"]'
                           ':not(.jp-InternalAnchorLink)').first
    link.scroll_into_view_if_needed()
    link.click()
    try:  # scrolling is animated: the target comes into view within a moment
        nb.wait_for(TARGET_JS, lambda s: s.get("visible"), 3, f"target of {href} in view", href, 0.1)
    except TimeoutError:
        state = nb.page.evaluate(TARGET_JS, href)
        if not state["found"]:
            return f"{href}: no element with that id in the page (anchors seen: {state['anchors']})"
        return f"{href}: the target stayed out of view after the click ({state})"
    return None


@pytest.mark.browser
def test_in_notebook_links_scroll_to_their_target(lab, page):
    """Clicking each `](#x)` link of notebook 07 in JupyterLab brings its anchor into view."""
    if not (lab.root_dir / LINKS_NOTEBOOK).exists():
        pytest.skip(f"{LINKS_NOTEBOOK} is not among the notebooks under test")
    nb = NotebookPage(page, lab, LINKS_NOTEBOOK)
    try:
        nb.open(workspace="browser-test-links", kernel=False)
        page.wait_for_selector(".jp-NotebookPanel .jp-MarkdownOutput")
        links = list(dict.fromkeys(page.evaluate(LINKS_JS)))  # each target once, in page order
        assert links, f"no in-notebook links found in {LINKS_NOTEBOOK}"
        failures = [f for f in (follow(nb, href) for href in links) if f]
        assert not failures, f"{len(failures)} of {len(links)} links in {LINKS_NOTEBOOK}:\n" + "\n".join(failures)
    finally:
        lab.shutdown_kernels_of(LINKS_NOTEBOOK)
