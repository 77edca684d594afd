"""What the README says about the course: its title and intro, the Binder badge, the notebook table; the index pages."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import nbformat

from attnlib.widgets.static import text

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TEMPLATES = ROOT / "scripts" / "site_templates"
DEFAULT_BINDER = "https://mybinder.org/v2/gh/attention-course/attention-course/HEAD"


def readme_text(readme: Path = README) -> str:
    """The README's text ('' when there is none)."""
    return readme.read_text(encoding="utf-8") if readme.exists() else ""


def binder_base(readme: Path = README) -> str:
    """Return the Binder launch URL of the repository (without urlpath), read from README's badge."""
    m = re.search(r"(https://mybinder\.org/v2/gh/[^/\s)]+/[^/\s)]+/[^?\s)]+)\?urlpath=", readme_text(readme))
    return m.group(1) if m else DEFAULT_BINDER


def binder_url(notebook_name: Optional[str], base: Optional[str] = None, folder: str = "notebooks") -> str:
    """Return the Binder URL that opens `notebook_name` (e.g. '01_introduction.ipynb') of `folder` in JupyterLab."""
    base = base or binder_base()
    if not notebook_name:
        return f"{base}?urlpath=lab/tree/{folder}"
    return f"{base}?urlpath=lab/tree/{folder}/{notebook_name}"


def binder_folder(path: Path) -> str:
    """The notebook's folder in the repository ('notebooks', or 'notebooks/zh'), for its Binder URL."""
    try:
        return Path(path).resolve().parent.relative_to(ROOT).as_posix()
    except ValueError:  # a notebook outside the repository (tests): as if it were in notebooks/
        return "notebooks"


def edition_readme(language: str) -> Path:
    """The README of an edition: README.<language>.md when it exists, else README.md."""
    translated = ROOT / f"README.{language}.md"
    return translated if language != "en" and translated.exists() else README


def first_heading(text: str) -> Optional[str]:
    """The text of the first level-1 Markdown heading in `text`, or None."""
    return next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), None)


def notebook_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """Return the text of the notebook's first level-1 heading, or `fallback`."""
    for cell in nb.cells:
        title = first_heading(cell.source) if cell.cell_type == "markdown" else None
        if title:
            return title
    return fallback


def readme_rows(readme: Path = README) -> dict[str, tuple[str, str]]:
    """Map notebook file name -> (article section, what you do), from README's notebook table."""
    rows = {}
    for line in readme_text(readme).splitlines():
        m = re.match(r"\|\s*\d+\s*\|\s*\[[^\]]*\]\(notebooks/([^)]+\.ipynb)\)\s*\|([^|]*)\|([^|]*)\|", line)
        if m:
            rows[Path(m.group(1)).name] = (m.group(2).strip(), m.group(3).strip())
    return rows


def readme_intro(text: str) -> str:
    """The README's first paragraph of prose (not a badge, heading, table or code block)."""
    for para in text.split("\n\n")[1:]:
        if para.strip() and not para.lstrip().startswith(("[!", "#", "|", "```")):
            return para.strip()
    return ""


def index_notebook(entries: list[dict], *, kind: str, other_kind_dir: Optional[str],
                   language: str = "en") -> nbformat.NotebookNode:
    """A small notebook (markdown only) listing the course, rendered by the same template as the pages.

    Args:
        entries: one dict per notebook (number, title, stem, section, what, binder_url), in course order.
        kind: 'page' (the website) or 'slides' (the decks).
        other_kind_dir: the other edition's folder relative to this one, linked from each row (None: no link).
        language: the language of the index's own strings (its README: edition_readme).
    Returns:
        A notebook with one markdown cell.
    """
    readme = readme_text(edition_readme(language))
    lines = [f"# {first_heading(readme) or 'Attention course'}", "", readme_intro(readme), "",
             text("index_slides" if kind == "slides" else "index_site", language), "",
             text("index_header", language), "|---|---|---|---|---|"]
    for e in entries:
        extra = [f"[Binder]({e['binder_url']})"]
        if other_kind_dir:
            label = text("page" if kind == "slides" else "slides", language)
            extra.insert(0, f"[{label}]({other_kind_dir}/{e['stem']}.html)")
        lines.append(f"| {e['number']} | [{e['title']}]({e['stem']}.html) | {e['section']} | {e['what']} | "
                     f"{' · '.join(extra)} |")
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell("\n".join(lines), id="course-index")  # a fixed id: the same page each build
    cell.metadata["slideshow"] = {"slide_type": "slide"}
    nb.cells = [cell]
    return nb


def course_entries(notebooks: dict[str, nbformat.NotebookNode], paths: list[Path],
                   language: str = "en") -> list[dict]:
    """One entry per notebook, in course order: name, stem, number, title, README row, Binder URL."""
    base, rows = binder_base(), readme_rows(edition_readme(language))
    if language != "en" and not rows:
        rows = readme_rows()
    entries = []
    for path in paths:
        section, what = rows.get(path.name, ("", ""))
        entries.append({"name": path.name, "stem": path.stem, "number": path.stem.split("_")[0],
                        "title": notebook_title(notebooks[path.name], path.stem), "section": section,
                        "what": what, "binder_url": binder_url(path.name, base, binder_folder(path))})
    return entries
