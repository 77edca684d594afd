"""Render one notebook as a page (nbconvert's lab template) or a deck (its reveal template), with our templates."""
from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter, SlidesExporter
from traitlets.config import Config

from .course import TEMPLATES
from .outputs import StaticOutputsPreprocessor


def exporter(kind: str, binder: str, language: str = "en", where: str = "") -> HTMLExporter:
    """nbconvert's exporter for kind 'page' or 'slides', on our templates, with the static-outputs preprocessor.

    On pages a main panel's states become HTML controls; decks keep its snapshot (a slide is projected, not
    explored, and a deck would carry every panel's states).
    """
    c = Config()
    cls = SlidesExporter if kind == "slides" else HTMLExporter
    c[cls.__name__].extra_template_basedirs = [str(TEMPLATES)]
    c[cls.__name__].extra_template_paths = [str(TEMPLATES / "common")]  # shared macros and the nav bar
    c[cls.__name__].template_name = "course_slides" if kind == "slides" else "course_page"
    c[cls.__name__].language_code = language  # <html lang="zh">: CJK fonts (nbconvert takes ISO 639-1 codes only)
    if kind == "slides":
        c.SlidesExporter.reveal_url_prefix = "assets/reveal"
        c.SlidesExporter.reveal_theme = "white"
    result = cls(config=c)
    result.register_preprocessor(StaticOutputsPreprocessor(binder=binder, interactive=(kind == "page"),
                                                           language=language, where=where), enabled=True)
    return result


def export(nb: nbformat.NotebookNode, out_file: Path, kind: str, course: dict) -> dict:
    """Render one notebook to `out_file` as a page (kind='page') or a deck (kind='slides').

    Args:
        nb: the (executed) notebook; it is not changed.
        out_file: the HTML file to write.
        kind: 'page' or 'slides'.
        course: what the templates show around it (resources.course): title, assets, index_url, binder_url,
            prev, next, slides_url, language (of the builder's strings), twin_url (the page in the other language).
    Returns:
        The counts of the static-outputs preprocessor: figures, static_notes, widgets_without_snapshot,
        live_panels, live_controls, states, state_bytes.
    """
    nb = copy.deepcopy(nb)
    nb.metadata["title"] = course["title"]
    language = course.get("language", "en")
    body, resources = exporter(kind, course.get("binder_url", ""), language, out_file.name).from_notebook_node(
        nb, resources={"course": course, "metadata": {"name": course["title"]}})
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(body, encoding="utf-8")
    return resources.get("course_counts", {})
