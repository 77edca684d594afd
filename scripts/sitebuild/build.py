"""The build in order: execute (or read) the notebooks, then write the pages and/or the decks with their index."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import nbformat

from attnlib.widgets.static import TEXT, text

from .assets import asset_sources, copy_assets
from .course import binder_base, binder_url, course_entries, index_notebook
from .decks import DeckBrowser, can_fit, fit_deck, print_deck_check
from .execute import execute_all
from .export import export


@dataclass
class Course:
    """The notebooks being built: entries (course.course_entries), executed notebooks by name, both outputs."""

    entries: list[dict]
    executed: dict[str, nbformat.NotebookNode]
    site: Optional[Path]
    slides: Optional[Path]
    language: str = "en"
    twin: Optional[str] = None  # the other language's folder, relative to this edition's folder
    twin_pages: Optional[set[str]] = None  # the pages that have a twin there (None: every page)


def build(notebooks: Iterable[Path], *, site: Optional[Path] = None, slides: Optional[Path] = None,
          execute: bool = True, cache_dir: Optional[Path] = None, fit: Optional[bool] = None,
          language: str = "en", twin: Optional[str] = None,
          twin_pages: Optional[Iterable[str]] = None) -> dict[str, dict]:
    """Build pages into `site` and/or decks into `slides`; return per-notebook counts of what was rendered.

    Args:
        notebooks: notebook paths, in course order.
        site: output folder of the website (index.html, one NN_slug.html per notebook, assets/).
        slides: output folder of the decks (index.html, one NN_slug.html deck per notebook, assets/).
        execute: run each notebook with ATTNLIB_STATIC=1 (False: use the committed outputs as they are).
        cache_dir: folder for executed copies (None: no cache).
        fit: measure each deck in Chromium at 1280x720 and add continuation slides where a slide runs over
            (None: when /usr/bin/chromium and playwright are there).
        language: the edition's language ('en', or 'zh' for notebooks/zh/): the builder's strings and <html lang>.
        twin: the folder of the other language's edition relative to this one ('zh', or '..'): every page
            links to its twin there (None: no link).
        twin_pages: the pages ('01_introduction.html', ...) that have a twin there (None: every page; the index
            always has one).
    Returns:
        {notebook name: {"figures": n, "static_notes": n, "widgets_without_snapshot": n}} for the last kind built;
        fitted decks add "deck_check": the rows of `check_decks` for the deck as written.
    """
    paths = [Path(p).resolve() for p in notebooks]
    if not paths:
        raise SystemExit("build_site: no notebooks to build")
    if site is None and slides is None:
        raise SystemExit("build_site: give --site DIR and/or --slides DIR")
    asset_sources()  # fail before the slow part if a package that ships the offline assets is missing
    executed = execute_all(paths, cache_dir) if execute else {p.name: nbformat.read(p, as_version=4) for p in paths}
    course = Course(course_entries(executed, paths, language), executed, site, slides, language, twin,
                    None if twin_pages is None else set(twin_pages) | {"index.html"})
    fit = can_fit() if fit is None else fit
    if slides is not None and not fit:
        print("  note: decks are not fitted to 1280x720 (needs /usr/bin/chromium); tall slides scroll")
    report: dict[str, dict] = {}
    if site is not None:
        report.update(build_edition("page", Path(site), course))
    if slides is not None:
        browser = DeckBrowser() if fit else None
        try:
            report.update(build_edition("slides", Path(slides), course, browser))
        finally:
            if browser is not None:
                browser.close()
    return report


def page_links(course: Course, i: int, slides_rel: Optional[str]) -> dict:
    """What the templates show around notebook i (resources.course): title, assets, index, Binder, prev/next."""
    entries, e = course.entries, course.entries[i]
    neighbour = {j: {"href": f"{entries[j]['stem']}.html", "label": entries[j]["number"]}
                 for j in (i - 1, i + 1) if 0 <= j < len(entries)}
    return dict(edition_links(course, f"{e['stem']}.html"), title=e["title"], binder_url=e["binder_url"],
                prev=neighbour.get(i - 1), next=neighbour.get(i + 1),
                slides_url=f"{slides_rel}/{e['stem']}.html" if slides_rel else None)


def edition_links(course: Course, page: str) -> dict:
    """What every page of an edition shows: its assets, index, strings, language and the twin page's link."""
    twin_lang = "en" if course.language != "en" else "zh"
    return {"assets": "assets", "index_url": "index.html", "language": course.language,
            "text": TEXT.get(course.language, TEXT["en"]), "twin_lang": twin_lang,
            "twin_url": f"{course.twin}/{page}" if course.twin and page in (course.twin_pages or {page}) else None}


def fitted_deck(nb: nbformat.NotebookNode, out_file: Path, links: dict, browser: DeckBrowser) -> dict:
    """Write a deck fitted to 1280x720, print what was added and what still does not fit; return its counts."""
    rows, counts, added = fit_deck(nb, out_file, links, browser)
    slides = [r for r in rows if "index" in r]
    print(f"  {out_file.stem}: {len(slides)} slides, {added} of them continuations added to fit 1280x720")
    print_deck_check(rows)
    return dict(counts, deck_check=rows)


def build_edition(kind: str, out: Path, course: Course, browser: Optional[DeckBrowser] = None) -> dict[str, dict]:
    """Write the pages (kind 'page') or the decks (kind 'slides') and their index into `out`; return their counts."""
    copy_assets(out, reveal=(kind == "slides"))
    other = course.slides if kind == "page" else course.site
    other_rel = os.path.relpath(other, out) if other is not None else None
    slides_rel = other_rel if kind == "page" else None  # pages link to their decks, not the other way
    report = {}
    for i, e in enumerate(course.entries):
        links, out_file, nb = page_links(course, i, slides_rel), out / f"{e['stem']}.html", course.executed[e["name"]]
        if browser is not None:
            report[e["name"]] = fitted_deck(nb, out_file, links, browser)
        else:
            report[e["name"]] = export(nb, out_file, kind, links)
        if report[e["name"]].get("live_panels"):
            r = report[e["name"]]
            print(f"  {out_file.name}: main panel live, {r['live_controls']} controls, {r['states']} states, "
                  f"{r['state_bytes'] / 1e3:.0f} kB of state, page {out_file.stat().st_size / 1e3:.0f} kB")
        if report[e["name"]].get("widgets_without_snapshot"):
            print(f"  warning: {e['name']}: {report[e['name']]['widgets_without_snapshot']} widget view(s) without "
                  "a static snapshot (shown as a note with a Binder link)", file=sys.stderr)
    index = index_notebook(course.entries, kind=kind, other_kind_dir=other_rel, language=course.language)
    export(index, out / "index.html", kind,
           dict(edition_links(course, "index.html"), binder_url=binder_url(None, binder_base()), prev=None, next=None,
                title=text("index_title" if kind == "page" else "slides_title", course.language),
                slides_url=f"{slides_rel}/index.html" if slides_rel else None))
    print(f"{'site' if kind == 'page' else 'slides'}: {out / 'index.html'} and {len(course.entries)} "
          f"{'pages' if kind == 'page' else 'decks'}")
    return report
