"""Control change → update sent to the browser, in the kernel, for every control of every live panel of the course.

`python -m attnlib.bench latency --notebooks [NN …] [--events 10] [--warmup 2] [--strict] [--quick]`

Each notebook (notebooks/NN_*.ipynb; none named: all seven) runs top to bottom in a fresh kernel, its folder as
working directory, as scripts/nbrun.py runs it. Then one more cell, appended in memory (nothing is written), finds
every LivePanel in the kernel's globals and times each of its controls as `latency` times the explorers'
(`time_controls`: values alternate between the current one and a neighbour, so the panel ends where it started).

The last line of output is one JSON object: {"per_control": {"NN.panel.control": [p50, p95, CPU p50, CPU p95]},
"worst_control", "worst_p95_ms", "over_target": [...], "load_average": [before, after]}. Target: every p95 ≤ 10 ms.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from .latency import P95_TARGET_MS, time_controls

ROOT = Path(__file__).resolve().parents[2]
MARK = "ATTNLIB-LATENCY "  # the appended cell's result line starts with this


def panels_in(namespace: dict) -> dict[str, Any]:
    """The LivePanels of a namespace (a kernel's globals), by the first variable name that holds each.

    Args: namespace: variable name → value.
    Returns: {name: panel}, each panel once, in the namespace's order; private names (a leading _) are skipped.
    """
    from attnlib.widgets import LivePanel

    found: dict[str, Any] = {}
    for name, value in list(namespace.items()):
        if isinstance(value, LivePanel) and not name.startswith("_") and all(v is not value for v in found.values()):
            found[name] = value
    return found


def measure_namespace(namespace: dict, warmup: int = 2, events: int = 10) -> None:
    """Time every control of every LivePanel in `namespace` and print MARK + the JSON result (run in the kernel).

    Args: namespace: the kernel's globals(). warmup, events: untimed and timed events per control.
    Returns: None; prints {"per_control": {"panel.control": [wall p50, p95, CPU p50, p95]}, "panels": [...]}.
    """
    panels = panels_in(namespace)
    per_control, _, _ = time_controls(panels, warmup, events)
    print(MARK + json.dumps({"per_control": per_control, "panels": list(panels)}))


def notebook_path(name: str) -> Path:
    """notebooks/NN_*.ipynb for "NN" (or a path to a notebook as given).

    Args: name: two digits, or a path to an .ipynb file.
    Returns: the notebook's path. Raises ValueError if there is none, or more than one.
    """
    if name.endswith(".ipynb"):
        path = Path(name)
        if not path.is_file():
            raise ValueError(f"notebook {name!r} does not exist")
        return path
    found = sorted((ROOT / "notebooks").glob(f"{name}_*.ipynb"))
    if len(found) != 1:
        raise ValueError(f"--notebooks takes two digits naming one notebook in {ROOT / 'notebooks'}, got {name!r}")
    return found[0]


def run_notebook(path: Path, warmup: int, events: int, timeout: int = 900) -> dict:
    """Execute `path` in a fresh kernel, then the timing cell; return what that cell printed (its JSON).

    Args: path: the notebook. warmup, events: per control. timeout: seconds allowed per cell.
    Returns: {"per_control": ..., "panels": [...]} as `measure_namespace` printed it.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    source = (f"from attnlib.bench.latency_notebooks import measure_namespace\n"
              f"measure_namespace(globals(), warmup={int(warmup)}, events={int(events)})")
    nb.cells.append(nbformat.v4.new_code_cell(source, id="attnlib-latency"))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env=dict(os.environ))
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    lines = [line for line in text.splitlines() if line.startswith(MARK)]
    if not lines:
        raise RuntimeError(f"{path.name}: the timing cell printed no result: {text[-500:]!r}")
    return json.loads(lines[-1][len(MARK):])


def _load() -> float | None:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def main(argv: list[str] | None = None) -> int:
    """Measure the notebooks named in argv and print a table; the last line is the JSON summary.

    Args: argv: `--notebooks NN …` and the options of `latency` that apply (--events, --warmup, --strict).
    Returns: 0, or 1 with --strict when a control's p95 is over P95_TARGET_MS.
    """
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench latency --notebooks",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="*", default=[], help="two digits each (none: notebooks 01-07)")
    parser.add_argument("--events", type=int, default=10, help="timed events per control")
    parser.add_argument("--warmup", type=int, default=2, help="untimed events per control first")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a control's p95 is over the target")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 events and 1 warm-up per control")
    args, _ = parser.parse_known_args(argv)  # the explorers' options (--heads, …) do not apply here
    if args.quick:
        args.events, args.warmup = 2, 1
    if args.events < 1 or args.warmup < 0:
        parser.error("--events must be ≥ 1 and --warmup ≥ 0")
    names = args.notebooks or [f"{i:02d}" for i in range(1, 8)]
    try:
        paths = [notebook_path(n) for n in names]
    except ValueError as exc:
        parser.error(str(exc))
    load_before, per_control = _load(), {}
    print(f"machine: {os.cpu_count()} CPUs, load average {load_before} (numbers are noisy on a busy machine)")
    print("  notebook.panel.control              wall clock p50 / p95    CPU time p50 / p95")
    for path in paths:
        result = run_notebook(path, args.warmup, args.events)
        for key, (c50, c95, u50, u95) in result["per_control"].items():
            key = f"{path.name[:2]}.{key}"
            per_control[key] = [c50, c95, u50, u95]
            flag = "  > target" if c95 > P95_TARGET_MS else ""
            print(f"  {key:<36} {c50:7.2f} / {c95:7.2f} ms     {u50:6.2f} / {u95:6.2f} ms{flag}", flush=True)
    worst = max(per_control, key=lambda k: per_control[k][1]) if per_control else None
    over = [k for k, v in per_control.items() if v[1] > P95_TARGET_MS]
    print(f"target: every control's p95 ≤ {P95_TARGET_MS:g} ms {'MISSED' if over else 'met'}: {len(over)} of "
          f"{len(per_control)} over" + (f" (worst {worst}, {per_control[worst][1]:.2f} ms)" if worst else ""))
    print(json.dumps({"per_control": per_control, "worst_control": worst,
                      "worst_p95_ms": per_control[worst][1] if worst else None, "over_target": over,
                      "load_average": [load_before, _load()]}))
    return 1 if args.strict and over else 0
