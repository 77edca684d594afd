"""LiveFigure: the go.FigureWidget of a panel, with the workarounds that plotly 7.1 + anywidget 0.11 need."""
from __future__ import annotations

import pathlib
import time
from typing import Any, Optional

import plotly
import plotly.graph_objects as go
import traitlets

# anywidget rejects a model whose JavaScript module has not loaded within 2 s, and plotly's widget
# module is a 5 MB bundle that each FigureWidget would import (parse) again. This small module
# returns at once and imports the bundle only once per browser page, shared by every figure.
SHARED_BUNDLE_ESM = """
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
PLOTLY_WIDGET_JS = pathlib.Path(plotly.__file__).parent / "package_data" / "widgetbundle.js"


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
    rendered = False  # True once a browser view has drawn the figure (updates are then sent as they happen)
    _esm = SHARED_BUNDLE_ESM
    _bundle = traitlets.Unicode(PLOTLY_WIDGET_JS.read_text(encoding="utf-8")).tag(sync=True)

    def __init__(self, figure: go.Figure):
        """Wrap `figure` as a widget.

        Args: figure: the go.Figure to show (copied).
        """
        self._unacked_since: Optional[float] = None  # monotonic time of the oldest unanswered update
        super().__init__(figure)
        self.observe(self._on_trace_deltas, names=["_js2py_traceDeltas"])

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
        if not self.rendered:
            self.rendered = True
            self.send_full_state()  # the view drew construction-time data
        elif msg.get("trace_edit_id", -1) < self._last_trace_edit_id and self._unacked_since is None:
            self.send_full_state()  # a new view of an updated figure

    def send_full_state(self) -> None:
        """Send every trace and layout property to the browser in one Plotly.update."""
        data = self._data  # list of dicts, one per trace
        keys = sorted(set().union(*(d.keys() for d in data)) - {"uid", "type"}) if data else []
        restyle = {key: [d.get(key) for d in data] for key in keys}  # None unsets a missing key
        self._send_update_msg(restyle, dict(self._layout), list(range(len(data))))

    # plotly has no public hook for outgoing messages. batch_update ends in _send_update_msg, an assignment
    # outside a batch in _send_restyle_msg / _send_relayout_msg: these three wait for a drawn view (which
    # then gets send_full_state). Panels never add, move or delete traces, so the other _send_* stay as they are.
    def _send_update_msg(self, *args: Any, **kwargs: Any) -> None:
        if self.rendered:
            if self._unacked_since is None:
                self._unacked_since = time.monotonic()
            super()._send_update_msg(*args, **kwargs)

    def _send_restyle_msg(self, *args: Any, **kwargs: Any) -> None:
        if self.rendered:
            super()._send_restyle_msg(*args, **kwargs)

    def _send_relayout_msg(self, *args: Any, **kwargs: Any) -> None:
        if self.rendered:
            super()._send_relayout_msg(*args, **kwargs)
