"""One notebook open in JupyterLab in a Chromium page: Run All, its main panel, its figures, its errors.

Shared by the browser tests (tests/browser/) and the latency bench (measure.py). Selectors: outputs are
`.jp-OutputArea-output`, a live panel made with `main=True` is `.al-main-panel` and its first slider
`.al-main-slider` (ipywidgets 8: `.noUi-handle`), a panel's head grid is a canvas `.al-heatmap` and a saturation
figure or score histogram a canvas `.al-chart` (panel_view.js), a plotly figure is `.js-plotly-plot` with its data
in `gd.data`.
"""
from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from .lab import SENTINEL, LabServer

NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
SCROLLER = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
HANDLE = ".al-main-panel .al-main-slider .noUi-handle, .al-main-panel .noUi-handle.al-main-slider"
MAX_SCREENSHOT_HEIGHT = 30_000  # px; taller notebooks are cut at the bottom
# Run All of notebook 05 took 68 s at a load average of 2.4 on 2 cores and more than 180 s at 8 (measured): the
# limit only stops a hung run, so it leaves room for a busy machine.
RUN_ALL_TIMEOUT_S = 600

# Progress of Run All, cheap enough to poll: the sentinel cell is the notebook's last cell.
PROGRESS_JS = f"""(sentinel) => {{
  const nb = document.querySelector("{NOTEBOOK}");
  if (!nb) return null;
  const cells = nb.querySelectorAll('.jp-Cell'), last = cells[cells.length - 1];
  const ind = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
  return {{
    done: !!last && [...last.querySelectorAll('.jp-OutputArea-output')].some(o => o.textContent.includes(sentinel)),
    outputs: nb.querySelectorAll('.jp-OutputArea-output').length,
    stderr: nb.querySelectorAll("{STDERR}").length,
    running: [...nb.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].some(p => p.textContent.includes('*')),
    status: ind ? ind.getAttribute('data-status') : null,
  }};
}}"""

# Every stderr/error output's text, and each code cell's prompt, once Run All has finished.
RESULT_JS = f"""() => {{
  const nb = document.querySelector("{NOTEBOOK}");
  return {{
    stderr: [...nb.querySelectorAll("{STDERR}")].map(o => o.textContent),
    cells: [...nb.querySelectorAll('.jp-CodeCell')].map(c => ({{
      prompt: (c.querySelector('.jp-InputArea-prompt')?.textContent ?? '').trim(),
      empty: (c.querySelector('.jp-InputArea-editor')?.textContent ?? '').trim() === '',
    }})),
  }};
}}"""

# The main panel's first figure: a head grid or chart drawn on a canvas by the panel's view (`.al-heatmap`, the
# weights it drew in `alWeights`; `.al-chart`, its first trace's y in `alData`; the draw count in data-revision) or
# else a plotly figure (`.js-plotly-plot`, data in gd.data).
FIGURE_JS = """
  const grid = (panel) => panel && panel.querySelector('.al-heatmap, .al-chart');  // a canvas of the panel's view
  const plot = (panel) => panel && panel.querySelector('.js-plotly-plot');
  const plain = (z) => Array.isArray(z) ? z.map(plain) : ArrayBuffer.isView(z) ? Array.from(z) : z;
  const data = (panel) => {  // what the first figure shows now: an object that changes when its data changes
    const g = grid(panel);
    if (g) return g.alWeights || g.alData || null;
    const gd = plot(panel), t = gd && gd.data && gd.data[0];
    return t ? JSON.stringify(plain(t.z ?? t.y)) : null;
  };
  const same = (a, b) => a === b || (ArrayBuffer.isView(a) && ArrayBuffer.isView(b) && a.length === b.length
                                     && a.every((v, i) => v === b[i]));
  const image = (panel) => {
    const g = grid(panel), gd = plot(panel), images = gd ? [...gd.querySelectorAll('image')] : [];
    return g ? g.dataset.revision : JSON.stringify(images.map(i => i.getAttribute('href')));
  };
"""

# The main panel: how many there are, whether its first figure holds data, and its slider handle.
PANEL_JS = f"""() => {{{FIGURE_JS}
  const panels = document.querySelectorAll('.al-main-panel');
  const handle = document.querySelector("{HANDLE}");
  return {{
    panels: panels.length, figure: !!(grid(panels[0]) || plot(panels[0])), z: data(panels[0]) !== null,
    drawn: panels[0]?.querySelector('.al-figures')?.dataset.revision ?? null,  // the revision its view drew last
    handle: !!handle, label: handle ? handle.getAttribute('aria-label') : null,
    now: handle ? Number(handle.getAttribute('aria-valuenow')) : null,
    min: handle ? Number(handle.getAttribute('aria-valuemin')) : null,
    max: handle ? Number(handle.getAttribute('aria-valuemax')) : null,
  }};
}}"""

# Figures that did not draw: a plotly figure with no trace, no drawn SVG or no area; a head grid or chart canvas
# never drawn or without area. The cell and its first line say where.
UNDRAWN_JS = f"""() => {{
  const nb = document.querySelector("{NOTEBOOK}");
  const cells = [...nb.querySelectorAll('.jp-Cell')];
  const small = e => {{ const r = e.getBoundingClientRect(); return r.width < 50 || r.height < 50; }};
  const canvas = gd => gd.classList.contains('al-heatmap') || gd.classList.contains('al-chart');
  const undrawn = gd => canvas(gd) ? !gd.dataset.revision || small(gd)
    : !gd.data || gd.data.length === 0 || !gd.querySelector('.main-svg') || small(gd);
  return [...nb.querySelectorAll('.js-plotly-plot, .al-heatmap, .al-chart')].filter(undrawn).map(gd => {{
    const cell = gd.closest('.jp-Cell');
    return {{cell: cells.indexOf(cell), kind: canvas(gd) ? gd.className : 'plotly',
             traces: gd.data ? gd.data.length : null,
             source: (cell?.querySelector('.jp-InputArea-editor .cm-line')?.textContent ?? '').slice(0, 80)}};
  }});
}}"""

# Arm one key press: from the next keydown (timestamped in the page), watch the main panel with a MutationObserver
# and requestAnimationFrame until its first figure's data differs; then, one frame later, whether its drawn image
# changed too. With the panel's view (panel_view.js), its timing of the drawn revision is kept. The result lands in
# window.__alResult: {ms, frame_ms (key → the next frame after the change), changed, redrawn, timing}.
ARM_JS = """(timeoutMs) => {""" + FIGURE_JS + """
  const panel = document.querySelector('.al-main-panel');
  const before = data(panel), imageBefore = image(panel);
  let t0 = null, seen = false, observer = null;
  window.__alResult = null;
  const finish = (res) => {
    if (window.__alResult !== null) return;
    document.removeEventListener('keydown', onKey, true);
    if (observer) observer.disconnect();
    window.__alResult = res;
  };
  const check = () => {
    if (seen || t0 === null) return;
    const now = data(panel);
    if (same(now, before)) return;
    seen = true;
    const ms = performance.now() - t0, view = panel.querySelector('.al-figures');
    requestAnimationFrame(() => {
      const frameMs = performance.now() - t0, redrawn = image(panel) !== imageBefore, waitUntil = t0 + timeoutMs;
      const done = () => {  // the view's timing, once its plotly figures (drawn after the grids) are drawn too
        const timing = view && view.alTiming ? { ...view.alTiming } : null;
        if (timing && timing.plotly_end === null && performance.now() < waitUntil) return setTimeout(done, 5);
        for (const k of ['received', 'start', 'grids', 'plotly_start', 'plotly_end']) {
          if (timing && typeof timing[k] === 'number') timing[k] -= t0;
        }
        finish({ms, frame_ms: frameMs, changed: true, redrawn, timing});
      };
      done();
    });
  };
  const frame = () => { if (!seen && window.__alResult === null) { check(); requestAnimationFrame(frame); } };
  const onKey = () => {
    if (t0 !== null) return;
    t0 = performance.now();
    observer = new MutationObserver(check);
    observer.observe(panel, {subtree: true, childList: true, attributes: true, characterData: true});
    requestAnimationFrame(frame);
  };
  document.addEventListener('keydown', onKey, true);
  setTimeout(() => finish({ms: null, changed: false, redrawn: false, keydown: t0 !== null}), timeoutMs);
}"""


def is_offline_noise(msg) -> bool:
    """True for the one kind of console error that does not concern the course: a failed request to a host
    other than our server (the machine is offline; Chromium logs each refused request). Never our server's."""
    if not msg.text.startswith("Failed to load resource"):
        return False
    return urlparse((msg.location or {}).get("url", "")).hostname not in (None, "", "127.0.0.1", "localhost")


@dataclass
class RunAll:
    """What Run All left in the page: error outputs, other stderr outputs, unrun code cells, and how it ended."""

    errors: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    unrun: list[int] = field(default_factory=list)  # code cells (index among code cells) without an execution count
    done: bool = False  # the sentinel cell at the end ran
    dead: bool = False  # the kernel died

    def problems(self) -> list[str]:
        """One message per kind of problem; empty when the notebook ran cleanly to the end."""
        found = []
        if self.errors:
            found.append("error output:\n" + "\n---\n".join(t[-1500:] for t in self.errors))
        if self.stderr:
            found.append("stderr output (a red box for the learner):\n"
                         + "\n---\n".join(t[-1500:] for t in self.stderr))
        if self.dead:
            found.append("the kernel died during Run All")
        if not self.done:
            found.append("Run All stopped before the last cell")
        if self.unrun:
            found.append(f"code cells without an execution count after Run All: {self.unrun}")
        return found


class NotebookPage:
    """Notebook `name` of `server` in a Playwright page, with the page's errors and console errors collected."""

    def __init__(self, page, server: LabServer, name: str) -> None:
        self.page, self.server, self.name = page, server, name
        self.page_errors: list[str] = []
        self.console_errors: list[str] = []
        self.run: RunAll | None = None  # the last Run All
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        page.on("console", self._console)
        page.set_default_timeout(30_000)

    def _console(self, msg) -> None:
        if msg.type == "error" and not is_offline_noise(msg):
            self.console_errors.append(msg.text)

    def wait_for(self, js: str, ready, timeout_s: float, what: str, arg=None, interval_s: float = 0.2) -> dict:
        """Poll `js` in the page until ready(state); return the state, or raise TimeoutError with the last one."""
        deadline = time.monotonic() + timeout_s
        while True:
            state = self.page.evaluate(js, arg)
            if state is not None and ready(state):
                return state
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: no {what} after {timeout_s:.0f} s; last state: {state}")
            time.sleep(interval_s)

    def open(self, workspace: str, kernel: bool = True, timeout_s: float = 120) -> None:
        """Open the notebook in a workspace of its own; with `kernel`, wait until its kernel is idle."""
        self.page.goto(self.server.notebook_url(self.name, workspace))
        # JupyterLab may take more than the default 30 s to show a notebook on a busy machine (measured at load 13)
        self.page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=timeout_s * 1000)
        if kernel:  # the toolbar reads idle before a kernel exists: ask the server, then the page
            deadline = time.monotonic() + timeout_s
            while self.server.kernel_state(self.name) != "idle":
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no idle kernel for {self.name} after {timeout_s:.0f} s:\n"
                                       f"{self.server.log_tail()}")
                time.sleep(0.2)
            self.wait_for(PROGRESS_JS, lambda s: s["status"] == "idle", 30, "idle kernel in the page", SENTINEL)
        tab = self.page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        if tab.count():  # collapse the file browser: the notebook gets the full width
            tab.first.click()

    def menu(self, top: str, item: str) -> None:
        """Click a JupyterLab menu item: the top menu by its label, then the item by its name."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(top)}$")).click()
        self.page.get_by_role("menuitem", name=item, exact=True).click()

    def run_all(self, timeout_s: float = RUN_ALL_TIMEOUT_S) -> RunAll:
        """Clear every output, Run All, wait until it ends (the sentinel cell ran, a cell raised, the kernel died).

        Returns:
            What the run left in the page (also kept as `self.run`).
        """
        self.menu("Edit", "Clear Outputs of All Cells")
        self.wait_for(PROGRESS_JS, lambda s: s["outputs"] == 0, 10, "cleared outputs", SENTINEL)
        self.menu("Run", "Run All Cells")

        def ended(s: dict) -> bool:
            stopped = s["stderr"] and not s["running"]  # Run All stops at a cell that raised
            return s["status"] == "dead" or (s["status"] == "idle" and (s["done"] or stopped))

        progress = self.wait_for(PROGRESS_JS, ended, timeout_s, "end of Run All", SENTINEL, 0.1)
        state = self.page.evaluate(RESULT_JS)
        # error outputs (tracebacks, and SyntaxError's short form) and other stderr: both a red box for the learner
        errors = [t for t in state["stderr"] if "Traceback" in t or re.search(r"^\w*(Error|Exception)\b", t, re.M)]
        unrun = [i for i, c in enumerate(state["cells"])
                 if not c["empty"] and not re.fullmatch(r"\[\d+\]:", c["prompt"])]
        self.run = RunAll(errors, [t for t in state["stderr"] if t not in errors], unrun, progress["done"],
                          progress["status"] == "dead")
        return self.run

    def main_panel(self, timeout_s: float = 30) -> dict:
        """Scroll to the main panel, as a learner would, then wait for its heatmap and slider handle; return
        PANEL_JS's state (check "panels" == 1; "drawn" is the revision its view drew last).

        A panel that shows its controls but no figure after `timeout_s` has its cell run again, as a learner
        would, once, with a warning that says so (twice in CI, 04's main panel on a busy machine; never reproduced
        on its own: the view had drawn revision 0 and neither PanelView's resend nor the view's check reached it).
        """
        self.wait_for(PANEL_JS, lambda s: s["panels"] >= 1, timeout_s, "main panel (.al-main-panel)")
        self.page.locator(".al-main-panel").first.scroll_into_view_if_needed()
        what = ("main panel (.al-main-panel) with a slider (.al-main-slider .noUi-handle) and a drawn first figure "
                "(.al-heatmap or .al-chart canvas, or .js-plotly-plot with data)")
        drawn = lambda s: s["panels"] > 1 or (s["z"] and s["handle"])  # noqa: E731
        try:
            state = self.wait_for(PANEL_JS, drawn, timeout_s, what)
        except TimeoutError as first:
            warnings.warn(f"{first}; running the panel's cell again", stacklevel=2)
            cell = self.page.locator(".jp-CodeCell", has=self.page.locator(".al-main-panel")).first
            cell.locator(".jp-InputPrompt").first.click()  # the cell selected, in command mode
            self.page.keyboard.press("Control+Enter")  # run it, stay on it
            self.page.wait_for_timeout(500)  # the run has started
            self.wait_for(PROGRESS_JS, lambda s: s["status"] == "idle", 60, "idle kernel after the re-run", SENTINEL)
            state = self.wait_for(PANEL_JS, drawn, timeout_s, what + " after its cell ran again")
        self.page.locator(".al-main-panel").first.scroll_into_view_if_needed()
        return state

    def press_main_slider(self, timeout_ms: int = 10_000) -> dict:
        """Press an arrow key on the main slider (away from the end it is at) and wait for the heatmap to change.

        Returns:
            {"key", "value_before", "changed": the heatmap's data changed, "redrawn": its drawn image changed,
             "ms": key press to changed data, "frame_ms": to the frame after it, measured in the page (None if
             unchanged), "timing": the view's times of that update in ms after the key press (received, start,
             grids, plotly_start, plotly_end) and the kernel's python_ms, or None}.
        """
        state = self.page.evaluate(PANEL_JS)
        key = "ArrowLeft" if state["now"] >= state["max"] else "ArrowRight"
        self.page.locator(HANDLE).first.focus()
        self.page.evaluate(ARM_JS, timeout_ms)
        self.page.keyboard.press(key)
        self.page.wait_for_function("() => window.__alResult !== null", timeout=timeout_ms + 5_000)
        result = dict(self.page.evaluate("() => window.__alResult"), key=key, value_before=state["now"])
        # let the kernel and the page settle, so that presses do not overlap
        self.wait_for(PROGRESS_JS, lambda s: s["status"] == "idle", 10, "idle kernel after the key press", SENTINEL)
        self.page.wait_for_timeout(150)
        return result

    def undrawn_figures(self, grace_s: float = 5) -> list[dict]:
        """The plotly figures that have not drawn (UNDRAWN_JS), after waiting up to `grace_s` for them."""
        deadline = time.monotonic() + grace_s
        while (undrawn := self.page.evaluate(UNDRAWN_JS)) and time.monotonic() < deadline:
            self.page.wait_for_timeout(250)
        return undrawn

    def screenshots(self, folder: Path, stem: str) -> None:
        """Write the main panel alone (stem_panel.png, if there is one) and the whole notebook (stem.png)."""
        folder.mkdir(parents=True, exist_ok=True)
        panel = self.page.locator(".al-main-panel")
        if panel.count() == 1:
            panel.screenshot(path=str(folder / f"{stem}_panel.png"), timeout=10_000)
        # grow the viewport to the notebook's full height (the notebook scrolls inside the page), then shoot
        height = self.page.evaluate(f"""() => {{ const o = document.querySelector("{SCROLLER}");
            return o ? Math.ceil(window.innerHeight - o.clientHeight + o.scrollHeight) : window.innerHeight; }}""")
        width = self.page.viewport_size["width"]
        self.page.set_viewport_size({"width": width, "height": min(max(height + 40, 600), MAX_SCREENSHOT_HEIGHT)})
        self.page.wait_for_timeout(500)  # let JupyterLab lay out again
        self.scroll_to_top()
        self.page.screenshot(path=str(folder / f"{stem}.png"), full_page=True)

    def scroll_to_top(self) -> None:
        """Scroll the notebook to its first cell."""
        self.page.evaluate(f"""() => {{ const o = document.querySelector("{SCROLLER}"); if (o) o.scrollTop = 0; }}""")
        self.page.wait_for_timeout(100)
