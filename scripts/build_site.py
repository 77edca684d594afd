"""Build the course as a static website and as reveal.js slide decks, both readable offline.

Usage:
    python scripts/build_site.py --site build/site            # `make site`
    python scripts/build_site.py --slides build/slides        # `make slides`
    python scripts/build_site.py --site S --slides D [--no-execute] [--cache DIR] [notebooks ...]

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


def check_decks(decks: Iterable[Path], *, width: int = 1280, height: int = 720,
                shots: Optional[Path] = None) -> list[dict]:
    """Open each deck in headless Chromium at width x height, offline, and measure every slide.

    Every fragment is shown before measuring. A slide overflows when its content is taller than the slide.
    Args:
        decks: deck HTML files.
        width, height: the viewport (the projector).
        shots: if given, a PNG per slide is written there.
    Returns:
        One row per slide: deck, index "h/v", heading, content height, overflow (bool), figures
        (plotly plots drawn), blank_figures (plots with no drawn area), plus one row per deck with its page errors
        (key "errors") and requests that tried to leave the machine (key "blocked").
    """
    from playwright.sync_api import sync_playwright

    rows: list[dict] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--disable-dev-shm-usage", "--no-sandbox"])
        for deck in decks:
            deck = Path(deck).resolve()
            page = browser.new_page(viewport={"width": width, "height": height})
            blocked, errors = [], []

            def route(r, blocked=blocked):
                if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
                    r.continue_()
                else:
                    blocked.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.goto(deck.as_uri())
            page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=30_000)
            page.wait_for_timeout(1500)  # MathJax typesetting
            n = page.evaluate("Reveal.getSlides().length")
            for i in range(n):
                info = page.evaluate(
                    """(i) => {
                      const s = Reveal.getSlides()[i];
                      const ix = Reveal.getIndices(s);
                      Reveal.slide(ix.h, ix.v, 999);
                      s.querySelectorAll('.js-plotly-plot').forEach(d => Plotly.Plots.resize(d));
                      const heading = (s.querySelector('h1, h2, h3, h4') || s).textContent.replace('¶', '').trim().slice(0, 60);
                      const plots = [...s.querySelectorAll('.js-plotly-plot')];
                      const blank = plots.filter(d => { const r = d.getBoundingClientRect();
                        return r.width < 50 || r.height < 50 || !d.querySelector('.main-svg'); }).length;
                      return {index: ix.h + '/' + ix.v, heading, content: s.scrollHeight, box: s.clientHeight,
                              figures: plots.length, blank_figures: blank};
                    }""", i)
                page.wait_for_timeout(150)
                info.update(deck=deck.name, overflow=info["content"] > info["box"] + 2)
                rows.append(info)
                if shots is not None:
                    shots.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(shots / f"{deck.stem}_{i:02d}.png"))
            rows.append({"deck": deck.name, "errors": errors, "blocked": blocked})
            page.close()
        browser.close()
    return rows


# ---------------------------------------------------------------- build


def build(notebooks: Iterable[Path], *, site: Optional[Path] = None, slides: Optional[Path] = None,
          execute: bool = True, cache_dir: Optional[Path] = None) -> dict[str, dict]:
    """Build pages into `site` and/or decks into `slides`; return per-notebook counts of what was rendered.

    Args:
        notebooks: notebook paths, in course order.
        site: output folder of the website (index.html, one NN_slug.html per notebook, assets/).
        slides: output folder of the decks (index.html, one NN_slug.html deck per notebook, assets/).
        execute: run each notebook with ATTNLIB_STATIC=1 (False: use the committed outputs as they are).
        cache_dir: folder for executed copies (None: no cache).
    Returns:
        {notebook name: {"figures": n, "static_notes": n, "widgets_without_snapshot": n}} for the last kind built.
    """
    notebooks = [Path(p).resolve() for p in notebooks]
    if not notebooks:
        raise SystemExit("build_site: no notebooks to build")
    if site is None and slides is None:
        raise SystemExit("build_site: give --site DIR and/or --slides DIR")
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
    for kind, out in (("page", site), ("slides", slides)):
        if out is None:
            continue
        out = Path(out)
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
    return report


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/[0-9][0-9]_*.ipynb")
    parser.add_argument("--site", type=Path, help="output folder of the website")
    parser.add_argument("--slides", type=Path, help="output folder of the slide decks")
    parser.add_argument("--no-execute", action="store_true", help="use the committed outputs (no static panels)")
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "executed",
                        help="folder for executed copies (default build/executed)")
    parser.add_argument("--check", action="store_true",
                        help="after building, open the decks in headless Chromium at 1280x720 and report "
                             "slides taller than the screen and blank figures (needs /usr/bin/chromium)")
    parser.add_argument("--shots", type=Path, help="with --check: write a PNG of every slide here")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    start = time.perf_counter()
    build(notebooks, site=args.site, slides=args.slides, execute=not args.no_execute, cache_dir=args.cache)
    status = 0
    for out in (args.site, args.slides):
        if out is None:
            continue
        for page in sorted(Path(out).glob("*.html")):
            remote = remote_references(page)
            missing = [f for f in local_references(page) if not f.exists()]
            if remote or missing:
                status = 1
                print(f"error: {page}: remote {remote}, missing local files {missing}", file=sys.stderr)
    if args.check and args.slides is not None:
        decks = [Path(args.slides) / f"{Path(nb).stem}.html" for nb in notebooks]
        for row in check_decks(decks, shots=args.shots):
            if "errors" in row:
                if row["errors"] or row["blocked"]:
                    print(f"  {row['deck']}: page errors {row['errors']}, blocked requests {row['blocked']}")
            elif row["overflow"] or row["blank_figures"]:
                what = f"{row['content']} px of content on a {row['box']} px slide" if row["overflow"] else ""
                blank = f"{row['blank_figures']} blank figure(s)" if row["blank_figures"] else ""
                print(f"  slide check: {row['deck']} slide {row['index']} '{row['heading']}': "
                      f"{'; '.join(x for x in (what, blank) if x)}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
