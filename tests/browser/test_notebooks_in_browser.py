"""Every notebook, used the way a learner uses it: JupyterLab in headless Chromium.

For each notebooks/NN_*.ipynb (a copy, see conftest.py): open it, clear all outputs, Run All,
wait until it finished, assert no error output, no page error and no console error, and no
plotly figure anywhere in the notebook left blank; find the
main live panel (`.al-main-panel`), move its slider (`.al-main-slider`) with the keyboard and
assert that its heatmap (the first plotly figure in the panel) re-rendered with changed data;
time key press -> changed heatmap in the page; save a full-page screenshot build/browser/NN.png
(and the main panel alone as NN_panel.png).
Results go to build/browser/report.json (see conftest.BrowserReport).
In notebook 07 every in-notebook link `](#x)` is clicked and its anchor must scroll into view
(JupyterLab 4.6 does not scroll to non-ASCII heading anchors; explicit ASCII `<a id>` ones work).
"""
from __future__ import annotations

import re
import statistics
import time
from urllib.parse import quote, urlparse

import pytest

RUN_ALL_TIMEOUT_S = 180
PANEL_RENDER_TIMEOUT_S = 30
PRESSES = 7  # key presses on the main slider; the median latency is reported
PRESS_TIMEOUT_MS = 10_000
BLANK_GRACE_S = 5  # after the key presses, figures still blank this much later count as blank
MAX_SCREENSHOT_HEIGHT = 30_000  # px; taller notebooks are cut at the bottom

# Progress of Run All, cheap enough to poll: the sentinel cell is the notebook's last cell.
RUN_PROGRESS_JS = """(sentinel) => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  if (!nb) return null;
  const cells = nb.querySelectorAll('.jp-Cell');
  const last = cells[cells.length - 1];
  const ind = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
  return {
    done: !!last && [...last.querySelectorAll('.jp-OutputArea-output')].some(o => o.textContent.includes(sentinel)),
    n_outputs: nb.querySelectorAll('.jp-OutputArea-output').length,
    n_stderr: nb.querySelectorAll(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").length,
    running: [...nb.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].some(p => p.textContent.includes('*')),
    status: ind ? ind.getAttribute('data-status') : null,
  };
}"""

# The state of every code cell and all stderr/error outputs, read once Run All has finished.
RUN_STATE_JS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  return {
    stderr: [...nb.querySelectorAll(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")]
              .map(o => o.textContent),
    cells: [...nb.querySelectorAll('.jp-CodeCell')].map(c => ({
      prompt: (c.querySelector('.jp-InputArea-prompt')?.textContent ?? '').trim(),
      empty: (c.querySelector('.jp-InputArea-editor')?.textContent ?? '').trim() === '',
    })),
  };
}"""

# The main panel's heatmap is ready: one panel, a plotly figure with z data, a slider handle.
PANEL_STATE_JS = """() => {
  const panels = document.querySelectorAll('.al-main-panel');
  const panel = panels[0];
  const gd = panel?.querySelector('.js-plotly-plot');
  const handle = panel?.querySelector('.al-main-slider .noUi-handle, .noUi-handle.al-main-slider');
  return {
    panels: panels.length,
    figure: !!gd,
    z: !!(gd && gd.data && gd.data[0] && gd.data[0].z),
    // for failure messages: what the figure holds instead
    traces: gd && gd.data ? gd.data.length : null,
    trace0: gd && gd.data && gd.data[0] ? Object.entries(gd.data[0]).map(([k, v]) =>
              k + ':' + (v === null ? 'null' : Array.isArray(v) ? 'array[' + v.length + ']' : typeof v)).join(' ') : null,
    handle: !!handle,
    now: handle ? Number(handle.getAttribute('aria-valuenow')) : null,
    min: handle ? Number(handle.getAttribute('aria-valuemin')) : null,
    max: handle ? Number(handle.getAttribute('aria-valuemax')) : null,
  };
}"""

# Plotly figures anywhere in the notebook that show no trace at all (a blank set of axes).
BLANK_FIGURES_JS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const cells = [...nb.querySelectorAll('.jp-Cell')];
  return [...nb.querySelectorAll('.js-plotly-plot')].filter(gd => !gd.data || gd.data.length === 0).map(gd => {
    const cell = gd.closest('.jp-Cell');
    return {
      cell: cells.indexOf(cell),
      prompt: (cell?.querySelector('.jp-InputArea-prompt')?.textContent ?? '').trim(),
      source: (cell?.querySelector('.jp-InputArea-editor .cm-line')?.textContent ?? '').slice(0, 80),
    };
  });
}"""

# Arm one measurement: at the next keydown (timestamped in the page), watch the panel's heatmap
# with a MutationObserver and requestAnimationFrame until gd.data[0].z differs from now.
ARM_JS = """(timeoutMs) => {
  const panel = document.querySelector('.al-main-panel');
  const figure = () => panel.querySelector('.js-plotly-plot');
  const plain = (z) => Array.isArray(z) ? z.map(plain)
                     : ArrayBuffer.isView(z) ? Array.from(z) : z;
  const zText = () => { const gd = figure(); return JSON.stringify(plain(gd && gd.data && gd.data[0] && gd.data[0].z)); };
  const images = () => [...figure().querySelectorAll('image')].map(i => i.getAttribute('href') || i.getAttribute('xlink:href'));
  const before = zText();
  const imagesBefore = JSON.stringify(images());
  let t0 = null, seen = false, observer = null, timer = null;
  window.__alResult = null;
  // Diagnostic split of the latency: when the page first sends on a websocket (the slider's new
  // value leaving for the kernel) after the key press.
  if (!window.__alSendHooked) {
    window.__alSendHooked = true;
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
      if (window.__alT0 != null && window.__alSendAt == null) window.__alSendAt = performance.now();
      return send.call(this, data);
    };
  }
  window.__alT0 = null;
  window.__alSendAt = null;
  const finish = (res) => {
    if (window.__alResult !== null) return;
    document.removeEventListener('keydown', onKey, true);
    if (observer) observer.disconnect();
    clearTimeout(timer);
    window.__alResult = res;
  };
  const check = () => {
    if (seen || t0 === null) return;
    if (zText() !== before) {
      seen = true;
      const ms = performance.now() - t0;
      // One more frame, then compare the drawn heatmap images too (the figure re-rendered).
      const sendMs = window.__alSendAt == null ? null : window.__alSendAt - t0;
      requestAnimationFrame(() => finish({ms, send_ms: sendMs, changed: true,
                                          redrawn: JSON.stringify(images()) !== imagesBefore}));
    }
  };
  const frame = () => { if (!seen && window.__alResult === null) { check(); requestAnimationFrame(frame); } };
  const onKey = () => {
    if (t0 !== null) return;
    t0 = performance.now();
    window.__alT0 = t0;
    observer = new MutationObserver(check);
    observer.observe(panel, {subtree: true, childList: true, attributes: true, characterData: true});
    requestAnimationFrame(frame);
  };
  document.addEventListener('keydown', onKey, true);
  timer = setTimeout(() => finish({ms: null, changed: false, timeout: true, keydown: t0 !== null}), timeoutMs);
}"""


def _is_noise(msg) -> bool:
    """Console errors that provably do not concern the course.

    Only one kind: a resource request to a host other than our JupyterLab server that failed
    (the test machine is offline, and Chromium logs each refused request as a console error).
    Requests to the server itself are never filtered.
    """
    if not msg.text.startswith("Failed to load resource"):
        return False
    url = (msg.location or {}).get("url", "")
    return urlparse(url).hostname not in (None, "", "127.0.0.1", "localhost")


def _menu(page, top: str, item: str) -> None:
    """Click a JupyterLab menu item: the top menu by its label, then the item by its name."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(top)}$")).click()
    page.get_by_role("menuitem", name=item, exact=True).click()


def _wait_for(page, js: str, arg, ready, timeout_s: float, what: str, interval_s: float = 0.2):
    """Poll `js` in the page until ready(state) is true; returns the state or fails with the last one."""
    deadline = time.monotonic() + timeout_s
    state = None
    while True:
        state = page.evaluate(js, arg) if arg is not None else page.evaluate(js)
        if state is not None and ready(state):
            return state
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}; last state: {state}", pytrace=False)
        time.sleep(interval_s)


def _full_page_screenshot(page, path) -> None:
    """Grow the viewport to the notebook's full height (the notebook scrolls inside the page), shoot."""
    height = page.evaluate("""() => {
      const outer = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
      return outer ? Math.ceil(window.innerHeight - outer.clientHeight + outer.scrollHeight) : window.innerHeight;
    }""")
    width = page.viewport_size["width"]
    page.set_viewport_size({"width": width, "height": min(max(height + 40, 600), MAX_SCREENSHOT_HEIGHT)})
    page.wait_for_timeout(500)  # let JupyterLab lay out again
    page.evaluate("""() => {
      const outer = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
      if (outer) outer.scrollTop = 0;
    }""")
    page.wait_for_timeout(100)
    page.screenshot(path=str(path), full_page=True)


@pytest.mark.browser
def test_notebook_runs_and_main_slider_updates_heatmap(notebook, lab_server, browser, browser_report):
    # `notebook` is parametrized over notebooks/NN_*.ipynb by conftest.pytest_generate_tests.
    sentinel = lab_server.sentinel
    name = notebook.name
    number = name[:2]
    entry = {"name": name, "ok": False, "run_all_s": None, "latency_ms_median": None}
    problems: list[str] = []
    page_errors: list[str] = []
    console_errors: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda e: page_errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and not _is_noise(m) and console_errors.append(m.text))
    try:
        page.set_default_timeout(30_000)
        # A workspace of its own per notebook: JupyterLab must not reopen (and start kernels for)
        # the notebooks of earlier tests.
        workspace = f"browser-test-{notebook.stem}"
        page.goto(f"{lab_server.url}/lab/workspaces/{quote(workspace)}/tree/{quote(name)}?token={lab_server.token}")
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        # The toolbar reads idle before a kernel exists: ask the server, then the page.
        deadline = time.monotonic() + 60
        while lab_server.kernel_state(name) != "idle":
            if time.monotonic() > deadline:
                pytest.fail(f"no idle kernel for {name} after 60 s:\n{lab_server.log_tail()}", pytrace=False)
            time.sleep(0.2)
        _wait_for(page, RUN_PROGRESS_JS, sentinel, lambda s: s["status"] == "idle", 30, "the page to see the kernel")
        # Collapse the file browser: the notebook gets the full width (and the screenshot too).
        open_tab = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        if open_tab.count():
            open_tab.first.click()

        _menu(page, "Edit", "Clear Outputs of All Cells")
        _wait_for(page, RUN_PROGRESS_JS, sentinel, lambda s: s["n_outputs"] == 0, 10, "outputs to be cleared")

        start = time.monotonic()
        _menu(page, "Run", "Run All Cells")

        def finished(s):
            stopped = s["n_stderr"] and not s["running"]  # Run All stops at a cell that raised
            return s["status"] == "dead" or (s["status"] == "idle" and (s["done"] or stopped))

        progress = _wait_for(page, RUN_PROGRESS_JS, sentinel, finished, RUN_ALL_TIMEOUT_S, "Run All to finish", 0.1)
        entry["run_all_s"] = round(time.monotonic() - start, 1)
        state = page.evaluate(RUN_STATE_JS)

        # Error outputs (tracebacks, also SyntaxError's short form) and any other stderr output:
        # both show as a red box to the learner.
        errors = [t for t in state["stderr"] if "Traceback" in t or re.search(r"^\w*(Error|Exception)\b", t, re.M)]
        if errors:
            problems.append("error output:\n" + "\n---\n".join(t[-1500:] for t in errors))
        warnings = [t for t in state["stderr"] if t not in errors]
        if warnings:
            problems.append("stderr output (a red box for the learner):\n" + "\n---\n".join(t[-1500:] for t in warnings))
        if progress["status"] == "dead":
            problems.append(f"the kernel died during Run All:\n{lab_server.log_tail()}")
        if not progress["done"]:
            problems.append("Run All stopped before the last cell")
        unrun = [i for i, c in enumerate(state["cells"]) if not c["empty"] and not re.fullmatch(r"\[\d+\]:", c["prompt"])]
        if unrun:
            problems.append(f"code cells without an execution count after Run All: {unrun}")
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)

        panel = _wait_for(page, PANEL_STATE_JS, None, lambda s: s["panels"] != 1 or (s["z"] and s["handle"]),
                          PANEL_RENDER_TIMEOUT_S, "the main panel (.al-main-panel) to show a slider "
                          "(.al-main-slider .noUi-handle) and a heatmap (first .js-plotly-plot with data[0].z)")
        assert panel["panels"] == 1, f"expected exactly one .al-main-panel, found {panel['panels']}"

        page.locator(".al-main-panel").scroll_into_view_if_needed()
        handle = page.locator(".al-main-panel .al-main-slider .noUi-handle, .al-main-panel .noUi-handle.al-main-slider").first
        latencies, send_ms, results = [], [], []
        direction = "ArrowLeft" if panel["now"] >= panel["max"] else "ArrowRight"
        for _ in range(PRESSES):
            s = page.evaluate(PANEL_STATE_JS)
            if s["now"] >= s["max"]:
                direction = "ArrowLeft"
            elif s["now"] <= s["min"]:
                direction = "ArrowRight"
            handle.focus()
            page.evaluate(ARM_JS, PRESS_TIMEOUT_MS)
            page.keyboard.press(direction)
            page.wait_for_function("() => window.__alResult !== null", timeout=PRESS_TIMEOUT_MS + 5_000)
            res = page.evaluate("() => window.__alResult")
            res.update(key=direction, value_before=s["now"])
            results.append(res)
            if res["changed"]:
                latencies.append(round(res["ms"], 1))
                if res.get("send_ms") is not None:
                    send_ms.append(round(res["send_ms"], 1))
            # Let the kernel and the page settle, so presses do not overlap.
            _wait_for(page, RUN_PROGRESS_JS, sentinel, lambda st: st["status"] == "idle", 10, "the kernel to go idle")
            page.wait_for_timeout(150)
        entry["latencies_ms"] = latencies
        entry["key_to_websocket_send_ms"] = send_ms  # browser-side part of each latency
        entry["latency_ms_median"] = round(statistics.median(latencies), 1) if latencies else None

        unchanged = [r for r in results if not r["changed"]]
        if unchanged:
            problems.append(f"{len(unchanged)} of {PRESSES} key presses on the main slider left the heatmap "
                            f"data unchanged: {unchanged}")
        if latencies and not any(r.get("redrawn") for r in results):
            problems.append("the heatmap's data changed but its drawn image never did")

        # Every figure of the notebook (not only the main panel's) must show something.
        deadline = time.monotonic() + BLANK_GRACE_S
        while (blank := page.evaluate(BLANK_FIGURES_JS)) and time.monotonic() < deadline:
            page.wait_for_timeout(250)
        if blank:
            problems.append(f"{len(blank)} plotly figure(s) drawn blank (no trace), in cells: {blank}")
        page.wait_for_timeout(300)
    except BaseException as exc:  # record (pytest.fail too), re-raise: the report lists failures
        if not (isinstance(exc, pytest.fail.Exception) and problems):  # else it only repeats `problems`
            problems.append(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        try:
            # The main panel alone at full resolution (for reviewing labels and clipping), then the page.
            main_panel = page.locator(".al-main-panel")
            if main_panel.count() == 1:
                main_panel.screenshot(path=str(browser_report.path.parent / f"{number}_panel.png"), timeout=10_000)
            _full_page_screenshot(page, browser_report.path.parent / f"{number}.png")
        except Exception as exc:  # the screenshot must not hide the real failure
            problems.append(f"screenshot failed: {exc}")
        if page_errors:
            problems.append("page errors: " + " | ".join(page_errors))
        if console_errors:
            problems.append("console errors: " + " | ".join(console_errors))
        entry["ok"] = not problems
        if problems:
            entry["problems"] = problems
        browser_report.add(entry)
        context.close()
        lab_server.shutdown_kernels_of(name)

    assert not problems, "\n".join(problems)


LINKS_NOTEBOOK = "07_summary_and_beyond.ipynb"  # the notebook with the most in-notebook links

# In-notebook links of the rendered markdown, and where their targets are relative to the scroll area.
LINKS_JS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  // not JupyterLab's own heading permalinks (the "¶" shown on hover)
  return [...nb.querySelectorAll('.jp-MarkdownOutput a[href^="#"]:not(.jp-InternalAnchorLink)')]
         .map(a => a.getAttribute('href'));
}"""
TARGET_JS = """(fragment) => {
  const outer = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
  const id = decodeURIComponent(fragment.slice(1));
  // JupyterLab's sanitizer turns <a id="x"> into <a data-jupyter-id="x">, and scrolls to that
  const scope = '.jp-NotebookPanel:not(.lm-mod-hidden) ';
  const target = [...document.querySelectorAll(`${scope}[data-jupyter-id], ${scope}[id], ${scope}a[name]`)]
                 .find(e => e.getAttribute('data-jupyter-id') === id || e.id === id || e.getAttribute('name') === id);
  if (!outer || !target) return {found: !!target, scroll: outer ? outer.scrollTop : null,
    anchors: [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownOutput a:not([href])')]
             .slice(0, 3).map(a => a.outerHTML)};
  const box = outer.getBoundingClientRect(), t = target.getBoundingClientRect();
  return {found: true, scroll: outer.scrollTop, visible: t.top >= box.top - 2 && t.top < box.bottom,  // an empty <a> has no height
          top: Math.round(t.top - box.top), height: Math.round(box.height)};
}"""


@pytest.mark.browser
def test_in_notebook_links_scroll_to_their_target(lab_server, browser):
    """Clicking each `](#x)` link of notebook 07 in JupyterLab brings its anchor into view."""
    if not (lab_server.root_dir / LINKS_NOTEBOOK).exists():
        pytest.skip(f"{LINKS_NOTEBOOK} is not among the notebooks under test")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.set_default_timeout(30_000)
        page.goto(f"{lab_server.url}/lab/workspaces/browser-test-links/tree/{quote(LINKS_NOTEBOOK)}"
                  f"?token={lab_server.token}")
        page.wait_for_selector(".jp-NotebookPanel .jp-MarkdownOutput")
        links = list(dict.fromkeys(page.evaluate(LINKS_JS)))  # each target once, in page order
        assert links, f"no in-notebook links found in {LINKS_NOTEBOOK}"
        failures = []
        for href in links:
            page.evaluate("""() => { const o = document.querySelector(
                '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer'); if (o) o.scrollTop = 0; }""")
            page.wait_for_timeout(100)
            link = page.locator(f'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownOutput a[href="{href}"]'
                                f':not(.jp-InternalAnchorLink)').first
            link.scroll_into_view_if_needed()
            link.click()
            deadline = time.monotonic() + 3
            while not (state := page.evaluate(TARGET_JS, href)).get("visible") and time.monotonic() < deadline:
                page.wait_for_timeout(100)
            if not state["found"]:
                failures.append(f"{href}: no element with that id in the page (anchors seen: {state['anchors']})")
            elif not state["visible"]:
                failures.append(f"{href}: the target stayed out of view after the click ({state})")
        assert not failures, f"{len(failures)} of {len(links)} links in {LINKS_NOTEBOOK}:\n" + "\n".join(failures)
    finally:
        context.close()
        lab_server.shutdown_kernels_of(LINKS_NOTEBOOK)
