"""The wheel ships what attnlib reads beside its code: message catalogs and the live panel's front end."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA_GLOBS = ("attnlib/locale/**/*.json", "attnlib/widgets/*.js", "attnlib/widgets/*.css")


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    """The file names in a wheel built (offline, no dependencies) from a copy of the package's sources."""
    pytest.importorskip("setuptools")
    src = tmp_path_factory.mktemp("src")
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(ROOT / "attnlib", src / "attnlib", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--disable-pip-version-check", "-w", str(out), str(src)], check=True,
                   capture_output=True)
    (wheel,) = out.glob("attnlib-*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


def test_the_wheel_holds_every_catalog_and_front_end_file(wheel_names):
    data = sorted(str(p.relative_to(ROOT)) for g in DATA_GLOBS for p in ROOT.glob(g)
                  if "__pycache__" not in p.parts)
    assert any(d.startswith("attnlib/locale/") for d in data), "no catalog found: is attnlib/locale/ there?"
    missing = [d for d in data if d not in wheel_names]
    assert not missing, (f"not in the wheel: {missing}; list their folder in [tool.setuptools.package-data] "
                         "of pyproject.toml")
