"""pytest plugin (`-p nbcache`, scripts/ on sys.path): nbval's executions kept, so an unchanged notebook runs once.

When every cell of a notebook passed strict nbval, the outputs its kernel produced are saved in
build/nbcache/<edition>-<notebook>-<setting>.json with a key: the hash of everything that decides them (the
notebook file, every file of attnlib and the pins (nbrun.hash_course_inputs), every installed distribution,
Python, the CPU's model and flags, the environment that reaches the kernel: ATEN_CPU_CAPABILITY, OMP_*, MKL_*, ...,
and nbval's kernel options). A later run whose key matches starts no kernel for that notebook: each cell is
still a test, and nbval's own comparison (IPyNbCell.compare_outputs, the same sanitizing and skips) checks the
kept outputs against the committed ones. Anything else runs nbval as usual. A notebook with a failing cell, or
run in part (-k, one cell), is not kept; a kept one that fails the comparison is dropped. `make test` loads it for
every nbval run (docs/how_it_is_tested.md); NBCACHE=0 turns it off, NBCACHE_DIR moves it.

One execution per notebook: with --nbcache-site (make test's first pass) the kernel runs as the site builder's
does (ATTNLIB_STATIC=1: a live panel displays its static bundle, whose text/plain is the live panel's), nbval compares
every output but the bundle's site-only parts, and the site builder (scripts/sitebuild/execute.py) reads that
execution instead of running the notebook again, or runs it itself and keeps it for nbval: `shared_execution`, under
a lock per notebook, so that the one who comes first executes and the other reads.
"""
from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path

import nbformat
import pytest
from nbstore import (
    cache_dir,
    enabled,
    entry_path,
    environment_identity,
    locked,
    notebook_key,
    read_entry,
    site_options,
    write_entry,
)
from nbval.plugin import IPyNbCell, IPyNbFile, coalesce_streams

from attnlib.widgets.static import SNAPSHOT_MIME, STATIC_ENV


def live_text(outs: list) -> list:
    """`outs` as nbval compares them from a site execution: a panel's static bundle reduced to its text/plain."""
    return [nbformat.from_dict(dict(o, data={"text/plain": o["data"].get("text/plain", "")}))
            if SNAPSHOT_MIME in o.get("data", {}) else o for o in outs]


def replay(item: IPyNbCell, outs: list | None) -> None:
    """nbval's IPyNbCell.runtest from the point where the kernel's outputs are in, with the kept outputs."""
    if item.options["skip"]:
        pytest.skip()
    outs = coalesce_streams(outs)  # as nbval's runtest does: a site execution's stdout may come in several pieces
    item.test_outputs = outs
    unrun = item.cell.execution_count is None
    if unrun and item.cell.outputs:
        item.raise_cell_error("Unrun reference cell has outputs")
    if item.options["check"] and not unrun:
        if not item.compare_outputs(outs, coalesce_streams(item.cell.outputs)):
            item.raise_cell_error("Cell outputs differ", "\n".join(item.comparison_traceback))


class NbCache:
    """The plugin: replays kept executions, keeps new ones as each notebook finishes (see the module docstring)."""

    def __init__(self, config: pytest.Config):
        self.environment = environment_identity()
        opt = config.option
        self.site = bool(getattr(opt, "nbcache_site", False))
        self.options = site_options() if self.site else repr((getattr(opt, "nbval_current_env", None),
                                                               getattr(opt, "nbval_kernel_name", None)))
        self.files: dict[IPyNbFile, dict] = {}  # notebook collector -> {"key", "entry", "outs", "ok", "kept", ...}
        self.replayed: set[str] = set()  # notebooks compared from kept outputs (reports, so xdist's too)

    def pytest_report_header(self, config: pytest.Config) -> str:
        site = "; the kernels run as the site builder's, which reads their executions" if self.site else ""
        return f"nbcache: executions kept in {cache_dir()} (NBCACHE=0 turns it off){site}"

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            if not isinstance(item, IPyNbCell):
                continue
            nb = item.parent
            if nb not in self.files:
                path = Path(str(nb.fspath))
                self.files[nb] = {"key": notebook_key(path, self.environment, self.options), "ok": True,
                                  "entry": entry_path(path, self.environment), "outs": {}, "kept": None, "lock": None}
                nb.setup = (lambda n: lambda: self.setup(n))(nb)
            item.runtest = (lambda it, run: lambda: self.runtest(it, run))(item, item.runtest)
            if self.site:
                item.compare_outputs = (lambda it: lambda test, ref, skip_compare=None: IPyNbCell.compare_outputs(
                    it, live_text(test), ref, skip_compare))(item)

    def setup(self, nb: IPyNbFile) -> None:
        """Take the notebook's lock; with a kept execution, no kernel (and the lock back); else a kernel, the lock
        held until its last cell (the site builder waits for it)."""
        state = self.files[nb]
        lock = ExitStack()  # held from this setup to the last cell's teardown (release)
        lock.enter_context(locked(state["entry"]))
        state["kept"] = read_entry(state["entry"], state["key"], sum(1 for c in nb.nb.cells if c.cell_type == "code"))
        if state["kept"] is not None:
            lock.close()
            nb.setup_sanitize_files()  # no kernel: the sanitizing rules only
            return
        state["lock"] = lock
        if self.site:  # the kernel inherits this process's environment as it starts
            os.environ[STATIC_ENV] = "1"
        try:
            IPyNbFile.setup(nb)
        finally:
            if self.site:
                os.environ.pop(STATIC_ENV, None)

    def runtest(self, item: IPyNbCell, run) -> None:
        """nbval's own test of the cell, or its comparison with the kept outputs."""
        kept = self.files[item.parent]["kept"]
        if kept is None:
            return run()
        item.user_properties.append(("nbcache", "replayed"))
        replay(item, self.node_outputs(kept[str(item.cell_num)]))

    @staticmethod
    def node_outputs(outs: list | None) -> list | None:
        """Kept outputs as nbval's own (NotebookNode), or None for a skipped cell."""
        return None if outs is None else [nbformat.from_dict(o) for o in outs]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        state = self.files.get(item.parent) if isinstance(item, IPyNbCell) else None
        if state is None:
            return
        report = outcome.get_result()
        if report.failed or item.parent.timed_out:
            state["ok"] = False
        if state["kept"] is not None:
            return
        if report.when == "call" and report.passed:
            state["outs"][str(item.cell_num)] = item.test_outputs
        elif report.when == "setup" and report.skipped or report.when == "call" and report.skipped:
            state["outs"][str(item.cell_num)] = None

    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        state = self.files.get(item.parent) if isinstance(item, IPyNbCell) else None
        if state is None or (nextitem is not None and nextitem.parent is item.parent):
            return
        cells = sum(1 for c in item.parent.nb.cells if c.cell_type == "code")
        if state["kept"] is not None and not state["ok"]:  # a kept execution that fails is not kept
            state["entry"].unlink(missing_ok=True)
        elif state["kept"] is None and state["ok"] and len(state["outs"]) == cells:  # every cell ran and passed
            write_entry(state["entry"], state["key"], Path(str(item.parent.fspath)), state["outs"])
        self.release(state)

    @staticmethod
    def release(state: dict) -> None:
        """Give the notebook's lock back (the site builder may read or execute it now)."""
        if state.get("lock") is not None:
            state["lock"].close()
            state["lock"] = None

    def pytest_sessionfinish(self) -> None:
        for state in self.files.values():
            self.release(state)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and ("nbcache", "replayed") in report.user_properties:
            self.replayed.add(report.nodeid.split("::")[0])

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.replayed:
            terminalreporter.write_line(
                f"nbcache: {len(self.replayed)} notebook(s) compared from executions kept with the same inputs "
                f"(no kernel): {' '.join(sorted(self.replayed))}")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--nbcache-site", action="store_true",
                     help="run nbval's kernels as the site builder does and share their executions with it")


def pytest_configure(config: pytest.Config) -> None:
    if enabled() and config.getoption("nbval", False) and not config.pluginmanager.has_plugin("nbcache-plugin"):
        config.pluginmanager.register(NbCache(config), "nbcache-plugin")
