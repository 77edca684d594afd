"""Every command that README.md, README.zh.md and docs/teaching.md tell a user to type runs without a traceback and
exits 0, in a short form where one exists (issue 23 §3: `make bench` had crashed at its first command unnoticed).

The commands are read from the documents (fenced shell blocks, and inline code that starts with make, python, …),
so a command added there without a test here fails `test_every_documented_command_is_run_or_excused`: give it a
test below (RUN) or a reason (NOT_RUN). It costs about 2 CPU-minutes (measured: 140 s of CPU, 7 min of wall clock
at load 8 on 2 cores), most of it the site build of notebook 01 in both editions and the benches' quick forms;
`make check` leaves this file out (`make test` runs it).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import ipywidgets as W
import pytest

from attnlib.bench.latency import two_values

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "README.zh.md", "docs/teaching.md")
CHROMIUM = Path("/usr/bin/chromium")
NB01 = "notebooks/01_introduction.ipynb"
TOOLS = r"make|python3?|pip|apt-get|caddy|npm|pytest|jupyter|conda|helm|docker|git"
COMMAND = re.compile(rf"(?:sudo )?(?:\.venv/bin/)?(?:{TOOLS})(?: |$)")

# command (as command_key names it) -> the test here that runs it
RUN = {
    "make lab": "test_dry_runs (the server itself: tests/test_zh_lab.py starts what `make -n lab` prints)",
    "make lab-zh": "test_dry_runs (the server itself: tests/test_zh_lab.py)",
    "make clean": "test_dry_runs (running it deletes the venv)",
    "make test": "test_make_test_on_one_test_file",
    "make check": "test_make_check_on_one_test_file_and_notebook_01",
    "make zh-check": "test_make_zh_check",
    "make bench": "test_make_bench_quick",
    "python -m attnlib.bench latency": "test_make_bench_quick (--quick) and test_latency_of_notebook_01_quick",
    "python -m attnlib.bench complexity": "test_make_bench_quick (--quick)",
    "python -m attnlib.bench browser": "test_make_bench_quick (--notebooks 01 --presses 2)",
    "make site": "test_make_site_and_slides_of_notebook_01 (NOTEBOOKS=01, into a temporary folder)",
    "make slides": "test_make_site_and_slides_of_notebook_01 (make site builds the same decks with the same "
                   "command, --slides; the slides-only form is in test_dry_runs: a second deck build costs ~40 s)",
    "python -m attnlib.bench site": "test_make_site_and_slides_of_notebook_01 (--no-build on that site)",
    "python -m attnlib.bench a11y": "test_make_site_and_slides_of_notebook_01 (--no-build on that site and decks)",
    "python scripts/cpu_audit.py": "test_script_help (a full audit executes every notebook under 4 CPU variants)",
    "python scripts/cpu_variants.py": "test_script_help (its probe runs every variant)",
    "python scripts/execute_notebooks.py": "test_execute_notebooks_on_a_copy_of_01 (in place on the real ones)",
    "make hub-roster": "test_roster_commands (roster.py --roster-only) and test_hub_commands (make, as root)",
    "make hub-teacher": "test_roster_commands and test_dry_runs",
    "make hub-password": "test_roster_commands and test_dry_runs",
    "make hub-list": "test_roster_commands and test_hub_commands",
    "make hub-bench": "test_hub_commands (STUDENTS=2, where the hub tests run)",
    "python -m attnlib.bench hub": "test_hub_commands (make hub-bench runs it)",
    "make hub-assignments": "tests/hub/test_hub_homework.py (homework.make_course, what the target runs: "
                            "hub/homework.py assignments) and test_dry_runs",
    "make hub-grades": "tests/hub/test_hub_homework.py (homework.export_grades after a full release, submit, "
                       "autograde loop) and test_dry_runs",
}
NOT_RUN = {
    "make": "the word `make` in prose (what you need installed), not a command",
    "apt-get": "installs system packages (root, network)",
    "caddy": "a third-party reverse proxy the teaching notes suggest, not part of the course",
    "pytest": "`pytest --nbval` names the tool make test runs, not a command to type",
    "make hub": "runs JupyterHub until Ctrl-C (root, Node.js): tests/hub starts the same hub (launch.start_hub "
                "with hub/jupyterhub_config.py); test_dry_runs checks the target",
    "make hub-reset": "moves a real student's notebooks (root): tests/hub/test_hub_security.py runs roster.py reset",
    "make hub-remove": "takes a real account off the roster (root); test_dry_runs checks the target",
}


def command_key(command: str) -> str:
    """What a command is, for RUN and NOT_RUN: `make <target>`, `python -m <module> <sub>`, `python <script>`."""
    words = [w for w in command.split() if w != "sudo"]
    tool = Path(words[0]).name.replace("python3", "python")
    if tool == "make":
        targets = [w for w in words[1:] if "=" not in w and not w.startswith("-")]
        return f"make {targets[0]}" if targets else "make"
    if tool == "python" and len(words) > 2 and words[1] == "-m":
        sub = [w for w in words[3:4] if not w.startswith(("-", "["))]
        return " ".join(["python -m", words[2], *sub])
    if tool == "python" and len(words) > 1 and words[1].endswith(".py"):
        return f"python {words[1]}"
    return tool


def documented_commands() -> dict[str, list[str]]:
    """key -> the commands as written (with where), from the shell blocks and inline code of DOCS."""
    found: dict[str, list[str]] = {}
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        lines = [line.split("#")[0].strip() for lang, block in re.findall(r"```(\w*)\n(.*?)```", text, re.S)
                 if lang in ("", "bash", "sh", "shell", "console") for line in block.splitlines()]
        inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
        for command in lines + inline:
            if command and COMMAND.match(command):
                found.setdefault(command_key(command), []).append(f"{doc}: {command}")
    return found


def run(*command: str, timeout: int = 300, env: dict | None = None) -> str:
    """Run a command in the repository; fail on a non-zero exit or a traceback; return stdout + stderr."""
    clean = {k: v for k, v in os.environ.items()  # not make's or pytest's (xdist's worker) variables
             if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL") and not k.startswith("PYTEST_")}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**clean, **(env or {})})
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{out[-3000:]}"
    assert "Traceback (most recent call last)" not in out, f"{' '.join(command)} printed a traceback:\n{out[-3000:]}"
    return out


def json_lines(out: str) -> list[dict]:
    """The lines of `out` that are JSON objects (each bench prints one, last)."""
    found = []
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
    return found


def hub_problem() -> str | None:
    """Why the hub commands cannot run here (as tests/hub/conftest.py decides), or None."""
    import importlib.util

    if sys.platform != "linux" or os.geteuid() != 0:
        return "the hub commands create system users and need root on Linux"
    if importlib.util.find_spec("jupyterhub") is None:
        return "jupyterhub is not installed in this venv (make hub-deps)"
    if shutil.which("node") is None or not (ROOT / "hub" / "node_modules").exists():
        return "Node.js and hub/node_modules are needed (make hub-deps)"
    sys.path.insert(0, str(ROOT / "hub"))
    import classroom  # the hub's own check: can the students' users run this venv?

    return classroom.student_access_problem(classroom.Settings.from_env({"HUB_VENV": sys.prefix}))


# ----------------------------------------------------------------------------------- the documents' commands


def test_every_documented_command_is_run_or_excused():
    found = documented_commands()
    assert "make lab" in found and "make bench" in found, f"the command parser found too little: {sorted(found)}"
    missing = {key: where for key, where in found.items() if key not in RUN and key not in NOT_RUN}
    assert not missing, f"commands the documents give that no test here runs (add to RUN or NOT_RUN): {missing}"


def test_command_key_names_what_is_run():
    assert command_key("sudo make hub HUB_IP=0.0.0.0 HUB_PORT=8000") == "make hub"
    assert command_key("make lab PORT=8890") == "make lab"
    audit = ".venv/bin/python scripts/cpu_audit.py [notebooks/NN_name.ipynb]"
    assert command_key(audit) == "python scripts/cpu_audit.py"
    assert command_key("python -m attnlib.bench site [--site build/site --no-build]") == "python -m attnlib.bench site"


# ----------------------------------------------------------------------------------------------- unit checks


def test_two_values_reads_label_value_options():
    """The mask dropdown's options are (label, value) pairs since the zh labels; the bench crashed on them."""
    dropdown = W.Dropdown(options=[("无", "none"), ("因果", "causal"), ("填充", "padding")], value="causal")
    assert two_values(dropdown) == ["none", "causal"]


def test_changed_notebooks_follow_their_inputs():
    sys.path.insert(0, str(ROOT / "scripts"))
    from changed_notebooks import notebooks_for

    def names(files: list[str]) -> list[str]:
        return [p.relative_to(ROOT / "notebooks").as_posix() for p in notebooks_for(files)]

    assert names(["docs/teaching.md", "attnlib/bench/latency.py", "scripts/zh_edition.py"]) == []
    assert names(["attnlib/checks/nb03.py"]) == ["03_core_formula.ipynb", "zh/03_core_formula.ipynb"]
    assert names(["notebooks/05_multi_head.ipynb"]) == ["05_multi_head.ipynb", "zh/05_multi_head.ipynb"]
    assert names(["i18n/zh/06.md"]) == ["zh/06_pytorch_from_scratch.ipynb"]
    assert all(n.startswith("zh/") for n in names(["attnlib/locale/zh/viz.json"]))
    assert len(names(["attnlib/core.py"])) == len(names(["pyproject.toml"])) == 2 * len(
        list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    listed = run(sys.executable, "scripts/changed_notebooks.py", timeout=60)  # git: merge-base with main
    assert all(line.endswith(".ipynb") for line in listed.splitlines() if not line.startswith("changed against"))


# -------------------------------------------------------------------------------------- the commands, short


def test_dry_runs():
    """What running would block on or destroy: the Makefile has the target and expands it without error."""
    for args in (["lab"], ["lab-zh"], ["lab", "PORT=8890"], ["lab", "TORCH_INDEX=https://download.pytorch.org/whl/cpu"],
                 ["clean"], ["test"], ["check"], ["slides"], ["hub"], ["hub-teacher", "NAME=kim"],
                 ["hub-password", "NAME=ana"], ["hub-reset", "NAME=ana"], ["hub-remove", "NAME=ana"],
                 ["hub-assignments"], ["hub-grades", "GRADES=grades.csv"]):
        run("make", "-n", *args, timeout=60)


def test_make_zh_check():
    run("make", "zh-check", timeout=120)


def test_make_test_on_one_test_file():
    # one process, nothing kept from earlier runs: the file really runs (the full make test runs two workers)
    out = run("make", "test", "PYTEST_ARGS=tests/test_masks.py", "JOBS=1", timeout=300, env={"TESTCACHE": "0"})
    assert "passed" in out


def test_make_check_on_one_test_file_and_notebook_01():
    out = run("make", "check", "CHECK_TESTS=tests/test_masks.py", f"CHECK_NOTEBOOKS={NB01}", timeout=300)
    assert f"changed: {NB01}" in out


def test_make_bench_quick():
    out = run("make", "bench", "QUICK=1", timeout=600)
    reports = json_lines(out)
    assert any("speedup" in r for r in reports), "no JSON line from the latency bench"
    assert any(r.get("n") == 1024 for r in reports), "no JSON line from the complexity bench"
    if CHROMIUM.exists():
        assert any(r.get("notebooks") for r in reports), "no JSON line from the browser bench"


def test_latency_of_notebook_01_quick():
    out = run(sys.executable, "-m", "attnlib.bench", "latency", "--notebooks", "01", "--quick", timeout=300)
    assert all(key.startswith("01.") for key in json_lines(out)[-1]["per_control"])


def test_make_site_and_slides_of_notebook_01(tmp_path):
    """make site (pages and decks of 01 in both editions), then the site and a11y benches on those pages."""
    run("make", "site", f"NOTEBOOKS={NB01}", f"SITE_DIR={tmp_path}/site", f"SLIDES_DIR={tmp_path}/slides",
        timeout=600)
    assert (tmp_path / "site" / "01_introduction.html").exists() and (tmp_path / "slides" / "zh").is_dir()
    if CHROMIUM.exists():
        out = run(sys.executable, "-m", "attnlib.bench", "site", "--site", str(tmp_path / "site"), "--no-build",
                  "--repeats", "1", timeout=300)
        assert len(json_lines(out)[-1]["pages"]) == 2
        out = run(sys.executable, "-m", "attnlib.bench", "a11y", "--no-build", "--site", str(tmp_path / "site"),
                  "--slides", str(tmp_path / "slides"), timeout=600)
        report = json_lines(out)[-1]
        assert len(report["pages"]) >= 4 and report["critical"] == 0 and report["serious"] == 0, report


def test_script_help():
    for script in ("scripts/cpu_audit.py", "scripts/cpu_variants.py", "scripts/execute_notebooks.py"):
        assert "usage" in run(sys.executable, script, "--help", timeout=60)


def test_execute_notebooks_names_a_bad_path():
    done = subprocess.run([sys.executable, "scripts/execute_notebooks.py", "notebooks/no_such.ipynb"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "notebooks: notebooks/no_such.ipynb is not a notebook file" in done.stderr, done.stderr


def test_execute_notebooks_on_a_copy_of_01(tmp_path):
    copy = tmp_path / "01_introduction.ipynb"
    shutil.copyfile(ROOT / NB01, copy)
    assert "01_introduction.ipynb:" in run(sys.executable, "scripts/execute_notebooks.py", str(copy), timeout=300)


def test_roster_commands(tmp_path):
    """What make hub-roster, hub-teacher, hub-password and hub-list run, on a roster only (no system users)."""
    (tmp_path / "students.txt").write_text("Ana\nbob  # a comment\n")
    env = {"HUB_STATE": str(tmp_path / "state")}
    students = str(tmp_path / "students.txt")
    assert "bob" in run(sys.executable, "hub/roster.py", "add", "--roster-only", students, env=env)
    assert "kim" in run(sys.executable, "hub/roster.py", "teacher", "--roster-only", "kim", env=env)
    assert "new password" in run(sys.executable, "hub/roster.py", "password", "ana", env=env)
    listed = run(sys.executable, "hub/roster.py", "list", env=env)
    assert re.search(r"teacher\s+kim", listed) and re.search(r"student\s+ana", listed)


def test_hub_commands(tmp_path):
    """make hub-list and make hub-bench STUDENTS=2, where the hub tests run (root, jupyterhub, Node.js)."""
    problem = hub_problem()
    if problem:
        pytest.skip(problem)
    run("make", "hub-list", f"HUB_STATE={tmp_path / 'state'}", timeout=120)
    out = run("make", "hub-bench", "STUDENTS=2", timeout=1800)
    assert json_lines(out)[-1]["students"] == 2
