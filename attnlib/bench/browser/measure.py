"""Key press on a notebook's main slider → its heatmap's data changed, in JupyterLab in headless Chromium.

`python -m attnlib.bench browser [--notebooks 01 05 x1 ...] [--presses 11] [--out build/browser/report.json]
[--shots DIR]`

For each notebook (a copy, on a JupyterLab server of its own: lab.py), and for the two explorers at their largest
settings (x1: AttentionExplorer, 8 heads × 32 tokens; x2: SaturationExplorer, 64 keys; each in a notebook of its
own made here): open it, Run All, then press an arrow key on the main slider (`.al-main-slider`) `--presses`
times. Each press is timed in the page, from the keydown event to the moment the main panel's first figure holds
new data (a head grid's canvas: the weights it drew; a chart's canvas, e.g. the saturation figure: its first
trace's y; a plotly figure: `gd.data[0]`), and to the frame after it.
The panel's view reports where the time went (the breakdown): key → its message arrived in the browser (of which
the kernel's update, `python_ms`), → the next animation frame started (frame_wait), the head grids and charts
drawn on their canvases (grids, their duration), the plotly figures drawn in the task after that frame (plotly,
its duration; plotly_done, ms after the key press). Needs Debian's Chromium at /usr/bin/chromium and
playwright. The machine's load average is printed with every notebook: timings on a shared machine are noisy.

The last line of output is one JSON object (also written to --out):
{"notebooks": [{"name", "ok", "latency_ms_median", "latency_ms_p95", "latencies_ms", "frame_ms_median",
"breakdown_ms" (medians), "load_average", "run_all_s", "problems"?}, ...], "latency_ms_median", "latency_ms_p95",
"presses", "load_average"}; the overall medians are over every press.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import nbformat

from .lab import CHROMIUM, ROOT, copy_name, course_notebooks, launch_chromium, start_lab
from .notebook import NotebookPage

# The explorers at their largest settings, each the main panel of a notebook of its own (made by explorer_notebooks).
EXPLORERS = {
    "x1_attention_explorer.ipynb": "al.widgets.AttentionExplorer(heads=8, seq_len=32, main=True)",
    "x2_saturation_explorer.ipynb": "al.widgets.SaturationExplorer(n_keys=64, main=True)",
}
STEPS = ("received", "python_ms", "frame_wait", "grids", "plotly", "plotly_done")  # the breakdown, in order


def explorer_notebooks(folder: Path) -> list[Path]:
    """Write the EXPLORERS notebooks into `folder`; return their paths."""
    paths = []
    for name, code in EXPLORERS.items():
        nb = nbformat.v4.new_notebook()  # a kernel named in it: JupyterLab starts it without asking
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nb.cells = [nbformat.v4.new_code_cell("import attnlib as al"), nbformat.v4.new_code_cell(code)]
        paths.append(folder / name)
        nbformat.write(nb, paths[-1])
    return paths


def breakdown(results: list[dict]) -> dict:
    """Medians of the view's timing per press (ms after the key press; python_ms and the draws as durations)."""
    steps: dict[str, list[float]] = {k: [] for k in STEPS}
    for r in results:
        t = r.get("timing")
        if not t or t.get("received") is None:
            continue
        steps["received"].append(t["received"])
        steps["python_ms"].append(t["python_ms"] or 0.0)
        steps["frame_wait"].append(t["start"] - t["received"])
        steps["grids"].append(t["grids"] - t["start"])
        if isinstance(t.get("plotly_end"), (int, float)):  # the plotly figures, drawn in the task after the grids
            steps["plotly"].append(t["plotly_end"] - t["plotly_start"])
            steps["plotly_done"].append(t["plotly_end"])
    return {k: round(statistics.median(v), 1) for k, v in steps.items() if v}


def summary(latencies: list[float]) -> dict:
    """Median and 95th percentile (None when there are no values) of latencies in ms, to 0.1 ms."""
    if not latencies:
        return {"latency_ms_median": None, "latency_ms_p95": None}
    p95 = statistics.quantiles(latencies, n=20, method="inclusive")[-1] if len(latencies) > 1 else latencies[0]
    return {"latency_ms_median": round(statistics.median(latencies), 1), "latency_ms_p95": round(p95, 1)}


def measure_notebook(browser, server, name: str, presses: int, shots: Path | None = None) -> dict:
    """Open notebook `name`, Run All, press the main slider `presses` times; return its report entry.

    With `shots`, the main panel after the presses is saved as shots/<name>_panel.png.
    """
    entry: dict = {"name": name, "ok": False, "run_all_s": None}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    nb = NotebookPage(context.new_page(), server, name)
    try:
        nb.open(workspace=f"browser-bench-{Path(name).stem}")
        start = time.monotonic()
        problems = nb.run_all().problems()
        entry["run_all_s"] = round(time.monotonic() - start, 1)
        if not problems:
            panel = nb.main_panel()
            problems = [] if panel["panels"] == 1 else [f"expected one .al-main-panel, found {panel['panels']}"]
        results = [nb.press_main_slider() for _ in range(presses)] if not problems else []
        entry["latencies_ms"] = [round(r["ms"], 1) for r in results if r["changed"]]
        frames = [r["frame_ms"] for r in results if r["changed"]]
        entry["frame_ms_median"] = round(statistics.median(frames), 1) if frames else None
        entry["breakdown_ms"] = breakdown([r for r in results if r["changed"]])
        unchanged = len(results) - len(entry["latencies_ms"])
        problems += [f"{unchanged} of {presses} presses left the heatmap unchanged"] if unchanged else []
        problems += [f"page errors: {nb.page_errors}"] if nb.page_errors else []
        if shots is not None and results:
            shots.mkdir(parents=True, exist_ok=True)
            nb.page.locator(".al-main-panel").first.screenshot(path=str(shots / f"{Path(name).stem}_panel.png"))
    except Exception as exc:  # noqa: BLE001  (report it and measure the next notebook)
        problems = [f"{type(exc).__name__}: {exc}"]
    finally:
        context.close()
        server.shutdown_kernels_of(name)
    entry.update(summary(entry.get("latencies_ms", [])), ok=not problems, load_average=load_average())
    if problems:
        entry["problems"] = problems
    return entry


def load_average() -> float | None:
    """The 1-minute load average (None where the system has none)."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def chosen(prefixes: list[str] | None, folder: Path) -> list[Path]:
    """The course notebooks and explorer notebooks (written to `folder`) whose names start with one of `prefixes`
    (all of them when None)."""
    notebooks = course_notebooks() + explorer_notebooks(folder)
    if prefixes:
        notebooks = [p for p in notebooks if any(p.name.startswith(x) for x in prefixes)]
    return notebooks


def run(notebooks: list[Path], presses: int, shots: Path | None = None) -> dict:
    """Start JupyterLab and Chromium, measure each notebook, stop both; return the report."""
    from playwright.sync_api import sync_playwright

    entries = []
    with tempfile.TemporaryDirectory(prefix="al-browser-bench-") as tmp, sync_playwright() as pw:
        server = start_lab(Path(tmp), notebooks)
        browser = launch_chromium(pw)
        try:
            for path in notebooks:
                entries.append(measure_notebook(browser, server, copy_name(path), presses, shots))
                e = entries[-1]
                print(f"{e['name']}: {'ok' if e['ok'] else 'FAILED'}, Run All {e['run_all_s']} s, key press → "
                      f"heatmap median {e['latency_ms_median']} ms, p95 {e['latency_ms_p95']} ms, frame "
                      f"{e.get('frame_ms_median')} ms; breakdown {e.get('breakdown_ms')}; load average "
                      f"{e['load_average']}" + (f"; {e['problems']}" if e.get("problems") else ""), flush=True)
        finally:
            browser.close()
            server.stop()
    every = [ms for e in entries for ms in e.get("latencies_ms", [])]
    return {"notebooks": entries, **summary(every), "presses": presses, "load_average": load_average()}


def main(argv: list[str] | None = None) -> int:
    """Measure and print; the last line is the JSON report. Returns 1 if a notebook failed, else 0."""
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench browser", description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="+", metavar="NN",
                        help="notebooks whose names start so, x1 and x2 the explorers (default: all)")
    parser.add_argument("--presses", type=int, default=11, help="key presses per notebook (default 11)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "browser" / "report.json",
                        help="also write the report here (default build/browser/report.json)")
    parser.add_argument("--shots", type=Path, default=None, help="save each main panel after its presses here")
    args = parser.parse_args(argv)
    if args.presses < 1:
        parser.error(f"--presses must be ≥ 1, got {args.presses}")
    if not CHROMIUM.exists():
        print(f"needs Debian's Chromium at {CHROMIUM} (apt-get install -y chromium)")
        return 1
    with tempfile.TemporaryDirectory(prefix="al-browser-explorers-") as folder:
        notebooks = chosen(args.notebooks, Path(folder))
        if not notebooks:
            parser.error(f"no notebook in notebooks/ (or explorer x1, x2) starts with {args.notebooks}")
        print(f"machine: {os.cpu_count()} CPUs, load average {load_average()} before the run "
              "(latencies are noisy on a busy machine)", flush=True)
        report = run(notebooks, args.presses, args.shots)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report))
    return 0 if all(e["ok"] for e in report["notebooks"]) else 1
