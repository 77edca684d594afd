"""The install story: conda and pip name the same packages, and the venv holds CPU-only torch."""
import importlib.metadata as md
import re
import sys
from pathlib import Path

import pytest
import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

ROOT = Path(__file__).resolve().parents[1]
CONDA_TO_PIP = {"pytorch": "torch"}
NOT_ON_BINDER = {
    "playwright": "drives Chromium for the browser tests, which run in CI, not on Binder",
    "pytest-playwright": "gives the browser tests their page fixtures; CI only",
    "ruff": "lints the code in `make test`; a developer tool, not needed to learn",
    "sphinx-mathjax-offline": "ships MathJax 3 for `make site`/`make slides`, which build locally or in CI, "
                              "not on Binder",
    "sphinx-revealjs": "ships reveal.js for `make slides`, which builds locally or in CI, not on Binder",
    "jupyterhub": "runs `make hub` on a teacher's server; repo2docker images already bring jupyterhub-singleuser",
    "jupyterhub-idle-culler": "a service of the `make hub` hub, not of a single-user environment",
    "nbgrader": "hands out and grades homework on the `make hub` hub; a Binder session has no course to grade",
    "pytest-xdist": "runs `make test` on two workers; CI and developers only",
    "axe-playwright-python": "brings axe-core for the accessibility tests, which run in CI, not on Binder",
    "accessible-pygments": "colours the code of the static site built by `make site`, locally or in CI",
}
CONDA_ONLY = {"python", "pip"}


def bare_name(requirement: str) -> str:
    """'numpy==2.4.6; python_version…' or 'pytorch=*=cpu*' -> 'numpy' / 'pytorch'."""
    return re.split(r"[=<>!;\[ ]", requirement.strip(), maxsplit=1)[0].lower()


def pyproject_names() -> set[str]:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11+")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    return {bare_name(r) for r in reqs}


def test_environment_yml_and_pyproject_name_the_same_packages():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {CONDA_TO_PIP.get(bare_name(d), bare_name(d)) for d in env["dependencies"] if isinstance(d, str)}
    conda -= CONDA_ONLY
    pip = pyproject_names() - set(NOT_ON_BINDER)
    assert conda == pip, (f"only in environment.yml: {sorted(conda - pip)}; "
                          f"only in pyproject.toml: {sorted(pip - conda)}")
    assert "conda-forge" in env["channels"]
    assert any(isinstance(d, str) and re.fullmatch(r"pytorch=\*=cpu\*", d) for d in env["dependencies"])


def test_binder_installs_the_local_package():
    post = (ROOT / "postBuild").read_text()
    assert "set -e" in post and "pip install" in post and " -e ." in post
    assert not (ROOT / "binder").exists(), "a binder/ folder would make repo2docker ignore the root files"


def in_project_venv() -> bool:
    return sys.prefix != sys.base_prefix and Path(sys.prefix).resolve() == (ROOT / ".venv").resolve()


@pytest.mark.skipif(not in_project_venv(), reason="checks the .venv that `make` builds")
def test_venv_holds_cpu_only_torch_and_fits_in_1_8_gb():
    import torch

    assert torch.version.cuda is None, f"torch {torch.__version__} is a CUDA build"
    gpu = sorted(d.metadata["Name"] for d in md.distributions()
                 if re.match(r"(nvidia|triton|cuda)", d.metadata["Name"].lower()))
    assert gpu == [], f"GPU packages in the venv: {gpu}"
    size = sum(f.stat().st_size for f in Path(sys.prefix).rglob("*") if f.is_file() and not f.is_symlink())
    print(f"venv size: {size / 1e9:.2f} GB")
    assert size <= 1.8e9, f"the venv is {size / 1e9:.2f} GB, over the 1.8 GB budget"
