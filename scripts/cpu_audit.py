"""Find notebook outputs that depend on the CPU, and rounded numbers close enough to a rounding boundary to flip.

Usage:
    python scripts/cpu_audit.py [notebooks/NN_name.ipynb ...] [--variants other-cpu threads-4] [--out DIR]

Each notebook is executed (a copy, in memory; its folder is the working directory, nothing is written
there) on this machine as it is and under each variant of scripts/cpu_variants.py, with the rounding
audit on (ATTNLIB_ROUNDING_AUDIT: `al.rounded` records every value it rounds). The report says, per
notebook and cell:
  (a) outputs that differ from the committed ones: on this machine (stale outputs, not a CPU question)
      and only under a variant (the output depends on the CPU);
  (b) fragile numbers: values passed to `al.rounded` whose distance to the nearest rounding boundary
      (…5 in the first dropped decimal) is below a margin: SPREAD_FACTOR × the spread the variants
      produced for that value, and at least ULPS float32 (or float64) ulps of the value. Such a number
      can round differently on a CPU that the variants do not imitate. A value that is exactly a decimal
      one digit longer than it is rounded to (an integer, 0.14665: a literal, a count, layout arithmetic)
      was computed exactly, and is listed only if a variant moved it;
  (c) committed numbers with at least SIGNIFICANT significant digits (raw floats that never went through
      `al.rounded`; plotly's own constants and make_subplots' layout are left out);
  (d) numbers computed after an optimiser step, in cells nbval compares: each must be tagged
      nbval-ignore-output (docs/how_it_is_tested.md). An IPython startup file in the kernel registers a global
      torch.optim step hook that notes, in the audit file, the first optimiser step of each cell; a value
      `al.rounded` recorded after such a note was computed after an optimiser step. Cells that ran steps
      themselves and have outputs are listed even if they rounded nothing. Hand-written updates
      (p -= lr * p.grad) are not seen, nor numbers printed without `al.rounded`.
Values rounded for live panels (FigureWidgets) or in cells nbval does not compare (tagged nbval-ignore-output or
nbval-skip) are counted, not listed. Default variants: other-cpu, threads-4, and aten-avx2 where the CPU has AVX-512.
Executed copies and audit records land in --out (default: a temporary folder); --reuse re-reads them.
"""
from __future__ import annotations

import argparse
import os
import pickle
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_variants import AVX2, VARIANTS, Variant, has_avx512, kernel_env  # noqa: E402
from nbcompare import checked, output_differences  # noqa: E402
from nbrun import ROOT, every_notebook, run_notebook  # noqa: E402

from attnlib.rounding import AUDIT_ENV, rounded  # noqa: E402

DEFAULT_VARIANTS = ("other-cpu", "threads-4") + ((AVX2.name,) if has_avx512() else ())
# Measured (scripts/cpu_variants.py): elementwise ops, softmax and BLAS at the course's sizes moved by at most
# ~8 ulps of max(|value|, 1) across the variants; 16 leaves room for CPUs we cannot imitate (ARM, AVX-512).
ULPS = 16
SPREAD_FACTOR = 4  # a CPU we cannot imitate may move a value further than the variants we can
EPS = {"float32": 2.0**-23, "float64": 2.0**-52}
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?:[eE][-+]?\d+)?")
SIGNIFICANT = 8  # 9.7997131 (a float32 printed raw) has 8; al.rounded(x) of x < 1000 at most 7
EXAMPLES = 5  # fragile values listed per cell
STEP = "optimiser_step"  # key of the audit records the step hook writes (the execution count of the cell)
# IPython startup file of the audited kernels: notes the first optimiser step of each cell in the audit file
STEP_HOOK = f"""\
import os, pickle
from torch.optim.optimizer import register_optimizer_step_post_hook
from IPython import get_ipython

_audit_path, _noted = os.environ[{AUDIT_ENV!r}], set()


def _note_step(optimizer, args, kwargs):
    history = get_ipython().history_manager  # the running cell is stored before it runs
    cell = len(history.input_hist_raw) - 1  # its execution count, as attnlib.rounding.record counts
    if cell not in _noted:
        _noted.add(cell)
        with open(_audit_path, "ab") as f:
            pickle.dump({{{STEP!r}: cell}}, f)


register_optimizer_step_post_hook(_note_step)
"""


# ---------------------------------------------------------------- running


def execute(path: Path, variant: Variant, out: Path, reuse: bool = False) -> tuple[nbformat.NotebookNode, Path, float]:
    """Execute a copy of notebook `path` under `variant` with the rounding audit on (scripts/nbrun.py).

    Args:
        path: the notebook. variant: the settings. out: folder for the executed copy and the audit file.
        reuse: read the copy and audit file an earlier run left in `out` instead, if both are there.

    Returns:
        (executed notebook, audit file, seconds; 0 when reused). Cell errors are kept as outputs, not raised.
    """
    audit = out / f"{path.stem}.{variant.name}.audit.pkl"
    executed = out / f"{path.stem}.{variant.name}.ipynb"
    if reuse and executed.exists() and audit.exists():
        return nbformat.read(executed, as_version=4), audit, 0.0
    audit.unlink(missing_ok=True)
    ipython = out / f"ipython-{variant.name}"
    env = kernel_env(variant, ipython)
    startup = ipython / "ipython" / "profile_default" / "startup"  # where kernel_env puts its own startup file
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "10-optimiser-steps.py").write_text(STEP_HOOK)
    env.update({AUDIT_ENV: str(audit), "IPYTHONDIR": str(ipython / "ipython")})
    start = time.perf_counter()
    nb = run_notebook(path, env=env, timeout=900, allow_errors=True)
    seconds = time.perf_counter() - start
    nbformat.write(nb, executed)
    return nb, audit, seconds


def audit_records(audit: Path) -> tuple[list[dict], list[int]]:
    """The records `al.rounded` appended to `audit`, and the execution counts of the cells that ran optimiser steps.

    Each record gets "after_step": the execution count of the cell of the last optimiser step before it, or None.
    """
    records, stepped, last = [], [], None
    if audit.exists():
        with open(audit, "rb") as f:
            while True:
                try:
                    r = pickle.load(f)
                except EOFError:
                    break
                if STEP in r:
                    last = r[STEP]
                    stepped.append(last)
                else:
                    records.append({**r, "after_step": last})
    return records, stepped


# ---------------------------------------------------------------- (b) fragile numbers


@dataclass
class Fragile:
    """One value near a rounding boundary."""

    value: float
    decimals: int
    distance: float  # to the nearest boundary
    margin: float
    flipped: list[str] = field(default_factory=list)  # variants under which it rounded differently


def boundary_distance(values: np.ndarray, decimals: int) -> np.ndarray:
    """Distance of each value to the nearest rounding boundary (k + 0.5)·10^-decimals."""
    scaled = values * 10.0**decimals
    return np.abs(scaled - np.floor(scaled) - 0.5) / 10.0**decimals


def eps_margin(values: np.ndarray, decimals: int) -> np.ndarray:
    """ULPS ulps of each value (float32 ulps where a float32 holds it exactly, else float64 ones); 0 for
    values that are exactly a decimal with decimals + 1 digits, which only exact arithmetic produces."""
    with np.errstate(over="ignore", invalid="ignore"):
        is32 = values.astype(np.float32).astype(np.float64) == values
        exact = rounded(values, decimals + 1) == values
    eps = np.where(is32, EPS["float32"], EPS["float64"])
    return np.where(exact, 0.0, ULPS * eps * np.abs(values))


def code_cell_of_count(nb: nbformat.NotebookNode) -> dict[int, int]:
    """{execution count: cell index} of an executed notebook."""
    return {c.execution_count: i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.execution_count}


def site(stack: list[tuple]) -> str:
    """'cell line L' of the notebook frame, and the innermost attnlib function, from a record's stack."""
    cell_line = next((f"line {line}" for file, line, _ in reversed(stack) if "ipykernel_" in file), "")
    lib = next((f"{Path(file).name}:{func}" for file, _, func in reversed(stack) if "/attnlib/" in file), "")
    return ", ".join(p for p in (cell_line, lib) if p) or "?"


def in_panel(stack: list[tuple], cell_has_figure: bool) -> bool:
    """True when a record was rounded for a live panel: attnlib's widgets on the stack, or its viz in a cell whose
    outputs hold no plotly figure (a figure built there became a panel's FigureWidget)."""
    def on_stack(package: str) -> bool:  # attnlib/<package>.py or a module of the package attnlib/<package>/
        module, folder = os.path.join("attnlib", f"{package}.py"), os.path.join("attnlib", package, "")
        return any(file.endswith(module) or folder in file for file, _, _ in stack)

    return on_stack("widgets") or (not cell_has_figure and on_stack("viz"))


def has_figure(cell: dict) -> bool:
    """True if a cell's outputs hold a plotly figure (the only way viz's numbers reach a saved output)."""
    return any("application/vnd.plotly.v1+json" in o.get("data", {}) for o in cell.get("outputs", []))


def fragile_numbers(base_nb, base: list[dict], others: dict[str, list[dict]]) -> tuple[dict, dict]:  # noqa: C901
    """Fragile values per cell, and counts per cell.

    Args:
        base_nb: the notebook executed on this machine as it is. base: its audit records.
        others: {variant: audit records} of the same notebook under each variant.

    Returns:
        ({cell index: [(site, Fragile), …]}, {cell index: {"values", "panel", "ignored", "aligned"}}).
    """
    cell_of = code_cell_of_count(base_nb)
    by_cell: dict[int, list[dict]] = defaultdict(list)
    for r in base:
        by_cell[cell_of.get(r["cell"], -1)].append(r)
    other_by_cell = {}
    for name, records in others.items():
        grouped: dict[int, list[dict]] = defaultdict(list)
        for r in records:
            grouped[cell_of.get(r["cell"], -1)].append(r)  # same code, same execution counts
        other_by_cell[name] = grouped
    found: dict[int, list] = defaultdict(list)
    counts: dict[int, dict] = {}
    for cell, records in sorted(by_cell.items()):
        aligned = {name: g[cell] for name, g in other_by_cell.items()
                   if len(g[cell]) == len(records)
                   and all(o["values"].shape == r["values"].shape for o, r in zip(g[cell], records))}
        counts[cell] = {"values": 0, "panel": 0, "ignored": 0, "aligned": sorted(aligned)}
        compared = 0 <= cell < len(base_nb.cells) and checked(base_nb.cells[cell])
        figure = compared and has_figure(base_nb.cells[cell])
        for k, r in enumerate(records):
            v = r["values"].ravel()
            if in_panel(r["stack"], figure) or not compared:
                counts[cell]["panel" if compared else "ignored"] += v.size
                continue
            counts[cell]["values"] += v.size
            finite = np.isfinite(v)
            spread = np.zeros_like(v)
            flips = {}
            for name, recs in aligned.items():
                w = recs[k]["values"].ravel()
                spread = np.maximum(spread, np.where(finite, np.abs(w - v), 0.0))
                flips[name] = rounded(w, r["decimals"]) != rounded(v, r["decimals"])
            margin = np.maximum(SPREAD_FACTOR * spread, eps_margin(v, r["decimals"]))
            distance = boundary_distance(v, r["decimals"])
            hit = finite & (distance < margin)
            for f in flips.values():
                hit |= f & finite
            for j in np.nonzero(hit)[0]:
                found[cell].append((site(r["stack"]), Fragile(
                    float(v[j]), r["decimals"], float(distance[j]), float(margin[j]),
                    [name for name, f in flips.items() if f[j]])))
    return dict(found), counts


# ---------------------------------------------------------------- (c) raw floats in committed outputs


def significant_digits(number: str) -> int:
    """Significant digits of a number written in decimal: '0.0012340' has 5, '9.79971' 6."""
    mantissa = number.lstrip("-").lower().split("e")[0].replace(".", "")
    return len(mantissa.lstrip("0"))


def raw_floats(nb: nbformat.NotebookNode) -> dict[int, list[str]]:
    """{cell index: numbers with SIGNIFICANT or more significant digits} in the committed outputs of compared cells."""
    found = {}
    for i, cell in enumerate(nb.cells):
        if not checked(cell):
            continue
        hits = []
        for o in cell.get("outputs", []):
            texts = [o.get("text", "")] + [v if isinstance(v, str) else "" for v in o.get("data", {}).values()]
            for text in texts:
                found_numbers = NUMBER.findall("".join(text) if isinstance(text, list) else text)
                hits += [n for n in found_numbers if significant_digits(n) >= SIGNIFICANT]
            fig = o.get("data", {}).get("application/vnd.plotly.v1+json")
            if fig:
                hits += [f"{path} = {value!r}" for path, value in figure_floats(fig)]
        if hits:
            found[i] = hits
    return found


def figure_floats(node, path: str = ""):
    """(path, value) of figure floats with SIGNIFICANT or more significant digits, except plotly's own constants."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in ("template", "colorscale", "domain"):  # plotly's constants and make_subplots' layout
                yield from figure_floats(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        for value in node:
            yield from figure_floats(value, path)
    elif isinstance(node, float) and np.isfinite(node) and significant_digits(repr(node)) >= SIGNIFICANT \
            and not path.endswith(("dtick", "annotations.x", "annotations.y")):
        yield path, node


# ---------------------------------------------------------------- (d) numbers computed after an optimiser step


def after_steps(base_nb, base: list[dict], stepped: list[int], others: dict[str, list[dict]]) -> dict[int, str]:
    """{cell index: what it rounded after an optimiser step} for the compared cells of a run.

    Args:
        base_nb: the notebook executed on this machine. base, stepped: its audit records and the execution counts
            of the cells that ran optimiser steps. others: {variant: audit records} of the same notebook.
    """
    cell_of = code_cell_of_count(base_nb)

    def pick(records: list[dict], cell: int) -> list[dict]:
        """The records of `cell` rounded after an optimiser step, not for a live panel."""
        figure = has_figure(base_nb.cells[cell])
        return [r for r in records if cell_of.get(r["cell"], -1) == cell and r["after_step"] is not None
                and not in_panel(r["stack"], figure)]

    own = {cell_of[c] for c in stepped if c in cell_of}
    candidates = {cell_of.get(r["cell"], -1) for r in base if r["after_step"] is not None} | own
    report = {}
    for cell in sorted(c for c in candidates if 0 <= c < len(base_nb.cells) and checked(base_nb.cells[c])):
        records = pick(base, cell)
        if not records and not (cell in own and base_nb.cells[cell].get("outputs")):  # trained, printed nothing
            continue
        values = np.concatenate([r["values"].ravel() for r in records]) if records else np.zeros(0)
        when = "ran optimiser steps itself" if cell in own else \
            f"after the steps of cell {cell_of.get(records[0]['after_step'])}"
        text = f"{values.size} rounded value(s), {when}"
        if values.size:
            text += (f"; e.g. {', '.join(repr(float(v)) for v in values[:3])}{' …' if values.size > 3 else ''} "
                     f"({site(records[0]['stack'])})")
            moved = [changed(records, pick(recs, cell)) for recs in others.values()]
            moved = [m for m in moved if m is not None]
            if moved:
                text += (f"; the variants moved them by up to {max(moved):.1e}" if max(moved) else
                         "; no variant moved them (computed exactly, or not from the trained weights?)")
        report[cell] = text
    return report


def changed(records: list[dict], other: list[dict]) -> float | None:
    """Largest absolute change between two runs' records of one cell, or None if they do not align."""
    if len(other) != len(records) or any(o["values"].shape != r["values"].shape for o, r in zip(other, records)):
        return None
    with np.errstate(invalid="ignore"):
        return max((float(np.nanmax(np.abs(o["values"] - r["values"]), initial=0.0))
                    for o, r in zip(other, records)), default=0.0)


# ---------------------------------------------------------------- report


def audit_notebook(path: Path, variants: list[Variant], out: Path, reuse: bool = False) -> str:
    """Run one notebook on this machine and under each variant; return its Markdown report."""
    saved = out / f"{path.stem}.committed.ipynb"  # what the runs are compared with, kept for --reuse
    if not (reuse and saved.exists()):
        saved.write_bytes(path.read_bytes())
    committed = nbformat.read(saved, as_version=4)
    lines = [f"## {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"]
    try:
        base_nb, base_audit, seconds = execute(path, Variant("this-machine"), out, reuse)
    except Exception as exc:  # noqa: BLE001  (a timeout or a dead kernel: report it, audit the next notebook)
        return "\n".join(lines + [f"could not execute it on this machine: {type(exc).__name__}: {exc}"])
    runs = {}
    for v in variants:
        try:
            runs[v.name] = execute(path, v, out, reuse)
        except Exception as exc:  # noqa: BLE001
            lines.append(f"could not execute it under {v.name}: {type(exc).__name__}: {exc}")
    lines.append(f"executed in {seconds:.0f} s here; " + ", ".join(f"{n} {r[2]:.0f} s" for n, r in runs.items()))
    here = output_differences(committed, base_nb)
    cpu: dict[int, list[str]] = defaultdict(list)
    for name, (nb, _, _) in runs.items():
        for cell, what in output_differences(committed, nb).items():
            if cell not in here:
                cpu[cell].append(f"{name}: {what}")
    (base_records, stepped) = audit_records(base_audit)
    other_records = {n: audit_records(r[1])[0] for n, r in runs.items()}
    fragile, counts = fragile_numbers(base_nb, base_records, other_records)
    trained = after_steps(base_nb, base_records, stepped, other_records)
    raw = raw_floats(committed)
    ids = {i: c.get("id", "?") for i, c in enumerate(committed.cells)}
    lines.append(f"(a) outputs that differ on this machine as it is (not a CPU question): {len(here)} cell(s)")
    lines += [f"  - cell {i} (id {ids[i]}): {what}" for i, what in sorted(here.items())]
    lines.append(f"(a) outputs that differ only under a variant (depend on the CPU): {len(cpu)} cell(s)")
    for i, whats in sorted(cpu.items()):
        lines += [f"  - cell {i} (id {ids[i]}): {w}" for w in whats]
    total = sum(c["values"] for c in counts.values())
    panel = sum(c["panel"] for c in counts.values())
    ignored = sum(c["ignored"] for c in counts.values())
    lines.append(f"(b) fragile numbers: {sum(len(v) for v in fragile.values())} of {total} rounded values "
                 f"(not checked: {panel} rounded for live panels, {ignored} in cells nbval does not compare)")
    for cell, items in sorted(fragile.items()):
        not_aligned = [n for n in runs if n not in counts.get(cell, {}).get("aligned", [])]
        note = (f" (variants {', '.join(not_aligned)} rounded other values here: margin from ulps only)"
                if not_aligned else "")
        lines.append(f"  - cell {cell} (id {ids.get(cell, '?')}): {len(items)} value(s){note}")
        for where, f in items[:EXAMPLES]:
            flip = f"; rounds differently under {', '.join(f.flipped)}" if f.flipped else ""
            lines.append(f"      {f.value!r} to {f.decimals} decimals: {f.distance:.1e} from a boundary, "
                         f"margin {f.margin:.1e} ({where}){flip}")
        if len(items) > EXAMPLES:
            lines.append(f"      … and {len(items) - EXAMPLES} more")
    lines.append(f"(c) committed numbers with {SIGNIFICANT}+ significant digits (raw floats): {len(raw)} cell(s)")
    for i, hits in sorted(raw.items()):
        more = " …" if len(hits) > 3 else ""
        lines.append(f"  - cell {i} (id {ids[i]}): {len(hits)}: " + "; ".join(hits[:3]) + more)
    lines.append(f"(d) numbers computed after an optimiser step, in outputs nbval compares: {len(trained)} cell(s)"
                 + (" (tag each nbval-ignore-output, its reason in metadata nbval_reason, and assert its claim with a "
                    "measured tolerance; a cell whose outputs do not depend on the trained weights may stay)"
                    if trained else ""))
    lines += [f"  - cell {i} (id {ids[i]}): {what}" for i, what in sorted(trained.items())]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*",
                        help="notebooks to audit (default: notebooks/*.ipynb, notebooks/zh/*.ipynb)")
    parser.add_argument("--variants", nargs="+", default=list(DEFAULT_VARIANTS), metavar="NAME",
                        help=f"variants of scripts/cpu_variants.py (default: {' '.join(DEFAULT_VARIANTS)})")
    parser.add_argument("--out", help="keep the executed copies and audit records here (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true", help="re-read the runs an earlier call left in --out")
    args = parser.parse_args()
    unknown = [n for n in args.variants if n not in VARIANTS]
    if unknown:
        sys.exit(f"--variants takes names from {sorted(VARIANTS)}, got {unknown}")
    paths = [Path(p).resolve() for p in args.notebooks] or every_notebook()
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"no such notebook: {', '.join(missing)}")
    variants = [VARIANTS[n] for n in args.variants]
    print(f"# CPU audit: {len(paths)} notebook(s), this machine and {', '.join(v.name for v in variants)}")
    for v in variants:
        print(f"- {v.name}: {v.describe()}")
    print(f"fragile: distance to a rounding boundary < max({SPREAD_FACTOR} × spread across the variants, "
          f"{ULPS} ulps of the value)\n", flush=True)
    with tempfile.TemporaryDirectory(prefix="cpu-audit-") as tmp:
        out = Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        for path in paths:
            print(audit_notebook(path, variants, out, args.reuse) + "\n", flush=True)


if __name__ == "__main__":
    main()
