"""The class list: accounts for the hub (`make hub-roster`, `make hub-password`, `make hub-reset` …).

    python hub/roster.py add students.txt     # one name per line; prints a random password per new student
    python hub/roster.py add --roster-only students.txt   # roster.json only, for Kubernetes (hub/config.yaml)
    python hub/roster.py teacher [--roster-only] NAME   # another teacher (hub admin) account
    python hub/roster.py password NAME        # a new random password for NAME
    python hub/roster.py reset NAME           # a fresh copy of the notebooks for NAME (the old one is kept)
    python hub/roster.py remove NAME          # NAME can no longer log in (their files stay)
    python hub/roster.py list                 # who is on the roster

Passwords are printed once and stored only as scrypt hashes. Needs root (it creates system users).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import classroom  # noqa: E402


def add(settings: classroom.Settings, roster_path: str, roster_only: bool = False) -> int:
    names = classroom.read_names(Path(roster_path))
    if not roster_only:
        classroom.require_root("make hub-roster")
        problem = classroom.student_access_problem(settings)
        if problem:
            raise classroom.RosterError(problem)
    taken = {n: u.get("role") for n, u in classroom.load_roster(settings).items()}
    clash = [n for n in names if taken.get(n) == "teacher"]
    if clash:
        raise classroom.RosterError(f"{', '.join(clash)}: already a teacher account; students need other names")
    width = max(len(n) for n in names)
    print(f"{'name':<{width}}  password")
    for name in names:
        password = classroom.add_account(settings, name, role="student", system_user=not roster_only)
        shown = password or "(account exists; password unchanged: make hub-password NAME=" + name + ")"
        print(f"{name:<{width}}  {shown}", flush=True)
    print(f"\n{len(names)} students on the roster. Hand each one their line; the passwords are not stored "
          "anywhere in clear, so keep this list (or make new ones with make hub-password NAME=…).")
    return 0


def teacher(settings: classroom.Settings, name: str, roster_only: bool = False) -> int:
    if not roster_only:
        classroom.require_root("make hub-teacher")
    password = classroom.add_account(settings, name, role="teacher", system_user=not roster_only)
    if password is None:
        print(f"{name}: teacher account exists; password unchanged (make hub-password NAME={name})")
    else:
        print(f"teacher (admin) {name}  password  {password}")
    return 0


def password(settings: classroom.Settings, name: str) -> int:
    print(f"{classroom.normalize_name(name)}  new password  {classroom.set_new_password(settings, name)}")
    print("(the old password no longer works; a browser already logged in stays logged in until it logs out)")
    return 0


def reset(settings: classroom.Settings, name: str) -> int:
    classroom.require_root("make hub-reset")
    name = classroom.normalize_name(name)
    if name not in classroom.load_roster(settings):
        raise classroom.RosterError(f"no account {name!r}")
    fresh, kept = classroom.reset_notebooks(settings, name)
    print(f"{name}: fresh notebooks in {fresh}")
    if kept:
        print(f"  their previous copy is kept in {kept} (visible to them in JupyterLab's file browser)")
    print("  If their notebook is open, they should reload it (or close it and reopen it from the file browser).")
    return 0


def remove(settings: classroom.Settings, name: str) -> int:
    classroom.require_root("make hub-remove")
    classroom.remove_account(settings, name)
    print(f"{name} can no longer log in. Their files stay in {settings.home_base / settings.system_user(name)}; "
          "stop a running server from the admin page.")
    return 0


def show(settings: classroom.Settings) -> int:
    users = classroom.load_roster(settings)
    if not users:
        print("no accounts yet: make hub-roster ROSTER=students.txt")
    for name, user in sorted(users.items(), key=lambda kv: (kv[1].get("role") != "teacher", kv[0])):
        print(f"{user.get('role', '?'):<8} {name:<20} {user.get('home', '')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hub/roster.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    adding = sub.add_parser("add", help="accounts for the names in a file")
    adding.add_argument("roster")
    adding.add_argument("--roster-only", action="store_true",
                        help="only write <state>/roster.json, no system users (for hub/config.yaml on Kubernetes)")
    for cmd, what in (("teacher", "add a teacher"), ("password", "new password"), ("reset", "fresh notebooks"),
                      ("remove", "no more login")):
        sub.add_parser(cmd, help=what).add_argument("name")
    sub.choices["teacher"].add_argument("--roster-only", action="store_true", help="as for add")
    sub.add_parser("list", help="who is on the roster")
    args = parser.parse_args(argv)
    settings = classroom.Settings.from_env()
    try:
        if args.command == "add":
            return add(settings, args.roster, args.roster_only)
        if args.command == "list":
            return show(settings)
        if args.command == "teacher":
            return teacher(settings, args.name, args.roster_only)
        return {"password": password, "reset": reset, "remove": remove}[args.command](settings, args.name)
    except classroom.RosterError as exc:
        print(f"hub/roster.py {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
