"""Issue 25 §2-4 in JupyterLab: what a screen reader and a keyboard get of each notebook's main panel.

Per notebook (both editions; fixtures in conftest.py): every figure of the main panel has its title as its name
(Playwright's aria snapshot) and a description (Chromium's accessibility tree, through CDP: Playwright's snapshot
leaves descriptions out) whose numbers are the drawn data's, read from the page and recomputed here: each query's
two strongest keys with their weights for a heatmap, the row's entropy and largest weight for a saturation chart.
Then a keyboard-only walk: Tab to the main slider, move it, Tab to the heatmap, arrow to a cell and read its
announcement (aria-live), Escape to the "Show as table" button, Enter, and the table's cells are the weights.
Screenshots of the focus cell and of the table land in build/browser/ (NN_focus.png, NN_table.png).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

PANEL = ".al-main-panel"
HANDLE = ".al-main-slider .noUi-handle"

# The main panel's figures as drawn: kind, name, description count, and the data drawn (panel_view.js exposes it)
FIGURES_JS = """() => [...document.querySelector('.al-main-panel')
  .querySelectorAll('.al-heatmap, .al-chart, .al-plotly')].map((el) => ({
    kind: el.classList.contains('al-heatmap') ? 'grid' : el.classList.contains('al-chart') ? 'chart' : 'plotly',
    name: el.getAttribute('aria-label'), role: el.getAttribute('role'), described: el.dataset.described,
    weights: el.alWeights ? Array.from(el.alWeights) : null, masked: el.alMasked ? Array.from(el.alMasked) : null,
    view: el.alView ? { q: el.alView.q_tokens, k: el.alView.k_tokens, heads: el.alView.domains.length,
      title: el.alView.title } : null,
    figure: el.alFigure || null }))"""


def _plain(markup: str) -> str:
    """plotly label markup as text, as the view makes a name of it (<br> a space, tags dropped)."""
    text = re.sub(r"<br\s*/?>", " ", markup or "")
    text = re.sub(r"<[^>]*>", "", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def _descriptions(page) -> list[tuple[str, str, str]]:
    """(role, name, description) of every named image and figure in the main panel (Chromium's accessibility tree)."""
    cdp = page.context.new_cdp_session(page)
    try:
        panel = cdp.send("Runtime.evaluate", {"expression": f"document.querySelector('{PANEL}')"})["result"]
        nodes = cdp.send("Accessibility.queryAXTree", {"objectId": panel["objectId"]})["nodes"]
    finally:
        cdp.detach()
    value = lambda n, key: (n.get(key) or {}).get("value", "")  # noqa: E731
    return [(value(n, "role"), value(n, "name"), value(n, "description")) for n in nodes  # (plotly's unnamed
            if value(n, "role") in ("image", "figure") and value(n, "name") and not n.get("ignored")]  # svg icons)


def _strongest(row: np.ndarray, skip: np.ndarray, n: int = 2) -> list[int]:
    """The n largest of a row not skipped, largest first (ties: the first key)."""
    order = sorted((j for j in range(len(row)) if not skip[j]), key=lambda j: (-row[j], j))
    return order[:n]


def _grid_rows(fig: dict, sep: str) -> list[str]:
    """'query → key w<sep>key w' of every query and head, from the drawn weights."""
    q, k, heads = fig["view"]["q"], fig["view"]["k"], fig["view"]["heads"]
    w = np.asarray(fig["weights"], dtype=np.float32).reshape(heads, len(q), len(k))  # [heads, N_q, N_k]
    masked = np.asarray(fig["masked"] or np.zeros(w.size), dtype=bool).reshape(w.shape)  # [heads, N_q, N_k]
    return [f"{q[i]} → " + sep.join(f"{k[j]} {w[h, i, j]:.2f}" for j in _strongest(w[h, i], masked[h, i]))
            for h in range(heads) for i in range(len(q))]


def _main_figures(ran) -> list[dict]:
    """The main panel's figures once each has its first description."""
    ran.main_panel()
    ran.page.wait_for_function(f"() => {FIGURES_JS}().every((f) => f.described)", timeout=15_000)
    return ran.page.evaluate(FIGURES_JS)


@pytest.mark.browser
def test_every_figure_has_its_title_as_name_and_its_numbers_as_description(ran, shots):
    figures = _main_figures(ran)
    tree = _descriptions(ran.page)
    assert len(tree) == len(figures), (tree, [f["kind"] for f in figures])
    snapshot = ran.page.locator(PANEL).first.aria_snapshot()  # Playwright's accessibility snapshot
    (shots / f"{ran.name.split('_')[0]}_a11y.txt").write_text(  # what a screen reader gets, for the record
        snapshot + "\n\n" + "\n".join(f"{role} {name!r}: {text}" for role, name, text in tree) + "\n", encoding="utf-8")
    for fig, (role, name, description) in zip(figures, tree):
        title = fig["view"]["title"] if fig["view"] else fig["figure"]["layout"].get("title", "")
        title = _plain(title.get("text", "") if isinstance(title, dict) else title)
        assert name == title and name, (fig["kind"], name, title)
        assert f'{"img" if role == "image" else "figure"} {json.dumps(name, ensure_ascii=False)}' in snapshot, snapshot
        assert description, f"{fig['kind']} {name!r} has no description"
        if fig["kind"] == "grid":  # measurement: each query's two strongest keys, as the weights drawn say
            missing = [row for row in _grid_rows(fig, "，" if ran.name.startswith("zh-") else ", ")
                       if row not in description]
            assert not missing, f"{name}: rows missing from the description {description!r}: {missing[:3]}"
        if fig["kind"] == "chart" and fig["figure"]["layout"].get("meta", {}).get("kind") == "saturation":
            y = np.asarray(fig["figure"]["data"][0]["y"], dtype=np.float64)  # the bars drawn: one query row
            entropy = -np.sum(y[y > 0] * np.log(y[y > 0]))
            assert f"{entropy:.2f}" in description and f"{y.max():.2f}" in description, (description, entropy)


def _focused(page, selector: str) -> bool:
    return page.evaluate(f"() => !!document.activeElement && document.activeElement.matches({selector!r})")


def _tab_to(page, selector: str, most: int = 40) -> int:
    """Press Tab until the focused element matches `selector`; returns the presses."""
    for n in range(1, most + 1):
        page.keyboard.press("Tab")
        if _focused(page, selector):
            return n
    raise AssertionError(f"{most} Tab presses never reached {selector}")


@pytest.mark.browser
def test_keyboard_walk_slider_heatmap_cell_table(ran, shots):
    figures = _main_figures(ran)
    grids = [f for f in figures if f["kind"] == "grid"]
    if not grids:
        pytest.skip("this main panel has no heatmap")
    page, stem = ran.page, ran.name.split("_")[0]
    page.locator(PANEL).first.locator(".widget-html").first.click()  # where a reader's Tab starts: the title
    _tab_to(page, HANDLE)
    before = page.evaluate("() => document.querySelector('.al-main-panel .al-heatmap').dataset.described")
    at_end = page.evaluate("() => { const h = document.activeElement; "
                           "return +h.getAttribute('aria-valuenow') >= +h.getAttribute('aria-valuemax'); }")
    page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
    page.wait_for_function(f"() => document.querySelector('{PANEL} .al-heatmap').dataset.described !== '{before}'",
                           timeout=15_000)  # the new state, described once it settled
    _tab_to(page, ".al-heatmap")
    for key in ("ArrowRight", "ArrowDown", "ArrowRight"):  # the first arrow shows cell (0, 0); then (1, 0), (1, 1)
        page.keyboard.press(key)
    fig = page.evaluate(FIGURES_JS)[[f["kind"] for f in figures].index("grid")]
    q, k = fig["view"]["q"], fig["view"]["k"]
    w = np.asarray(fig["weights"], dtype=np.float32).reshape(-1, len(q), len(k))  # [heads, N_q, N_k]
    cell = page.locator(f"{PANEL} .al-fig").first
    said = cell.locator(".al-live").text_content()
    assert q[min(1, len(q) - 1)] in said and k[min(1, len(k) - 1)] in said, said  # measurement: the cell's weight
    assert f"{w[0, min(1, len(q) - 1), min(1, len(k) - 1)]:.2f}" in said, (said, w[0, :2, :2])
    assert cell.locator(".al-focus").is_visible(), "no visible focus cell"
    cell.screenshot(path=str(shots / f"{stem}_focus.png"))
    page.keyboard.press("Escape")
    assert _focused(page, ".al-table-toggle"), "Escape did not leave the heatmap for its table button"
    page.keyboard.press("Enter")
    table = cell.locator(".al-table table").first
    assert table.is_visible() and cell.locator(".al-table-toggle").get_attribute("aria-expanded") == "true"
    headers = table.locator("thead th").all_text_contents()[1:]
    rows = [r.locator("td").all_text_contents() for r in table.locator("tbody tr").all()]
    assert headers == k and len(rows) == len(q), (headers, k, len(rows))
    shown = np.array([[float(c) if re.fullmatch(r"-?[\d.]+", c) else 0.0 for c in r] for r in rows])
    np.testing.assert_allclose(shown, w[0], atol=5e-5)  # measurement: the table is the drawn head-1 weights
    cell.screenshot(path=str(shots / f"{stem}_table.png"))
    page.keyboard.press("Enter")  # closed again
