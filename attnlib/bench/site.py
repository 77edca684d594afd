"""The static site in headless Chromium: control change -> figure redrawn, per page (no kernel, no network).

    python -m attnlib.bench site [--site DIR] [--repeats N] [--no-build]

Builds the site's pages (scripts/build_site.py in a subprocess; both editions when notebooks/zh/ exists; executed
notebooks cached in build/executed) into build/site-bench/site unless --site names a built one (--no-build: never
build; the site is --site, by default build/site, the output of `make site`), opens every page from file:// with
every request that is not file:// aborted, and moves each live control of every panel `repeats` times. One move
is timed in the page from the control's input/change event to the figures redrawn (canvases at once, plotly figures
at Plotly.react's promise) and the next two animation frames (painted), after MathJax has typeset the page. Prints a
line per page and, last, one line of JSON: per page the median and max ms, the moves, the page's size and its
embedded-state bytes (all its panels), its panels and how many of them move, the load average.
Target: median <= 100 ms per page.
A benchmark, not a test: the machine is shared, so read the numbers with the load average printed beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
TARGET_MS = 100.0

# Move control k of panel `id` to value index `to` the way a learner does (set it, fire its event); resolve with
# the ms from the event to the figures redrawn and painted.
MOVE_JS = r"""async ([id, k, to]) => {
  const panel = window.alStaticPanels[id];
  const input = panel.inputs[k];
  if (input.type === "checkbox") { input.checked = panel.spec.controls[k].values[to]; }
  else { input.value = String(to); }
  const t0 = performance.now();
  input.dispatchEvent(new Event(input.type === "range" ? "input" : "change", {bubbles: true}));
  await panel.pending;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}"""

# Resolves when MathJax 3 has typeset the page (its startup promise; a move timed before would measure that too).
MATHJAX_DONE_JS = "() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null"

PANELS_JS = r"""() => Object.keys(window.alStaticPanels || {}).map(id => {
  const p = window.alStaticPanels[id];
  return {id, controls: p.spec.controls.map((c, k) => ({name: c.name, kind: c.kind, count: c.values.length,
          index: c.index, live: !!(p.inputs[k] && !p.inputs[k].disabled)}))};
})"""


def build_course_site(out: Path, notebooks: Optional[list[Path]] = None) -> Path:
    """Build the site's pages (no decks) into `out` by running scripts/build_site.py, as `make site` does."""
    command = [sys.executable, str(ROOT / "scripts" / "build_site.py"), "--site", str(out),
               "--cache", str(ROOT / "build" / "executed"), *[str(p) for p in notebooks or []]]
    if subprocess.run(command, cwd=ROOT).returncode != 0:
        raise RuntimeError(f"the site build into {out} failed (see its output above)")
    return out


def site_pages(site: Path) -> list[Path]:
    """Every notebook page of the site, English then Chinese (index pages left out)."""
    return sorted(site.glob("[0-9][0-9]_*.html")) + sorted((site / "zh").glob("[0-9][0-9]_*.html"))


def open_offline(context: Any, page_file: Path) -> tuple[Any, list[str], list[str]]:
    """Open `page_file` in a new tab with every request that is not file:// aborted; (tab, blocked, errors)."""
    tab = context.new_page()
    blocked: list[str] = []
    errors: list[str] = []

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    tab.route("**/*", route)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(page_file.resolve().as_uri())
    tab.wait_for_function("document.querySelectorAll('.al-static-panel[data-al-live]').length === 0 || "
                          "Object.keys(window.alStaticPanels || {}).length > 0", timeout=60_000)
    return tab, blocked, errors


def other_index(count: int, index: int, step: int) -> int:
    """A value index different from `index` (walks up, bouncing at the ends)."""
    up = (index + step) % (2 * (count - 1)) if count > 1 else 0
    return up if up < count else 2 * (count - 1) - up


def bench_page(context: Any, page_file: Path, repeats: int) -> dict:
    """Move every live control of every panel of the page `repeats` times; the times and the page's facts."""
    tab, blocked, errors = open_offline(context, page_file)
    times: list[float] = []
    try:
        tab.evaluate(MATHJAX_DONE_JS)  # time the redraws, not the page's typesetting that still runs after load
        panels = tab.evaluate(PANELS_JS)
        for panel in panels:
            for k, c in enumerate(panel["controls"]):
                if not c["live"]:
                    continue
                index = c["index"]
                for _ in range(repeats):
                    to = other_index(c["count"], index, 1)
                    times.append(tab.evaluate(MOVE_JS, [panel["id"], k, to]))
                    index = to
        state = tab.evaluate("() => [...document.querySelectorAll('script.al-states')]"
                             ".reduce((n, s) => n + new Blob([s.textContent]).size, 0)")
    finally:
        tab.close()
    return {"page": page_file.relative_to(page_file.parents[1] if page_file.parent.name == "zh"
                                          else page_file.parent).as_posix(),
            "moves": len(times), "median_ms": round(statistics.median(times), 1) if times else None,
            "max_ms": round(max(times), 1) if times else None, "page_kb": round(page_file.stat().st_size / 1e3),
            "state_kb": round(state / 1e3), "panels": len(panels),
            "moving": sum(any(c["live"] for c in p["controls"]) for p in panels), "blocked": blocked, "errors": errors}


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench site", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build it into build/site-bench/site)")
    parser.add_argument("--repeats", type=int, default=8, help="moves per control (default 8)")
    parser.add_argument("--no-build", action="store_true",
                        help="never build: time the site in --site (default build/site), which must exist")
    parser.add_argument("notebooks", nargs="*", type=Path, help="build only these (default: the course)")
    return parser.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    """Build (or take) the site, time every page's control moves, print them; 0 when every median is on target."""
    from attnlib.bench.browser.lab import chromium_context

    args = parse_args(argv)
    if args.no_build:
        site = args.site or ROOT / "build" / "site"
        if not site_pages(Path(site)):
            raise SystemExit(f"bench site: --no-build, and {site} holds no built notebook page (run `make site`)")
    else:
        site = args.site or build_course_site(ROOT / "build" / "site-bench" / "site", args.notebooks)
    rows = []
    with chromium_context() as context:
        for page_file in site_pages(Path(site)):
            row = bench_page(context, page_file, args.repeats)
            rows.append(row)
            print(f"{row['page']:<40} {row['moves']:>3} moves  median {row['median_ms']} ms  max {row['max_ms']} ms"
                  f"  page {row['page_kb']} kB, state {row['state_kb']} kB, {row['moving']}/{row['panels']} panels move"
                  + (f"  blocked {row['blocked']}" if row["blocked"] else "")
                  + (f"  errors {row['errors']}" if row["errors"] else ""))
    load = os.getloadavg()
    ok = all(r["median_ms"] is None or r["median_ms"] <= TARGET_MS for r in rows)
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores; target median <= "
          f"{TARGET_MS:.0f} ms per page: {'met' if ok else 'NOT met'}")
    print(json.dumps({"bench": "site", "target_ms": TARGET_MS, "loadavg": [round(x, 2) for x in load],
                      "cores": os.cpu_count(), "pages": rows}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
