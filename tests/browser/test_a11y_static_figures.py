"""Issue 25 §2-3 in JupyterLab: the plotly figures a notebook shows as plain outputs (outside any live panel).

Per notebook (both editions; the shared Run All of tests/conftest.py): every plotly output outside a panel has its
title as its accessible name and a description (Chromium's accessibility tree, through CDP) whose numbers are those
of the figure as plotly holds it in the page (gd.data, decoded here in Python): per heatmap row its largest weight
with its key, for a saturation chart the row's entropy and largest weight, else each trace's largest value. Its
"Show as table" toggle is a button in the Tab order that opens tables with column and row headers; a heatmap's
table is its grid. What a screen reader gets: build/browser/NN_static_a11y.txt; the first figure with its table
open: NN_static_table.png.
"""
from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

PLOTLY_MIME = "application/vnd.plotly.v1+json"

OUTSIDE = ("[...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output.js-plotly-plot, "
           ".jp-Notebook .jp-OutputArea-output .js-plotly-plot')].filter((gd) => !gd.closest('.al-panel, .al-plotly'))")
# Each plain plotly output: its role, name, whether described, and its figure as plotly holds it (no template)
FIGURES_JS = f"""() => {OUTSIDE}.map((gd) => ({{
  role: gd.getAttribute('role'), name: gd.getAttribute('aria-label'), described: gd.dataset.described || null,
  figure: JSON.parse(JSON.stringify({{data: gd.data, layout: gd.layout}},
    (k, v) => (k === 'template' ? undefined : ArrayBuffer.isView(v) ? Array.from(v) : v)))}}))"""
TYPES = {"f8": "<f8", "f4": "<f4", "i1": "i1", "u1": "u1", "i2": "<i2", "u2": "<u2", "i4": "<i4", "u4": "<u4"}


def decoded(value):
    """plotly's {dtype, bdata, shape} arrays as numpy arrays, anywhere in a figure."""
    if isinstance(value, dict) and isinstance(value.get("bdata"), str) and value.get("dtype") in TYPES:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=TYPES[value["dtype"]])
        return flat.reshape([int(s) for s in str(value.get("shape", len(flat))).split(",")])
    if isinstance(value, dict):
        return {k: decoded(v) for k, v in value.items()}
    return [decoded(v) for v in value] if isinstance(value, list) else value


def plain(markup) -> str:
    """plotly label markup as text (<br> a space, tags dropped, entities read)."""
    markup = markup.get("text", "") if isinstance(markup, dict) else str(markup or "")
    text = re.sub(r"<[^>]*>", "", re.sub(r"<br\s*/?>", " ", markup))
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def tick_names(trace: dict, layout: dict, letter: str, n: int) -> list:
    """A heatmap's x or y positions, named by its axis' tick text where it has one."""
    ref = trace.get(f"{letter}axis") or letter
    axis = layout.get(f"{letter}axis{ref[1:]}") or {}
    at = list(trace[letter]) if isinstance(trace.get(letter), (list, np.ndarray)) else list(range(n))
    vals, names = list(axis.get("tickvals") or []), list(axis.get("ticktext") or [])
    return [names[vals.index(v)] if v in vals and vals.index(v) < len(names) else v for v in at]


def expected_parts(figure: dict) -> list[str]:
    """What the description must say, in order: 'key w' per heatmap row, else each trace's largest value."""
    data, layout = decoded(figure["data"]), decoded(figure["layout"])
    meta = layout.get("meta") or {}
    if meta.get("kind") == "saturation":  # the row drawn: its entropy and its largest weight
        y = np.asarray(data[0]["y"], dtype=np.float64)  # [N_k]
        return [f"{-np.sum(y[y > 0] * np.log(y[y > 0])):.2f}", f"{y.max():.2f}"]
    if meta.get("kind") == "head_grid":  # a head grid's weights, not its mask traces
        data = data[: 2 * int(meta.get("slots", 1)): 2]
    out = []
    for tr in data:
        if tr.get("visible", True) is False or tr.get("type") == "table":
            continue
        if tr.get("type") == "heatmap":
            z = np.asarray([[np.nan if c is None else c for c in row] for row in tr["z"]], dtype=np.float64)
            keys = tick_names(tr, layout, "x", z.shape[1])  # z: [rows, cols]
            for row in z:
                if not np.all(np.isnan(row)):
                    j = int(np.nanargmax(row))
                    out.append(f"{keys[j]} {row[j]:.2f}" if isinstance(keys[j], str) else f"{row[j]:.2f}")
            continue
        y = np.asarray([np.nan if v is None else v for v in np.ravel(tr.get("y", []))], dtype=np.float64)
        if y.size and not np.all(np.isnan(y)):
            out.append(f"{np.nanmax(y):.2f}")
    return out


def in_order(parts: list[str], description: str) -> list[str]:
    """The parts not found in the description in this order (a number not inside a longer number)."""
    pos, missing = 0, []
    for part in parts:
        hit = re.compile(r"(?<![\d.])" + re.escape(part) + r"(?!\d)").search(description, pos)
        if hit:
            pos = hit.end()
        else:
            missing.append(part)
    return missing


def accessible(page, k: int) -> tuple[str, str, str]:
    """(role, name, description) of the k-th plain plotly output in Chromium's accessibility tree."""
    cdp = page.context.new_cdp_session(page)
    try:
        gd = cdp.send("Runtime.evaluate", {"expression": f"{OUTSIDE}[{k}]"})["result"]
        node = cdp.send("Accessibility.getPartialAXTree", {"objectId": gd["objectId"], "fetchRelatives": False})
    finally:
        cdp.detach()
    n = node["nodes"][0]
    return tuple((n.get(key) or {}).get("value", "") for key in ("role", "name", "description"))


def static_figures(ran) -> list[dict]:
    """The notebook's plain plotly outputs once each is described."""
    ran.page.wait_for_function(f"() => {FIGURES_JS}().every((f) => f.described)", timeout=20_000)
    return ran.page.evaluate(FIGURES_JS)


@pytest.mark.browser
def test_every_plain_plotly_output_has_its_title_as_name_and_its_numbers_as_description(ran, shots, notebook):
    figures = static_figures(ran)
    outputs = [o for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"] for o in c.get("outputs", [])
               if PLOTLY_MIME in o.get("data", {})]  # the plain plotly outputs the notebook shows (06 has none)
    assert len(figures) == len(outputs), f"{len(figures)} plotly outputs on the page, {len(outputs)} in the notebook"
    tree = [accessible(ran.page, k) for k in range(len(figures))]
    (shots / f"{ran.name.split('_')[0]}_static_a11y.txt").write_text(  # what a screen reader gets, for the record
        "".join(f"{role} {name!r}: {text}\n" for role, name, text in tree), encoding="utf-8")
    for fig, (role, name, description) in zip(figures, tree):
        title = plain(fig["figure"]["layout"].get("title", ""))
        assert role == "figure" and name == title and name, (role, name, title)
        parts = expected_parts(fig["figure"])
        assert description and parts, (name, description, parts)
        missing = in_order(parts, description)  # measurement: the numbers as plotly holds them
        assert not missing, f"{name}: {missing[:3]} not (in order) in {description!r}"
    assert not ran.page_errors, ran.page_errors


@pytest.mark.browser
def test_every_plain_plotly_output_has_a_table_by_keyboard(ran, shots):
    figures, page = static_figures(ran), ran.page
    for k, fig in enumerate(figures):
        gd = page.locator(".jp-Notebook .jp-OutputArea-output.js-plotly-plot, "
                          ".jp-Notebook .jp-OutputArea-output .js-plotly-plot").filter(
            has=page.locator(".al-outside")).nth(k)
        toggle = gd.locator(".al-outside > .al-table-toggle")
        toggle.scroll_into_view_if_needed()
        toggle.focus()
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")  # a real button in the Tab order: Tab comes back to it
        assert toggle.evaluate("(b) => b === document.activeElement && b.tagName === 'BUTTON'"), k
        page.keyboard.press("Enter")
        assert toggle.get_attribute("aria-expanded") == "true"
        tables = gd.locator(".al-outside .al-table table")
        assert tables.count() >= 1
        for t in range(tables.count()):
            table = tables.nth(t)
            assert table.locator("thead th[scope=col]").count() >= 2 and table.locator("tbody tr").count() >= 1
            assert table.locator("tbody tr").count() == table.locator("tbody th[scope=row]").count()
        data, layout = decoded(fig["figure"]["data"]), decoded(fig["figure"]["layout"])
        meta = layout.get("meta") or {}
        grids = [tr for tr in (data[: 2 * int(meta.get("slots", 1)): 2] if meta.get("kind") == "head_grid" else data)
                 if tr.get("type") == "heatmap" and tr.get("visible", True) is not False]
        if grids:  # measurement: the first heatmap's table is its grid, headed by its keys
            z = np.asarray([[np.nan if c is None else c for c in row] for row in grids[0]["z"]], dtype=np.float64)
            table = tables.first
            heads = table.locator("thead th").all_text_contents()[1:]
            assert heads == [str(v) for v in tick_names(grids[0], layout, "x", z.shape[1])], heads
            cells = [[float(c) for c in r.locator("td").all_text_contents()] for r in table.locator("tbody tr").all()]
            np.testing.assert_allclose(np.asarray(cells), z, atol=5e-5)
        if k == 0:
            gd.screenshot(path=str(shots / f"{ran.name.split('_')[0]}_static_table.png"))
        page.keyboard.press("Enter")  # closed again
        assert toggle.get_attribute("aria-expanded") == "false"
