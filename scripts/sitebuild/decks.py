"""Decks in headless Chromium at 1280x720 (the projector): measure every slide, and fit a deck that runs over."""
from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Iterable, Optional

import nbformat

from attnlib.bench.browser.lab import CHROMIUM, CHROMIUM_ARGS
from attnlib.widgets.static import text

from .export import export

FIT_CACHE = Path(__file__).resolve().parents[2] / "build" / "deckfit"  # what fitting decided, per deck content
ZOOM_MIN = 80  # percent: a cell is never scaled below this on a slide (smaller code is unreadable on a projector)

# Measure slide i (hidden fragments take their place in the layout, so all of them count). For a slide taller
# than the screen, `breaks` lists the cells (their ids) that should each start a new slide: every cell that would
# cross the bottom edge of the slide it lands on, and the cell after any single cell taller than the screen.
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


# All slides in one call (measuring needs no navigation, so the rows are those of MEASURE_SLIDE_JS slide by slide).
MEASURE_DECK_JS = ("(n) => { const one = " + MEASURE_SLIDE_JS
                   + "; return Array.from({length: n}, (_, i) => one([i, false])); }")


def can_fit() -> bool:
    """True when Chromium and playwright are there to measure decks."""
    import importlib.util

    return CHROMIUM.exists() and importlib.util.find_spec("playwright") is not None


class DeckBrowser:
    """Headless Chromium (Debian's) that opens decks from file:// at the projector size, with the network blocked."""

    def __init__(self, width: int = 1280, height: int = 720, cache: Optional[Path] = FIT_CACHE) -> None:
        from playwright.sync_api import sync_playwright

        self.width, self.height, self.cache = width, height, cache
        self._setting: Optional[str] = None
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                       args=CHROMIUM_ARGS)

    def close(self) -> None:
        self.browser.close()
        self.playwright.stop()

    def measure(self, deck: Path, shots: Optional[Path] = None) -> tuple[list[dict], dict]:
        """Measure every slide of `deck` (see MEASURE_SLIDE_JS); return (rows, {"deck", "errors", "blocked"})."""
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
            page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")  # typeset
            page.wait_for_timeout(300)
            n = page.evaluate("Reveal.getSlides().length")
            if shots is None:
                rows = [dict(info, deck=deck.name, overflow=info["content"] > info["box"] + 2)
                        for info in page.evaluate(MEASURE_DECK_JS, n)]
            else:
                rows = [self._slide(page, deck, i, shots) for i in range(n)]
        finally:
            page.close()
        return rows, {"deck": deck.name, "errors": errors, "blocked": blocked}

    def setting(self) -> str:
        """A hash of what besides the deck decides its measurement: this module, the viewport, Chromium, the fonts."""
        if self._setting is None:
            fc = shutil.which("fc-list")
            fonts = subprocess.run([fc], capture_output=True, text=True).stdout if fc else ""
            parts = [Path(__file__).read_text(encoding="utf-8"), f"{self.width}x{self.height}", self.browser.version,
                     "\n".join(sorted(fonts.splitlines()))]
            self._setting = hashlib.sha256("\0".join(parts).encode()).hexdigest()
        return self._setting

    def fit_key(self, deck: Path, assets: str, max_rounds: int) -> str:
        """The cache key of fitting `deck` as first exported: its bytes, the assets files it loads, the setting."""
        h = hashlib.sha256(f"{self.setting()}\0{deck.name}\0{max_rounds}\0".encode())
        html = deck.read_bytes()
        h.update(html)
        for ref in sorted(set(re.findall(rb'(?:src|href)="([^"?#]+)', html))):
            f = deck.parent / ref.decode()
            if ref.decode().startswith(assets.rstrip("/") + "/") and f.is_file():
                h.update(ref + b"\0" + f.read_bytes())
        return h.hexdigest()

    def cached_fit(self, key: str) -> Optional[dict]:
        """What fitting decided for the deck of `key` before (None if never, or if the cache is off or unreadable)."""
        f = self.cache / f"{key}.json" if self.cache is not None else None
        try:
            return json.loads(f.read_text(encoding="utf-8")) if f is not None and f.exists() else None
        except (OSError, ValueError):
            return None

    def store_fit(self, key: str, fit: dict) -> None:
        """Remember what fitting decided (written whole, so a parallel build never reads half a file)."""
        if self.cache is None:
            return
        self.cache.mkdir(parents=True, exist_ok=True)
        tmp = self.cache / f"{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(fit), encoding="utf-8")
        tmp.replace(self.cache / f"{key}.json")

    @staticmethod
    def _slide(page, deck: Path, i: int, shots: Optional[Path]) -> dict:
        """The measurement of slide i (and its screenshot in `shots`, if given)."""
        info = page.evaluate(MEASURE_SLIDE_JS, [i, shots is not None])
        info.update(deck=deck.name, overflow=info["content"] > info["box"] + 2)
        if shots is not None:
            page.wait_for_timeout(150)
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / f"{deck.stem}_{i:02d}.png"))
        return info


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


# ---------------------------------------------------------------- fitting a deck


def heading_before(nb: nbformat.NotebookNode, index: int) -> str:
    """The last markdown heading at or before cell `index` (for a continuation slide's label)."""
    for cell in reversed(nb.cells[: index + 1]):
        if cell.cell_type == "markdown":
            heads = [line.lstrip("#").strip() for line in cell.source.splitlines() if re.match(r"#{1,4} ", line)]
            if heads:
                return re.sub(r"[`*$\\]", "", heads[-1])  # a CSS label shows no markdown or TeX
    return ""


def start_continuation(nb: nbformat.NotebookNode, i: int, language: str = "en") -> None:
    """Make cell i start a new (vertical) slide, labelled '<heading> (continued)' (in the deck's language)."""
    show = nb.cells[i].metadata.setdefault("slideshow", {})
    show["slide_type"] = "subslide"
    label = heading_before(nb, i - 1)
    if label:
        show["data"] = {"al_continued": text("continued", language, label=label)}


def zoom_steps(rows: list[dict], by_id: dict[str, int], zoomed: dict[int, int]) -> dict[int, int]:
    """{cell index: new zoom %} for cells still too tall on an overflowing slide: 10 % steps, not below ZOOM_MIN."""
    shrink = {}
    for r in rows:
        for cid, height, room in r["tall"] if r["overflow"] else []:
            i = by_id.get(cid)
            current = zoomed.get(i, 100)
            want = max(ZOOM_MIN, min(current - 10, int(current * room / height) // 10 * 10))
            if i is not None and want < current:
                shrink[i] = want
    return shrink


def set_zoom(cell: nbformat.NotebookNode, pct: int) -> None:
    """Tag the cell al-zoom-<pct> (course_slides.css scales it), replacing an earlier zoom tag."""
    tags = [t for t in cell.metadata.get("tags", []) if not t.startswith("al-zoom-")]
    cell.metadata["tags"] = tags + [f"al-zoom-{pct}"]


def fit_deck(nb: nbformat.NotebookNode, out_file: Path, course: dict, browser: DeckBrowser,
             max_rounds: int = 12) -> tuple[list[dict], dict, int]:
    """Export a deck, measure it at 1280x720 and start a new (continuation) slide where a slide runs over.

    Only new vertical slides are added, before the first cell that crosses the bottom edge; the author's
    slides, subslides and fragments stay as they are. A single cell taller than the screen gets a slide of
    its own and is scaled down (in steps of 10 %, not below ZOOM_MIN); what still runs over scrolls.
    Returns:
        (the measurement of the deck as written, as `check_decks` gives it; the counts of `export`;
         how many continuation slides that deck has).
    """
    nb = copy.deepcopy(nb)
    for i, cell in enumerate(nb.cells):  # nbformat 4.5 cell ids anchor the measurement
        if not cell.get("id"):
            cell["id"] = f"al-cell-{i}"
    nb.nbformat_minor = max(nb.nbformat_minor, 5)
    by_id = {f"cell-id={c.id}": i for i, c in enumerate(nb.cells)}
    language = course.get("language", "en")
    broken: set[int] = set()
    zoomed: dict[int, int] = {}
    steps: list[list] = []  # every change, in order: ["zoom", cell, pct] or ["break", cell]
    key, done = None, 0  # done: how many of `steps` the deck as written has
    for _ in range(max_rounds):
        added, done = len(broken), len(steps)
        counts = export(nb, out_file, "slides", course)
        if key is None and browser.cache is not None:
            key = browser.fit_key(out_file, course.get("assets", "assets"), max_rounds)
            known = browser.cached_fit(key)
            if known is not None:  # the same deck in the same setting was fitted before: the same changes
                for step in known["steps"]:
                    if step[0] == "zoom":
                        set_zoom(nb.cells[step[1]], step[2])
                    else:
                        start_continuation(nb, step[1], language)
                counts = export(nb, out_file, "slides", course) if known["steps"] else counts
                return known["rows"], counts, known["added"]
        rows, summary = browser.measure(out_file)
        todo = {by_id[b] for r in rows if r["overflow"] for b in r["breaks"] if b in by_id} - broken
        shrink = {} if todo else zoom_steps(rows, by_id, zoomed)  # split as far as cells go first
        if not todo and not shrink:
            break
        for i, pct in shrink.items():
            set_zoom(nb.cells[i], pct)
            zoomed[i] = pct
            steps.append(["zoom", i, pct])
        for i in sorted(todo):
            start_continuation(nb, i, language)
            broken.add(i)
            steps.append(["break", i])
    if key is not None:
        browser.store_fit(key, {"steps": steps[:done], "rows": rows + [summary], "added": added})
    return rows + [summary], counts, added
