"""Control change → update sent to the browser, in the kernel: both explorers, every control, in place vs rebuilt.

`python -m attnlib.bench latency [--events 10] [--rebuild-events 20] [--heads 8] [--seq 32] [--strict] [--quick]`
`python -m attnlib.bench latency --notebooks [NN …]`: every control of every panel of the notebooks instead
(latency_notebooks.py, which imports this module; __main__ sends --notebooks there).

For every control of the AttentionExplorer (8 heads × 32 tokens by default) and of the SaturationExplorer (64 keys),
each event sets the control's value in code, alternating between two values, and times until `control.value = v`
returns: the panel's observer has recomputed, rewritten its figures and serialized the one message its view gets
(a head grid as float32 weights, the other figures as plotly JSON). The rebuild path handles d_k events by building
new figures with the viz builders and a new view. The browser's own drawing time is not included (that is
`python -m attnlib.bench browser`).

The last line of output is one JSON object: {"p50_ms", "p95_ms", "worst_control", "worst_p95_ms",
"per_control": {"explorer.control": [p50, p95, CPU p50, CPU p95]}, "rebuild_p50_ms", "speedup", "load_average"}.
Targets: every control's p95 ≤ 10 ms (issue 12) and speedup ≥ 4.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any

from ..measure import percentile

P95_TARGET_MS = 10.0
SPEEDUP_TARGET = 4.0


def two_values(control: Any) -> list[Any]:
    """Two values of a control near its current one (so that every event changes something).

    Args: control: an ipywidgets control (checkbox, selection slider or dropdown, log slider, int or float slider).
    Returns: [a neighbouring value, the current value]: alternating between them ends where it started.
    """
    if isinstance(control.value, bool):  # a checkbox
        return [not control.value, control.value]
    if hasattr(control, "options"):  # a selection slider or a dropdown: plain values or (label, value) pairs
        options = [o[1] if isinstance(o, (tuple, list)) else o for o in control.options]
        i = options.index(control.value)
        return [options[i - 1] if i else options[1], control.value]
    if hasattr(control, "base"):  # a log slider
        exponent = math.log(control.value, control.base)
        step = -control.step if exponent + control.step > control.max else control.step
        return [control.base ** (exponent + step), control.value]
    step = getattr(control, "step", None) or 1  # a slider's own step (06's d_model moves in steps of 8)
    step = -step if control.value + step > control.max else step
    return [control.value + step, control.value]


def time_control(panel: Any, name: str, events: int, cpu: list[float]) -> list[float]:
    """Milliseconds (wall clock) of `events` changes of control `name`; CPU times appended to `cpu`.

    Args: panel: a LivePanel. name: one of its controls. events: changes to time (alternating, see two_values).
        cpu: a list the CPU time of this process per event is appended to (ms).
    Returns: the wall-clock ms per event, until `control.value = v` returned (update + the message to the view).
    """
    control, times = panel.controls[name], []
    values = two_values(control)
    for i in range(events):
        c0, t0 = time.process_time(), time.perf_counter()
        control.value = values[i % 2]
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        if panel.status:
            raise RuntimeError(f"the panel reported an error at {name}={control.value}: {panel.status}")
    return times


def _rebuild(explorer: Any, events: int) -> list[float]:
    """Milliseconds per d_k event when each event builds new figures and a new view for them."""
    from attnlib import viz
    from attnlib.measure import single_thread
    from attnlib.widgets import D_K_OPTIONS, LiveFigure, LiveGrid, PanelView, row_stats, saturation_curves

    values, times = explorer.values(), []
    d_ks = two_values(explorer.controls["d_k"])
    for i in range(events):
        t0 = time.perf_counter()
        values["d_k"] = d_ks[i % 2]
        with single_thread():
            res = explorer.compute(**values)
            stats = row_stats(res["weights"])
            curves = saturation_curves(D_K_OPTIONS, values["seq_len"])
        row = min(values["query"], values["seq_len"] - 1)
        figures = [
            LiveGrid(viz.head_grid_figure(res["weights"], res["tokens"], res["tokens"], mask=res["mask"],
                                          slots=explorer.max_heads, width=440)),
            LiveFigure(viz.saturation_figure(res["weights"][0, row], curves, k_tokens=res["tokens"], d_k=values["d_k"],
                                             current=stats, row_mask=res["mask"][row], width=400)),
        ]
        view = PanelView()
        view.show(figures)
        times.append((time.perf_counter() - t0) * 1000)
        view.close()
    return times


def time_controls(panels: dict, warmup: int, events: int) -> tuple[dict, list[float], list[float]]:
    """Time every control of every panel.

    Args: panels: label → LivePanel. warmup: untimed events per control first. events: timed events per control.
    Returns: ({"label.control": [wall p50, p95, CPU p50, p95] in ms}, every wall time, every CPU time).
    """
    per_control, every, cpu = {}, [], []
    for label, panel in panels.items():
        for name in panel.controls:
            time_control(panel, name, warmup, [])
            own: list[float] = []
            times = time_control(panel, name, events, own)
            per_control[f"{label}.{name}"] = [round(percentile(v, q), 2) for v, q in ((times, 50), (times, 95),
                                                                                      (own, 50), (own, 95))]
            every += times
            cpu += own
    return per_control, every, cpu


def main(argv: list[str] | None = None) -> int:
    """Measure and print; the last line is the JSON summary.

    Args:
        argv: command-line arguments after `latency`.

    Returns:
        0, or 1 with --strict when a target is missed.
    """
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench latency", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10, help="timed events per control")
    parser.add_argument("--rebuild-events", type=int, default=20, help="rebuild events to time")
    parser.add_argument("--warmup", type=int, default=2, help="untimed events per control first")
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 events, 2 rebuilds, 1 warm-up")
    args = parser.parse_args(argv)
    if args.quick:
        args.events, args.rebuild_events, args.warmup = 2, 2, 1
    if args.events < 1 or args.rebuild_events < 1:
        parser.error("--events and --rebuild-events must be ≥ 1")

    from attnlib.widgets import AttentionExplorer, SaturationExplorer

    t0 = time.perf_counter()
    explorer = AttentionExplorer(heads=args.heads, seq_len=args.seq, max_heads=max(8, args.heads),
                                 max_seq=max(32, args.seq), mask="causal")
    build_ms = (time.perf_counter() - t0) * 1000
    panels = {"attention": explorer, "saturation": SaturationExplorer(n_keys=64)}
    per_control, every, cpu = time_controls(panels, args.warmup, args.events)
    rebuild = _rebuild(explorer, args.rebuild_events)

    p50, p95 = percentile(every, 50), percentile(every, 95)
    worst = max(per_control, key=lambda k: per_control[k][1])
    rebuild_p50 = percentile(rebuild, 50)
    d_k_p50 = per_control["attention.d_k"][0]
    speedup = rebuild_p50 / d_k_p50 if d_k_p50 > 0 else float("inf")
    load = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    print(f"AttentionExplorer: {args.heads} heads × {args.seq}×{args.seq}, causal mask; built in {build_ms:.0f} ms")
    print(f"machine: {os.cpu_count()} CPUs, load average {load} (numbers are noisy on a busy machine)")
    print("  control                  wall clock p50 / p95    CPU time p50 / p95")
    for key, (c50, c95, u50, u95) in per_control.items():
        print(f"  {key:<24} {c50:7.2f} / {c95:7.2f} ms     {u50:6.2f} / {u95:6.2f} ms")
    print(f"in place, every control ({len(every)} events): p50 {p50:.2f} ms, p95 {p95:.2f} ms, max {max(every):.2f} ms")
    print("          CPU time of this process per event (the work itself; an idle machine's wall clock approaches it): "
          f"p50 {percentile(cpu, 50):.2f} ms, p95 {percentile(cpu, 95):.2f} ms")
    print(f"rebuilt   ({len(rebuild)} d_k events, new figures + a new view): p50 {rebuild_p50:.2f} ms")
    ok_p95, ok_speed = per_control[worst][1] <= P95_TARGET_MS, speedup >= SPEEDUP_TARGET
    print(f"targets: every control's p95 ≤ {P95_TARGET_MS:g} ms {'met' if ok_p95 else 'MISSED'} (worst {worst}, "
          f"{per_control[worst][1]:.2f} ms); speedup ≥ {SPEEDUP_TARGET:g} {'met' if ok_speed else 'MISSED'} "
          f"({speedup:.1f}×)")
    print(json.dumps({"p50_ms": round(p50, 3), "p95_ms": round(p95, 3), "worst_control": worst,
                      "worst_p95_ms": per_control[worst][1], "per_control": per_control,
                      "cpu_p50_ms": round(percentile(cpu, 50), 3), "cpu_p95_ms": round(percentile(cpu, 95), 3),
                      "rebuild_p50_ms": round(rebuild_p50, 3), "speedup": round(speedup, 2), "load_average": load}))
    return 1 if args.strict and not (ok_p95 and ok_speed) else 0
