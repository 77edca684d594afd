"""Accessibility of the static site and the decks: axe-core's WCAG 2.0/2.1 A and AA rules on every page, offline.

    python -m attnlib.bench a11y [--site DIR] [--slides DIR] [--no-build] [notebooks ...]

Builds the pages and the decks (scripts/build_site.py in a subprocess; both editions when notebooks/zh/ exists;
executed notebooks cached in build/executed) into build/a11y-bench/ unless --no-build (then --site defaults to
build/site and --slides to build/slides, the output of `make site`). Opens every page and deck of both editions in
Debian's Chromium from file:// with every request that is not file:// aborted, waits for MathJax and the live
panels, and runs axe-core (pinned: the copy bundled with the PyPI package axe-playwright-python) with the tags
wcag2a, wcag2aa, wcag21a, wcag21aa. A deck is checked twice: as projected (the first slide and reveal.js's
controls) and in reveal.js's print view (`?print-pdf`: every slide laid out as a page, each shown; its scroll view
leaves most slides unchecked by axe); an element found by both counts once. Highlighted code is checked for colour
contrast one token per style: a token whose class, colour, font, opacity, code block (its background, input or
output) and visibility equal those of a token checked before on the page gives the same contrast, so axe skips it
(every other rule sees every token). A 03 page has ~10,600 code tokens in 37 styles; axe's run takes half as long.
Prints a line per page (elements per impact, the rules) and, last, one line of JSON: `pages` (per page: kind,
counts, rules with their elements), then the totals `critical`, `serious`, `moderate`, `minor` (elements).
Exit status 0 when no element breaks a serious or critical rule.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
IMPACTS = ("critical", "serious", "moderate", "minor")

# axe.run on `include` (CSS selectors; the document when empty) minus `exclude`, WCAG A/AA rules only; the
# violations with, per element, its selector, its HTML (cut) and axe's one-line reason.
RUN_JS = r"""async ([include, exclude, tags]) => {
  const context = include.length ? {include: include.map(s => [s]), exclude: exclude.map(s => [s])}
                                 : {exclude: exclude.map(s => [s])};
  const r = await axe.run(context, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
  return {version: axe.version, violations: r.violations.map(v => ({rule: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html.slice(0, 160),
                              why: (n.failureSummary || "").split("\n").slice(1, 2).join("").trim()}))}))};
}"""

# Marks every highlighted code token whose style (see the module docstring) an earlier token of the page has, and
# tells axe's color-contrast rule to skip the marked ones; [tokens kept, tokens skipped].
ONE_PER_STYLE_JS = r"""() => {
  const seen = new Set();
  let kept = 0, skipped = 0;
  for (const block of document.querySelectorAll("div.highlight")) {
    const where = getComputedStyle(block).backgroundColor + (block.closest(".jp-OutputArea") ? " out" : " in");
    for (const token of block.querySelectorAll("span")) {
      const s = getComputedStyle(token);
      const style = [token.className, s.color, s.fontSize, s.fontWeight, s.opacity, where,
                     token.checkVisibility({opacityProperty: true, visibilityProperty: true})].join("|");
      if (seen.has(style)) { token.setAttribute("data-al-same-style", ""); skipped++; }
      else { seen.add(style); kept++; }
    }
  }
  axe.configure({rules: [{id: "color-contrast", selector: "*:not([data-al-same-style])"}]});
  return [kept, skipped];
}"""

# Resolves when MathJax (2: its queue; 3: its startup promise) has typeset the page and reveal.js (on a deck) is ready;
# in reveal.js's print view, also once it has laid the slides out as pages (that can end after "ready"; 30 s at most).
SETTLED_JS = r"""async () => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  else if (window.MathJax && MathJax.Hub) { await new Promise(r => MathJax.Hub.Queue(r)); }
  if (window.Reveal && !Reveal.isReady()) { await new Promise(r => Reveal.on("ready", r)); }
  if (window.Reveal && Reveal.isPrintView()) {
    const end = performance.now() + 30000;
    while (!document.querySelector(".pdf-page") && performance.now() < end) {
      await new Promise(r => setTimeout(r, 50));
    }
  }
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return !!window.Reveal;
}"""

# The print view shows every slide as a page but leaves reveal.js's hidden/aria-hidden marks on those that were not
# current when it laid them out: drop the marks, as every slide is on screen there.
PRINT_SHOWN_JS = r"""() => document.querySelectorAll(
  ".reveal .slides section[aria-hidden], .reveal .slides section[hidden]")
  .forEach(s => { s.removeAttribute("hidden"); s.removeAttribute("aria-hidden"); })"""


def axe_script() -> str:
    """The axe-core bundled with axe-playwright-python (its pinned version), as a script to evaluate in a page."""
    from axe_playwright_python.base import AXE_SCRIPT

    return AXE_SCRIPT


def axe_run(tab: Any, include: Optional[list[str]] = None, exclude: Optional[list[str]] = None,
            code_once: bool = False) -> dict:
    """axe-core's WCAG 2.0/2.1 A and AA violations in `tab` (within `include`, outside `exclude`; with `code_once`,
    code tokens' contrast one per style): {version, violations: [{rule, impact, help, nodes: [{target, html, why}]}],
    code_tokens: [checked, skipped] or None}."""
    if not tab.evaluate("() => typeof window.axe === 'object'"):
        tab.evaluate(axe_script())
    tokens = tab.evaluate(ONE_PER_STYLE_JS) if code_once else None
    return {**tab.evaluate(RUN_JS, [include or [], exclude or [], TAGS]), "code_tokens": tokens}


def counts(violations: list[dict]) -> dict[str, int]:
    """Elements per impact (an element breaking two rules counts twice, as axe reports it)."""
    out = dict.fromkeys(IMPACTS, 0)
    for v in violations:
        out[v["impact"] or "minor"] += len(v["nodes"])
    return out


def merged(*runs: list[dict]) -> list[dict]:
    """The violations of several runs on one page, each (rule, element) once."""
    rules: dict[str, dict] = {}
    for violations in runs:
        for v in violations:
            kept = rules.setdefault(v["rule"], dict(v, nodes=[]))
            seen = {n["target"] for n in kept["nodes"]}
            kept["nodes"] += [n for n in v["nodes"] if n["target"] not in seen]
    return list(rules.values())


def audit(context: Any, page_file: Path) -> dict:
    """Open `page_file` offline, let it settle, run axe (a deck: as projected and in scroll view); its row."""
    from attnlib.bench.site import open_offline

    tab, blocked, errors = open_offline(context, page_file)
    try:
        deck = tab.evaluate(SETTLED_JS)
        result = axe_run(tab, code_once=True)
        runs = [result["violations"]]
        if deck:  # every slide: reveal.js's print view lays them all out (projected, only the current one shows)
            tab.goto(page_file.resolve().as_uri() + "?print-pdf")
            tab.evaluate(SETTLED_JS)
            tab.evaluate(PRINT_SHOWN_JS)
            runs.append(axe_run(tab, code_once=True)["violations"])
    finally:
        tab.close()
    violations = merged(*runs)
    return {"page": page_file.as_posix(), "kind": "deck" if deck else "page", "axe": result["version"],
            "code_tokens": result["code_tokens"],
            **counts(violations), "blocked": blocked, "errors": errors,
            "rules": [{"rule": v["rule"], "impact": v["impact"], "help": v["help"], "elements": len(v["nodes"]),
                       "nodes": v["nodes"][:5]} for v in violations]}


def edition_pages(folder: Path) -> list[Path]:
    """Every HTML page of a built folder and of its Chinese edition (folder/zh/), index first."""
    out = []
    for f in (Path(folder), Path(folder) / "zh"):
        out += sorted(f.glob("*.html"), key=lambda p: (p.name != "index.html", p.name)) if f.is_dir() else []
    return out


def build(out: Path, notebooks: list[Path]) -> tuple[Path, Path]:
    """Build the pages and decks (both editions) into out/site and out/slides, as `make site` does."""
    command = [sys.executable, str(ROOT / "scripts" / "build_site.py"), "--site", str(out / "site"),
               "--slides", str(out / "slides"), "--cache", str(ROOT / "build" / "executed"), *map(str, notebooks)]
    if subprocess.run(command, cwd=ROOT).returncode != 0:
        raise RuntimeError(f"the site build into {out} failed (see its output above)")
    return out / "site", out / "slides"


def line(row: dict, base: Path) -> str:
    """One page's counts and rules, for the terminal."""
    name = Path(row["page"]).relative_to(base).as_posix() if Path(row["page"]).is_relative_to(base) else row["page"]
    rules = ", ".join(f"{r['rule']}({r['impact'][0]}) {r['elements']}" for r in row["rules"])
    return (f"{row['kind']:<4} {name:<42} critical {row['critical']:>4} serious {row['serious']:>5} moderate "
            f"{row['moderate']:>4} minor {row['minor']:>4}  {rules}" + (f"  blocked {row['blocked']}"
                                                                         if row["blocked"] else ""))


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench a11y", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="build only these (default: the course)")
    parser.add_argument("--site", type=Path, help="a built site (with --no-build; default build/site)")
    parser.add_argument("--slides", type=Path, help="built decks (with --no-build; default build/slides)")
    parser.add_argument("--no-build", action="store_true", help="check the built --site and --slides, never build")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "a11y-bench",
                        help="where to build (default build/a11y-bench)")
    return parser.parse_args(argv)


def built_or_given(args: argparse.Namespace) -> tuple[Path, Path]:
    """The site and decks to check: the given ones with --no-build, else a fresh build of both editions."""
    if args.no_build:
        return args.site or ROOT / "build" / "site", args.slides or ROOT / "build" / "slides"
    return build(args.out, args.notebooks)


def main(argv: Optional[list[str]] = None) -> int:
    """Build (or take) the site and decks, run axe on every page, print the counts; 0 when none is serious."""
    from attnlib.bench.browser.lab import chromium_context

    site, slides = built_or_given(parse_args(argv))
    pages = edition_pages(site) + edition_pages(slides)
    if not pages:
        raise SystemExit(f"bench a11y: no built page in {site} or {slides} (run `make site`, or drop --no-build)")
    rows = []
    with chromium_context() as context:
        for page_file in pages:
            rows.append(audit(context, page_file))
            print(line(rows[-1], Path(site).parent), flush=True)
    total = {k: sum(r[k] for r in rows) for k in IMPACTS}
    print(f"{len(rows)} pages and decks, axe-core {rows[0]['axe']} ({', '.join(TAGS)}): "
          + ", ".join(f"{k} {v}" for k, v in total.items()))
    print(json.dumps({"bench": "a11y", "axe": rows[0]["axe"], "tags": TAGS, "pages": rows, **total},
                     ensure_ascii=False))
    return 0 if total["critical"] + total["serious"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
