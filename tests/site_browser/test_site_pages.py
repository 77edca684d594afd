"""Every page of the static site in headless Chromium, offline: each live control of every panel moves its figures.

For every notebook page (both editions): every request that is not file:// is aborted and recorded (none may
happen); every live panel of the notebook is on the page, each with a control that moves; the panels' embedded
states fit STATE_BUDGET together; a panel with a control thinned below its JupyterLab values says so in its
caption; for each live control of each panel, a move (the keyboard for a slider, select_option, a click) redraws
the figures with exactly the data that the build computed for that state with the panel's own update (read back
from the page's embedded JSON in Python, decoded independently of the page's script: the traces plotly.js or a
chart canvas holds, the weights and masked cells a head-grid canvas drew); the panel's screenshot differs before
and after; no page error. Screenshots: build/site-browser/.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attnlib.bench.site import open_offline
from attnlib.widgets.states import STATE_BUDGET
from attnlib.widgets.static import text

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser


def page_names() -> list[str]:
    """The pages the site build writes: one per course notebook, and per Chinese twin in notebooks/zh/."""
    names = [p.stem + ".html" for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]
    zh = ROOT / "notebooks" / "zh"
    names += [f"zh/{p.stem}.html" for p in sorted(zh.glob("[0-9][0-9]_*.ipynb"))] if zh.is_dir() else []
    return names


def notebook_panels(name: str) -> int:
    """How many live panels the notebook displays (outputs that are a LivePanel: "LivePanel: …" / "交互面板：…")."""
    nb = nbformat.read(ROOT / "notebooks" / name.replace(".html", ".ipynb"), as_version=4)
    return sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if str(o.get("data", {}).get("text/plain", "")).startswith(("LivePanel", "交互面板", "AttentionExplorer",
                                                                          "SaturationExplorer")))


def embedded(tab) -> list[dict]:
    """Every live panel's id, its embedded states (parsed in Python), their bytes and its caption, in page order."""
    roots = tab.locator(".al-static-panel[data-al-live]")
    out = []
    for i in range(roots.count()):
        root = roots.nth(i)
        raw = root.locator("script.al-states").text_content()
        out.append({"id": root.get_attribute("id"), "spec": json.loads(raw), "bytes": len(raw.encode()),
                    "caption": root.locator(".al-static-caption").text_content()})
    return out


def expected_figures(spec: dict, key: str) -> list:
    """What each figure of state `key` must show, from the pool (Python's reading of the build's states): a plotly
    figure's or chart's traces; a head grid's weights and masked cells (float32, flat), read from its traces."""
    state = spec["states"][key]
    assert not isinstance(state, dict), f"state {key} failed at build time: {state}"
    out = []
    for kind, fig in zip(spec["kinds"], state):
        traces = [spec["pool"][t] for t in fig[0]]
        if kind != "grid":
            out.append(traces)
            continue
        cells = spec["pool"][fig[2]]["cells"]
        shape = np.shape(traces[cells[0][0]]["z"])
        masks = [np.asarray(traces[m]["z"]) != 0 if m is not None else np.zeros(shape, bool) for _, m in cells]
        out.append({"weights": np.float32([traces[w]["z"] for w, _ in cells]).ravel(),
                    "masked": np.uint8(masks).ravel() if any(m is not None for _, m in cells) else None})
    return out


DRAWN_JS = """(id) => { const p = window.alStaticPanels[id]; return p.kinds.map((kind, i) =>
  kind === "grid" ? {weights: Array.from(p.canvases[i].w), masked: p.canvases[i].m ? Array.from(p.canvases[i].m) : null}
  : kind === "chart" ? JSON.parse(p.canvases[i].json).data : JSON.parse(JSON.stringify(p.divs[i].data))); }"""


def drawn_figures(tab, panel_id: str) -> list:
    """What each figure of the panel shows: the weights and masked cells a head-grid canvas drew, the traces a chart
    canvas drew (its JSON) or plotly.js holds (gd.data)."""
    return tab.evaluate(DRAWN_JS, panel_id)


def assert_same_data(drawn: list, expected: list, where: str) -> None:
    """Every property the build computed is in the drawn traces, equal (same numbers, same labels); a head grid
    drew exactly the float32 weights and the masked cells of the build's traces."""
    assert len(drawn) == len(expected), where
    for f, (d_fig, e_fig) in enumerate(zip(drawn, expected)):
        if isinstance(e_fig, dict):
            assert np.array_equal(np.float32(d_fig["weights"]), e_fig["weights"]), f"{where}: grid {f}'s weights"
            assert (d_fig["masked"] is None) == (e_fig["masked"] is None), f"{where}: grid {f}'s mask"
            assert e_fig["masked"] is None or np.array_equal(d_fig["masked"], e_fig["masked"]), f"{where}: grid {f}"
            continue
        assert len(d_fig) == len(e_fig), f"{where}: figure {f} has {len(d_fig)} traces, expected {len(e_fig)}"
        for t, (d, e) in enumerate(zip(d_fig, e_fig)):
            for prop, value in e.items():
                assert d.get(prop) == value, f"{where}: figure {f} trace {t} '{prop}' differs from the build's state"


def move(tab, panel_id: str, control: dict) -> int:
    """Move one control the way a learner does; return the value index it now has."""
    sel = f'#{panel_id} [data-al-control="{control["name"]}"]'
    count, index = len(control["values"]), control["now"]
    if control["kind"] == "checkbox":
        tab.click(sel)
        return 1 - index
    if control["kind"] == "select":
        to = (index + 1) % count
        tab.select_option(sel, str(to))
        return to
    tab.focus(sel)
    key = "ArrowRight" if index < count - 1 else "ArrowLeft"
    tab.keyboard.press(key)
    return index + 1 if key == "ArrowRight" else index - 1


def check_panel(tab, name: str, n: int, info: dict, shots: Path) -> None:
    """Panel n of page `name`: its first state drawn, each live control moved and its figures redrawn exactly."""
    panel_id, spec = info["id"], info["spec"]
    where = f"{name} panel {n + 1}"
    controls = [dict(c, now=c["index"]) for c in spec["controls"]]
    key = ",".join(str(c["now"]) for c in controls)
    assert_same_data(drawn_figures(tab, panel_id), expected_figures(spec, key), f"{where} at its first state")
    live = [c for c in controls if c["kind"] != "fixed" and len(c["values"]) > 1]
    assert live, f"{where}: no control moves on the page"
    language = "zh" if name.startswith("zh/") else "en"
    thinned = [c["name"] for c in controls if c["kind"] != "fixed" and len(c["values"]) < c["total"]]
    said = text("thinned", language, mb=f"{STATE_BUDGET / 1e6:g}")
    assert (said in info["caption"]) == bool(thinned), f"{where}: thinned {thinned}, caption {info['caption']!r}"
    for c in controls:
        disabled = tab.locator(f'#{panel_id} [data-al-control="{c["name"]}"]').is_disabled()
        assert disabled == (c not in live), f"{where}: control {c['name']} disabled={disabled}"
    panel = tab.locator(f"#{panel_id} .al-static-figures")
    stem = name.replace("zh/", "").split("_")[0] + ("_zh" if name.startswith("zh/") else "") + f"_p{n + 1}"
    for c in live:
        panel.scroll_into_view_if_needed()
        before = panel.screenshot(path=str(shots / f"{stem}_{c['name']}_before.png"))
        c["now"] = move(tab, panel_id, c)
        key = ",".join(str(x["now"]) for x in controls)
        tab.wait_for_function("([id, key]) => document.getElementById(id).dataset.alKey === key",
                              arg=[panel_id, key], timeout=10_000)
        tab.evaluate("(id) => window.alStaticPanels[id].pending", panel_id)
        tab.wait_for_timeout(50)
        assert tab.locator(f"#{panel_id} .al-static-status").text_content() == "", f"{where}: {c['name']}"
        assert_same_data(drawn_figures(tab, panel_id), expected_figures(spec, key), f"{where}: {c['name']} moved")
        after = panel.screenshot(path=str(shots / f"{stem}_{c['name']}_after.png"))
        assert after != before, f"{where}: moving {c['name']} changed nothing on screen"
    tab.locator(f"#{panel_id}").screenshot(path=str(shots / f"{stem}_panel.png"))  # controls and figures


@pytest.mark.parametrize("name", page_names())
def test_every_panel_moves_offline(name, site, shots, browser, browser_context_args):
    page_file = site / name
    if not page_file.exists() and os.environ.get("AL_SITE_BROWSER_SITE"):
        pytest.skip(f"{name} is not in the site given by AL_SITE_BROWSER_SITE")
    assert page_file.exists(), f"the build wrote no {name}"
    context = browser.new_context(**browser_context_args)
    tab, blocked, errors = open_offline(context, page_file)
    try:
        panels = embedded(tab)
        assert len(panels) == notebook_panels(name), f"{name}: {len(panels)} live panels on the page"
        assert sum(p["bytes"] for p in panels) <= STATE_BUDGET, f"{name}: {[p['bytes'] for p in panels]}"
        assert sum("al-main-panel" in (tab.locator(f"#{p['id']}").get_attribute("class") or "") for p in panels) == 1
        for n, info in enumerate(panels):
            check_panel(tab, name, n, info, shots)
        assert blocked == [], f"{name} requested {blocked}"
        assert errors == [], f"{name}: page errors {errors}"
    finally:
        context.close()


DRAG_JS = r"""async ([id, k, steps]) => {
  const panel = window.alStaticPanels[id], input = panel.inputs[k], before = panel.redraws;
  for (const to of steps) {  // moves faster than frames: one task, no frame between them
    input.value = String(to);
    input.dispatchEvent(new Event("input", {bubbles: true}));
  }
  await panel.pending;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {redraws: panel.redraws - before, key: panel.root.dataset.alKey};
}"""


@pytest.mark.parametrize("name", [n for n in page_names() if not n.startswith("zh/")])
def test_a_drag_draws_its_last_value_without_a_backlog(name, site, browser, browser_context_args):
    """A slider dragged faster than frames: the figures end at its last value, drawn at most twice, not per move."""
    page_file = site / name
    if not page_file.exists() and os.environ.get("AL_SITE_BROWSER_SITE"):
        pytest.skip(f"{name} is not in the site given by AL_SITE_BROWSER_SITE")
    context = browser.new_context(**browser_context_args)
    tab, blocked, errors = open_offline(context, page_file)
    try:
        main = tab.locator(".al-static-panel.al-main-panel[data-al-live]").get_attribute("id")
        info = next(p for p in embedded(tab) if p["id"] == main)  # the main panel's first slider
        panel_id, spec = info["id"], info["spec"]
        controls = spec["controls"]
        ranges = [k for k, c in enumerate(controls) if c["kind"] == "range" and len(c["values"]) > 2]
        if not ranges:
            pytest.skip(f"{name}: no slider with more than two values on the page")
        k = ranges[0]
        count, start = len(controls[k]["values"]), controls[k]["index"]
        steps = [(start + j) % count for j in range(1, 6)]
        steps = [s for s in steps if s != start] or [(start + 1) % count]
        out = tab.evaluate(DRAG_JS, [panel_id, k, steps])
        key = ",".join(str(steps[-1] if j == k else c["index"]) for j, c in enumerate(controls))
        assert out["key"] == key, f"{name}: the panel shows {out['key']}, the slider ended at {key}"
        assert 1 <= out["redraws"] <= 2, f"{name}: {len(steps)} moves in one task drew {out['redraws']} times"
        assert_same_data(drawn_figures(tab, panel_id), expected_figures(spec, key), f"{name}: after a drag")
        assert blocked == [] and errors == [], f"{name}: {blocked} {errors}"
    finally:
        context.close()


# Issue 25 §2: every figure on a page (in a panel or not) has a name and a description in numbers.
FIGURE_BOXES_JS = """() => Array.from(document.querySelectorAll('.al-figure')).map((box) => {
  const target = box.querySelector('[aria-describedby]'), panel = box.closest('.al-static-panel[data-al-live]');
  return {div: (box.querySelector('.plotly-graph-div') || {}).id || null, panel: panel ? panel.id : null,
          index: panel ? Array.from(panel.querySelectorAll('.al-static-figures > .al-figure')).indexOf(box) : null,
          described: !!(target && target.dataset.described)};
})"""


def accessible(tab, k: int) -> tuple[str, str]:
    """(name, description) of figure k's described element in Chromium's accessibility tree (CDP)."""
    cdp = tab.context.new_cdp_session(tab)
    try:
        js = f"document.querySelectorAll('.al-figure')[{k}].querySelector('[aria-describedby]')"
        obj = cdp.send("Runtime.evaluate", {"expression": js})["result"]
        node = cdp.send("Accessibility.queryAXTree", {"objectId": obj["objectId"]})["nodes"][0]
    finally:
        cdp.detach()
    return (node.get("name") or {}).get("value", ""), (node.get("description") or {}).get("value", "")


def page_figure(html_text: str, div_id: str) -> dict:
    """A static figure's {data, layout} as the page embeds it (plotly.py's Plotly.newPlot call), bdata decoded."""
    at = html_text.index(f'Plotly.newPlot(                        "{div_id}",')
    rest = html_text[at:].split(",", 1)[1]
    decoder = json.JSONDecoder()
    data, end = decoder.raw_decode(rest.lstrip())
    rest = rest.lstrip()[end:].lstrip().lstrip(",")
    layout, _ = decoder.raw_decode(rest.lstrip())
    return {"data": [{k: decoded(v) for k, v in t.items()} for t in data], "layout": layout}


def decoded(value):
    """plotly.py's {dtype, bdata, shape} as a numpy array; anything else as it is."""
    if isinstance(value, dict) and "bdata" in value:
        import base64
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(s) for s in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape)
    return value


def summary_numbers(traces: list[dict], layout: dict) -> list[str]:
    """The numbers a figure's description must give, in order: per heatmap row its largest weight (a head grid of a
    static page: its weight traces only), else each trace's largest value (a saturation chart: its bars' largest)."""
    meta = layout.get("meta") or {}
    if meta.get("kind") == "head_grid":
        traces = traces[: 2 * int(meta.get("slots", 1)): 2]
    if meta.get("kind") == "saturation":
        traces = traces[:1]
    out = []
    for t in traces:
        if t.get("visible", True) is False or t.get("type") == "table":
            continue
        if t.get("type") == "heatmap":
            z = np.asarray(t["z"], dtype=np.float64)  # [rows, cols]
            out += [f"{np.nanmax(row):.2f}" for row in z if not np.all(np.isnan(row))]
            continue
        y = np.asarray([np.nan if v is None else v for v in np.ravel(t.get("y", []))], dtype=np.float64)
        if y.size and not np.all(np.isnan(y)):
            out.append(f"{np.nanmax(y):.2f}")
    return out


def grid_numbers(weights: np.ndarray, masked, shape: tuple) -> list[str]:
    """A canvas head grid's description numbers: each query's two strongest unmasked keys, per head."""
    w = weights.reshape(shape)  # [heads, N_q, N_k]
    m = np.zeros(shape, bool) if masked is None else masked.reshape(shape).astype(bool)  # [heads, N_q, N_k]
    out = []
    for h in range(shape[0]):
        for i in range(shape[1]):
            keys = sorted((j for j in range(shape[2]) if not m[h, i, j]), key=lambda j: (-w[h, i, j], j))[:2]
            out += [f"{w[h, i, j]:.2f}" for j in keys]
    return out


def in_order(expected: list[str], description: str) -> bool:
    """True when the expected numbers appear in the description in that order (other numbers may come between)."""
    found = iter(re.findall(r"-?\d+\.\d+", description))
    return all(any(x == e for x in found) for e in expected)


@pytest.mark.parametrize("name", ["01_introduction.html", "zh/01_introduction.html", "04_memory_retrieval.html",
                                  "zh/04_memory_retrieval.html"])
def test_every_figure_has_a_name_and_its_numbers(name, site, browser, browser_context_args):
    """Measurement: each figure's accessible name is its title and its description's numbers are those of the data
    the page embeds (a static figure's Plotly.newPlot JSON, a panel's first state), read here in Python."""
    page_file = site / name
    if not page_file.exists():
        pytest.skip(f"{name} is not in the site built")
    html_text = page_file.read_text(encoding="utf-8")
    context = browser.new_context(**browser_context_args)
    tab, blocked, errors = open_offline(context, page_file)
    try:
        tab.wait_for_function(f"() => ({FIGURE_BOXES_JS})().every((f) => f.described)", timeout=20_000)
        boxes = tab.evaluate(FIGURE_BOXES_JS)
        specs = {p["id"]: p["spec"] for p in embedded(tab)}
        assert boxes and not blocked and not errors, (blocked, errors)
        for k, box in enumerate(boxes):
            accessible_name, description = accessible(tab, k)
            where = f"{name} figure {k + 1} ({box['div'] or box['panel']})"
            if box["panel"] is None:
                fig = page_figure(html_text, box["div"])
                traces, layout = fig["data"], fig["layout"]
                expected = summary_numbers(traces, layout)
            else:
                spec = specs[box["panel"]]
                key = ",".join(str(c["index"]) for c in spec["controls"])
                entry = spec["states"][key][box["index"]]
                layout = dict(spec["base"][box["index"]]["layout"], **spec["pool"][entry[1]])
                drawn = expected_figures(spec, key)[box["index"]]
                if isinstance(drawn, dict):  # a head grid on a canvas: its view names it
                    view = spec["pool"][entry[2]]
                    shape = (len(view["cells"]), len(view["q_tokens"]), len(view["k_tokens"]))
                    layout = {"title": view["title"]}
                    expected = grid_numbers(drawn["weights"], drawn["masked"], shape)
                else:
                    expected = summary_numbers(drawn, layout)
            title = layout.get("title", "")
            title = title.get("text", "") if isinstance(title, dict) else title
            title = re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", title or "")).strip()
            assert accessible_name and re.sub(r"\s+", " ", accessible_name) == title, (where, accessible_name, title)
            assert description and expected, (where, description, expected)
            assert in_order(expected, description), f"{where}: {expected} not in {description!r}"
    finally:
        context.close()
