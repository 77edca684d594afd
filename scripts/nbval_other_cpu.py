"""Check every notebook with nbval as if on another CPU, so that an output that depends on the CPU fails.

Usage:
    python scripts/nbval_other_cpu.py [--variant NAME] [pytest options] [notebook paths]

`make test` runs this after the normal run. Without notebook paths it checks notebooks/*.ipynb and
notebooks/zh/*.ipynb; paths that are not notebooks (tests/…) are left to the normal run. The kernels
get the variant's settings (scripts/cpu_variants.py), and every failure says so. Without --variant it runs
`other-cpu`, then, where the CPU has AVX-512 (and ATEN_CPU_CAPABILITY is not avx2 already), `aten-avx2`:
the kernels of the many CPUs without AVX-512; without notebook paths that pass checks the English edition
only, as the Chinese one runs the same code. With --variant NAME it runs that variant alone.
Cells tagged nbval-ignore-output or nbval-skip are not compared (docs/how_it_is_tested.md).
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path
from unittest import mock

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_variants import AVX2, OTHER_CPU, VARIANTS, Variant, has_avx512, kernel_env  # noqa: E402
from nbrun import ROOT, every_notebook  # noqa: E402

NBVAL = ["--nbval", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "-p", "nbcache"]  # nbcache.py: kept runs


def explanation(variant: Variant) -> str:
    """What a failure under the variant that passes on this machine means, and what to do about it."""
    return (
        f"These outputs change when the notebook runs as on another CPU ({variant.name}: {variant.describe()})\n"
        "and pass on this machine as it is: they depend on the CPU (vector extensions, thread count or BLAS\n"
        "kernels), so learners on other machines would see them fail. Pass the number through al.rounded (fewer\n"
        "decimals if it still flips), compute it in float64, or print a bound that an assert checks; a\n"
        "CPU-dependent output (anything a training run computes) gets the cell tag nbval-ignore-output and its\n"
        "reason in the cell metadata nbval_reason, and its claim an assert with a tolerance measured across\n"
        "the variants (docs/how_it_is_tested.md).\n"
        "Numbers near a rounding boundary, and numbers computed after an optimiser step:\n"
        "python scripts/cpu_audit.py NOTEBOOK"
    )


class Outcomes:
    """pytest plugin: records the failed test ids; `variant` also names itself in the header and failures."""

    def __init__(self, variant: Variant | None = None):
        self.variant = variant
        self.failed: list[str] = []  # "<notebook path>::Cell N", the path as given or relative to the repository

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        if self.variant is None:
            return None
        return f"notebooks as on another CPU: {self.variant.name} ({self.variant.describe()})"

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Every report, this process's or a pytest-xdist worker's (this plugin lives in the controller only)."""
        if report.failed and report.when == "call":
            path, _, cell = report.nodeid.partition("::")
            self.failed.append(f"{shown_path(ROOT / path)}::{cell}")
            if self.variant is not None:
                report.sections.append((
                    f"on another CPU ({self.variant.name})",
                    f"This cell failed as on another CPU ({self.variant.describe()}).\n"
                    "The summary at the end says whether it fails on this machine as it is, too.",
                ))


def shown_path(path: Path) -> str:
    """`path` relative to the repository when it lies inside, else absolute."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def recheck(nodeids: list[str], seen: dict[str, set[str]]) -> set[str] | None:
    """Run the notebooks of `nodeids` again with this machine's own settings (those not in `seen` yet).

    Args:
        nodeids: failed ids. seen: {notebook: its failing ids on this machine}, filled in by earlier calls.

    Returns:
        the ids that fail there too, or None if that run could not complete.
    """
    notebooks = sorted({n.rsplit("::", 1)[0] for n in nodeids} - set(seen))
    if notebooks:
        print(f"\nnbval_other_cpu: checking {len(notebooks)} notebook(s) again on this machine as it is ...",
              flush=True)
        outcomes = Outcomes()
        with contextlib.redirect_stdout(io.StringIO()):  # the first run already showed the diffs
            status = pytest.main([*NBVAL, "-p", "no:cacheprovider", *notebooks], plugins=[outcomes])
        if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return None
        for notebook in notebooks:
            seen[notebook] = {n for n in outcomes.failed if n.rsplit("::", 1)[0] == notebook}
    return {n for n in nodeids if n in seen[n.rsplit("::", 1)[0]]}


def default_variants() -> list[Variant]:
    """other-cpu; then aten-avx2 where the CPU has AVX-512 and the normal run did not use AVX2 kernels already."""
    if has_avx512() and os.environ.get("ATEN_CPU_CAPABILITY", "").lower() != "avx2":
        return [OTHER_CPU, AVX2]
    return [OTHER_CPU]


def summary(variant: Variant, failed: list[str], also_here: set[str] | None) -> str:
    """The closing report: which failures depend on the CPU, which fail on this machine too."""
    if also_here is None:
        return (f"=== {len(failed)} output(s) failed as on another CPU ({variant.name}); checking them again on "
                "this machine as it is did not complete, so whether they depend on the CPU is unknown ===\n"
                + "\n".join(failed))
    cpu = [n for n in failed if n not in also_here]
    here = [n for n in failed if n in also_here]
    lines = []
    if cpu:
        lines += [f"=== {len(cpu)} output(s) that depend on the CPU ({variant.name}) ===", *cpu, explanation(variant)]
    if here:
        lines += [f"=== {len(here)} output(s) that fail on this machine as it is too: not a CPU question "
                  "(stale outputs or a failing cell; see the normal nbval run) ===", *here]
    return "\n".join(lines)


def split_args(args: list[str]) -> tuple[str | None, list[str], list[str] | None]:
    """(variant name or None, pytest options, notebook paths or None if none were given) from the command line;
    paths that are not notebooks are dropped."""
    name, options, paths, rest = None, [], [], list(args)
    gave_paths = False
    while rest:
        arg = rest.pop(0)
        if arg == "--variant":
            name = rest.pop(0) if rest else ""
        elif arg.startswith("--variant="):
            name = arg.split("=", 1)[1]
        elif not arg.startswith("-") and (arg.endswith(".ipynb") or Path(arg).exists()):
            gave_paths = True
            paths += [arg] if arg.endswith(".ipynb") else [str(p) for p in sorted(Path(arg).glob("*.ipynb"))]
        else:
            options.append(arg)
    if name is not None and name not in VARIANTS:
        sys.exit(f"--variant must be one of {sorted(VARIANTS)}, got {name!r}")
    return name, options, paths if gave_paths else None


def main(argv: list[str]) -> int:
    name, options, given = split_args(argv)
    paths = given if given is not None else [str(p.relative_to(ROOT)) for p in every_notebook()]
    if not paths:
        print("nbval_other_cpu: no notebook among the given paths; nothing to check on another CPU")
        return 0
    variants = [VARIANTS[name]] if name else default_variants()
    os.chdir(ROOT)
    statuses, seen = [], {}
    for variant in variants:
        run = paths
        if variant is AVX2 and not name:
            # by default the English edition only: the Chinese one runs the same code (zh_edition.py check code)
            run = paths if given is not None else [p for p in paths if Path(p).parent.name != "zh"]
            print(f"\n== {len(run)} notebook(s) again with {variant.describe()}: this CPU has AVX-512, and most "
                  "CPUs without it run these AVX2 kernels ==", flush=True)
        outcomes = Outcomes(variant)
        # nbval starts its kernels with no environment of their own: they inherit this process's, set for the run
        with tempfile.TemporaryDirectory(prefix="nbval-other-cpu-") as tmp, \
                mock.patch.dict(os.environ, kernel_env(variant, tmp)):
            status = int(pytest.main([*NBVAL, *options, *run], plugins=[outcomes]))
        if outcomes.failed:
            print(summary(variant, outcomes.failed, recheck(outcomes.failed, seen)))
        statuses.append(0 if status == pytest.ExitCode.NO_TESTS_COLLECTED else status)  # -k chose only unit tests
    return next((s for s in statuses if s), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
