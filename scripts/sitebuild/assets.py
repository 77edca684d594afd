"""The assets/ folder next to the pages: plotly.js, MathJax 2.7, reveal.js and our CSS, all from pip packages."""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from .course import TEMPLATES

VIEW = Path(__file__).resolve().parents[2] / "attnlib" / "widgets"  # the live view's panel_view.js and .css


def classic_view_script() -> str:
    """attnlib's panel_view.js (an ES module: a page opened from file:// may not load one) as a classic script
    that gives the page its canvas figures, window.alCanvas = {Grid, Chart}; the widget's render is left out."""
    source = (VIEW / "panel_view.js").read_text(encoding="utf-8")
    head, found, _ = source.partition("\nexport default {")
    if not found:
        raise SystemExit(f"build_site: {VIEW / 'panel_view.js'} no longer ends with 'export default {{': update "
                         "scripts/sitebuild/assets.py")
    return f"(function () {{\n{head}\nwindow.alCanvas = {{ Grid, Chart }};\n}}());\n"


def package_dir(module: str) -> Path:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            f"build_site: the package '{module}' is not installed. It ships files the site needs offline; "
            "install the course's 'site' extra: pip install -e '.[site]' (make site / make slides do it)."
        )
    return Path(list(spec.submodule_search_locations)[0])


def asset_sources() -> dict[str, Path]:
    """Paths of plotly.min.js, the MathJax 2.7 folder and the reveal.js folder inside installed packages."""
    sources = {
        "plotly.min.js": package_dir("plotly") / "package_data" / "plotly.min.js",
        "mathjax": package_dir("jupyter_server_mathjax") / "static",
        "reveal": package_dir("sphinx_revealjs") / "_static" / "revealjs",
    }
    for name, path in sources.items():
        if not path.exists():
            raise SystemExit(f"build_site: expected {name} at {path}, not found (package layout changed?)")
    return sources


def copy_assets(out: Path, *, reveal: bool) -> Path:
    """Copy plotly.js, MathJax, our CSS, static_panel.js and the live view's canvas code (and reveal.js for decks)
    into out/assets; return it."""
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    src = asset_sources()
    shutil.copy2(src["plotly.min.js"], assets / "plotly.min.js")
    mathjax_skip = shutil.ignore_patterns("SVG", "*.map")  # we use the HTML-CSS output only
    shutil.copytree(src["mathjax"], assets / "mathjax", dirs_exist_ok=True, ignore=mathjax_skip)
    for css in ("course.css", "course_slides.css", "static_panel.js"):
        shutil.copy2(TEMPLATES / "common" / css, assets / css)
    shutil.copy2(VIEW / "panel_view.css", assets / "panel_view.css")
    (assets / "panel_view.js").write_text(classic_view_script(), encoding="utf-8")
    if reveal:
        keep = shutil.ignore_patterns("*.map", "*.esm.js", "markdown", "highlight", "search", "zoom", "math")
        shutil.copytree(src["reveal"], assets / "reveal", dirs_exist_ok=True, ignore=keep)
    return assets
