"""pytest plugin (`-p testcache`, scripts/ on sys.path): a test file that passed with the very same checkout is not
run again.

After a test file under tests/ ran in full and every test of it passed (or skipped), its outcomes are kept in
build/testcache/ (TESTCACHE_DIR moves it) under a key: the hash of every file of the checkout (tracked, and
untracked but not ignored: `git ls-files -co --exclude-standard`), every installed distribution, Python, the CPU
(nbcache.py's identity), the system's packages (/var/lib/dpkg/status: Chromium, fonts, Node.js), the whole
environment but a few per-shell variables, and the file's name. A later run whose key matches reports each of the
file's tests with its kept outcome, without running it (the summary says how many); any change anywhere in the
checkout runs them all. Under xdist the controller keeps, from every worker's reports, so a file whose tests were
spread over both workers is kept too; the workers replay. The notebooks are nbcache.py's (a key per notebook). CI
starts from a clean clone: nothing is kept there.
`make test` loads it; TESTCACHE=0 turns it off.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from nbcache import environment_identity
from nbrun import ROOT

KEY_VERSION = "1"
VOLATILE = ("PWD", "OLDPWD", "SHLVL", "_", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKE_TERMOUT", "MAKE_TERMERR",
            "TERM", "COLUMNS", "LINES")  # per-shell variables, left out of the key


def checkout_digest(root: Path = ROOT) -> str | None:
    """Hash of every file git sees in `root` (tracked or untracked, not ignored), or None outside a git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, check=True,
                                capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    h = hashlib.sha256()
    for name in sorted(set(listed.decode("utf-8", "surrogateescape").split("\0")) - {""}):
        path = root / name
        h.update(name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"<missing>")
        h.update(b"x" if os.access(path, os.X_OK) else b"-")
    return h.hexdigest()


def session_key(root: Path = ROOT) -> str | None:
    """The checkout, the packages (Python's and the system's), the CPU and the environment, hashed; None if no git."""
    checkout = checkout_digest(root)
    if checkout is None:
        return None
    h = hashlib.sha256(KEY_VERSION.encode())
    h.update(checkout.encode())
    h.update(environment_identity().encode())
    env = sorted(f"{k}={v}" for k, v in os.environ.items()
                 if k not in VOLATILE and not k.startswith(("PYTEST_", "XDIST_")))
    h.update("\n".join(env).encode())
    dpkg = Path("/var/lib/dpkg/status")
    h.update(dpkg.read_bytes() if dpkg.is_file() else b"")
    return h.hexdigest()


class TestCache:
    """The plugin: replays a file's kept outcomes at collection time; keeps a file's outcomes when the run ends."""

    __test__ = False  # not a test class

    def __init__(self, key: str, partial: bool, keeper: bool):
        self.key = key
        self.partial = partial  # tests named or selected on the command line (file::test, -k, -m): keep nothing
        self.keeper = keeper  # sees every test's report: the one process, or xdist's controller (not its workers)
        self.dir = Path(os.environ.get("TESTCACHE_DIR") or ROOT / "build" / "testcache")
        self.collected: dict[str, set[str]] = {}  # test file -> its tests' ids
        self.outcomes: dict[str, dict[str, list]] = {}  # test file -> {test id: ["passed"] or ["skipped", reason]}
        self.failed: set[str] = set()  # test files with a failure, an error or an xfail
        self.replayed = 0

    def entry(self, file: str) -> Path:
        return self.dir / (file.replace("/", "__") + ".json")

    @staticmethod
    def file_of(nodeid: str) -> str:
        return nodeid.split("::")[0]

    @staticmethod
    def mine(nodeid: str) -> bool:
        """Tests under tests/ (the notebooks' cells are nbcache.py's)."""
        return nodeid.startswith("tests/")

    def collect(self, nodeid: str) -> None:
        if self.mine(nodeid):
            self.collected.setdefault(self.file_of(nodeid), set()).add(nodeid)

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        if self.keeper:  # without xdist: every test, before -k/-m deselection
            self.collect(item.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        for nodeid in ids:  # xdist's controller: what each worker collected (the same list from each)
            self.collect(nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        kept_by_file: dict[str, dict | None] = {}
        for item in items:
            if not self.mine(item.nodeid):
                continue
            file = self.file_of(item.nodeid)
            if file not in kept_by_file:
                kept_by_file[file] = self.load(file)
            kept = kept_by_file[file]
            if kept is not None and item.nodeid in kept:
                outcome = kept[item.nodeid]
                item.setup = lambda: None  # no fixtures: nothing is started for a test that does not run
                item.runtest = (lambda o: lambda: pytest.skip(o[1]) if o[0] == "skipped" else None)(outcome)
                item.user_properties.append(("testcache", "kept"))

    def load(self, file: str) -> dict | None:
        try:
            kept = json.loads(self.entry(file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return kept["tests"] if kept.get("key") == self.key else None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and ("testcache", "kept") in report.user_properties:
            self.replayed += 1
        if not self.keeper or not self.mine(report.nodeid):
            return
        file, outcomes = self.file_of(report.nodeid), self.outcomes.setdefault(self.file_of(report.nodeid), {})
        if report.failed or hasattr(report, "wasxfail"):
            self.failed.add(file)
        elif report.skipped and report.nodeid not in outcomes:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            outcomes[report.nodeid] = ["skipped", reason.removeprefix("Skipped: ")]
        elif report.when == "call" and report.passed:
            outcomes[report.nodeid] = ["passed"]

    def pytest_sessionfinish(self) -> None:
        """Keep each file whose every test passed or skipped in this run, on whichever worker it ran."""
        if not self.keeper or self.partial:
            return
        for file, tests in self.collected.items():
            outcomes = self.outcomes.get(file, {})
            if file in self.failed or set(outcomes) != tests:
                continue
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.entry(file).with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"key": self.key, "tests": outcomes}), encoding="utf-8")
            tmp.replace(self.entry(file))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.replayed:
            terminalreporter.write_line(
                f"testcache: {self.replayed} test(s) under tests/ not run again: they passed (or skipped) with this "
                "same checkout, packages and environment (build/testcache/; TESTCACHE=0 runs them)")


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("TESTCACHE", "1").strip().lower() in ("0", "false", "no"):
        return
    key = session_key()
    if key is not None:
        opt = config.option
        partial = (any("::" in str(arg) for arg in config.args) or bool(getattr(opt, "keyword", ""))
                   or bool(getattr(opt, "markexpr", "")) or bool(getattr(opt, "deselect", None)))
        keeper = not hasattr(config, "workerinput")  # xdist's workers have it; they replay, the controller keeps
        config.pluginmanager.register(TestCache(key, partial, keeper), "testcache-plugin")
