"""Command line: python -m attnlib.bench {latency,complexity,browser,site,hub,a11y} [options]."""
import argparse
import importlib
import sys

COMMANDS = {
    "latency": "slider event to updated figures, in place vs rebuilt (widgets)",
    "complexity": "time and peak memory of naive, fused, tiled and linear attention at large N",
    "browser": "key press on each notebook's main slider to a changed heatmap, in JupyterLab in Chromium",
    "site": "control change to redrawn figure on every page of the static site, offline, in Chromium",
    "hub": "a class of N students on a loopback JupyterHub: start, run notebook 01, move a slider (root)",
    "a11y": "axe-core's WCAG 2.1 A/AA violations on every page and deck of the static site, offline, in Chromium",
}


def main(argv: list[str] | None = None) -> int:
    """Dispatch to attnlib.bench.<command>.main(rest_of_args); `latency --notebooks` to latency_notebooks."""
    parser = argparse.ArgumentParser(prog="python -m attnlib.bench", description=__doc__)
    parser.add_argument("command", choices=sorted(COMMANDS), help="; ".join(f"{k}: {v}" for k, v in COMMANDS.items()))
    args, rest = parser.parse_known_args(argv)
    name = "latency_notebooks" if args.command == "latency" and "--notebooks" in rest else args.command
    module = importlib.import_module(f"attnlib.bench.{name}")
    return module.main(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
