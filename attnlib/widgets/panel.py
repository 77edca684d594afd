"""LivePanel: ipywidgets controls bound to figures that an update function rewrites in place.

    def update(figures, temperature):  # assigns properties, never adds traces
        w = al.scaled_dot_product_attention(Q, K, V, mask, scale=1 / (d_k ** 0.5 * temperature))[1]
        al.viz.update_head_grid(figures[0], w, tokens, tokens, mask=mask)
    slider = ipywidgets.FloatSlider(value=1.0, min=0.1, max=10.0, description="temperature")
    panel = al.widgets.LivePanel({"temperature": slider}, [fig], update, title="Temperature", main=True)
    panel                              # shows the panel; its text/plain is "LivePanel: Temperature"
    panel.figures_at(temperature=0.1)  # what it draws there, checked without touching the view

The browser shows the figures through one PanelView (view.py): head grids on canvases, redrawn from binary
buffers, the others by plotly.js. While a control moves, `update_head_grid` only records the new weights for
the view (LiveGrid); `panel.figures` brings the plotly figures up to date when code reads them.
"""
from __future__ import annotations

import html
import time
from typing import Any, Callable

import ipywidgets as W
import plotly.graph_objects as go

from .._validate import function, grid_values
from ..i18n import get_language, t
from ..measure import single_thread
from . import static
from .view import LiveChart, LiveFigure, LiveGrid, PanelView, figure_kind

SLIDERS = (W.IntSlider, W.FloatSlider, W.FloatLogSlider, W.SelectionSlider, W.IntRangeSlider,
           W.FloatRangeSlider, W.SelectionRangeSlider)


def _check(controls: Any, figures: Any, update: Any) -> None:
    """Raise ValueError naming the first argument of LivePanel that is not what it must be."""
    if not isinstance(controls, dict) or not all(isinstance(c, W.Widget) for c in controls.values()):
        raise ValueError(f"controls must be a dict of name → ipywidgets control, got {type(controls).__name__}")
    for name, c in controls.items():
        if not hasattr(c, "value"):
            raise ValueError(f"controls[{name!r}] must have a .value (a slider, dropdown, checkbox …)")
    if isinstance(figures, go.Figure) or not isinstance(figures, (list, tuple)):
        raise ValueError(f"figures must be a list of plotly figures, got {type(figures).__name__}")
    if not all(isinstance(f, (go.Figure, go.FigureWidget)) for f in figures):
        raise ValueError("figures must be a list of plotly go.Figure (or go.FigureWidget) objects")
    function("update", update)


def _live(fig: go.Figure) -> LiveFigure:
    """A panel's own copy of `fig`: a LiveGrid for a head grid, a LiveChart for a saturation figure or score
    histogram (both drawn on canvases), else a LiveFigure."""
    kind = figure_kind(fig.layout.meta)
    return LiveGrid(fig) if kind == "grid" else LiveChart(fig) if kind == "chart" else LiveFigure(fig)


class LivePanel:
    """Controls bound to figures that are updated in place on every control change.

    Attributes: controls (dict), title, caption, main, static_grid (values per control for the static site, or
    None), figures (go.Figures, up to date when read), status ("" or "⚠ <ErrorType>: <message>", never a
    traceback), last_error (the exception or None), updates (calls so far), widget (the VBox), view (the PanelView
    showing the figures).
    """

    def __init__(
        self,
        controls: dict[str, W.Widget],
        figures: list[go.Figure],
        update: Callable[..., Any],
        *,
        title: str = "",
        caption: str = "",
        main: bool = False,
        static_grid: dict[str, list] | None = None,
    ):
        """Build the panel and run `update` once.

        Args: controls: name → ipywidgets control with a `.value`; names become keyword arguments of `update`.
            figures: plotly figures (copied) that `update` rewrites in place.
            update: called as `update(figures, **values)` on every change.
            title: bold line above the controls. caption: one line of explanation under the title.
            main: the notebook's main panel (CSS classes al-main-panel, al-main-slider on its first slider).
            static_grid: control name → the values the static site pre-renders (static.panel_bundle), or None.
        """
        _check(controls, figures, update)
        self.title, self.caption, self.main = str(title), str(caption), bool(main)
        self.static_grid = grid_values("static_grid", static_grid, controls)
        self.controls: dict[str, W.Widget] = dict(controls)
        self._figures: list[LiveFigure] = [_live(f) for f in figures]
        self._early: float | None = None  # while an update runs: when it started, until its heatmaps were sent
        for f in self._figures:
            if isinstance(f, LiveGrid):
                f.on_record = self._send_heatmaps
        self._update = update
        self._drawn: dict[str, Any] | None = None  # the values the view shows (the last update that succeeded)
        self._behind = False  # True while the plotly figures lag behind the view
        self.status: str = ""
        self.last_error: BaseException | None = None
        self.updates = 0
        self.view = PanelView()
        self._build_widget(main)
        for c in self.controls.values():
            c.observe(lambda _change: self.refresh(), names="value")  # any control changed: redraw
        if not self.refresh():
            self.view.show(self._figures)  # the figures as given

    def _build_widget(self, main: bool) -> None:
        """The box: title, caption, controls, status line, figures."""
        header = []
        if self.title:
            header.append(W.HTML(f"<b style='font-size:14px'>{html.escape(self.title)}</b>"))
        if self.caption:
            header.append(W.HTML(f"<span style='color:#444'>{html.escape(self.caption)}</span>"))
        for c in self.controls.values():
            if hasattr(getattr(c, "style", None), "description_width"):
                c.style.description_width = "initial"  # labels never truncated
        self.controls_box = W.HBox(list(self.controls.values()),
                                   layout=W.Layout(flex_flow="row wrap", align_items="center", grid_gap="2px 16px"))
        self.status_widget = W.HTML("", layout=W.Layout(min_height="1.4em"))
        self.figures_box = W.Box([self.view], layout=W.Layout(width="100%"))
        self.widget = W.VBox(header + [self.controls_box, self.status_widget, self.figures_box],
                             layout=W.Layout(width="100%"))
        self.widget.add_class("al-panel")
        if main:
            self.widget.add_class("al-main-panel")
            sliders = [c for c in self.controls.values() if isinstance(c, SLIDERS)]
            if sliders:
                sliders[0].add_class("al-main-slider")

    @property
    def figures(self) -> list[go.Figure]:
        """The figures as the view shows them (their plotly properties are brought up to date first)."""
        if self._behind and self._drawn is not None:
            grids = [f for f in self._figures if isinstance(f, (LiveGrid, LiveChart))]
            for f in grids:
                f.recording = False
            try:
                self._run(self._figures, self._drawn)
            except Exception:  # noqa: BLE001  (it succeeded with these values before; the status says what failed)
                pass
            finally:
                for f in grids:
                    f.recording = True
            self._behind = False
        return self._figures

    def values(self) -> dict[str, Any]:
        """Current value of every control, by name."""
        return {name: c.value for name, c in self.controls.items()}

    def refresh(self) -> bool:
        """Run `update(figures, **values)` and send the figures to the view: the head grids as soon as `update`
        has recorded the first one (the rest of `update`, e.g. a saturation panel, stays off the heatmap's critical
        path), then every figure in one message.

        Returns: True on success; False if `update` raised (the message is then in `status`, the view unchanged).
        """
        started = time.perf_counter()
        self.updates += 1
        self._replace_stalled_view()
        values = self.values()
        records = [getattr(f, "record", None) for f in self._figures]
        shown = list(self.view.figures)
        self._early = started if self.view.revision else None  # the first update sends everything at once
        try:
            self._run(self._figures, values)
        except Exception as exc:  # noqa: BLE001  (a learner must never see a traceback here)
            for f, record in zip(self._figures, records):
                if isinstance(f, (LiveGrid, LiveChart)):
                    f.record = record  # what the view still shows
            if self._early is None and self.view.revision and self.view.figures != shown:
                self.view.show_parts(shown)  # the heatmaps went out before `update` raised: back to what was shown
            self._early = None
            self._behind = True  # `update` may have changed plotly figures before it raised
            self.last_error = exc
            self.status = t("⚠ {error}: {message}", error=type(exc).__name__, message=exc)
            self.status_widget.value = f"<span style='color:#b00020'>{html.escape(self.status)}</span>"
            return False
        self._drawn, self._behind, self._early = values, True, None
        self.view.show(self._figures, started)
        if self.last_error is not None or self.status:
            self.last_error = None
            self.status = ""
            self.status_widget.value = ""
        return True

    def _send_heatmaps(self) -> None:
        """LiveGrid.on_record: the first head grid of this update is recorded; send the grids now, the other
        figures as the view has them."""
        started, self._early = self._early, None
        if started is None or len(self.view.figures) != len(self._figures):
            return
        parts = [f.part() if isinstance(f, LiveGrid) else old for f, old in zip(self._figures, self.view.figures)]
        self.view.show_parts(parts, started)

    def figures_at(self, **values: Any) -> list[go.Figure]:
        """What the panel draws at other settings: `update` run on static copies of its figures.

        The displayed figures and controls are not touched: a notebook checks a panel without redrawing the
        view the learner sees.

        Args: values: control values by name; controls not named keep their current value.
        Returns: the figures (go.Figure) as `update` left them. Raises what `update` raised.
        """
        figures = [go.Figure(f) for f in self.figures]
        self.draw_into(figures, **values)
        return figures

    def draw_into(self, figures: list, **values: Any) -> None:
        """`update` run on figures the caller owns (copies of the panel's), at these control values."""
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise ValueError(f"values must name controls of this panel {sorted(self.controls)}, got {unknown}")
        self._run(figures, {**self.values(), **values})

    def _run(self, figures: list, values: dict[str, Any]) -> None:
        """`update(figures, **values)` with torch on one thread (a panel's tensors are tiny: a second thread only
        waits, 5-40 ms per update on a busy machine, measured by `python -m attnlib.bench latency --notebooks`)."""
        with single_thread():
            self._update(figures, **values)

    def _replace_stalled_view(self) -> None:
        """Swap a view the browser stopped answering for a fresh one."""
        if self.view.stalled:
            old, self.view = self.view, PanelView()
            self.figures_box.children = (self.view,)
            old.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """Widget view plus a short, stable text/plain (nbval compares only the latter); a snapshot when static."""
        if static.is_static():  # the static site and slides (widgets/static.py)
            return self.static_bundle()
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle = dict(bundle) if bundle else {}
        bundle["text/plain"] = repr(self)
        return bundle

    def static_bundle(self) -> dict:
        """The panel for a page without a kernel: static.panel_bundle(panel)."""
        return static.panel_bundle(self)

    def __repr__(self) -> str:
        """"LivePanel: <title>" (the class's name); in Chinese "交互面板：<title>" (the text/plain nbval compares)."""
        kind = type(self).__name__ if get_language() == "en" else t("interactive panel")
        return t("{kind}: {title}", kind=kind, title=self.title) if self.title else kind
