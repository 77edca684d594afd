"""The static site and the slides: offline pages, local plotly.js/MathJax/reveal.js, static live panels.

`make site` / `make slides` run scripts/build_site.py (the build is scripts/sitebuild/); here it builds a small
notebook with a live panel (and the introduction notebook, when it exists) into a temporary folder.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import ipywidgets as W
import nbformat
import plotly.graph_objects as go
import pytest

from attnlib import widgets
from attnlib.widgets import states as panel_grid
from attnlib.widgets import static
from attnlib.widgets.static import BINDER_SLOT, SNAPSHOT_MIME, STATES_MIME, STATIC_ENV

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from sitebuild import execute  # noqa: E402
from sitebuild.build import build  # noqa: E402
from sitebuild.course import binder_base, binder_url  # noqa: E402
from sitebuild.offline import local_references, remote_references  # noqa: E402
from sitebuild.panels import PanelOverBudget, check_budget  # noqa: E402

SNAPSHOT = SNAPSHOT_MIME


def small_panel(**kwargs) -> widgets.LivePanel:
    """A LivePanel with one slider and one heatmap."""
    def update(figs, sharpness):
        figs[0].data[0].z = [[1 - sharpness / 10, sharpness / 10], [0.5, 0.5]]

    fig = go.Figure(go.Heatmap(z=[[0.5, 0.5], [0.5, 0.5]], zmin=0, zmax=1))
    slider = W.FloatSlider(value=2.0, min=0.0, max=10.0, description="sharpness")
    return widgets.LivePanel({"sharpness": slider}, [fig], update, title="Tiny panel",
                             caption="Watch the top row.", **kwargs)


# ---------------------------------------------------------------- the hook in attnlib/widgets/static.py


def test_live_panel_shows_a_widget_normally(monkeypatch):
    monkeypatch.delenv(STATIC_ENV, raising=False)
    bundle = small_panel()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert SNAPSHOT not in bundle
    assert bundle["text/plain"] == "LivePanel: Tiny panel"


def test_live_panel_under_attnlib_static_is_a_snapshot_of_its_state(monkeypatch):
    monkeypatch.setenv(STATIC_ENV, "1")
    panel = small_panel(main=True)
    bundle = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    assert bundle["text/plain"] == "LivePanel: Tiny panel"  # same as live: nbval sees no difference
    note = bundle["text/html"]
    assert 'class="al-static-note"' in note and BINDER_SLOT in note
    assert "sharpness = 2" in note and "Watch the top row." in note
    assert "JupyterLab or on Binder" in note
    figs = bundle[SNAPSHOT]["figures"]
    assert len(figs) == 1 and figs[0]["data"][0]["type"] == "heatmap"
    json.dumps(bundle)  # storable in a notebook
    # the snapshot follows the controls: it is the figure after update() ran
    panel.controls["sharpness"].value = 10.0
    z = panel.static_bundle()[SNAPSHOT]["figures"][0]["data"][0]["z"]
    assert z[0] == [0.0, 1.0] or z.get("bdata")  # plain list, or plotly's typed-array encoding


def tiny_z(sharpness: float) -> list[list[float]]:
    """What small_panel's update draws at `sharpness`, computed here (not by the panel)."""
    return [[1 - sharpness / 10, sharpness / 10], [0.5, 0.5]]


def state_traces(states: dict, values: dict) -> list[list[dict]]:
    """The traces of each figure in the state where the controls have `values` (by name)."""
    key = ",".join(str(c["values"].index(values.get(c["name"], c["value"]))) for c in states["controls"])
    return [[states["pool"][t] for t in fig[0]] for fig in states["states"][key]]


def test_main_panel_states_are_what_its_update_draws(monkeypatch):
    monkeypatch.setenv(STATIC_ENV, "1")
    panel = small_panel(main=True)
    states = panel._repr_mimebundle_()[STATES_MIME]
    (control,) = states["controls"]
    assert control["kind"] == "range" and control["total"] == 101  # 0..10 by 0.1
    assert panel_grid.MAX_STEPS <= len(control["values"]) <= panel_grid.MAX_STEPS + 1  # 17 steps and its own value
    assert 2.0 in control["values"]
    assert control["values"][control["index"]] == 2.0
    for s in control["values"]:
        (trace,), = state_traces(states, {"sharpness": s})
        assert trace["z"] == tiny_z(s), s
    assert states["bytes"] <= panel_grid.STATE_BUDGET
    json.dumps(states)


def test_every_panel_has_states_and_says_whether_it_is_main(monkeypatch):
    monkeypatch.setenv(STATIC_ENV, "1")
    other = small_panel()._repr_mimebundle_()[STATES_MIME]
    main = small_panel(main=True)._repr_mimebundle_()[STATES_MIME]
    assert (other["main"], main["main"]) == (False, True)
    assert other["states"] == main["states"] and len(other["states"]) == len(other["controls"][0]["values"])


class Drawn:
    """A panel without draw_into (only figures_at): the states must come out the same."""

    def __init__(self, panel):
        self.controls, self.figures, self.figures_at = panel.controls, panel.figures, panel.figures_at


def test_states_drawn_on_cheap_copies_equal_figures_at():
    # identity (checked numerically): the update run on copies made without plotly's validation (draw_into) gives
    # the same states as figures_at's validated copies, on a head grid whose head count changes (hidden heads)
    import torch

    def update(figs, heads, sharp):
        w = torch.softmax(sharp * torch.arange(16.0).reshape(1, 4, 4).repeat(heads, 1, 1) / 10, dim=-1)  # [h, 4, 4]
        al_viz.update_head_grid(figs[0], w, list("abcd"), list("abcd"))
        figs[1].data[0].y = [float("nan"), sharp]  # NaN: null in strict JSON

    from attnlib import viz as al_viz
    grid = al_viz.head_grid_figure(torch.full((2, 4, 4), 0.25), list("abcd"), list("abcd"), slots=4)
    panel = widgets.LivePanel({"heads": W.SelectionSlider(options=[1, 2, 4], value=2),
                               "sharp": W.FloatSlider(value=1.0, min=0.0, max=4.0, step=1.0)},
                              [grid, go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))], update)
    if not hasattr(panel, "draw_into"):
        pytest.skip("LivePanel has no draw_into yet")
    fast, slow = panel_grid.panel_states(panel), panel_grid.panel_states(Drawn(panel))
    assert json.dumps(fast, sort_keys=True) == json.dumps(slow, sort_keys=True)
    assert fast["pool"][fast["states"]["0,0"][1][0][0]]["y"] == [None, 0.0]


def test_thinning_a_page_drops_states_and_keeps_what_is_left_exact():
    # identity (checked numerically): after fit_page, every state left shows exactly the figures it showed before
    from sitebuild.panels import embedded_size, fit_page

    def states_of(panel):
        return dict(panel_grid.panel_states(panel), main=panel.main, title="", caption="")

    big, small = states_of(small_panel(main=True)), states_of(small_panel())
    budget = embedded_size(big) + embedded_size(small) - 1
    thin_big, thin_small = fit_page("99_tiny.html", [big, small], budget)
    assert embedded_size(thin_big) + embedded_size(thin_small) <= budget
    assert thin_big == big and len(thin_small["states"]) < len(small["states"])  # the main panel keeps more
    c = thin_small["controls"][0]
    assert c["values"][c["index"]] == 2.0 and c["total"] == 101
    for value in c["values"]:
        assert state_traces(thin_small, {"sharpness": value}) == state_traces(small, {"sharpness": value})
    with pytest.raises(PanelOverBudget, match="every control is down to one value"):
        fit_page("99_tiny.html", [big, small], 100)


def test_derived_grid_thins_the_control_with_most_values_first():
    specs = [panel_grid.control_spec("a", W.IntSlider(value=0, min=0, max=100)),
             panel_grid.control_spec("b", W.Dropdown(options=["x", "y", "z"], value="y")),
             panel_grid.control_spec("c", W.IntSlider(value=7, min=0, max=20))]
    grid = panel_grid.derived_grid(specs, max_states=17 * 3 * 10)
    assert len(grid["a"]) == 17 and grid["a"][0] == 0 and grid["a"][-1] == 100  # evenly spaced, ends kept
    assert grid["b"] == ["x", "y", "z"]
    assert 7 in grid["c"] and len(grid["c"]) <= 10  # c (17 steps and its value 7) thinned first, 7 kept
    assert set(panel_grid.thinned(list(range(17)), 3)) >= {0, 3, 16}
    assert panel_grid.derived_grid(specs, max_states=1) == {"a": [0], "b": ["y"], "c": [7]}


def test_explicit_grid_over_budget_fails_naming_the_control():
    panel = small_panel(main=True)
    panel.static_grid = {"sharpness": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}
    states = panel_grid.panel_states(panel, budget=400)
    assert states["over_budget"]["control"] == "sharpness"
    with pytest.raises(PanelOverBudget, match="Thin the control 'sharpness'"):
        check_budget("99_tiny.html", states)
    fits = panel_grid.panel_states(panel)
    assert [c["values"] for c in fits["controls"]] == [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]
    with pytest.raises(PanelOverBudget, match="'sharpness'"):
        check_budget("99_tiny.html", fits, budget=100)


def test_derived_grid_is_thinned_to_fit_the_budget():
    states = panel_grid.panel_states(small_panel(main=True), budget=900)
    assert "over_budget" not in states and states["bytes"] <= 900
    assert 2 <= len(states["controls"][0]["values"]) < panel_grid.MAX_STEPS


def test_every_string_has_a_chinese_version():
    assert set(static.TEXT["zh"]) == set(static.TEXT["en"])
    assert static.text("binder_link", "zh") == "在 Binder 上打开这个笔记本"


def test_the_caption_reads_as_chinese_in_the_zh_edition():
    from sitebuild.panels import caption_html

    controls = [{"name": "d_k", "label": "d_k", "kind": "range", "values": [1, 64], "total": 9},
                {"name": "mask", "label": "掩码", "kind": "select", "values": ["none", "causal"], "total": 2},
                {"name": "heads", "label": "头数", "kind": "range", "values": [4], "total": 8}]
    zh = caption_html({"controls": controls}, "<a>B</a>", "zh")
    assert "d_k（取其 9 个值中的 2 个）、掩码。取值比 JupyterLab 中少的控件是精简过的" in zh
    assert "每页至多 1.5 MB。需要 JupyterLab 或 Binder：头数。 <a>B</a>" in zh
    en = caption_html({"controls": controls}, "<a>B</a>", "en")
    assert "d_k (2 of its 9 values), 掩码. A control with fewer values here than in JupyterLab was thinned" in en
    assert "in at most 1.5 MB. Needs JupyterLab or Binder: 头数. <a>B</a>" in en
    whole = [dict(c, values=[0, 1], total=2) for c in controls]
    assert "thinned" not in caption_html({"controls": whole}, "", "en")


def test_a_snapshot_note_shows_on_and_off_in_the_page_language():
    from attnlib import i18n

    before = i18n.get_language()
    try:
        i18n.set_language("zh")
        assert (static.setting(True), static.setting(False), static.setting(0.25)) == ("开", "关", "0.25")
        i18n.set_language("en")
        assert (static.setting(True), static.setting(False), static.setting(3)) == ("on", "off", "3")
    finally:
        i18n.set_language(before)


# ---------------------------------------------------------------- building pages and decks

# The 'site' extra (make venv installs it). Without it the build tests skip, except in CI where they fail.
SITE_PACKAGES = ("sphinx-mathjax-offline", "sphinx_revealjs")
MISSING = [m for m in SITE_PACKAGES if importlib.util.find_spec(m) is None]

TINY = "99_tiny.ipynb"


def tiny_notebook() -> nbformat.NotebookNode:
    """Math, a static figure, a live panel and a hidden solution, each cell with slideshow metadata."""
    def cell(kind, source, slide="-", **meta):
        c = nbformat.v4.new_markdown_cell(source) if kind == "md" else nbformat.v4.new_code_cell(source)
        c.metadata["slideshow"] = {"slide_type": slide}
        c.metadata.update(meta)
        return c

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell("md", "# 99 · Tiny — 测试\n\n$$\\mathrm{softmax}\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right)V$$", "slide"),
        cell("code", "import attnlib as al\nimport ipywidgets as W\nimport plotly.graph_objects as go", "skip"),
        cell("code", "w = [[0.7, 0.3], [0.4, 0.6]]\n"
                     "al.viz.heatmap_figure(w, ['a', 'b'], ['a', 'b'], title='Static heatmap')", "subslide"),
        # a second figure on the same slide: too tall for 1280x720, so the deck continues on a new slide
        cell("md", "The same weights, transposed:"),
        cell("code", "al.viz.heatmap_figure([[0.7, 0.4], [0.3, 0.6]], ['a', 'b'], ['a', 'b'], title='Transposed')"),
        cell("code", "def update(figs, sharpness):\n"
                     "    figs[0].data[0].z = [[1 - sharpness / 10, sharpness / 10], [0.5, 0.5]]\n\n"
                     "panel = al.widgets.LivePanel({'sharpness': W.FloatSlider(value=2.0, min=0, max=10, "
                     "description='sharpness')},\n"
                     "    [go.Figure(go.Heatmap(z=[[0.5, 0.5], [0.5, 0.5]], zmin=0, zmax=1))], update,\n"
                     "    title='Tiny panel', caption='Watch the top row.', main=True)\npanel", "slide"),
        cell("md", "Solution (click to expand)", "fragment"),
        cell("code", "print('the answer')", "-", jupyter={"source_hidden": True}),
    ]
    return nb


def test_the_execution_cache_key_follows_everything_that_changes_the_outputs(tmp_path, monkeypatch):
    # identity (checked numerically): build/executed's key changes with attnlib's strings, view and the pins,
    # not with a comment in pyproject.toml or a .pyc
    monkeypatch.setattr(execute, "ROOT", tmp_path)
    files = {"attnlib/core.py": "x = 1\n", "attnlib/locale/zh/core.json": '{"a": "甲"}',
             "attnlib/widgets/panel_view.js": "export default {}", "attnlib/widgets/panel_view.css": ".a {}",
             "pyproject.toml": 'dependencies = [\n    "torch==2.13.0",\n]\n# ruff settings\n'}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text("{}")
    before = execute.cache_key(notebook)
    for name, new in (("pyproject.toml", files["pyproject.toml"].replace("settings", "settings, longer lines")),
                      ("attnlib/__pycache__/core.cpython-311.pyc", "bytes")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(new, encoding="utf-8")
        assert execute.cache_key(notebook) == before, f"changing {name} should not rebuild the pages"
    for name, new in (("attnlib/locale/zh/core.json", '{"a": "乙"}'), ("attnlib/widgets/panel_view.js", "//"),
                      ("attnlib/widgets/panel_view.css", ".b {}"), ("attnlib/core.py", "x = 2\n"),
                      ("pyproject.toml", 'dependencies = [\n    "torch==2.14.0",\n]\n')):
        (tmp_path / name).write_text(new, encoding="utf-8")
        after = execute.cache_key(notebook)
        assert after != before, f"changing {name} left the cached executed notebooks' key as it was"
        before = after


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Build the tiny notebook (executed with ATTNLIB_STATIC=1) and notebook 01 (committed outputs)."""
    if MISSING and os.environ.get("CI") != "true":
        pytest.skip(f"site extra not installed ({MISSING}): run `make venv`")
    tmp = tmp_path_factory.mktemp("site")
    (tmp / "notebooks").mkdir()
    tiny = tmp / "notebooks" / TINY
    nbformat.write(tiny_notebook(), tiny)
    site, slides = tmp / "site", tmp / "slides"
    start = time.perf_counter()
    # decks are fitted to 1280x720 when Chromium is there (fit=None)
    report = build([tiny], site=site, slides=slides, execute=True, cache_dir=tmp / "executed", twin="zh")
    build([tiny], site=site / "zh", execute=True, cache_dir=tmp / "executed", language="zh", twin="..")
    intro = ROOT / "notebooks" / "01_introduction.ipynb"
    intro_site = None
    if intro.exists():
        intro_site = tmp / "intro_site"
        build([intro], site=intro_site, execute=False)
    print(f"site build: {time.perf_counter() - start:.1f} s")
    return {"site": site, "slides": slides, "report": report, "intro_site": intro_site}


def all_pages(built) -> list[Path]:
    pages = sorted(built["site"].glob("*.html")) + sorted(built["slides"].glob("*.html"))
    if built["intro_site"]:
        pages += sorted(built["intro_site"].glob("*.html"))
    return pages


def test_pages_and_decks_exist(built):
    for folder in (built["site"], built["slides"]):
        assert (folder / "index.html").exists()
        assert (folder / "99_tiny.html").exists()
    index = (built["site"] / "index.html").read_text(encoding="utf-8")
    assert 'href="99_tiny.html"' in index and "../slides/99_tiny.html" in index
    if built["intro_site"]:
        assert (built["intro_site"] / "01_introduction.html").exists()


def test_no_page_loads_anything_from_the_network(built):
    for page in all_pages(built):
        assert remote_references(page) == [], page
        text = page.read_text(encoding="utf-8")
        for cdn in ("cdnjs.cloudflare.com", "unpkg.com", "cdn.jsdelivr.net", "cdn.plot.ly"):
            assert cdn not in text, f"{page.name} names {cdn}"


def test_plotly_mathjax_and_reveal_are_local_files(built):
    for page in all_pages(built):
        refs = local_references(page)
        names = {p.relative_to(page.parent).as_posix() for p in refs}
        assert "assets/plotly.min.js" in names, page
        assert "assets/mathjax/tex-chtml-full.js" in names, page
        # what MathJax 3 loads by itself, not named in the page: the Safe extension and the fonts of its output
        mathjax = page.parent / "assets" / "mathjax"
        assert (mathjax / "ui" / "safe.js").exists(), page
        assert (mathjax / "output" / "chtml" / "fonts" / "woff-v2" / "MathJax_Zero.woff").exists(), page
        missing = [p for p in refs if not p.exists()]
        assert missing == [], f"{page.name} loads files that are not there: {missing}"
    deck = built["slides"] / "99_tiny.html"
    names = {p.relative_to(deck.parent).as_posix() for p in local_references(deck)}
    assert {"assets/reveal/dist/reveal.js", "assets/reveal/dist/reveal.css"} <= names
    assert (built["slides"] / "assets" / "reveal" / "dist" / "theme" / "white.css").exists()


def test_live_panel_is_a_static_snapshot_with_a_binder_link(built):
    counts = {k: v for k, v in built["report"][TINY].items() if k != "deck_check"}  # the deck's counts
    assert counts == {"figures": 3, "static_notes": 1, "widgets_without_snapshot": 0, "live_panels": 0,
                      "state_bytes": 0, "states": 0, "live_controls": 0}
    binder = binder_url(TINY)
    assert binder.startswith("https://mybinder.org/v2/gh/") and binder.endswith("lab/tree/notebooks/99_tiny.ipynb")
    for folder in (built["site"], built["slides"]):
        text = (folder / "99_tiny.html").read_text(encoding="utf-8")
        assert ('class="al-static-note"' in text) == (folder == built["slides"])  # the page's panel is live
        assert "sliders move these figures live" in text
        assert f'href="{binder}"' in text
        assert BINDER_SLOT not in text
        assert "application/vnd.jupyter.widget-view+json" not in text
        assert text.count("Plotly.newPlot(") == 3
        assert '<details class="al-solution">' in text  # the hidden solution stays folded


def test_page_has_live_controls_and_the_deck_a_snapshot(built):
    page = (built["site"] / "99_tiny.html").read_text(encoding="utf-8")
    panel = page[page.index('<div class="al-static-panel al-main-panel"'):]
    assert 'type="range"' in panel and 'data-al-control="sharpness"' in panel
    assert "Live on this page" in panel and "Every control of this panel is live here" in panel
    assert '<script src="assets/static_panel.js"></script>' in page
    assert (built["site"] / "assets" / "static_panel.js").exists()
    deck = (built["slides"] / "99_tiny.html").read_text(encoding="utf-8")
    assert "data-al-control" not in deck and "al-states" not in deck


def test_each_page_links_its_twin_in_the_other_language(built):
    en = (built["site"] / "99_tiny.html").read_text(encoding="utf-8")
    zh = (built["site"] / "zh" / "99_tiny.html").read_text(encoding="utf-8")
    assert 'href="zh/99_tiny.html"' in en and '<html lang="en">' in en
    assert 'href="../99_tiny.html"' in zh and '<html lang="zh">' in zh
    assert "本页可直接操作" in zh and "在 Binder 上实时运行" in zh and "全部笔记本" in zh
    assert 'href="../index.html"' not in zh  # its own index, in zh/
    assert (built["site"] / "zh" / "index.html").exists()


def test_the_template_strings_follow_the_edition_language(built):
    en = (built["site"] / "99_tiny.html").read_text(encoding="utf-8")
    zh = (built["site"] / "zh" / "99_tiny.html").read_text(encoding="utf-8")
    assert "<summary>Show the code</summary>" in en and 'aria-label="Course navigation"' in en
    assert "<summary>显示代码</summary>" in zh and 'aria-label="课程导航"' in zh
    assert "Show the code" not in zh and "Course navigation" not in zh
    deck = (built["slides"] / "99_tiny.html").read_text(encoding="utf-8")
    assert "<summary>Show the code</summary>" in deck


def test_binder_url_follows_the_readme_badge():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert binder_base() + "?urlpath=lab/tree/notebooks/01_introduction.ipynb" in readme


@pytest.mark.browser
def test_deck_fits_1280x720_offline_with_every_figure_drawn(built):
    if not Path("/usr/bin/chromium").exists():
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing at /usr/bin/chromium")
        pytest.skip("needs /usr/bin/chromium")
    deck_file = built["slides"] / "99_tiny.html"
    rows = built["report"][TINY].get("deck_check")  # measured by the build's fitting pass
    assert rows, "the build did not fit the deck although Chromium is there"
    slides = [r for r in rows if "index" in r]
    deck = [r for r in rows if "errors" in r][0]
    assert deck["blocked"] == [] and deck["errors"] == []
    assert sum(r["figures"] for r in slides) == 3
    assert all(r["blank_figures"] == 0 for r in slides), slides
    assert not any(r["overflow"] for r in slides), slides
    # the two heatmaps did not fit on one slide: the second one continues on a slide of its own
    assert len(slides) == 4, [r["index"] for r in slides]
    assert 'data-al-continued="99 · Tiny — 测试 (continued)"' in deck_file.read_text(encoding="utf-8")
