"""LivePanel: ipywidgets controls bound to plotly figures that an update function rewrites in place.

    def update(figures, temperature):  # assigns properties, never adds traces
        w = al.scaled_dot_product_attention(Q, K, V, mask, scale=1 / (d_k ** 0.5 * temperature))[1]
        al.viz.update_head_grid(figures[0], w, tokens, tokens, mask=mask)
    slider = ipywidgets.FloatSlider(value=1.0, min=0.1, max=10.0, description="temperature")
    panel = al.widgets.LivePanel({"temperature": slider}, [fig], update, title="Temperature", main=True)
    panel                              # shows the panel; its text/plain is "LivePanel: Temperature"
    panel.figures_at(temperature=0.1)  # what it draws there, checked without touching the view
"""
from __future__ import annotations

import contextlib
import html
from typing import Any, Callable

import ipywidgets as W
import plotly.graph_objects as go

from .._validate import function
from .plotly_widget import LiveFigure
from .static import is_static, snapshot_bundle

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


class LivePanel:
    """Controls bound to plotly figures that are updated in place on every control change.

    Attributes: controls (dict), figures (LiveFigures), status ("" or "⚠ <ErrorType>: <message>", never a
    traceback), last_error (the exception or None), updates (calls so far), widget (the ipywidgets.VBox).
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
    ):
        """Build the panel and run `update` once.

        Args: controls: name → ipywidgets control with a `.value`; names become keyword arguments of `update`.
            figures: plotly figures (converted to FigureWidgets) that `update` rewrites in place.
            update: called as `update(figures, **values)` inside `batch_update` on every change.
            title: bold line above the controls. caption: one line of explanation under the title.
            main: the notebook's main panel (CSS classes al-main-panel, al-main-slider on its first slider).
        """
        _check(controls, figures, update)
        self.title, self.caption = str(title), str(caption)
        self.controls: dict[str, W.Widget] = dict(controls)
        self.figures: list[go.FigureWidget] = [f if isinstance(f, LiveFigure) else LiveFigure(f) for f in figures]
        self._update = update
        self.status: str = ""
        self.last_error: BaseException | None = None
        self.updates = 0
        self._build_widget(main)
        for c in self.controls.values():
            c.observe(self._on_change, names="value")
        self.refresh()

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
        self.figures_box = W.HBox(self.figures,
                                  layout=W.Layout(flex_flow="row wrap", align_items="flex-start", width="100%"))
        self.widget = W.VBox(header + [self.controls_box, self.status_widget, self.figures_box],
                             layout=W.Layout(width="100%"))
        self.widget.add_class("al-panel")
        if main:
            self.widget.add_class("al-main-panel")
            sliders = [c for c in self.controls.values() if isinstance(c, SLIDERS)]
            if sliders:
                sliders[0].add_class("al-main-slider")

    def values(self) -> dict[str, Any]:
        """Current value of every control, by name."""
        return {name: c.value for name, c in self.controls.items()}

    def _on_change(self, change: dict) -> None:
        """ipywidgets observer: any control changed."""
        self.refresh()

    def refresh(self) -> bool:
        """Run `update(figures, **values)` inside batch_update.

        Returns: True on success; False if `update` raised (the message is then in `status`).
        """
        self.updates += 1
        self._replace_stalled_figures()
        try:
            with contextlib.ExitStack() as stack:
                for f in self.figures:
                    stack.enter_context(f.batch_update())
                self._update(self.figures, **self.values())
        except Exception as exc:  # noqa: BLE001  (a learner must never see a traceback here)
            self.last_error = exc
            self.status = f"⚠ {type(exc).__name__}: {exc}"
            self.status_widget.value = f"<span style='color:#b00020'>{html.escape(self.status)}</span>"
            return False
        if self.last_error is not None or self.status:
            self.last_error = None
            self.status = ""
            self.status_widget.value = ""
        return True

    def figures_at(self, **values: Any) -> list[go.Figure]:
        """What the panel draws at other settings: `update` run on static copies of its figures.

        The displayed figures and controls are not touched: a notebook checks a panel without redrawing the
        view the learner sees.

        Args: values: control values by name; controls not named keep their current value.
        Returns: the figures (go.Figure) as `update` left them. Raises what `update` raised.
        """
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise ValueError(f"values must name controls of this panel {sorted(self.controls)}, got {unknown}")
        figures = [go.Figure(f) for f in self.figures]
        self._update(figures, **{**self.values(), **values})
        return figures

    def _replace_stalled_figures(self) -> None:
        """Swap any figure the browser stopped answering for a fresh widget with the same state."""
        for i, fig in enumerate(self.figures):
            if isinstance(fig, LiveFigure) and fig.stalled:
                self.figures[i] = LiveFigure(go.Figure(fig.to_dict()))
                self.figures_box.children = tuple(self.figures)
                fig.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """Widget view plus a short, stable text/plain (nbval compares only the latter); a snapshot when static."""
        if is_static():  # the static site and slides (widgets/static.py)
            return snapshot_bundle(self)
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle = dict(bundle) if bundle else {}
        bundle["text/plain"] = repr(self)
        return bundle

    def static_bundle(self) -> dict:
        """The panel at its current settings for a page without a kernel (static.snapshot_bundle)."""
        return snapshot_bundle(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}: {self.title}" if self.title else type(self).__name__
