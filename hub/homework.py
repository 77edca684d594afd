"""Homework with nbgrader on the class hub: its configuration, the exchange folder and the teacher's course folder.

nbgrader's extensions are switched off in the course's venv (`make hub-deps` does it, so `make lab` and the
browser tests never see them) and on again only in the hub's servers, through JUPYTER_CONFIG_PATH: a teacher's
server gets the formgrader and the assignment tools, a student's the Assignments tab and Validate.

Exchange: nbgrader's own model, one folder every user can write to (mode 1777, as nbgrader's documentation
asks); nbgrader makes `<course>/outbound` (the teacher writes, everyone reads), `inbound` (everyone writes, nobody
but the teacher lists) and `feedback` in it. The teacher's course folder (~/course: source with the solutions and
hidden tests, the gradebook, the submissions) lives in the teacher's 0700 home.
Standard library only.
"""
from __future__ import annotations

import json
import os
import pwd
import subprocess
from pathlib import Path

from roster_settings import RosterError, Settings

COURSE_ID = "attention"
SERVER_EXTENSIONS = ("formgrader", "validate_assignment", "assignment_list", "course_list")
TEACHER_ONLY = ("formgrader", "create-assignment")  # lab plugins of @jupyter/nbgrader a student does not get
# JupyterLab's "Would you like to get notified about official Jupyter news?" pop-up: off for the whole class
# (it covered the corner of every student's first notebook, in the screenshots of a hub login)
ANNOUNCEMENTS = "@jupyterlab/apputils-extension:announcements"

NBGRADER_CONFIG = """# written by hub/homework.py (the class hub's nbgrader settings)
import os
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course!r}
c.CourseDirectory.root = os.path.expanduser("~/course")
c.Exchange.root = {exchange!r}
c.ClearSolutions.code_stub = {{"python": ""}}  # released, an exercise cell is the learner's cell as it was
c.Execute.timeout = 600  # seconds per cell when grading (notebook 05 trains ten small models)
c.Execute.interrupt_on_timeout = True
"""


def exchange_root(env: dict | None = None) -> Path:
    """HUB_EXCHANGE, default /srv/nbgrader/exchange."""
    env = os.environ if env is None else env
    return Path(env.get("HUB_EXCHANGE") or "/srv/nbgrader/exchange")


def ensure_exchange(root: Path) -> Path:
    """The exchange folder, mode 1777 (anyone writes, only an owner deletes), as nbgrader's setup asks."""
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o1777)
    return root


def write_config(settings: Settings, exchange: Path) -> dict[str, Path]:
    """Config folders for JUPYTER_CONFIG_PATH, {'teacher': …, 'student': …}, root-owned and readable by all."""
    base = settings.runtime_base / "config"
    folders = {}
    for role in ("teacher", "student"):
        folder = base / role
        (folder / "labconfig").mkdir(parents=True, exist_ok=True)
        (folder / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(course=COURSE_ID, exchange=str(exchange)))
        extensions = {f"nbgrader.server_extensions.{e}": role == "teacher" or e not in ("formgrader",)
                      for e in SERVER_EXTENSIONS}
        server = {"ServerApp": {"jpserver_extensions": extensions}}
        (folder / "jupyter_server_config.json").write_text(json.dumps(server))
        disabled = {"@jupyter/nbgrader": False, **{f"@jupyter/nbgrader:{p}": role == "student" for p in TEACHER_ONLY},
                    ANNOUNCEMENTS: True}
        (folder / "labconfig" / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}))
        for path in (base, folder, folder / "labconfig", *folder.rglob("*")):
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        folders[role] = folder
    return folders


def run_as(entry: pwd.struct_passwd, cmd: list[str], config: Path, cwd: Path | None = None,
           hub_user: str | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run `cmd` as that system user with the hub's nbgrader settings (as their server would); no error raised."""
    env = {"HOME": entry.pw_dir, "USER": entry.pw_name, "PATH": f"{Path(cmd[0]).parent}:/usr/bin:/bin",
           "LANG": "C.UTF-8", "JUPYTER_CONFIG_PATH": str(config), "OMP_NUM_THREADS": "1"}
    if hub_user:
        env["JUPYTERHUB_USER"] = hub_user  # nbgrader names the student by it, as in their server
    return subprocess.run(cmd, capture_output=True, text=True, cwd=str(cwd or entry.pw_dir), env=env, input=stdin,
                          user=entry.pw_uid, group=entry.pw_gid, extra_groups=[], timeout=3600)


def make_course(settings: Settings, teacher: str, config: Path, notebooks: list[Path] | None = None) -> str:
    """Write the assignments into the teacher's ~/course/source (as the teacher); return what was made."""
    entry = teacher_entry(settings, teacher)
    script = Path(__file__).resolve().parent / "assignments.py"
    course = Path(entry.pw_dir) / "course"
    done = run_as(entry, [str(settings.venv / "bin" / "python"), str(script), "source", str(course),
                          *[str(p) for p in notebooks or []]], config)
    if done.returncode != 0:
        raise RosterError(f"making the assignments failed: {done.stderr.strip()[-600:]}")
    return done.stdout


def teacher_entry(settings: Settings, teacher: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(settings.system_user(teacher))
    except KeyError:
        raise RosterError(f"no teacher {teacher!r} on this machine yet: run sudo make hub once first") from None


def export_grades(settings: Settings, teacher: str, config: Path, out: Path) -> str:
    """nbgrader export in the teacher's course (as the teacher), copied to `out`; returns the CSV text."""
    entry = teacher_entry(settings, teacher)
    course = Path(entry.pw_dir) / "course"
    done = run_as(entry, [str(settings.venv / "bin" / "nbgrader"), "export", "--to", "grades.csv"], config, course)
    if done.returncode != 0:
        raise RosterError(f"nbgrader export failed: {(done.stderr or done.stdout).strip()[-600:]}")
    text = (course / "grades.csv").read_text()
    out.write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    """`assignments`: write the course's assignments for the teacher; `grades OUT`: the scores as CSV."""
    import argparse
    import sys

    import classroom

    parser = argparse.ArgumentParser(prog="python hub/homework.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("assignments", help="the exercises as nbgrader assignments in the teacher's ~/course/source")
    grades = sub.add_parser("grades", help="export every student's scores to a CSV file")
    grades.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    try:
        classroom.require_root(f"make hub-{args.command}")
        settings = classroom.Settings.from_env()
        teacher = classroom.normalize_name(os.environ.get("HUB_TEACHER") or "teacher")
        config = write_config(settings, ensure_exchange(exchange_root()))["teacher"]
        if args.command == "assignments":
            print(make_course(settings, teacher, config), end="")
            print(f"In the hub, as {teacher}: open <hub>/user/{teacher}/formgrader in a browser tab of its own (inside "
                  "JupyterLab its frame stays empty), then Generate and Release each assignment.")
        else:
            text = export_grades(settings, teacher, config, args.out)
            print(f"{len(text.splitlines()) - 1} rows (student × assignment) written to {args.out}")
    except classroom.RosterError as exc:
        print(f"make hub-{args.command}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
