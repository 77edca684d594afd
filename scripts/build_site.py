"""Build the course as a static website and as reveal.js slide decks, both readable offline.

Usage:
    python scripts/build_site.py --site build/site            # `make site`
    python scripts/build_site.py --slides build/slides        # `make slides`
    python scripts/build_site.py --site S --slides D [--no-execute] [--no-fit] [--cache DIR] [--shots DIR]
                                 [notebooks ...]

How it works (nbconvert does all the HTML; the templates are in scripts/site_templates/):
1. Each notebook is executed in a fresh kernel with ATTNLIB_STATIC=1. Under that variable a
   LivePanel shows its figures as static plotly figures at their initial state, with a note
   saying the sliders move in JupyterLab or on Binder (attnlib/widgets.py). The committed
   notebooks carry no widget state, so this is how a live panel gets a picture on a page.
   Executed copies are cached in build/executed/ until the notebook or attnlib changes.
2. A preprocessor turns every plotly figure into HTML that calls the local plotly.min.js, puts a
   Binder link for that notebook into each static-panel note, and replaces any other widget
   view (which cannot render without a kernel) with such a note.
3. nbconvert's lab template (pages) and reveal template (decks) render the notebooks; our
   templates strip every CDN script (require.js, jQuery, mermaid, the widget manager) and point
   MathJax, plotly.js and reveal.js at an `assets/` folder copied next to the pages from pip
   packages: plotly (plotly.min.js), jupyter-server-mathjax (MathJax 2.7) and sphinx-revealjs
   (reveal.js 5). Nothing is fetched from the network, at build time or when reading.
4. Where /usr/bin/chromium exists, each deck is opened at 1280x720 (the projector) and measured:
   a slide that runs off the bottom continues on a labelled continuation slide, a single cell too
   tall for any slide is scaled down (at most to 80 %) and scrolls; what still does not fit is
   printed. `--shots DIR` writes a PNG of every slide for a look.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import html
import importlib.util
import os
import re
import shutil
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterable, Optional

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter, SlidesExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Dict as TDict
from traitlets import Unicode
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TEMPLATES = ROOT / "scripts" / "site_templates"
STATIC_ENV = "ATTNLIB_STATIC"
CACHE_VERSION = "1"  # bump to invalidate every cached executed notebook
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# What a LivePanel displays under ATTNLIB_STATIC=1 (attnlib/widgets.py): {"figures": [plotly JSON, ...]},
# next to a text/html note (class al-static-note, with a <!--binder--> slot) saying where the sliders move.
SNAPSHOT_MIME = "application/vnd.attnlib.panel-snapshot+json"
STATIC_NOTE_CLASS = "al-static-note"
BINDER_SLOT = "<!--binder-->"
DEFAULT_BINDER = "https://mybinder.org/v2/gh/attention-course/attention-course/HEAD"


# ---------------------------------------------------------------- Binder links and titles


def binder_base(readme: Path = ROOT / "README.md") -> str:
    """Return the Binder launch URL of the repository (without urlpath), read from README's badge."""
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    m = re.search(r"(https://mybinder\.org/v2/gh/[^/\s)]+/[^/\s)]+/[^?\s)]+)\?urlpath=", text)
    return m.group(1) if m else DEFAULT_BINDER


def binder_url(notebook_name: Optional[str], base: Optional[str] = None) -> str:
    """Return the Binder URL that opens `notebook_name` (e.g. '01_introduction.ipynb') in JupyterLab."""
    base = base or binder_base()
    if not notebook_name:
        return f"{base}?urlpath=lab/tree/notebooks"
    return f"{base}?urlpath=lab/tree/notebooks/{notebook_name}"


def notebook_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """Return the text of the notebook's first level-1 heading, or `fallback`."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return fallback


def readme_rows(readme: Path = ROOT / "README.md") -> dict[str, tuple[str, str]]:
    """Map notebook file name -> (article section, what you do), from README's notebook table."""
    rows = {}
    if not readme.exists():
        return rows
    for line in readme.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*\d+\s*\|\s*\[[^\]]*\]\(notebooks/([^)]+\.ipynb)\)\s*\|([^|]*)\|([^|]*)\|", line)
        if m:
            rows[m.group(1)] = (m.group(2).strip(), m.group(3).strip())
    return rows


# ---------------------------------------------------------------- assets (all from pip packages)


def _package_dir(module: str) -> Path:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            f"build_site: the package '{module}' is not installed. It ships files the site needs offline; "
            "install the course's 'site' extra: pip install -e '.[site]' (make site / make slides do it)."
        )
    return Path(list(spec.submodule_search_locations)[0])


def asset_sources() -> dict[str, Path]:
    """Paths of plotly.min.js, the MathJax 2.7 folder and the reveal.js folder inside installed packages."""
    sources = {
        "plotly.min.js": _package_dir("plotly") / "package_data" / "plotly.min.js",
        "mathjax": _package_dir("jupyter_server_mathjax") / "static",
        "reveal": _package_dir("sphinx_revealjs") / "_static" / "revealjs",
    }
    for name, path in sources.items():
        if not path.exists():
            raise SystemExit(f"build_site: expected {name} at {path}, not found (package layout changed?)")
    return sources


def copy_assets(out: Path, *, reveal: bool) -> Path:
    """Copy plotly.js, MathJax, our CSS (and reveal.js for decks) into out/assets; return that folder."""
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    src = asset_sources()
    shutil.copy2(src["plotly.min.js"], assets / "plotly.min.js")
    mathjax_skip = shutil.ignore_patterns("SVG", "*.map")  # we use the HTML-CSS output only
    shutil.copytree(src["mathjax"], assets / "mathjax", dirs_exist_ok=True, ignore=mathjax_skip)
    for css in ("course.css", "course_slides.css"):
        shutil.copy2(TEMPLATES / "common" / css, assets / css)
    if reveal:
        keep = shutil.ignore_patterns("*.map", "*.esm.js", "markdown", "highlight", "search", "zoom", "math")
        shutil.copytree(src["reveal"], assets / "reveal", dirs_exist_ok=True, ignore=keep)
    return assets


# ---------------------------------------------------------------- executing with static panels


def _cache_key(path: Path) -> str:
    """Hash of the notebook, attnlib's sources and this builder's cache version."""
    h = hashlib.sha256(CACHE_VERSION.encode())
    h.update(path.read_bytes())
    for src in sorted((ROOT / "attnlib").rglob("*.py")):
        h.update(src.name.encode())
        h.update(src.read_bytes())
    return h.hexdigest()


def execute_static(path: Path, cache_dir: Optional[Path] = None, timeout: int = 600) -> nbformat.NotebookNode:
    """Execute a notebook top to bottom with ATTNLIB_STATIC=1 (live panels become static figures).

    Args:
        path: the notebook.
        cache_dir: where executed copies are kept; a copy is reused while its key matches.
        timeout: seconds allowed per cell.
    Returns:
        The executed notebook (widget state stripped).
    """
    key = _cache_key(path)
    cached = cache_dir / path.name if cache_dir else None
    if cached and cached.exists():
        nb = nbformat.read(cached, as_version=4)
        if nb.metadata.get("al_static_key") == key:
            print(f"  {path.name}: executed copy is up to date ({cached})")
            return nb
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    previous = os.environ.get(STATIC_ENV)
    os.environ[STATIC_ENV] = "1"  # the kernel inherits this process's environment
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    except CellExecutionError as exc:
        raise SystemExit(f"build_site: {path.name} failed when executed with {STATIC_ENV}=1:\n{exc}") from None
    finally:
        if previous is None:
            os.environ.pop(STATIC_ENV, None)
        else:
            os.environ[STATIC_ENV] = previous
    nb.metadata.pop("widgets", None)
    nb.metadata["al_static_key"] = key
    print(f"  {path.name}: executed with {STATIC_ENV}=1 in {time.perf_counter() - start:.1f} s")
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, cached)
    return nb


# ---------------------------------------------------------------- outputs -> static HTML


def _note_html(text: str, binder: str) -> str:
    return (f'<div class="{STATIC_NOTE_CLASS}">{html.escape(text)} '
            f'<a class="al-binder" href="{html.escape(binder)}">Open this notebook on Binder</a></div>')


class StaticOutputsPreprocessor(Preprocessor):
    """Make every output renderable without a kernel: plotly JSON -> HTML, Binder links in static notes."""

    binder = Unicode("", help="Binder URL of this notebook").tag(config=True)
    counts = TDict()

    def preprocess(self, nb, resources):
        self.counts = {"figures": 0, "static_notes": 0, "widgets_without_snapshot": 0}
        nb, resources = super().preprocess(nb, resources)
        resources.setdefault("course_counts", {}).update(self.counts)
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        for j, out in enumerate(cell.get("outputs", [])):
            data = out.get("data")
            if not data:
                continue
            if SNAPSHOT_MIME in data:
                snapshot = data.pop(SNAPSHOT_MIME)
                note = self._with_binder(data.get("text/html", ""))
                figs = "".join(self._plotly_html(f, f"fig-{index}-{j}-{k}")
                               for k, f in enumerate(snapshot.get("figures", [])))
                data["text/html"] = f'<div class="al-static-panel">{note}<div class="al-static-figures">{figs}</div></div>'
                data.pop(WIDGET_MIME, None)
                cell.metadata["al_snapshot"] = True  # decks fold this cell's code: the slide shows the panel
                self.counts["static_notes"] += 1
                self.counts["figures"] += len(snapshot.get("figures", []))
            elif PLOTLY_MIME in data:
                data["text/html"] = self._plotly_html(data.pop(PLOTLY_MIME), f"fig-{index}-{j}")
                self.counts["figures"] += 1
            elif WIDGET_MIME in data:
                data.pop(WIDGET_MIME)
                label = data.get("text/plain", "An interactive panel").strip().splitlines()[0]
                data["text/html"] = _note_html(
                    f"{label}: this interactive panel runs in JupyterLab or on Binder.", self.binder)
                self.counts["widgets_without_snapshot"] += 1
            elif STATIC_NOTE_CLASS in data.get("text/html", ""):
                data["text/html"] = self._with_binder(data["text/html"])
                self.counts["static_notes"] += 1
        return cell, resources

    def _with_binder(self, note: str) -> str:
        """Put the Binder link of this notebook into a static-panel note (at its <!--binder--> slot)."""
        link = f'<a class="al-binder" href="{html.escape(self.binder)}">Open this notebook on Binder</a>'
        return note.replace(BINDER_SLOT, link) if BINDER_SLOT in note else note + link

    @staticmethod
    def _plotly_html(fig: dict, div_id: str) -> str:
        """A div and a script that draws `fig` with the page's plotly.js (no CDN, stable id)."""
        import plotly.io as pio

        title = fig.get("layout", {}).get("title", {})
        title = title.get("text", "") if isinstance(title, dict) else str(title or "")
        label = re.sub(r"<[^>]+>", " ", title).strip() or "Figure"
        body = pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id, validate=False,
                           config={"displaylogo": False, "responsive": True,
                                   "modeBarButtonsToRemove": ["sendChartToCloud"]})  # it would go online
        return f'<figure class="al-figure" role="group" aria-label="{html.escape(label)}">{body}</figure>'


# ---------------------------------------------------------------- exporters


def _exporter(kind: str, binder: str) -> HTMLExporter:
    c = Config()
    cls = SlidesExporter if kind == "slides" else HTMLExporter
    c[cls.__name__].extra_template_basedirs = [str(TEMPLATES)]
    c[cls.__name__].extra_template_paths = [str(TEMPLATES / "common")]  # shared macros and the nav bar
    c[cls.__name__].template_name = "course_slides" if kind == "slides" else "course_page"
    if kind == "slides":
        c.SlidesExporter.reveal_url_prefix = "assets/reveal"
        c.SlidesExporter.reveal_theme = "white"
    exporter = cls(config=c)
    exporter.register_preprocessor(StaticOutputsPreprocessor(binder=binder), enabled=True)
    return exporter


def export(nb: nbformat.NotebookNode, out_file: Path, kind: str, course: dict) -> dict:
    """Render one notebook to `out_file` as a page (kind='page') or a deck (kind='slides'); return counts."""
    nb = copy.deepcopy(nb)
    nb.metadata["title"] = course["title"]
    exporter = _exporter(kind, course.get("binder_url", ""))
    body, resources = exporter.from_notebook_node(
        nb, resources={"course": course, "metadata": {"name": course["title"]}})
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(body, encoding="utf-8")
    return resources.get("course_counts", {})


def index_notebook(entries: list[dict], *, kind: str, other_kind_dir: Optional[str]) -> nbformat.NotebookNode:
    """A small notebook (markdown only) listing the course, rendered by the same template as the pages."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8") if (ROOT / "README.md").exists() else ""
    title = next((l[2:].strip() for l in readme.splitlines() if l.startswith("# ")), "Attention course")
    intro = ""
    for para in readme.split("\n\n")[1:]:
        if para.strip() and not para.lstrip().startswith(("[!", "#", "|", "```")):
            intro = para.strip()
            break
    what = "slides for the classroom" if kind == "slides" else "the static edition"
    lines = [f"# {title}", "", intro, "",
             f"This is {what} of the course: every figure shows its initial state and nothing here needs a "
             "kernel or a network connection. The live panels (sliders for d_k, heads, masks, temperature) "
             "move in JupyterLab (`make lab`) or on Binder.", "",
             "| # | Notebook | Article section | What you do | |", "|---|---|---|---|---|"]
    for e in entries:
        extra = [f"[Binder]({e['binder_url']})"]
        if other_kind_dir:
            label = "page" if kind == "slides" else "slides"
            extra.insert(0, f"[{label}]({other_kind_dir}/{e['stem']}.html)")
        lines.append(f"| {e['number']} | [{e['title']}]({e['stem']}.html) | {e['section']} | {e['what']} | "
                     f"{' · '.join(extra)} |")
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell("\n".join(lines))
    cell.metadata["slideshow"] = {"slide_type": "slide"}
    nb.cells = [cell]
    return nb


# ---------------------------------------------------------------- checks on the built HTML


class _RemoteRefs(HTMLParser):
    """Collect URLs that a page would fetch by itself (scripts, styles, images, frames), not plain links."""

    FETCHING = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"), ("source", "src"),
                ("audio", "src"), ("video", "src"), ("embed", "src"), ("object", "data")}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fetched: list[str] = []
        self._tag: Optional[str] = None
        self.inline: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if (tag, name) in self.FETCHING and value:
                self.fetched.append(value)
        self._tag = tag

    def handle_data(self, data):
        if self._tag in ("script", "style"):
            self.inline.append(data)


REMOTE = re.compile(r"^(https?:)?//", re.I)
# In inline scripts and styles: dynamic imports, ES imports, CSS @import / url() of a remote address.
REMOTE_IN_CODE = re.compile(
    r"""(import\s*\(\s*["'](https?:)?//|from\s+["'](https?:)?//|@import\s+(url\()?\s*["']?(https?:)?//|"""
    r"""url\(\s*["']?(https?:)?//|\.src\s*=\s*["'](https?:)?//)""", re.I)


def remote_references(page: Path) -> list[str]:
    """Return every remote address `page` (or a CSS file it links) would load: script/style/img src, imports."""
    parser = _RemoteRefs()
    parser.feed(page.read_text(encoding="utf-8"))
    found = [u for u in parser.fetched if REMOTE.match(u)]
    code = list(parser.inline)
    for ref in parser.fetched:
        local = (page.parent / ref.split("?")[0]).resolve()
        if not REMOTE.match(ref) and local.suffix == ".css" and local.exists():
            code.append(local.read_text(encoding="utf-8", errors="replace"))
    for text in code:
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)  # CSS/JS block comments cite URLs harmlessly
        found += [m.group(0) for m in REMOTE_IN_CODE.finditer(text)]
    return found


def local_references(page: Path) -> list[Path]:
    """Return the local files that `page`'s script and link tags load (query strings dropped)."""
    parser = _RemoteRefs()
    parser.feed(page.read_text(encoding="utf-8"))
    return [(page.parent / u.split("?")[0].split("#")[0]).resolve() for u in parser.fetched if not REMOTE.match(u)]


CHROMIUM = Path("/usr/bin/chromium")
ZOOM_MIN = 80  # percent: a cell is never scaled below this on a slide (smaller code is unreadable on a projector)

# Measure slide i (hidden fragments take their place in the layout, so all of them count). For a slide taller than the screen, `breaks` lists the
# cells (their ids) that should each start a new slide: every cell that would cross the bottom edge of the
# slide it lands on, and the cell after any single cell that is taller than the screen by itself.
MEASURE_SLIDE_JS = r"""([i, show]) => {
  const s = Reveal.getSlides()[i];
  const ix = Reveal.getIndices(s);
  if (show) {  // for a screenshot; measuring needs no navigation (viewDistance keeps every slide laid out)
    Reveal.slide(ix.h, ix.v, 999);
    s.querySelectorAll('.js-plotly-plot').forEach(d => {
      if (!d.dataset.alShown) { d.dataset.alShown = '1'; Plotly.redraw(d); } else { Plotly.Plots.resize(d); } });
  }
  const titled = s.querySelector('h1, h2, h3, h4');
  const heading = (s.dataset.alContinued || (titled ? titled.textContent : '') || s.textContent)
    .replace('\u00b6', '').replace(/In\s*\[\d*\]:/, '').trim().split('\n')[0].slice(0, 60);
  const plots = [...s.querySelectorAll('.js-plotly-plot')];
  const blank = plots.filter(d => { const r = d.getBoundingClientRect();
    return r.width < 50 || r.height < 50 || !d.querySelector('.main-svg'); }).length;
  const top = (el) => { let y = 0; while (el && el !== s) { y += el.offsetTop; el = el.offsetParent; } return y; };
  const cells = [...s.querySelectorAll('.jp-Cell')].filter(c => c.id && c.closest('section') === s);
  const breaks = [], tall = [];
  let origin = 0, limit = s.clientHeight, force = false;
  for (let k = 0; k < cells.length; k++) {
    const t = top(cells[k]), b = t + cells[k].offsetHeight;
    if (k > 0 && (force || b - origin > limit)) {
      breaks.push(cells[k].id);
      origin = t;
      limit = s.clientHeight - 40;  // a continuation slide starts with a one-line label
    }
    force = b - origin > limit;
    if (force) { tall.push([cells[k].id, b - origin, limit - (t - origin)]); }  // too tall even alone
  }
  return {index: ix.h + '/' + ix.v, heading, content: s.scrollHeight, box: s.clientHeight,
          figures: plots.length, blank_figures: blank, breaks, tall};
}"""


class DeckBrowser:
    """Headless Chromium (Debian's) that opens decks from file:// at the projector size, with the network blocked."""

    def __init__(self, width: int = 1280, height: int = 720) -> None:
        from playwright.sync_api import sync_playwright

        self.width, self.height = width, height
        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                args=["--disable-dev-shm-usage", "--no-sandbox"])

    def close(self) -> None:
        self.browser.close()
        self._pw.stop()

    def measure(self, deck: Path, shots: Optional[Path] = None) -> tuple[list[dict], dict]:
        """Measure every slide of `deck` (see MEASURE_SLIDE_JS); return (rows, {"errors", "blocked"})."""
        deck = Path(deck).resolve()
        page = self.browser.new_page(viewport={"width": self.width, "height": self.height})
        blocked: list[str] = []
        errors: list[str] = []

        def route(r):
            if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
                r.continue_()
            else:
                blocked.append(r.request.url)
                r.abort()

        try:
            page.route("**/*", route)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(deck.as_uri())
            page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=30_000)
            page.wait_for_function("!window.MathJax || !MathJax.Hub || MathJax.Hub.queue.pending === 0",
                                   timeout=30_000)
            page.wait_for_timeout(300)
            rows = []
            for i in range(page.evaluate("Reveal.getSlides().length")):
                info = page.evaluate(MEASURE_SLIDE_JS, [i, shots is not None])
                info.update(deck=deck.name, overflow=info["content"] > info["box"] + 2)
                rows.append(info)
                if shots is not None:
                    page.wait_for_timeout(150)
                    shots.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(shots / f"{deck.stem}_{i:02d}.png"))
        finally:
            page.close()
        return rows, {"deck": deck.name, "errors": errors, "blocked": blocked}


def check_decks(decks: Iterable[Path], *, width: int = 1280, height: int = 720,
                shots: Optional[Path] = None) -> list[dict]:
    """Open each deck in headless Chromium at width x height, offline, and measure every slide.

    Every fragment is shown before measuring. A slide overflows when its content is taller than the slide.
    Args:
        decks: deck HTML files.
        width, height: the viewport (the projector).
        shots: if given, a PNG per slide is written there.
    Returns:
        One row per slide: deck, index "h/v", heading, content height, box height, overflow (bool), figures
        (plotly plots), blank_figures (plots with no drawn area), breaks; plus one row per deck with its page
        errors (key "errors") and requests that tried to leave the machine (key "blocked").
    """
    browser = DeckBrowser(width, height)
    rows: list[dict] = []
    try:
        for deck in decks:
            slides, summary = browser.measure(deck, shots)
            rows += slides + [summary]
    finally:
        browser.close()
    return rows


def _heading_before(nb: nbformat.NotebookNode, index: int) -> str:
    """The last markdown heading at or before cell `index` (for a continuation slide's label)."""
    for cell in reversed(nb.cells[: index + 1]):
        if cell.cell_type == "markdown":
            heads = [l.lstrip("#").strip() for l in cell.source.splitlines() if re.match(r"#{1,4} ", l)]
            if heads:
                return re.sub(r"[`*$\\]", "", heads[-1])  # a CSS label shows no markdown or TeX
    return ""


def fit_deck(nb: nbformat.NotebookNode, out_file: Path, course: dict, browser: DeckBrowser,
             max_rounds: int = 12) -> tuple[nbformat.NotebookNode, list[dict], dict]:
    """Export a deck, measure it at 1280x720 and start a new (continuation) slide where a slide runs over.

    Only new vertical slides are added, before the first cell that crosses the bottom edge; the author's
    slides, subslides and fragments stay as they are. A single cell taller than the screen gets a slide of
    its own and is scaled down (CSS zoom, in steps of 10 %, not below ZOOM_MIN); what still runs over scrolls. Returns the notebook as exported last, the measurement of that deck (as
    `check_decks` gives it) and the counts of `export`.
    """
    nb = copy.deepcopy(nb)
    for i, cell in enumerate(nb.cells):  # nbformat 4.5 cell ids anchor the measurement
        if not cell.get("id"):
            cell["id"] = f"al-cell-{i}"
    nb.nbformat_minor = max(nb.nbformat_minor, 5)
    by_id = {f"cell-id={c.id}": i for i, c in enumerate(nb.cells)}
    broken: set[int] = set()
    zoomed: dict[int, int] = {}
    rows: list[dict] = []
    for _ in range(max_rounds):
        counts = export(nb, out_file, "slides", course)
        rows, summary = browser.measure(out_file)
        todo = [by_id[b] for r in rows if r["overflow"] for b in r["breaks"]
                if b in by_id and by_id[b] not in broken]
        shrink = {}
        if not todo:  # every slide is split as far as cells go: scale down the cells still too tall
            for r in rows:
                for cid, height, room in r["tall"] if r["overflow"] else []:
                    i = by_id.get(cid)
                    current = zoomed.get(i, 100)
                    want = max(ZOOM_MIN, min(current - 10, int(current * room / height) // 10 * 10))
                    if i is not None and want < current:
                        shrink[i] = want
        if not todo and not shrink:
            break
        for i, pct in shrink.items():
            tags = [t for t in nb.cells[i].metadata.get("tags", []) if not t.startswith("al-zoom-")]
            nb.cells[i].metadata["tags"] = tags + [f"al-zoom-{pct}"]
            zoomed[i] = pct
        for i in todo:
            cell = nb.cells[i]
            show = cell.metadata.setdefault("slideshow", {})
            show["slide_type"] = "subslide"
            label = _heading_before(nb, i - 1)
            if label:
                show["data"] = {"al_continued": f"{label} (continued)"}
            broken.add(i)
    return nb, rows + [summary], counts


# ---------------------------------------------------------------- build


def _can_fit() -> bool:
    """True when Chromium and playwright are there to measure decks."""
    return CHROMIUM.exists() and importlib.util.find_spec("playwright") is not None


def build(notebooks: Iterable[Path], *, site: Optional[Path] = None, slides: Optional[Path] = None,
          execute: bool = True, cache_dir: Optional[Path] = None, fit: Optional[bool] = None) -> dict[str, dict]:
    """Build pages into `site` and/or decks into `slides`; return per-notebook counts of what was rendered.

    Args:
        notebooks: notebook paths, in course order.
        site: output folder of the website (index.html, one NN_slug.html per notebook, assets/).
        slides: output folder of the decks (index.html, one NN_slug.html deck per notebook, assets/).
        execute: run each notebook with ATTNLIB_STATIC=1 (False: use the committed outputs as they are).
        cache_dir: folder for executed copies (None: no cache).
        fit: measure each deck in Chromium at 1280x720 and add continuation slides where a slide runs over
            (None: when /usr/bin/chromium and playwright are there).
    Returns:
        {notebook name: {"figures": n, "static_notes": n, "widgets_without_snapshot": n}} for the last kind built;
        fitted decks add "deck_check": the rows of `check_decks` for the deck as written.
    """
    notebooks = [Path(p).resolve() for p in notebooks]
    if not notebooks:
        raise SystemExit("build_site: no notebooks to build")
    if site is None and slides is None:
        raise SystemExit("build_site: give --site DIR and/or --slides DIR")
    asset_sources()  # fail before the slow part if a package that ships the offline assets is missing
    base = binder_base()
    rows = readme_rows()
    entries, executed = [], {}
    for path in notebooks:
        nb = execute_static(path, cache_dir) if execute else nbformat.read(path, as_version=4)
        executed[path.name] = nb
        section, what = rows.get(path.name, ("", ""))
        entries.append({"name": path.name, "stem": path.stem, "number": path.stem.split("_")[0],
                        "title": notebook_title(nb, path.stem), "section": section, "what": what,
                        "binder_url": binder_url(path.name, base)})
    report: dict[str, dict] = {}
    fit = _can_fit() if fit is None else fit
    if slides is not None and not fit:
        print("  note: decks are not fitted to 1280x720 (needs /usr/bin/chromium); tall slides scroll")
    browser = DeckBrowser() if (slides is not None and fit) else None
    try:
        for kind, out in (("page", site), ("slides", slides)):
            if out is not None:
                _build_kind(kind, Path(out), entries, executed, report, site, slides, base, browser)
    finally:
        if browser is not None:
            browser.close()
    return report


def _build_kind(kind: str, out: Path, entries: list[dict], executed: dict, report: dict,
                site: Optional[Path], slides: Optional[Path], base: str, browser: Optional[DeckBrowser]) -> None:
    """Write the pages (kind 'page') or the decks (kind 'slides') and their index into `out`."""
    copy_assets(out, reveal=(kind == "slides"))
    other = slides if kind == "page" else site
    other_rel = os.path.relpath(other, out) if other is not None else None
    for i, e in enumerate(entries):
        course = {"title": e["title"], "assets": "assets", "index_url": "index.html",
                  "binder_url": e["binder_url"],
                  "prev": {"href": f"{entries[i-1]['stem']}.html", "label": entries[i-1]["number"]} if i else None,
                  "next": ({"href": f"{entries[i+1]['stem']}.html", "label": entries[i+1]["number"]}
                           if i + 1 < len(entries) else None),
                  "slides_url": f"{other_rel}/{e['stem']}.html" if (kind == "page" and other_rel) else None}
        if kind == "slides" and browser is not None:
            _, rows, counts = fit_deck(executed[e["name"]], out / f"{e['stem']}.html", course, browser)
            slides_rows = [r for r in rows if "index" in r]
            added = len(slides_rows) - _count_slides(executed[e["name"]])
            print(f"  {e['stem']}: {len(slides_rows)} slides, {added} of them continuations added to fit 1280x720")
            print_deck_check(rows)
            counts = dict(counts, deck_check=rows)
        else:
            counts = export(executed[e["name"]], out / f"{e['stem']}.html", kind, course)
        report[e["name"]] = counts
        if counts.get("widgets_without_snapshot"):
            print(f"  warning: {e['name']}: {counts['widgets_without_snapshot']} widget view(s) without a "
                  "static snapshot (shown as a note with a Binder link)", file=sys.stderr)
    index = index_notebook(entries, kind=kind, other_kind_dir=other_rel)
    export(index, out / "index.html", kind,
           {"title": "Course index" if kind == "page" else "Course slides", "assets": "assets",
            "index_url": "index.html", "binder_url": binder_url(None, base), "prev": None, "next": None,
            "slides_url": f"{other_rel}/index.html" if (kind == "page" and other_rel) else None})
    print(f"{'site' if kind == 'page' else 'slides'}: {out / 'index.html'} and {len(entries)} "
          f"{'pages' if kind == 'page' else 'decks'}")


def print_deck_check(rows: list[dict]) -> int:
    """Print what `check_decks` found wrong (tall slides, blank figures, page errors, network requests)."""
    problems = 0
    for row in rows:
        if "errors" in row:
            if row["errors"] or row["blocked"]:
                problems += 1
                print(f"  {row['deck']}: page errors {row['errors']}, blocked requests {row['blocked']}")
        elif row["overflow"] or row["blank_figures"]:
            problems += 1
            what = (f"{row['content']} px tall on a {row['box']} px slide (a single tall cell; it scrolls)"
                    if row["overflow"] else "")
            blank = f"{row['blank_figures']} blank figure(s)" if row["blank_figures"] else ""
            print(f"    slide {row['index']} '{row['heading']}': {'; '.join(x for x in (what, blank) if x)}")
    return problems


def _count_slides(nb: nbformat.NotebookNode) -> int:
    """Number of (sub)slides the author's metadata makes."""
    from nbconvert.exporters.slides import _RevealMetadataPreprocessor

    cells, _ = _RevealMetadataPreprocessor().preprocess(nb, {})
    return sum(1 for c in cells.cells if c.metadata.get("subslide_start"))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/[0-9][0-9]_*.ipynb")
    parser.add_argument("--site", type=Path, help="output folder of the website")
    parser.add_argument("--slides", type=Path, help="output folder of the slide decks")
    parser.add_argument("--no-execute", action="store_true", help="use the committed outputs (no static panels)")
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "executed",
                        help="folder for executed copies (default build/executed)")
    parser.add_argument("--no-fit", action="store_true",
                        help="do not measure the decks in Chromium at 1280x720 (by default they are, when "
                             "/usr/bin/chromium is there, and slides that run over get continuation slides)")
    parser.add_argument("--shots", type=Path,
                        help="after building, open every deck in Chromium and write a PNG of each slide here")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    start = time.perf_counter()
    build(notebooks, site=args.site, slides=args.slides, execute=not args.no_execute, cache_dir=args.cache,
          fit=False if args.no_fit else None)
    status, checked = 0, 0
    for out in (args.site, args.slides):
        if out is None:
            continue
        for page in sorted(Path(out).glob("*.html")):
            checked += 1
            remote = remote_references(page)
            missing = [f for f in local_references(page) if not f.exists()]
            if remote or missing:
                status = 1
                print(f"error: {page}: remote {remote}, missing local files {missing}", file=sys.stderr)
    if status == 0:
        print(f"offline check: {checked} pages load nothing from the network, and every local file they load exists")
    if args.shots is not None and args.slides is not None:
        decks = [Path(args.slides) / f"{Path(nb).stem}.html" for nb in notebooks]
        print(f"screenshots of every slide in {args.shots}")
        print_deck_check(check_decks(decks, shots=args.shots))
    print(f"done in {time.perf_counter() - start:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
