"""The Chinese edition: notebooks/zh/NN_*.ipynb generated from the English notebooks and i18n/zh/NN.md.

    python scripts/zh_edition.py todo [NN ...]     add new or changed English cells to the catalogs, as to-dos
    python scripts/zh_edition.py build [NN ...]    write notebooks/zh/ from the English notebooks and catalogs
    python scripts/zh_edition.py build --execute   ... and execute them (scripts/nbrun.py), outputs included
    python scripts/zh_edition.py edit NN           one file per cell's Chinese in build/zh-work/NN/, to edit
    python scripts/zh_edition.py apply NN [--done] put those files back into the catalog (--done: no to-dos left)
    python scripts/zh_edition.py build --out DIR   write (and with --execute run) them in DIR instead, for trials
    python scripts/zh_edition.py check [NN ...] [--only stale,todo,regen,code,parity,bold,english]
                                                   the checks of tests/test_zh_edition.py, each failure says what to do
    python scripts/zh_edition.py english [NN ...]  list the zh markdown cells that still hold an English sentence

A catalog (i18n/zh/NN.md) has one entry per cell id of the English notebook NN, in the notebook's order:

    <!-- cell 9f240dbe code -->
    <!-- en -->
    the English source it was translated from, frozen
    <!-- zh -->            (`<!-- zh todo -->` while it still needs translating or re-checking)
    the Chinese source (for a code cell: the same program, only comments and string literals differ)
    <!-- end -->

A changed English cell gets `<!-- zh todo -->` and a `<!-- diff -->` section (old → new English) before it.

The checks (`check`; tests/test_zh_edition.py runs each per notebook; to-do entries are left to `todo`):
    stale    every entry's frozen English is the English cell now (a diff if not); no missing or orphaned
             ids; the same cell types, in the notebook's order
    todo     no entry is marked zh todo
    regen    notebooks/zh/NN_*.ipynb has exactly the cells the catalog generates (ids, types, sources)
    code     a zh code cell is the English program: the ast with every string literal blanked and each f-string
             reduced to its {values} (format specs kept, order free) is the same; # NBVAL_* and # noqa stay;
             the first code cell says al.set_language("zh")
    parity   per markdown cell: the same math spans (the words in \\text{…}/\\textrm{…}/\\mbox{…} may be
             translated), code spans (one quoting a message may be translated),
             fenced blocks, anchors, images and link targets. Link targets are written as seen from
             notebooks/zh/: URLs, #anchors and NN_*.ipynb (the Chinese twin) stay; any other relative path gets
             one more ../ and may name the file's Chinese version (../docs/teaching.md -> ../../docs/teaching.zh.md);
             a zh cell may add a link to its English twin (../NN_*.ipynb) or to docs/glossary.md
    bold     no `**` that JupyterLab's marked cannot open or close (`**注意，**这里`: punctuation inside the
             closing **, a CJK character after it); tests/test_zh_lab.py checks the rule in JupyterLab; `check`
             also runs it on the edition's Markdown files (README.zh.md, docs/glossary.md, docs/*.zh.md)
    english  no run of 6 English words in a translated markdown cell outside code, math, link texts,
             *italic* titles and lists of names
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/: the zh package and nbrun
from zh import catalog  # noqa: E402
from zh.build import SUFFIX, WORK, apply, build, edit, generate, todo  # noqa: E402
from zh.catalog import (  # noqa: E402
    CATALOGS,
    CHINESE,
    ENGLISH,
    HEADER,
    MARK,
    ROOT,
    Entry,
    catalog_path,
    english_diff,
    english_notebook,
    read_catalog,
    text_diff,
    write_catalog,
)
from zh.checks import (  # noqa: E402
    CHECK_FUNCTIONS,
    CHECKS,
    EDITION_MARKDOWN,
    TODO_HELP,
    Problem,
    check_bold,
    check_bold_markdown,
    check_code,
    check_english,
    check_parity,
    check_regen,
    check_stale,
    check_todo,
    english_report,
    run_checks,
)
from zh.markdown import (  # noqa: E402
    CJK,
    ENGLISH_WORDS,
    ITALIC,
    LINK,
    WORD_RUN,
    Markdown,
    blank_math_text,
    bold_problems,
    english_runs,
    parity_problems,
    split_markdown,
    zh_only_link,
    zh_targets,
)
from zh.program import MARKER, english_in_code, program  # noqa: E402

__all__ = ["CATALOGS", "CHECKS", "CHECK_FUNCTIONS", "CHINESE", "CJK", "EDITION_MARKDOWN", "ENGLISH", "ENGLISH_WORDS",
           "HEADER", "ITALIC", "LINK", "MARK", "MARKER", "ROOT", "SUFFIX", "TODO_HELP", "WORD_RUN", "WORK", "Entry",
           "Markdown", "Problem", "apply", "blank_math_text", "bold_problems", "build", "catalog_path", "check_bold",
           "check_bold_markdown", "check_code", "check_english", "check_parity", "check_regen", "check_stale",
           "check_todo", "edit", "english_diff", "english_in_code", "english_notebook", "english_report",
           "english_runs", "generate", "main", "parity_problems", "program", "read_catalog", "run_checks",
           "split_markdown", "text_diff", "todo", "write_catalog", "zh_only_link", "zh_targets"]


def main(argv: list[str]) -> int:
    """The command line (see the module docstring); returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["todo", "build", "edit", "apply", "check", "english"])
    parser.add_argument("notebooks", nargs="*", help="two-digit numbers (default: all seven)")
    parser.add_argument("--execute", action="store_true", help="build: also execute the generated notebooks")
    parser.add_argument("--out", type=Path, default=None,
                        help="build: the folder to write to (default notebooks/zh/; a temporary folder for trials)")
    parser.add_argument("--done", action="store_true", help="apply: the translation is finished, clear the to-dos")
    parser.add_argument("--only", default=",".join(CHECKS),
                        help=f"check: a comma-separated subset of {','.join(CHECKS)} (default: all)")
    args = parser.parse_args(argv)
    numbers = args.notebooks or [p.name[:2] for p in sorted(catalog.ENGLISH.glob("[0-9][0-9]_*.ipynb"))]
    if args.command == "check":
        only = [c for c in args.only.split(",") if c]
        unknown = sorted(set(only) - set(CHECKS))
        if unknown:
            parser.error(f"--only: unknown checks {unknown}; choose from {','.join(CHECKS)}")
        problems = run_checks(numbers, only)
        markdown = check_bold_markdown() if "bold" in only else []  # README.zh.md, docs: not per notebook
        for p in problems:
            print(p, end="\n\n")
        for text in markdown:
            print(f"[bold] {text}", end="\n\n")
        print("problems per notebook:  " + "  ".join(f"{c:>7}" for c in only))
        for nn in numbers:
            print(f"  {nn}                    " + "  ".join(
                f"{sum(p.nn == nn and p.check == c for p in problems):>7}" for c in only))
        if "bold" in only:
            print(f"  Markdown files (README.zh.md, docs)  bold {len(markdown)}")
        return 1 if problems or markdown else 0
    for nn in numbers:
        if args.command == "todo":
            print(f"{catalog_path(nn).relative_to(catalog.ROOT)}: {todo(nn)} to-do entries")
        elif args.command == "edit":
            print(f"edit the files in {edit(nn).relative_to(catalog.ROOT)}, then: scripts/zh_edition.py apply {nn}")
        elif args.command == "apply":
            print(f"{catalog_path(nn).relative_to(catalog.ROOT)}: {apply(nn, args.done)} to-do entries")
        elif args.command == "english":
            lines = english_report(nn)
            print("\n".join(lines) if lines else f"{nn}: no English run of {ENGLISH_WORDS}+ words")
        else:
            out = build(nn, args.out)
            if args.execute:  # in out's folder (notebooks/zh/ by default): no notebook reads files beside it
                from nbrun import run_notebook
                nbformat.write(run_notebook(out), out)
            print(f"wrote {out.relative_to(catalog.ROOT) if out.is_relative_to(catalog.ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
