"""The notebooks whose inputs changed against a base commit, for `make check` (one path a line, English first).

Usage: python scripts/changed_notebooks.py [--base REV]   (default: the merge-base of HEAD and main)

Changed means: committed since the base, or changed in the working tree, or untracked (not ignored). What a
changed file means for the notebooks:
- notebooks/NN_*.ipynb: that notebook and its Chinese twin; notebooks/zh/NN_*.ipynb and i18n/zh/NN.md: the twin;
- attnlib/checks/nbNN.py: notebook NN in both editions; attnlib/locale/zh/: every Chinese notebook;
- anything else in attnlib/ (but bench/, which no notebook imports), pyproject.toml (the pins) or
  tests/nbval_sanitize.cfg: every notebook.
Other files (docs, scripts, tests) change no notebook's outputs.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ("pyproject.toml", "tests/nbval_sanitize.cfg")


def git(*args: str) -> list[str]:
    """The lines git prints for `args`, run in the repository."""
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def default_base() -> str:
    """The merge-base of HEAD and main (or origin/main); HEAD when neither exists."""
    for ref in ("main", "origin/main"):
        try:
            return git("merge-base", "HEAD", ref)[0]
        except (subprocess.CalledProcessError, IndexError):
            continue
    return "HEAD"


def changed_files(base: str) -> list[str]:
    """Paths changed since `base` (committed or in the working tree) and untracked paths, relative to the repo."""
    return sorted(set(git("diff", "--name-only", base, "--")) | set(git("ls-files", "--others", "--exclude-standard")))


def notebooks_for(files: list[str]) -> list[Path]:
    """The notebooks (both editions) whose outputs the changed `files` may change; English first, then Chinese."""
    english = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    chinese = [ROOT / "notebooks" / "zh" / p.name for p in english]
    en: set[str] = set()
    zh: set[str] = set()
    for f in files:
        if f in EVERYTHING or (f.startswith("attnlib/") and not f.startswith(("attnlib/bench/", "attnlib/checks/",
                                                                               "attnlib/locale/"))):
            en.add("*")
            zh.add("*")
        elif f.startswith("attnlib/locale/zh/"):
            zh.add("*")
        elif m := re.fullmatch(r"notebooks/(\d\d)_[^/]*\.ipynb|attnlib/checks/nb(\d\d)\.py", f):
            en.add(m.group(1) or m.group(2))
            zh.add(m.group(1) or m.group(2))
        elif m := re.fullmatch(r"notebooks/zh/(\d\d)_[^/]*\.ipynb|i18n/zh/(\d\d)\.md", f):
            zh.add(m.group(1) or m.group(2))
    pick = [p for p in english if "*" in en or p.name[:2] in en]
    return pick + [p for p in chinese if p.exists() and ("*" in zh or p.name[:2] in zh)]


def main(argv: list[str] | None = None) -> int:
    """Print the notebooks to check, one relative path a line (nothing when none changed)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="compare with this commit (default: merge-base of HEAD and main)")
    args = parser.parse_args(argv)
    base = args.base or default_base()
    files = changed_files(base)
    notebooks = notebooks_for(files)
    print(f"changed against {base[:12]}: {len(files)} files -> {len(notebooks)} notebooks to check",
          file=sys.stderr)
    for path in notebooks:
        print(path.relative_to(ROOT).as_posix())
    return 0


if __name__ == "__main__":
    sys.exit(main())
