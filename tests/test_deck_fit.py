"""The deck-fitting cache (scripts/sitebuild/decks.py): a deck fitted before, in the same setting, gets the same
continuation slides, zoom tags and measurement without opening Chromium again; a changed deck is measured anew."""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

from attnlib.widgets.static import TEXT

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from sitebuild import decks  # noqa: E402

COURSE = {"title": "T", "assets": "assets", "index_url": "index.html", "text": TEXT["en"], "language": "en",
          "binder_url": "", "prev": None, "next": None, "twin_url": None, "twin_lang": None, "slides_url": None}


class ScriptedBrowser(decks.DeckBrowser):
    """A DeckBrowser whose measurements are scripted (no Chromium): round 1 breaks before c2 and finds c3 tall."""

    def __init__(self, cache: Path) -> None:
        self.width, self.height, self.cache, self._setting = 1280, 720, cache, None
        self.browser = type("Chromium", (), {"version": "test"})()
        self.measured = 0

    def measure(self, deck: Path, shots=None):
        self.measured += 1
        html = deck.read_text(encoding="utf-8")
        broken = "(continued)" in html
        zoomed = "al-zoom-80" in html
        row = {"index": "0/0", "heading": "h", "content": 900, "box": 720, "figures": 0, "blank_figures": 0,
               "breaks": [] if broken else ["cell-id=c2"], "tall": [] if zoomed else [["cell-id=c3", 900, 680]],
               "deck": deck.name, "overflow": not zoomed}
        return [row], {"deck": deck.name, "errors": [], "blocked": []}


def notebook(extra: str = "") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Heading" + extra), nbformat.v4.new_code_cell("1 + 1"),
                nbformat.v4.new_code_cell("2 + 2"), nbformat.v4.new_code_cell("3 + 3")]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
    return nb


def test_a_deck_fitted_before_is_written_the_same_without_measuring(tmp_path):
    pytest.importorskip("nbconvert")
    cache = tmp_path / "cache"
    first = ScriptedBrowser(cache)
    rows, _, added = decks.fit_deck(notebook(), tmp_path / "a" / "d.html", COURSE, first)
    assert first.measured == 3 and added == 1  # measurement: break, then zoom, then nothing to change
    html = (tmp_path / "a" / "d.html").read_text(encoding="utf-8")
    assert "Heading (continued)" in html and "celltag_al-zoom-80" in html
    second = ScriptedBrowser(cache)
    again = decks.fit_deck(notebook(), tmp_path / "b" / "d.html", COURSE, second)
    assert second.measured == 0  # measurement: the cache answered
    assert again[0] == rows and again[2] == added
    assert (tmp_path / "b" / "d.html").read_text(encoding="utf-8") == html
    changed = ScriptedBrowser(cache)
    decks.fit_deck(notebook(" two"), tmp_path / "c" / "d.html", COURSE, changed)
    assert changed.measured == 3  # measurement: another deck is measured anew
    off = ScriptedBrowser(None)
    decks.fit_deck(notebook(), tmp_path / "e" / "d.html", COURSE, off)
    assert off.measured == 3  # measurement: no cache, no shortcut
