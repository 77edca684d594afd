"""Slider event → updated figures: the AttentionExplorer updated in place vs rebuilt per event.

`python -m attnlib.bench latency [--events 60] [--rebuild-events 20] [--heads 8] [--seq 32] [--strict]`

Each event sets one control's value in code (d_k, temperature or seed, in turn) and times until
`control.value = v` returns: the panel's observer has recomputed the attention and rewritten the
figures inside `batch_update`, and the update message has been serialized for the browser (the
figures are marked as drawn so the same code path runs as in a live notebook). The rebuild path
handles the same events by building new figures with the viz builders and new FigureWidgets
and putting them in the panel. The browser's own drawing time is not included.

The last line of output is one JSON object: {"p50_ms", "p95_ms", "rebuild_p50_ms", "speedup"}.
Targets: p95 ≤ 16 ms (one 60 Hz frame) and speedup ≥ 4.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any

P95_TARGET_MS = 16.0
SPEEDUP_TARGET = 4.0


def _percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation, like numpy's default."""
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _events(explorer: Any, n: int) -> list[tuple[str, Any]]:
    """n (control, value) pairs that change the figures without changing their layout."""
    from attnlib.widgets import D_K_OPTIONS

    d_ks = [d for d in D_K_OPTIONS if d != explorer.controls["d_k"].value]
    temps = [10 ** e for e in (-0.5, -0.25, 0.25, 0.5, 0.75, 0.0)]
    seeds = list(range(1, 40))
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(("d_k", d_ks[(i // 3) % len(d_ks)]))
        elif kind == 1:
            out.append(("temperature", temps[(i // 3) % len(temps)]))
        else:
            out.append(("seed", seeds[(i // 3) % len(seeds)]))
    return out


def _in_place(explorer: Any, events: list[tuple[str, Any]], cpu: list[float] | None = None) -> list[float]:
    """Milliseconds (wall clock) per event when the panel updates its figures in place.

    `cpu`, if given, receives the CPU time of this process per event: on a machine shared with
    other busy processes it is close to what the wall clock would read on an idle one.
    """
    times = []
    for name, value in events:
        c0, t0 = time.process_time(), time.perf_counter()
        explorer.controls[name].value = value
        times.append((time.perf_counter() - t0) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - c0) * 1000)
        if explorer.status:
            raise RuntimeError(f"the panel reported an error at {name}={value}: {explorer.status}")
    return times


def _rebuild(explorer: Any, events: list[tuple[str, Any]]) -> list[float]:
    """Milliseconds per event when each event builds new figures and new FigureWidgets."""
    import plotly.graph_objects as go

    from attnlib import viz
    from attnlib.measure import single_thread
    from attnlib.widgets import D_K_OPTIONS, row_stats, saturation_curves

    values = explorer.values()
    times = []
    for name, value in events:
        t0 = time.perf_counter()
        values[name] = value
        with single_thread():
            res = explorer.compute(**values)
            stats = row_stats(res["weights"])
            curves = saturation_curves(D_K_OPTIONS, values["seq_len"])
        row = min(values["query"], values["seq_len"] - 1)
        figures = [
            viz.head_grid_figure(res["weights"], res["tokens"], res["tokens"], mask=res["mask"],
                                 slots=explorer.max_heads, width=440),
            viz.saturation_figure(res["weights"][0, row], curves, k_tokens=res["tokens"], d_k=values["d_k"],
                                  current=stats, row_mask=res["mask"][row], width=400),
        ]
        widgets_ = [go.FigureWidget(f) for f in figures]
        old = explorer.figures_box.children
        explorer.figures_box.children = tuple(widgets_)
        times.append((time.perf_counter() - t0) * 1000)
        for w in old:
            if w not in explorer.figures:
                w.close()
    return times


def main(argv: list[str] | None = None) -> int:
    """Measure and print; the last line is the JSON summary.

    Args:
        argv: command-line arguments after `latency`.

    Returns:
        0, or 1 with --strict when a target is missed.
    """
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench latency", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=60, help="in-place events to time (≥ 50 for the report)")
    parser.add_argument("--rebuild-events", type=int, default=20, help="rebuild events to time")
    parser.add_argument("--warmup", type=int, default=6, help="untimed events first")
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    if args.events < 1 or args.rebuild_events < 1:
        parser.error("--events and --rebuild-events must be ≥ 1")

    from attnlib.widgets import AttentionExplorer

    t0 = time.perf_counter()
    explorer = AttentionExplorer(heads=args.heads, seq_len=args.seq, max_heads=max(8, args.heads),
                                 max_seq=max(32, args.seq), mask="causal")
    for fig in explorer.figures:
        fig.rendered = True  # serialize every update message, as when a browser shows the panel
    build_ms = (time.perf_counter() - t0) * 1000
    events = _events(explorer, args.warmup + args.events)
    _in_place(explorer, events[: args.warmup])
    cpu: list[float] = []
    in_place = _in_place(explorer, events[args.warmup:], cpu)
    rebuild = _rebuild(explorer, events[args.warmup: args.warmup + args.rebuild_events])

    p50, p95 = _percentile(in_place, 50), _percentile(in_place, 95)
    rebuild_p50 = _percentile(rebuild, 50)
    speedup = rebuild_p50 / p50 if p50 > 0 else float("inf")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"AttentionExplorer: {args.heads} heads × {args.seq}×{args.seq}, causal mask; built in {build_ms:.0f} ms")
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} (numbers are noisy on a busy machine)")
    print(f"in place  ({len(in_place)} events: d_k, temperature, seed in turn): "
          f"p50 {p50:.2f} ms, p95 {p95:.2f} ms, max {max(in_place):.2f} ms")
    print("          CPU time of this process per event (the work itself; an idle machine's wall clock approaches it): "
          f"p50 {_percentile(cpu, 50):.2f} ms, p95 {_percentile(cpu, 95):.2f} ms")
    print(f"rebuilt   ({len(rebuild)} events, new figures + FigureWidgets): p50 {rebuild_p50:.2f} ms")
    ok_p95, ok_speed = p95 <= P95_TARGET_MS, speedup >= SPEEDUP_TARGET
    print(f"targets: p95 ≤ {P95_TARGET_MS:g} ms {'met' if ok_p95 else 'MISSED'}; "
          f"speedup ≥ {SPEEDUP_TARGET:g} {'met' if ok_speed else 'MISSED'} ({speedup:.1f}×)")
    print(json.dumps({"p50_ms": round(p50, 3), "p95_ms": round(p95, 3), "rebuild_p50_ms": round(rebuild_p50, 3),
                      "speedup": round(speedup, 2)}))
    return 1 if args.strict and not (ok_p95 and ok_speed) else 0
