"""The preprocessor that makes every output renderable without a kernel (plotly JSON -> HTML, Binder links)."""
from __future__ import annotations

import html
import re

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Unicode
from traitlets import Dict as TDict

from attnlib.widgets.states import STATE_BUDGET
from attnlib.widgets.static import BINDER_SLOT, NOTE_CLASS, SNAPSHOT_MIME, STATES_MIME, text

from .panels import PanelOverBudget, check_budget, fit_page, live_panel_html

PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def binder_link(binder: str, language: str = "en") -> str:
    """The 'Open this notebook on Binder' link."""
    return f'<a class="al-binder" href="{html.escape(binder)}">{html.escape(text("binder_link", language))}</a>'


def plotly_html(fig: dict, div_id: str, language: str = "en", *, describe: bool = False) -> str:
    """A div and a script that draws `fig` with the page's plotly.js (no CDN, stable id); with `describe`, the
    page's static_panel.js then gives it its name, description in numbers and table (a figure outside a panel)."""
    import plotly.io as pio

    after = 'window.alDescribeFigure && window.alDescribeFigure("{plot_id}");' if describe else None
    body = pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id, validate=False,
                       post_script=after, config={"displaylogo": False, "responsive": True,
                                                  "modeBarButtonsToRemove": ["sendChartToCloud"]})  # it would go online
    label = html.escape(figure_label(fig, language))
    return f'<figure class="al-figure" role="group" aria-label="{label}">{body}</figure>'


def figure_label(fig: dict, language: str = "en") -> str:
    """A figure's title as plain text (its accessible name), or "Figure" in the page's language."""
    title = fig.get("layout", {}).get("title", {})
    title = title.get("text", "") if isinstance(title, dict) else str(title or "")
    return re.sub(r"<[^>]+>", " ", title).strip() or text("figure", language)


def view_texts(language: str) -> dict[str, str]:
    """The live view's words (attnlib.widgets.view.texts()) in `language`: how a page's figures are described."""
    from attnlib.i18n import get_language, set_language
    from attnlib.widgets.view import texts

    before = get_language()
    set_language(language)
    try:
        return texts()
    finally:
        set_language(before)


def canvas_html(fig: dict, language: str = "en") -> str:
    """An empty figure box that static_panel.js draws on canvases (a head grid, a saturation figure, a histogram)."""
    label = html.escape(figure_label(fig, language))
    return f'<figure class="al-figure al-canvas-figure" role="group" aria-label="{label}"></figure>'


class StaticOutputsPreprocessor(Preprocessor):
    """Make every output renderable without a kernel: plotly JSON -> HTML, Binder links in static notes."""

    binder = Unicode("", help="Binder URL of this notebook").tag(config=True)
    interactive = Bool(False, help="panels' states become HTML controls (pages; decks keep snapshots)")
    language = Unicode("en", help="language of the builder's strings").tag(config=True)
    where = Unicode("", help="the notebook, for messages")
    counts = TDict()

    def preprocess(self, nb, resources):
        self.counts = {"figures": 0, "static_notes": 0, "widgets_without_snapshot": 0, "live_panels": 0,
                       "state_bytes": 0, "states": 0, "live_controls": 0}
        if self.interactive:  # the page's panels share its budget: thin them together before any is written
            found = [out["data"] for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
                     if STATES_MIME in out.get("data", {})]
            fitted = fit_page(self.where, [dict(d[STATES_MIME], language=self.language) for d in found])
            for data, states in zip(found, fitted):
                data[STATES_MIME] = states
        nb, resources = super().preprocess(nb, resources)
        resources.setdefault("course_counts", {}).update(self.counts)
        resources["al_view_texts"] = view_texts(self.language)  # the page template embeds them once
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        for j, out in enumerate(cell.get("outputs", [])):
            data = out.get("data")
            if not data:
                continue
            if STATES_MIME in data and self.interactive:
                self._live(data, f"fig-{index}-{j}")
            elif SNAPSHOT_MIME in data:
                self._snapshot(data, f"fig-{index}-{j}")
                cell.metadata["al_snapshot"] = True  # decks fold this cell's code: the slide shows the panel
            elif PLOTLY_MIME in data:
                data["text/html"] = plotly_html(data.pop(PLOTLY_MIME), f"fig-{index}-{j}", self.language,
                                                describe=self.interactive)
                self.counts["figures"] += 1
            elif WIDGET_MIME in data:
                self._widget_note(data)
            elif NOTE_CLASS in data.get("text/html", ""):
                data["text/html"] = self._with_binder(data["text/html"])
                self.counts["static_notes"] += 1
        return cell, resources

    def _live(self, data: dict, div_id: str) -> None:
        """A panel's states -> HTML controls over its figures (panels.live_panel_html)."""
        states = dict(data.pop(STATES_MIME), language=self.language)  # the builder's strings: the edition's
        size = check_budget(self.where, states)
        data.pop(SNAPSHOT_MIME, None)
        data.pop(WIDGET_MIME, None)
        lang = self.language
        drawn = "".join(plotly_html(f, f"{div_id}-{k}", lang) if kind == "plotly" else canvas_html(f, lang)
                        for k, (f, kind) in enumerate(zip(states["base"], states["kinds"])))
        data["text/html"] = live_panel_html(states, drawn, f"panel-{div_id}", binder_link(self.binder, self.language))
        live = [c for c in states["controls"] if c["kind"] != "fixed" and len(c["values"]) > 1]
        self.counts["live_panels"] += 1
        self.counts["state_bytes"] += size
        if self.counts["state_bytes"] > STATE_BUDGET:  # fit_page thinned them to fit: a check
            raise PanelOverBudget(f"build_site: {self.where}: {self.counts['state_bytes']:,} bytes of panel states, "
                                  f"over {STATE_BUDGET:,} per page")
        self.counts["states"] += len(states["states"])
        self.counts["live_controls"] += len(live)
        self.counts["figures"] += len(states["base"])

    def _snapshot(self, data: dict, div_id: str) -> None:
        """A live panel's snapshot (its figures at the panel's state) -> its note and the figures as HTML."""
        figures = data.pop(SNAPSHOT_MIME).get("figures", [])
        data.pop(STATES_MIME, None)
        note = self._with_binder(data.get("text/html", ""))
        drawn = "".join(plotly_html(f, f"{div_id}-{k}", self.language, describe=self.interactive)
                        for k, f in enumerate(figures))
        data["text/html"] = f'<div class="al-static-panel">{note}<div class="al-static-figures">{drawn}</div></div>'
        data.pop(WIDGET_MIME, None)
        self.counts["static_notes"] += 1
        self.counts["figures"] += len(figures)

    def _widget_note(self, data: dict) -> None:
        """A widget view without a snapshot cannot render without a kernel: a note with a Binder link instead."""
        data.pop(WIDGET_MIME)
        label = data.get("text/plain", "An interactive panel").strip().splitlines()[0]
        note = html.escape(text("widget_note", self.language, label=label))
        data["text/html"] = f'<div class="{NOTE_CLASS}">{note} {binder_link(self.binder, self.language)}</div>'
        self.counts["widgets_without_snapshot"] += 1

    def _with_binder(self, note: str) -> str:
        """Put the Binder link of this notebook into a static-panel note (at its BINDER_SLOT, else at the end)."""
        link = binder_link(self.binder, self.language)
        return note.replace(BINDER_SLOT, link) if BINDER_SLOT in note else note + link
