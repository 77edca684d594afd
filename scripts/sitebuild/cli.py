"""The command line of the site and slides build (scripts/build_site.py runs it).

Usage:
    python scripts/build_site.py --site build/site            # `make site`
    python scripts/build_site.py --slides build/slides        # `make slides`
    python scripts/build_site.py --site S --slides D [--no-execute] [--no-fit] [--no-zh] [--cache DIR]
                                 [--shots DIR] [notebooks ...]

When notebooks/zh/ holds the Chinese edition (same file names), it is built too, into S/zh/ and D/zh/.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Optional

from nbrun import ROOT, course_notebooks

from .build import build
from .decks import check_decks, print_deck_check
from .offline import check_offline


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    """The options (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Build the course as an offline website and reveal.js decks.")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/[0-9][0-9]_*.ipynb")
    parser.add_argument("--site", type=Path, help="output folder of the website")
    parser.add_argument("--slides", type=Path, help="output folder of the slide decks")
    parser.add_argument("--no-execute", action="store_true", help="use the committed outputs (no static panels)")
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "executed",
                        help="folder for executed copies (default build/executed)")
    parser.add_argument("--no-fit", action="store_true",
                        help="do not measure the decks in Chromium at 1280x720 (by default they are, when "
                             "/usr/bin/chromium is there, and slides that run over get continuation slides)")
    parser.add_argument("--no-zh", action="store_true",
                        help="build the English edition only (by default the Chinese one in notebooks/zh/ too)")
    parser.add_argument("--shots", type=Path,
                        help="after building, open every deck in Chromium and write a PNG of each slide here")
    return parser.parse_args(argv)


def chinese_twins(notebooks: list[Path]) -> list[Path]:
    """The Chinese edition of `notebooks` (notebooks/zh/, same file names) that exists, in the same order."""
    return [p for p in (ROOT / "notebooks" / "zh" / Path(nb).name for nb in notebooks) if p.exists()]


def sub(folder: Optional[Path], name: str) -> Optional[Path]:
    """folder/name, or None."""
    return None if folder is None else Path(folder) / name


def main(argv: Optional[list[str]] = None) -> int:
    """Build both editions, check that every page works offline, optionally screenshot every slide; 0 when well."""
    args = parse_args(argv)
    notebooks = args.notebooks or course_notebooks()
    zh = chinese_twins(notebooks) if not args.no_zh else []
    start = time.perf_counter()
    fit = False if args.no_fit else None
    build(notebooks, site=args.site, slides=args.slides, execute=not args.no_execute, cache_dir=args.cache,
          fit=fit, twin="zh" if zh else None, twin_pages=[f"{p.stem}.html" for p in zh])
    if zh:  # the Chinese edition: pages in <site>/zh/, decks in <slides>/zh/, each page linked to its twin
        print(f"Chinese edition: {len(zh)} notebooks from notebooks/zh/")
        build(zh, site=sub(args.site, "zh"), slides=sub(args.slides, "zh"), execute=not args.no_execute,
              cache_dir=sub(args.cache, "zh"), fit=fit, language="zh", twin="..")
    outs = [out for out in (args.site, args.slides) if out is not None]
    status = check_offline(outs + [Path(out) / "zh" for out in outs if zh])
    if args.shots is not None and args.slides is not None:
        decks = [Path(args.slides) / f"{Path(nb).stem}.html" for nb in notebooks]
        print(f"screenshots of every slide in {args.shots}")
        print_deck_check(check_decks(decks, shots=args.shots))
    print(f"done in {time.perf_counter() - start:.1f} s")
    return status
