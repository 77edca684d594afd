"""scripts/nbcache.py: a kept nbval execution is reused only while everything that decides its outputs is the same,
and a reused one is still compared with nbval's rules (so a wrong kept output fails)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import nbcache  # noqa: E402


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
    monkeypatch.setattr(nbcache, "ROOT", tmp_path)
    notebook = fake_checkout(tmp_path)
    env = nbcache.environment_identity()
    before = nbcache.notebook_key(notebook, env, "")
    assert nbcache.notebook_key(notebook, env, "") == before
    changes = {
        "a notebook cell": lambda: notebook.write_text(notebook.read_text().replace("1 + 1", "1 + 2")),
        "an attnlib module": lambda: (tmp_path / "attnlib" / "core.py").write_text("X = 2\n"),
        "a Chinese string": lambda: (tmp_path / "attnlib" / "locale" / "zh" / "messages.json").write_text("{}"),
        "a pin": lambda: (tmp_path / "pyproject.toml").write_text('dependencies = ["torch==2.14.0"]\n'),
    }
    for name, change in changes.items():
        change()
        after = nbcache.notebook_key(notebook, env, "")
        assert after != before, f"changing {name} left the key as it was"
        before = after
    zh = tmp_path / "notebooks" / "zh" / "01_x.ipynb"
    zh.parent.mkdir()
    zh.write_bytes(notebook.read_bytes())
    assert nbcache.notebook_key(zh, env, "") != before, "the Chinese edition's copy shares the English key"
    for name, value in [("ATEN_CPU_CAPABILITY", "default"), ("OMP_NUM_THREADS", "1"), ("MKL_CBWR", "COMPATIBLE")]:
        monkeypatch.setenv(name, value)
        other = nbcache.environment_identity()
        assert nbcache.notebook_key(notebook, other, "") != before, f"{name}={value} left the key as it was"
        assert nbcache.entry_path(notebook, other) != nbcache.entry_path(notebook, env), "one file for two settings"
    assert nbcache.notebook_key(notebook, env, "('--nbval-current-env',)") != before


def nbval(notebook: Path, cache: Path, cell: str = "") -> subprocess.CompletedProcess:
    """Strict nbval on `notebook` (or its `cell`, e.g. "Cell 1") with the plugin loaded and kept runs in `cache`."""
    env = dict(os.environ, NBCACHE_DIR=str(cache), PYTHONPATH=str(ROOT / "scripts"))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "nbcache",
                           "--nbval", "--rootdir", str(notebook.parent), str(notebook) + (f"::{cell}" if cell else "")],
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
    entry.unlink()
    one_cell = nbval(notebook, cache, "Cell 1")  # run in part: nothing is kept
    assert one_cell.returncode == 0 and "1 passed" in one_cell.stdout, one_cell.stdout
    assert not list(cache.glob("*.json")), "a notebook run in part was kept"
