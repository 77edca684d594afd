"""pytest plugin (`-p nbcache`, scripts/ on sys.path): nbval's executions kept, so an unchanged notebook runs once.

When every cell of a notebook passed strict nbval, the outputs its kernel produced are saved in
build/nbcache/<edition>-<notebook>-<setting>.json with a key: the hash of everything that decides them (the
notebook file, every file of attnlib and the pins (nbrun.hash_course_inputs), every installed distribution,
Python, the CPU's model and flags, the environment that reaches the kernel: ATEN_CPU_CAPABILITY, OMP_*, MKL_*, ...,
and nbval's kernel options). A later run whose key matches starts no kernel for that notebook: each cell is
still a test, and nbval's own comparison (IPyNbCell.compare_outputs, the same sanitizing and skips) checks the
kept outputs against the committed ones. Anything else runs nbval as usual. A notebook with a failing cell, or
run in part (-k, one cell), is not kept. `make test` loads it for every nbval run (docs/how_it_is_tested.md);
NBCACHE=0 turns it off, NBCACHE_DIR moves it.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path

import nbformat
import pytest
from nbrun import ROOT, hash_course_inputs
from nbval.plugin import IPyNbCell, IPyNbFile, coalesce_streams

KEY_VERSION = "1"  # bump to forget every kept execution
# Environment variables that reach the kernel and may change what it computes or prints (CPU kernels, threads,
# BLAS, hash seed, the course's own switches, locale). Their names and values are part of the key.
ENV_PREFIXES = ("ATEN_", "OMP_", "MKL_", "DNNL_", "ONEDNN_", "OPENBLAS_", "GOTO", "KMP_", "GOMP_", "TORCH",
                "PYTORCH_", "CUDA", "ATTNLIB_", "AL_", "PYTHON", "IPYTHON", "JUPYTER", "LANG", "LC_", "TZ")


def enabled() -> bool:
    """False when NBCACHE=0 (or false/no) is set."""
    return os.environ.get("NBCACHE", "1").strip().lower() not in ("0", "false", "no")


def cache_dir() -> Path:
    """build/nbcache/ of this checkout, or NBCACHE_DIR."""
    return Path(os.environ.get("NBCACHE_DIR") or ROOT / "build" / "nbcache")


def cpu_identity() -> str:
    """The CPU's model name and flags (the first processor of /proc/cpuinfo), and the machine type."""
    lines = []
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.split(":")[0].strip() in ("model name", "flags", "Features", "CPU part"):
                lines.append(line.strip())
            if not line.strip() and lines:
                break
    except OSError:
        pass
    return "\n".join([platform.machine(), platform.processor(), *lines])


def environment_identity() -> str:
    """Python, every installed distribution with its version, the CPU, and the kernel's environment variables."""
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    env = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(ENV_PREFIXES))
    return "\n".join([sys.version, sys.prefix, *dists, cpu_identity(), *env])


def notebook_key(path: Path, environment: str, options: str) -> str:
    """The key of one notebook's execution: everything that decides its outputs (see the module docstring)."""
    path = Path(path).resolve()
    h = hashlib.sha256(KEY_VERSION.encode())
    h.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).encode())
    h.update(path.read_bytes())
    hash_course_inputs(h, ROOT)
    h.update(environment.encode())
    h.update(options.encode())
    return h.hexdigest()


def entry_path(path: Path, environment: str) -> Path:
    """The file that keeps `path`'s execution under this environment (one per notebook, edition and setting)."""
    path = Path(path).resolve()
    edition = path.parent.name if path.parent != ROOT / "notebooks" else "en"
    setting = hashlib.sha256(environment.encode()).hexdigest()[:12]
    return cache_dir() / f"{edition}-{path.stem}-{setting}.json"


def replay(item: IPyNbCell, outs: list | None) -> None:
    """nbval's IPyNbCell.runtest from the point where the kernel's outputs are in, with the kept outputs."""
    if item.options["skip"]:
        pytest.skip()
    item.test_outputs = outs
    unrun = item.cell.execution_count is None
    if unrun and item.cell.outputs:
        item.raise_cell_error("Unrun reference cell has outputs")
    if item.options["check"] and not unrun:
        if not item.compare_outputs(outs, coalesce_streams(item.cell.outputs)):
            item.raise_cell_error("Cell outputs differ", "\n".join(item.comparison_traceback))


class NbCache:
    """The plugin: replays kept executions at collection time, keeps new ones as each notebook finishes."""

    def __init__(self, config: pytest.Config):
        self.environment = environment_identity()
        opt = config.option
        self.options = repr((getattr(opt, "nbval_current_env", None), getattr(opt, "nbval_kernel_name", None)))
        self.files: dict[IPyNbFile, dict] = {}  # notebook collector -> {"key", "entry", "outs", "ok", "kept"}
        self.replayed: set[str] = set()  # notebooks compared from kept outputs (reports, so xdist's too)

    def pytest_report_header(self, config: pytest.Config) -> str:
        return f"nbcache: executions kept in {cache_dir()} (NBCACHE=0 turns it off)"

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            if not isinstance(item, IPyNbCell):
                continue
            nb = item.parent
            if nb not in self.files:
                path = Path(str(nb.fspath))
                state = {"key": notebook_key(path, self.environment, self.options),
                         "entry": entry_path(path, self.environment), "outs": {}, "ok": True, "kept": None}
                self.files[nb] = state
                state["kept"] = self.load(state, sum(1 for c in nb.nb.cells if c.cell_type == "code"))
                if state["kept"] is not None:
                    nb.setup = nb.setup_sanitize_files  # no kernel: the sanitizing rules only
            kept = self.files[nb]["kept"]
            if kept is not None:
                item.runtest = (lambda it, o: lambda: replay(it, o))(item, self.node_outputs(kept[str(item.cell_num)]))
                item.user_properties.append(("nbcache", "replayed"))

    @staticmethod
    def node_outputs(outs: list | None) -> list | None:
        """Kept outputs as nbval's own (NotebookNode), or None for a skipped cell."""
        return None if outs is None else [nbformat.from_dict(o) for o in outs]

    @staticmethod
    def load(state: dict, cells: int) -> dict | None:
        """The kept {cell number: outputs} if its key matches and it has every one of the `cells` code cells."""
        try:
            kept = json.loads(state["entry"].read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if kept.get("key") != state["key"] or sorted(kept["cells"], key=int) != [str(i) for i in range(cells)]:
            return None
        return kept["cells"]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        state = self.files.get(item.parent) if isinstance(item, IPyNbCell) else None
        if state is None or state["kept"] is not None:
            return
        report = outcome.get_result()
        if report.failed or item.parent.timed_out:
            state["ok"] = False
        if report.when == "call" and report.passed:
            state["outs"][str(item.cell_num)] = item.test_outputs
        elif report.when == "setup" and report.skipped or report.when == "call" and report.skipped:
            state["outs"][str(item.cell_num)] = None

    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        state = self.files.get(item.parent) if isinstance(item, IPyNbCell) else None
        if state is None or state["kept"] is not None or (nextitem is not None and nextitem.parent is item.parent):
            return
        cells = sum(1 for c in item.parent.nb.cells if c.cell_type == "code")
        path = Path(str(item.parent.fspath))
        if state["ok"] and len(state["outs"]) == cells:  # every cell ran, in this run, and passed
            state["entry"].parent.mkdir(parents=True, exist_ok=True)
            tmp = state["entry"].with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"key": state["key"], "notebook": str(path), "cells": state["outs"]}),
                           encoding="utf-8")
            tmp.replace(state["entry"])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and ("nbcache", "replayed") in report.user_properties:
            self.replayed.add(report.nodeid.split("::")[0])

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.replayed:
            terminalreporter.write_line(
                f"nbcache: {len(self.replayed)} notebook(s) compared from executions kept with the same inputs "
                f"(no kernel): {' '.join(sorted(self.replayed))}")


def pytest_configure(config: pytest.Config) -> None:
    if enabled() and config.getoption("nbval", False) and not config.pluginmanager.has_plugin("nbcache-plugin"):
        config.pluginmanager.register(NbCache(config), "nbcache-plugin")
