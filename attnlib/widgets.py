"""ipywidgets panels binding controls to figures; the only module that imports ipywidgets.

Public API:

    LivePanel(controls: dict[str, ipywidgets.Widget], figures: list[go.Figure], update: Callable,
              *, title: str = "", caption: str = "", main: bool = False)
        Converts `figures` to `go.FigureWidget`s (`panel.figures`) and calls
        `update(panel.figures, **{name: control.value})` inside `batch_update` once at start and
        on every control change. If `update` raises, `panel.status` (str) shows
        "⚠ <ErrorType>: <message>" (no traceback), `panel.last_error` holds the exception, and the
        next change is handled normally; after a good update `panel.status == ""` and
        `panel.last_error is None`. Attributes: `controls` (dict), `figures` (list of
        FigureWidget), `status` (str), `last_error`, `widget` (the top ipywidgets.VBox),
        `status_widget` (the HTML line showing the status), `updates` (number of update calls).
        `panel.refresh()` re-runs the update by hand. Displaying a panel shows the widget and the
        short stable text/plain "LivePanel: <title>". `main=True` adds the CSS class
        `al-main-panel` to the box and `al-main-slider` to its first slider.

    AttentionExplorer(*, d_k=8, heads=4, mask="causal", window=2, pad=2, seq_len=8, scaled=True,
                      temperature=1.0, seed=0, query=None, tokens=None, max_heads=8, max_seq=32,
                      title="Attention explorer", caption=None, main=False)
        A LivePanel: controls d_k (1..256, powers of 2), heads (1..max_heads), mask
        (none/causal/padding/window), window (0..max_seq-1), pad (padded tokens, 0..max_seq),
        seq_len (2..max_seq), scaled (1/√d_k on/off), temperature (0.05..20, log), seed (0..99),
        query (the row shown in the saturation panel). figures[0] is the head grid
        (`viz.head_grid_figure`, max_heads slots), figures[1] the saturation panel
        (`viz.saturation_figure`). `explorer.compute(**values)` returns the dict
        {"weights" [heads, N, N], "mask" [N, N] bool, "tokens", "q", "k", "v"} that the figures show,
        computed with `al.scaled_dot_product_attention`.

    SaturationExplorer(*, d_k=16, n_keys=16, scaled=True, temperature=1.0, seed=0,
                       title="Softmax saturation explorer", caption=None, main=False)
        A LivePanel: controls d_k (1..512, powers of 2), n_keys (2..64), scaled, temperature, seed.
        figures[0] is `viz.saturation_figure` for one random query row against n_keys random
        keys (N(0, 1) components), with the curves of `al.saturation_curve` and markers at the
        current d_k; figures[1] the histogram of the row's scores (`viz.score_histogram_figure`).
"""
from __future__ import annotations

import contextlib
import html
from typing import Any, Callable, Optional

import ipywidgets as W
import plotly.graph_objects as go

from . import viz  # noqa: F401  (figure builders used by the explorers)

_SLIDERS = (W.IntSlider, W.FloatSlider, W.FloatLogSlider, W.SelectionSlider, W.IntRangeSlider,
            W.FloatRangeSlider, W.SelectionRangeSlider)


class LivePanel:
    """Controls bound to plotly figures that are updated in place on every control change."""

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

        Args:
            controls: name → ipywidgets control with a `.value`; names become keyword arguments of `update`.
            figures: plotly figures (converted to FigureWidgets) that `update` rewrites in place.
            update: called as `update(figures, **values)` inside `batch_update` on every change.
            title: bold line above the controls. caption: one line of explanation under the title.
            main: mark this as the notebook's main panel (CSS classes for the browser tests).
        """
        if not isinstance(controls, dict) or not all(isinstance(c, W.Widget) for c in controls.values()):
            raise ValueError(f"controls must be a dict of name → ipywidgets control, got {type(controls).__name__}")
        for name, c in controls.items():
            if not hasattr(c, "value"):
                raise ValueError(f"controls[{name!r}] must have a .value (a slider, dropdown, checkbox …)")
        if isinstance(figures, go.Figure) or not isinstance(figures, (list, tuple)):
            raise ValueError(f"figures must be a list of plotly figures, got {type(figures).__name__}")
        if not all(isinstance(f, (go.Figure, go.FigureWidget)) for f in figures):
            raise ValueError("figures must be a list of plotly go.Figure (or go.FigureWidget) objects")
        if not callable(update):
            raise ValueError(f"update must be callable as update(figures, **values), got {type(update).__name__}")
        self.title = str(title)
        self.caption = str(caption)
        self.controls: dict[str, W.Widget] = dict(controls)
        self.figures: list[go.FigureWidget] = [
            f if isinstance(f, go.FigureWidget) else go.FigureWidget(f) for f in figures
        ]
        self._update = update
        self.status: str = ""
        self.last_error: Optional[BaseException] = None
        self.updates = 0

        header = []
        if self.title:
            header.append(W.HTML(f"<b style='font-size:14px'>{html.escape(self.title)}</b>"))
        if self.caption:
            header.append(W.HTML(f"<span style='color:#444'>{html.escape(self.caption)}</span>"))
        for c in self.controls.values():
            if hasattr(getattr(c, "style", None), "description_width"):
                c.style.description_width = "initial"  # labels never truncated
        self.controls_box = W.HBox(
            list(self.controls.values()),
            layout=W.Layout(flex_flow="row wrap", align_items="center", grid_gap="2px 16px"),
        )
        self.status_widget = W.HTML("", layout=W.Layout(min_height="1.4em"))
        self.figures_box = W.HBox(
            self.figures,
            layout=W.Layout(flex_flow="row wrap", align_items="flex-start", width="100%"),
        )
        self.widget = W.VBox(
            header + [self.controls_box, self.status_widget, self.figures_box],
            layout=W.Layout(width="100%"),
        )
        self.widget.add_class("al-panel")
        if main:
            self.widget.add_class("al-main-panel")
            sliders = [c for c in self.controls.values() if isinstance(c, _SLIDERS)]
            if sliders:
                sliders[0].add_class("al-main-slider")
        for c in self.controls.values():
            c.observe(self._on_change, names="value")
        self.refresh()

    # ------------------------------------------------------------------ updating

    def values(self) -> dict[str, Any]:
        """Current value of every control, by name."""
        return {name: c.value for name, c in self.controls.items()}

    def _on_change(self, change: dict) -> None:
        """ipywidgets observer: any control changed."""
        self.refresh()

    def refresh(self) -> bool:
        """Run `update(figures, **values)` inside batch_update; return True if it succeeded.

        Returns:
            True on success; False if `update` raised (the message is then in `status`).
        """
        self.updates += 1
        try:
            with contextlib.ExitStack() as stack:
                for f in self.figures:
                    stack.enter_context(f.batch_update())
                self._update(self.figures, **self.values())
        except Exception as exc:  # noqa: BLE001  (a learner must never see a traceback here)
            self.last_error = exc
            self.status = f"⚠ {type(exc).__name__}: {exc}"
            self.status_widget.value = (
                f"<span style='color:#b00020'>{html.escape(self.status)}</span>"
            )
            return False
        if self.last_error is not None or self.status:
            self.last_error = None
            self.status = ""
            self.status_widget.value = ""
        return True

    # ------------------------------------------------------------------ display

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """Widget view plus a short, stable text/plain (nbval compares only the latter)."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle = dict(bundle) if bundle else {}
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        return f"{type(self).__name__}: {self.title}" if self.title else type(self).__name__
