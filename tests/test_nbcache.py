"""scripts/nbstore.py and nbstore.py: a kept nbval execution is reused only while everything that decides its outputs
is the same, and a reused one is still compared with nbval's rules (so a wrong kept output fails); with
--nbcache-site, nbval and the site builder share one execution per notebook."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import nbstore  # noqa: E402


def fake_checkout(root: Path) -> Path:
    """A made-up checkout: attnlib/ with a module and a locale file, pyproject.toml with a pin, a notebook."""
    (root / "attnlib" / "locale" / "zh").mkdir(parents=True)
    (root / "attnlib" / "core.py").write_text("X = 1\n")
    (root / "attnlib" / "locale" / "zh" / "messages.json").write_text('{"a": "甲"}')
    (root / "pyproject.toml").write_text('dependencies = ["torch==2.13.0"]\n')
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1 + 1)")])
    path = root / "notebooks" / "01_x.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    return path


def test_the_key_changes_with_each_input_that_decides_the_outputs(tmp_path, monkeypatch):
    # identity (checked): the key follows the notebook's cells, every attnlib file, the pins, the edition and the
    # CPU setting; it stays put when nothing changed
    monkeypatch.setattr(nbstore, "ROOT", tmp_path)
    notebook = fake_checkout(tmp_path)
    env = nbstore.environment_identity()
    before = nbstore.notebook_key(notebook, env, "")
    assert nbstore.notebook_key(notebook, env, "") == before
    changes = {
        "a notebook cell": lambda: notebook.write_text(notebook.read_text().replace("1 + 1", "1 + 2")),
        "an attnlib module": lambda: (tmp_path / "attnlib" / "core.py").write_text("X = 2\n"),
        "a Chinese string": lambda: (tmp_path / "attnlib" / "locale" / "zh" / "messages.json").write_text("{}"),
        "a pin": lambda: (tmp_path / "pyproject.toml").write_text('dependencies = ["torch==2.14.0"]\n'),
    }
    for name, change in changes.items():
        change()
        after = nbstore.notebook_key(notebook, env, "")
        assert after != before, f"changing {name} left the key as it was"
        before = after
    zh = tmp_path / "notebooks" / "zh" / "01_x.ipynb"
    zh.parent.mkdir()
    zh.write_bytes(notebook.read_bytes())
    assert nbstore.notebook_key(zh, env, "") != before, "the Chinese edition's copy shares the English key"
    for name, value in [("ATEN_CPU_CAPABILITY", "default"), ("OMP_NUM_THREADS", "1"), ("MKL_CBWR", "COMPATIBLE")]:
        monkeypatch.setenv(name, value)
        other = nbstore.environment_identity()
        assert nbstore.notebook_key(notebook, other, "") != before, f"{name}={value} left the key as it was"
        assert nbstore.entry_path(notebook, other) != nbstore.entry_path(notebook, env), "one file for two settings"
    assert nbstore.notebook_key(notebook, env, "('--nbval-current-env',)") != before


def nbval(notebook: Path, cache: Path, cell: str = "", *options: str) -> subprocess.CompletedProcess:
    """Strict nbval on `notebook` (or its `cell`, e.g. "Cell 1") with the plugin loaded and kept runs in `cache`."""
    env = dict(os.environ, NBCACHE_DIR=str(cache), PYTHONPATH=str(ROOT / "scripts"))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "nbcache",
                           "--nbval", *options, "--rootdir", str(notebook.parent),
                           str(notebook) + (f"::{cell}" if cell else "")],
                          cwd=notebook.parent, env=env, capture_output=True, text=True, timeout=300)


def test_a_kept_execution_is_replayed_and_still_compared(tmp_path):
    # measurement: the first run executes (a kernel) and keeps the outputs; the second compares them without a
    # kernel; a kept output that differs from the committed one fails as nbval fails
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)"), nbformat.v4.new_code_cell("1")])
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="42\n")]
    nb.cells[0].execution_count = 1
    nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=2)]
    nb.cells[1].execution_count = 2
    notebook = tmp_path / "nb" / "kept.ipynb"
    notebook.parent.mkdir()
    nbformat.write(nb, notebook)
    cache = tmp_path / "cache"
    first = nbval(notebook, cache)
    assert first.returncode == 0 and "2 passed" in first.stdout, first.stdout + first.stderr
    assert "compared from executions kept" not in first.stdout
    [entry] = cache.glob("*.json")
    second = nbval(notebook, cache)
    assert second.returncode == 0 and "2 passed" in second.stdout, second.stdout + second.stderr
    assert "1 notebook(s) compared from executions kept" in second.stdout
    kept = json.loads(entry.read_text())
    kept["cells"]["0"][0]["text"] = "41\n"
    entry.write_text(json.dumps(kept))
    third = nbval(notebook, cache)
    assert third.returncode == 1 and "1 failed, 1 passed" in third.stdout, third.stdout
    assert "Cell outputs differ" in third.stdout and "41" in third.stdout
    assert not entry.exists(), "a kept execution that failed the comparison was kept"
    one_cell = nbval(notebook, cache, "Cell 1")  # run in part: nothing is kept
    assert one_cell.returncode == 0 and "1 passed" in one_cell.stdout, one_cell.stdout
    assert not list(cache.glob("*.json")), "a notebook run in part was kept"


# A cell that shows what a live panel shows: in the site builder's kernel (ATTNLIB_STATIC=1) a bundle with the site's
# parts and the same text/plain; the committed output is the live one (a widget view and the text/plain).
PANEL_CELL = """import os
from IPython.display import publish_display_data
site = os.environ.get("ATTNLIB_STATIC") == "1"
publish_display_data({"text/plain": "LivePanel: x", "text/html": "<p>note</p>",
                      "application/vnd.attnlib.panel-snapshot+json": {"figures": []}} if site else
                     {"text/plain": "LivePanel: x", "application/vnd.jupyter.widget-view+json": {"model_id": "m"}})
print("site" if site else "live")"""


def panel_notebook(root: Path, printed: str) -> Path:
    """A notebook of PANEL_CELL whose committed outputs are the live panel's and `printed`."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PANEL_CELL)])
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", {
        "text/plain": "LivePanel: x", "application/vnd.jupyter.widget-view+json": {"model_id": "n"}}),
        nbformat.v4.new_output("stream", name="stdout", text=printed + "\n")]
    nb.cells[0].execution_count = 1
    path = root / "nb" / "panel.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_nbval_and_the_site_builder_share_one_execution(tmp_path, monkeypatch):
    # measurement: with --nbcache-site the kernel runs as the site builder's (it prints "site"; without the option
    # the same committed output fails), the panel's site-only parts are not compared, and the site builder reads
    # that execution, bundle included; an execution the site builder keeps is what nbval then compares
    notebook, cache = panel_notebook(tmp_path, "site"), tmp_path / "cache"
    live = nbval(notebook, cache)
    assert live.returncode == 1 and "Cell outputs differ" in live.stdout, live.stdout
    shared = nbval(notebook, cache, "", "--nbcache-site")
    assert shared.returncode == 0 and "1 passed" in shared.stdout, shared.stdout + shared.stderr
    monkeypatch.setenv("NBCACHE_DIR", str(cache))
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "scripts"))  # the environment nbval's run had
    with nbstore.shared_execution(notebook) as execution:
        nb = execution.read()
    assert nb is not None, "the site builder did not find nbval's execution"
    assert "application/vnd.attnlib.panel-snapshot+json" in nb.cells[0].outputs[0]["data"]
    printed = nb.cells[0].outputs.pop()  # the site builder's kernel may send stdout in pieces: still the same output
    nb.cells[0].outputs += [nbformat.from_dict(dict(printed, text=t)) for t in ("si", "te\n")]
    with nbstore.shared_execution(notebook) as execution:
        execution.keep(nb)
    pieces = nbval(notebook, cache, "", "--nbcache-site")
    assert pieces.returncode == 0 and "compared from executions kept" in pieces.stdout, pieces.stdout
    nb.cells[0].outputs[1:] = [nbformat.from_dict(dict(printed, text="kept by the site builder\n"))]
    with nbstore.shared_execution(notebook) as execution:
        execution.keep(nb)
    replayed = nbval(notebook, cache, "", "--nbcache-site")
    assert replayed.returncode == 1 and "kept by the site builder" in replayed.stdout, replayed.stdout


def test_the_site_builder_does_not_wait_for_a_notebook_being_executed(tmp_path, monkeypatch):
    # measurement: while one holder has a notebook's lock, a second one asking without waiting gets None at once
    monkeypatch.setenv("NBCACHE_DIR", str(tmp_path / "cache"))
    notebook = panel_notebook(tmp_path, "site")
    with nbstore.shared_execution(notebook) as first:
        assert first is not None
        with nbstore.shared_execution(notebook, wait=False) as second:
            assert second is None
    with nbstore.shared_execution(notebook, wait=False) as again:
        assert again is not None
