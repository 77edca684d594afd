"""ipywidgets panels binding controls to figures; the only module that imports ipywidgets.

Public API:

    LivePanel(controls: dict[str, ipywidgets.Widget], figures: list[go.Figure], update: Callable,
              *, title: str = "", caption: str = "", main: bool = False)
        Converts `figures` to `LiveFigure`s (`go.FigureWidget`s, `panel.figures`) and calls
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

    LiveFigure(figure: go.Figure)
        The FigureWidget used by panels: sends nothing until a browser view has drawn it, then the
        whole current figure once; `rendered` says whether a view drew it, `stalled` whether the
        browser stopped applying updates (the panel then swaps in a fresh widget on the next change).

    AttentionExplorer(*, d_k=8, heads=4, mask="causal", window=2, pad=2, seq_len=8, scaled=True,
                      temperature=1.0, seed=0, query=None, tokens=None, max_heads=8, max_seq=32,
                      title="Attention explorer", caption=None, main=False)
        A LivePanel: controls d_k (1..256, powers of 2), heads (1..max_heads), mask
        (none/causal/padding/window), window (0..max_seq-1), pad (padded tokens, 0..max_seq),
        seq_len (2..max_seq), scaled (1/√d_k on/off), temperature (10**-1.3 ≈ 0.05 .. 10**1.3 ≈ 20,
        log slider), seed (0..99), query (the row shown in the saturation panel). figures[0] is the head grid
        (`viz.head_grid_figure`, max_heads slots), figures[1] the saturation panel
        (`viz.saturation_figure`). `explorer.compute(**values)` returns the dict
        {"weights" [heads, N, N], "mask" [N, N] bool, "tokens", "q", "k", "v"} that the figures show,
        computed with `al.scaled_dot_product_attention`.

    SaturationExplorer(*, d_k=16, n_keys=16, scaled=False, temperature=1.0, seed=0,
                       title="Softmax saturation explorer", caption=None, main=False)
        A LivePanel: controls d_k (1..512, powers of 2), n_keys (2..64), scaled, temperature, seed.
        figures[0] is `viz.saturation_figure` for the first of 256 random query rows against
        n_keys random keys (N(0, 1) components), with the curves of `al.saturation_curve` and
        markers (mean over the 256 rows) at the current d_k; figures[1] the histogram of all
        256 × n_keys scores after scale and temperature (`viz.score_histogram_figure`).
        `explorer.compute(**values)` returns {"scores", "weights"} [256, n_keys].

    row_stats(weights) -> {"entropy", "max_weight", "jacobian_norm"}
        Means over all rows of `weights` [..., N], as the explorers' saturation markers show them.

A notebook panel in a few lines (update functions only assign properties, never add traces):

    w0 = al.scaled_dot_product_attention(Q, K, V, al.causal_mask(n))[1]       # [n, n]
    fig = al.viz.heatmap_figure(w0, tokens, tokens, mask=al.causal_mask(n))
    def update(figures, temperature):
        w = al.scaled_dot_product_attention(Q, K, V, al.causal_mask(n), scale=1 / (d_k ** 0.5 * temperature))[1]
        al.viz.update_head_grid(figures[0], w, tokens, tokens, mask=al.causal_mask(n))
    slider = ipywidgets.FloatSlider(value=1.0, min=0.1, max=10.0, description="temperature")
    panel = al.widgets.LivePanel({"temperature": slider}, [fig], update, title="Temperature", main=True)
    panel   # the last expression of the cell: shows the panel, text/plain "LivePanel: Temperature"
"""
from __future__ import annotations

import contextlib
import html
import pathlib
import time
from typing import TYPE_CHECKING, Any, Callable, Optional

import ipywidgets as W
import plotly
import plotly.graph_objects as go
import traitlets

if TYPE_CHECKING:
    import torch

from . import viz
from .rounding import rounded
from .viz import single_thread  # tiny tensors: one torch thread avoids waiting on a busy machine


# anywidget rejects a model whose JavaScript module has not loaded within 2 s, and plotly's widget
# module is a 5 MB bundle that each FigureWidget would import (parse) again. This small module
# returns at once and imports the bundle only once per browser page, shared by every figure.
_SHARED_BUNDLE_ESM = """
const KEY = "__attnlib_plotly_widget_%s";
function bundle(model) {
  if (!globalThis[KEY]) {
    const url = URL.createObjectURL(new Blob([model.get("_bundle")], { type: "text/javascript" }));
    globalThis[KEY] = import(url).then((m) => m.default);
  }
  return globalThis[KEY];
}
export default () => {
  let inner;
  let ready;
  return {
    initialize(ctx) {
      ready = bundle(ctx.model).then((factory) => { inner = factory(); inner.initialize(ctx); });
    },
    async render(ctx) {
      await ready;
      return inner.render(ctx);
    },
  };
};
""" % plotly.__version__.replace(".", "_")
_PLOTLY_WIDGET_JS = pathlib.Path(plotly.__file__).parent / "package_data" / "widgetbundle.js"


class LiveFigure(go.FigureWidget):
    """The FigureWidget of a panel: sends nothing before a browser view has drawn it, and tells
    when the browser stopped answering.

    Facts measured with plotly 7.1 / anywidget 0.11 in JupyterLab 4.6 that this class works around:
    - a view draws from the data the widget had when it was created, so a view drawn after updates
      (a slow browser, a second view of the same panel) shows a stale figure: when a view reports
      that it has drawn (its first `_js2py_traceDeltas` message), the whole current figure is sent;
    - anywidget gives each model 2 s to import its JavaScript (plotly's is 5 MB, imported once per
      FigureWidget); past that, every later update is dropped in the browser and the figure stays
      frozen. The browser acknowledges each applied update, so `stalled` becomes True when an
      update stayed unacknowledged for STALL_SECONDS; `LivePanel` then replaces the figure.
    Without a browser (tests, nbclient) nothing is ever sent; `figure.rendered = True` forces the
    normal plotly path (the latency benchmark does this to measure the real cost).
    """

    STALL_SECONDS = 5.0
    _esm = _SHARED_BUNDLE_ESM
    _bundle = traitlets.Unicode(_PLOTLY_WIDGET_JS.read_text(encoding="utf-8")).tag(sync=True)

    def __init__(self, figure: go.Figure):
        self._rendered = False  # becomes True when a browser view reports it has drawn
        self._unacked_since: Optional[float] = None  # monotonic time of the oldest unanswered update
        super().__init__(figure)
        self.observe(self._on_trace_deltas, names=["_js2py_traceDeltas"])

    @property
    def rendered(self) -> bool:
        """True once a browser view has drawn this figure (updates are then sent as they happen)."""
        return self._rendered

    @rendered.setter
    def rendered(self, value: bool) -> None:
        self._rendered = bool(value)

    @property
    def stalled(self) -> bool:
        """True if the browser has not applied an update sent more than STALL_SECONDS ago."""
        since = self._unacked_since
        return since is not None and time.monotonic() - since > self.STALL_SECONDS

    def _on_trace_deltas(self, change: dict) -> None:
        """Messages from a view: it has drawn, or it has applied update number `trace_edit_id`."""
        msg = change["new"]
        if not msg:
            return
        if msg.get("trace_edit_id") == self._last_trace_edit_id:
            self._unacked_since = None  # the browser is up to date
        if not self._rendered:
            self._rendered = True
            self.send_full_state()  # the view drew construction-time data
        elif msg.get("trace_edit_id", -1) < self._last_trace_edit_id and self._unacked_since is None:
            self.send_full_state()  # a new view of an updated figure

    def send_full_state(self) -> None:
        """Send every trace and layout property to the browser in one Plotly.update."""
        data = self._data  # list of dicts, one per trace
        keys = sorted(set().union(*(d.keys() for d in data)) - {"uid", "type"}) if data else []
        restyle = {key: [d.get(key) for d in data] for key in keys}  # None unsets a missing key
        self._send_update_msg(restyle, dict(self._layout), list(range(len(data))))

    def _send_update_msg(self, *args: Any, **kwargs: Any) -> None:
        if self._rendered:
            if self._unacked_since is None:
                self._unacked_since = time.monotonic()
            super()._send_update_msg(*args, **kwargs)

    def _send_restyle_msg(self, *args: Any, **kwargs: Any) -> None:
        if self._rendered:
            super()._send_restyle_msg(*args, **kwargs)

    def _send_relayout_msg(self, *args: Any, **kwargs: Any) -> None:
        if self._rendered:
            super()._send_relayout_msg(*args, **kwargs)


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
            f if isinstance(f, LiveFigure) else LiveFigure(f) for f in figures
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
        self._replace_stalled_figures()
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

    def _replace_stalled_figures(self) -> None:
        """Swap any figure the browser stopped answering for a fresh widget with the same state."""
        for i, fig in enumerate(self.figures):
            if isinstance(fig, LiveFigure) and fig.stalled:
                fresh = LiveFigure(go.Figure(fig.to_dict()))
                self.figures[i] = fresh
                self.figures_box.children = tuple(self.figures)
                fig.close()

    # ------------------------------------------------------------------ display

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """Widget view plus a short, stable text/plain (nbval compares only the latter)."""
        import os

        if os.environ.get("ATTNLIB_STATIC") == "1":  # static site/slides build (scripts/build_site.py)
            return self.static_bundle()
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle = dict(bundle) if bundle else {}
        bundle["text/plain"] = repr(self)
        return bundle

    def static_bundle(self) -> dict:
        """The panel at its current settings for a page without a kernel (shown when ATTNLIB_STATIC=1).

        Returns:
            {"text/plain": repr(panel), "text/html": a note (class al-static-note) naming the settings and
             saying the sliders move in JupyterLab or on Binder, with a <!--binder--> slot for the link,
             "application/vnd.attnlib.panel-snapshot+json": {"figures": [plotly JSON of each figure]}}.
        """
        import json

        def shown(v: Any) -> str:
            if isinstance(v, bool):
                return "on" if v else "off"
            return f"{rounded(v):.3g}" if isinstance(v, float) else str(v)

        settings = ", ".join(
            f"{getattr(c, 'description', '') or name} = {shown(c.value)}"
            for name, c in self.controls.items() if not getattr(c, "disabled", False)
        )
        parts = [f"<b>{html.escape(self.title)}</b>" if self.title else "<b>Live panel</b>",
                 f" (static snapshot at {html.escape(settings)})." if settings else " (static snapshot).",
                 f" {html.escape(self.caption)}" if self.caption else "",
                 " In JupyterLab or on Binder the sliders move these figures live. <!--binder-->"]
        return {
            "text/plain": repr(self),
            "text/html": f'<div class="al-static-note">{"".join(parts)}</div>',
            "application/vnd.attnlib.panel-snapshot+json": {
                "figures": [json.loads(f.to_json(validate=False)) for f in self.figures]},
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}: {self.title}" if self.title else type(self).__name__


# ---------------------------------------------------------------------- explorers

# A 32-token text for the explorers: the article's example sentence and a continuation.
EXPLORER_TOKENS: list[str] = (
    "The animal didn't cross the street because it was too tired . It lay down under a tree "
    "and slept until the sun went down behind the quiet hills of the town"
).split()
PAD_TOKEN = "<pad>"
D_MODEL = 32  # width of the explorer's token embeddings
D_K_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
MASKS = ("none", "causal", "padding", "window")
TEMPERATURE_EXPONENT = 1.3  # temperature runs from 10**-1.3 ≈ 0.05 to 10**1.3 ≈ 20 on a log slider
TEMPERATURE_RANGE = (10 ** -TEMPERATURE_EXPONENT, 10 ** TEMPERATURE_EXPONENT)
_SLIDER_LAYOUT = dict(width="290px")


def _slider_style() -> dict:
    return dict(style={"description_width": "initial"}, layout=W.Layout(**_SLIDER_LAYOUT), continuous_update=True)


def _temperature_slider(value: float) -> W.FloatLogSlider:
    """Temperature on a log scale from 0.05 to 20 (1 = plain softmax)."""
    lo, hi = TEMPERATURE_RANGE
    if not lo <= value <= hi:
        raise ValueError(f"temperature must lie in [{lo:.4g}, {hi:.4g}], got {value!r}")
    # the exponent grid -1.3, -1.25, …, 1.3 contains 0, so temperature 1 is exactly reachable
    return W.FloatLogSlider(value=value, base=10, min=-TEMPERATURE_EXPONENT, max=TEMPERATURE_EXPONENT, step=0.05,
                            description="temperature", readout_format=".3g", **_slider_style())


def _check_choice(name: str, value: Any, options: tuple) -> None:
    if value not in options:
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")


def _check_int(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def row_stats(weights: "torch.Tensor") -> dict[str, float]:
    """Mean entropy, max weight and Jacobian norm over all rows of `weights` [..., N].

    Args:
        weights: attention weights [..., N], each row summing to 1.

    Returns:
        {"entropy", "max_weight", "jacobian_norm"}: the markers of `viz.update_saturation`.
    """
    from .core import jacobian_norm, max_weight, softmax_entropy

    return {
        "entropy": float(softmax_entropy(weights).mean()),
        "max_weight": float(max_weight(weights).mean()),
        "jacobian_norm": float(jacobian_norm(weights).mean()),
    }


class AttentionExplorer(LivePanel):
    """Self-attention of a short text: per-head heatmaps and softmax saturation, live.

    Token embeddings (one random vector per distinct word, no positional encoding, so equal words
    have equal keys) are projected by seeded random W_q, W_k, W_v with N(0, 1/d_model) entries,
    so every q and k component is about N(0, 1) — the assumption of the article's section 3.2.
    The weights are `al.scaled_dot_product_attention(Q, K, V, mask, scale=s / temperature)` with
    s = 1/√d_k when scaling is on, else 1.
    """

    def __init__(
        self,
        *,
        d_k: int = 8,
        heads: int = 4,
        mask: str = "causal",
        window: int = 2,
        pad: int = 2,
        seq_len: int = 8,
        scaled: bool = True,
        temperature: float = 1.0,
        seed: int = 0,
        query: Optional[int] = None,
        tokens: Optional[list[str]] = None,
        max_heads: int = 8,
        max_seq: int = 32,
        title: str = "Attention explorer",
        caption: Optional[str] = None,
        main: bool = False,
    ):
        """Build the controls and figures.

        Args:
            d_k: width per head, one of 1, 2, 4, …, 256. heads: 1..max_heads.
            mask: "none", "causal", "padding" or "window". window: 0..max_seq-1 (keys within ±window).
            pad: padded tokens at the end, 0..max_seq (seq_len of them means all padding).
            seq_len: 2..max_seq. scaled: divide scores by √d_k. temperature: 0.05..20.
            seed: 0..99. query: the row shown in the saturation panel (default the last token).
            tokens: at least max_seq words (default EXPLORER_TOKENS). max_heads: 1..8. max_seq: 2..64.
            title, caption, main: as for LivePanel.
        """
        _check_int("max_heads", max_heads, 1, 8)
        _check_int("max_seq", max_seq, 2, 64)
        tokens = list(EXPLORER_TOKENS if tokens is None else tokens)
        if len(tokens) < max_seq:
            raise ValueError(f"tokens must hold at least max_seq={max_seq} words, got {len(tokens)}")
        _check_choice("d_k", d_k, D_K_OPTIONS)
        _check_int("heads", heads, 1, max_heads)
        _check_choice("mask", mask, MASKS)
        _check_int("window", window, 0, max_seq - 1)
        _check_int("pad", pad, 0, max_seq)
        _check_int("seq_len", seq_len, 2, max_seq)
        _check_int("seed", seed, 0, 99)
        query = seq_len - 1 if query is None else _check_int("query", query, 0, seq_len - 1)
        self.tokens = [str(t) for t in tokens[:max_seq]]
        self.max_heads, self.max_seq = max_heads, max_seq
        self._params: dict[int, tuple] = {}
        controls = {
            "d_k": W.SelectionSlider(options=D_K_OPTIONS, value=d_k, description="d_k", **_slider_style()),
            "heads": W.IntSlider(value=heads, min=1, max=max_heads, description="heads", **_slider_style()),
            "seq_len": W.IntSlider(value=seq_len, min=2, max=max_seq, description="sequence length", **_slider_style()),
            "temperature": _temperature_slider(temperature),
            "scaled": W.Checkbox(value=scaled, description="scale by 1/√d_k", indent=False,
                                 layout=W.Layout(width="160px")),
            "mask": W.Dropdown(options=MASKS, value=mask, description="mask", style={"description_width": "initial"},
                               layout=W.Layout(width="170px")),
            "window": W.IntSlider(value=window, min=0, max=max_seq - 1, description="window ±", **_slider_style()),
            "pad": W.IntSlider(value=pad, min=0, max=max_seq, description="padded tokens", **_slider_style()),
            "query": W.IntSlider(value=query, min=0, max=seq_len - 1, description="query row", **_slider_style()),
            "seed": W.IntSlider(value=seed, min=0, max=99, description="seed", **_slider_style()),
        }
        first = self.compute(d_k=d_k, heads=heads, mask=mask, window=window, pad=pad, seq_len=seq_len,
                             scaled=scaled, temperature=temperature, seed=seed)
        figures = [
            viz.head_grid_figure(first["weights"], first["tokens"], first["tokens"], mask=first["mask"],
                                 slots=max_heads, title="Attention weights per head", width=440),
            viz.saturation_figure(first["weights"][0, query], k_tokens=first["tokens"], d_k=d_k,
                                  n_keys=seq_len, d_k_values=D_K_OPTIONS, width=400, title="Softmax saturation"),
        ]
        if caption is None:
            caption = ("Heatmaps: rows are queries, columns keys, grey cells masked. Saturation panel: "
                       "one query row of head 1, and how softmax saturates as d_k grows.")
        controls["seq_len"].observe(self._on_seq_len, names="value")
        controls["mask"].observe(self._on_mask, names="value")
        super().__init__(controls, figures, self._draw, title=title, caption=caption, main=main)
        self._on_mask({"new": mask})

    # -------------------------------------------------------------- computation

    def _projections(self, seed: int) -> tuple:
        """Seeded embeddings per word and W_q, W_k, W_v [max_heads, d_model, 256]; cached per seed."""
        import torch

        if seed not in self._params:
            gen = torch.Generator().manual_seed(seed)
            vocab = sorted(set(self.tokens) | {PAD_TOKEN})
            table = torch.randn(len(vocab), D_MODEL, generator=gen)  # [V, d_model]
            std = D_MODEL ** -0.5  # keeps each q, k component ≈ N(0, 1)
            w = torch.randn(3, self.max_heads, D_MODEL, D_K_OPTIONS[-1], generator=gen) * std  # [3, H, d_model, 256]
            self._params[seed] = ({t: i for i, t in enumerate(vocab)}, table, w)
        return self._params[seed]

    def compute(
        self,
        *,
        d_k: int,
        heads: int,
        mask: str,
        window: int,
        pad: int,
        seq_len: int,
        scaled: bool,
        temperature: float,
        seed: int,
        **_: Any,
    ) -> dict[str, Any]:
        """The attention the panel shows for these control values.

        Args:
            the control values (see the class); extra keys such as `query` are ignored.

        Returns:
            {"weights": [heads, N, N] tensor, "mask": [N, N] bool tensor (True = may attend),
             "tokens": N labels ("<pad>" at padded positions), "q", "k", "v": [heads, N, d_k]}.
        """
        import math

        import torch

        from .core import scaled_dot_product_attention
        from .masks import causal_mask, padding_mask, window_mask

        n = _check_int("seq_len", seq_len, 2, self.max_seq)
        heads = _check_int("heads", heads, 1, self.max_heads)
        _check_choice("d_k", d_k, D_K_OPTIONS)
        _check_choice("mask", mask, MASKS)
        lo, hi = TEMPERATURE_RANGE
        if not lo * 0.999 <= temperature <= hi * 1.001:
            raise ValueError(f"temperature must lie in [{lo:.4g}, {hi:.4g}], got {temperature!r}")
        n_pad = min(_check_int("pad", pad, 0, self.max_seq), n) if mask == "padding" else 0
        tokens = self.tokens[: n - n_pad] + [PAD_TOKEN] * n_pad
        index, table, w = self._projections(seed)
        x = table[[index[t] for t in tokens]]  # [N, d_model]
        w_q, w_k, w_v = w[:, :heads, :, :d_k]  # each [heads, d_model, d_k]
        q = torch.einsum("nd,hdk->hnk", x, w_q)  # [heads, N, d_k]
        k = torch.einsum("nd,hdk->hnk", x, w_k)  # [heads, N, d_k]
        v = torch.einsum("nd,hdk->hnk", x, w_v)  # [heads, N, d_k]
        if mask == "causal":
            allowed = causal_mask(n)  # [N, N]
        elif mask == "window":
            allowed = window_mask(n, _check_int("window", window, 0, self.max_seq - 1))  # [N, N]
        elif mask == "padding":
            allowed = padding_mask([n - n_pad], n)[0, 0].expand(n, n)  # [N, N]
        else:
            allowed = torch.ones(n, n, dtype=torch.bool)  # [N, N]
        scale = (1.0 / math.sqrt(d_k) if scaled else 1.0) / temperature
        _, weights = scaled_dot_product_attention(q, k, v, allowed, scale=scale)  # [heads, N, N]
        return {"weights": weights, "mask": allowed, "tokens": tokens, "q": q, "k": k, "v": v}

    # -------------------------------------------------------------- drawing

    def _draw(self, figures: list, *, query: int, **values: Any) -> None:
        """LivePanel update: recompute the attention and rewrite both figures in place."""
        with single_thread():
            res = self.compute(**values)
            stats = row_stats(res["weights"])
        n = values["seq_len"]
        row = min(query, n - 1)
        viz.update_head_grid(figures[0], res["weights"], res["tokens"], res["tokens"], mask=res["mask"])
        viz.update_saturation(
            figures[1], res["weights"][0, row], k_tokens=res["tokens"], d_k=values["d_k"], n_keys=n,
            current=stats, row_mask=res["mask"][row], row_label=f"head 1, query “{res['tokens'][row]}”",
        )

    def _on_seq_len(self, change: dict) -> None:
        """Keep the query-row slider inside the sequence."""
        q = self.controls["query"]
        q.max = change["new"] - 1  # ipywidgets clamps the value, which triggers one more update

    def _on_mask(self, change: dict) -> None:
        """Enable only the size control that the chosen mask uses."""
        self.controls["window"].disabled = change["new"] != "window"
        self.controls["pad"].disabled = change["new"] != "padding"


class SaturationExplorer(LivePanel):
    """Softmax saturation of random N(0, 1) scores as d_k grows, scaled or not, with temperature."""

    N_ROWS = 256  # query rows sampled per setting (mean statistics and score histogram)

    def __init__(
        self,
        *,
        d_k: int = 16,
        n_keys: int = 16,
        scaled: bool = False,
        temperature: float = 1.0,
        seed: int = 0,
        title: str = "Softmax saturation explorer",
        caption: Optional[str] = None,
        main: bool = False,
    ):
        """Build the controls and figures.

        Args:
            d_k: one of 1, 2, 4, …, 512. n_keys: keys per query row, 2..64. scaled: divide by √d_k.
            temperature: 0.05..20. seed: 0..99. title, caption, main: as for LivePanel.
        """
        options = D_K_OPTIONS + (512,)
        _check_choice("d_k", d_k, options)
        _check_int("n_keys", n_keys, 2, 64)
        _check_int("seed", seed, 0, 99)
        controls = {
            "d_k": W.SelectionSlider(options=options, value=d_k, description="d_k", **_slider_style()),
            "n_keys": W.IntSlider(value=n_keys, min=2, max=64, description="keys per row", **_slider_style()),
            "temperature": _temperature_slider(temperature),
            "scaled": W.Checkbox(value=scaled, description="scale by 1/√d_k", indent=False,
                                 layout=W.Layout(width="160px")),
            "seed": W.IntSlider(value=seed, min=0, max=99, description="seed", **_slider_style()),
        }
        first = self.compute(d_k=d_k, n_keys=n_keys, scaled=scaled, temperature=temperature, seed=seed)
        figures = [
            viz.saturation_figure(first["weights"][0], d_k=d_k, n_keys=n_keys, d_k_values=options, width=420,
                                  title="Softmax saturation"),
            viz.score_histogram_figure(first["scores"], width=400,
                                       title="Scores q·k (× scale ÷ temperature) vs N(0, 1)"),
        ]
        if caption is None:
            caption = (f"Each row: one random query against random keys, components N(0, 1), averaged over "
                       f"{self.N_ROWS} rows. Unscaled, the scores spread like √d_k and softmax saturates.")
        super().__init__(controls, figures, self._draw, title=title, caption=caption, main=main)

    def compute(self, *, d_k: int, n_keys: int, scaled: bool, temperature: float, seed: int) -> dict[str, Any]:
        """Scores and softmax weights of N_ROWS random query rows for these control values.

        Returns:
            {"scores": [rows, n_keys] (after scale and temperature), "weights": [rows, n_keys]}.
        """
        import math

        import torch

        lo, hi = TEMPERATURE_RANGE
        if not lo * 0.999 <= temperature <= hi * 1.001:
            raise ValueError(f"temperature must lie in [{lo:.4g}, {hi:.4g}], got {temperature!r}")
        key = (seed, d_k, n_keys)
        if getattr(self, "_raw_key", None) != key:  # temperature and scaling reuse the same sample
            gen = torch.Generator().manual_seed(seed)
            q = torch.randn(self.N_ROWS, 1, d_k, generator=gen, dtype=torch.float64)  # [rows, 1, d_k]
            k = torch.randn(self.N_ROWS, n_keys, d_k, generator=gen, dtype=torch.float64)  # [rows, N, d_k]
            self._raw = (q @ k.transpose(-2, -1)).squeeze(1)  # [rows, N] unscaled q·k
            self._raw_key = key
        scale = (1.0 / math.sqrt(d_k) if scaled else 1.0) / temperature
        scores = self._raw * scale  # [rows, N]
        return {"scores": scores, "weights": torch.softmax(scores, dim=-1)}

    def _draw(self, figures: list, **values: Any) -> None:
        """LivePanel update: resample and rewrite both figures in place."""
        with single_thread():
            res = self.compute(**values)
            stats = row_stats(res["weights"])
        viz.update_saturation(figures[0], res["weights"][0], d_k=values["d_k"], n_keys=values["n_keys"],
                              current=stats, row_label="first query row")
        viz.update_score_histogram(figures[1], res["scores"])
