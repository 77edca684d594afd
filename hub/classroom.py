"""The class on one server: the roster file and the accounts (hub user, password hash, system user).

Standard library only, so the roster script, the hub's config, the load test and the tests share it. It is also
the one module they import: the names of roster_settings.py (Settings, user names), roster_passwords.py (scrypt
hashes) and roster_users.py (system users, homes, notebook copies) are re-exported here.

Each hub user `alice` runs as the system user `jupyter-alice`, whose home is mode 0700 and holds `notebooks/`,
the student's own copy of the course. The hub's passwords are scrypt hashes in `<state>/roster.json` (mode 0600
in a 0700 root-owned folder).
"""
from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from typing import Iterator

# hub/ is on sys.path wherever this module is imported (each caller puts it there; PYTHONPATH on Kubernetes)
from roster_passwords import DUMMY_HASH, hash_password, new_password, verify_password
from roster_settings import ROOT, RosterError, Settings, normalize_name, read_names
from roster_users import (
    as_user,
    copy_notebooks,
    delete_system_user,
    ensure_runtime_dir,
    ensure_system_user,
    kill_processes_of,
    notebook_sources,
    prepare_home,
    processes_of,
    require_root,
    reset_notebooks,
    student_access_problem,
)

__all__ = [
    "ROOT", "ROLES", "RosterError", "Settings", "normalize_name", "read_names",
    "DUMMY_HASH", "hash_password", "new_password", "verify_password",
    "as_user", "copy_notebooks", "delete_system_user", "ensure_runtime_dir", "ensure_system_user",
    "kill_processes_of", "notebook_sources", "prepare_home", "processes_of", "require_root", "reset_notebooks",
    "student_access_problem",
    "ensure_state_dir", "load_roster", "save_roster", "roster_lock", "teachers",
    "add_account", "set_new_password", "remove_account", "check_login",
]

ROLES = ("student", "teacher")


# ------------------------------------------------------------------------------------------- roster


def ensure_state_dir(settings: Settings) -> None:
    """Create the state folder, owned by root and closed to everyone else (0700)."""
    settings.state.mkdir(parents=True, exist_ok=True)
    os.chmod(settings.state, 0o700)


def load_roster(settings: Settings) -> dict[str, dict]:
    """name → {"role", "password" (a hash), "system_user", "home"}; empty if there is no roster yet."""
    try:
        data = json.loads(settings.roster_file.read_text())
    except FileNotFoundError:
        return {}
    except PermissionError:
        raise RosterError(f"cannot read {settings.roster_file} (root only): run it with sudo") from None
    except (OSError, ValueError) as exc:
        raise RosterError(f"cannot read {settings.roster_file}: {exc}") from None
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, dict):
        raise RosterError(f"{settings.roster_file} is not a roster written by hub/roster.py")
    return users


def save_roster(settings: Settings, users: dict[str, dict]) -> None:
    """Write the roster atomically (a reader sees the old file or the new one), mode 0600."""
    ensure_state_dir(settings)
    tmp = settings.roster_file.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"version": 1, "users": users}, f, indent=1, sort_keys=True)
    os.replace(tmp, settings.roster_file)


@contextmanager
def roster_lock(settings: Settings) -> Iterator[dict[str, dict]]:
    """Load the roster under an exclusive lock, and save it back when the block ends without error."""
    try:
        ensure_state_dir(settings)
        lock = open(settings.state / "roster.lock", "w")
    except PermissionError:
        raise RosterError(f"cannot write the roster in {settings.state} (root only): run it with sudo") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        users = load_roster(settings)
        yield users
        save_roster(settings, users)


def teachers(settings: Settings) -> list[str]:
    """Names of the accounts with the teacher (hub admin) role."""
    return sorted(n for n, u in load_roster(settings).items() if u.get("role") == "teacher")


# ------------------------------------------------------------------------------------------ accounts


def add_account(settings: Settings, name: str, role: str = "student", system_user: bool = True) -> str | None:
    """Create hub user `name`: roster entry and, unless `system_user` is False, system user, home, notebooks.

    Args:
        settings: where the roster and the homes are.
        name: the hub user name (normalised).
        role: "student" or "teacher" (a hub admin).
        system_user: False for a roster only, e.g. for Kubernetes, where each student gets a pod.
    Returns:
        The new random password, or None if the account already existed (its password is kept).
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    name = normalize_name(name)
    with roster_lock(settings) as users:
        if name in users:
            if users[name].get("role") != role:
                raise RosterError(f"{name!r} is already a {users[name].get('role')}; pick another name")
            if system_user:
                prepare_home(settings, name)
            return None
        password = new_password()
        users[name] = {"role": role, "password": hash_password(password)}
        if system_user:
            entry = prepare_home(settings, name)
            users[name].update(system_user=entry.pw_name, home=entry.pw_dir)
        return password


def set_new_password(settings: Settings, name: str) -> str:
    """A new random password for an existing account; returns it."""
    name = normalize_name(name)
    with roster_lock(settings) as users:
        if name not in users:
            raise RosterError(f"no account {name!r}; accounts: {', '.join(sorted(users)) or 'none yet'}")
        password = new_password()
        users[name]["password"] = hash_password(password)
        return password


def remove_account(settings: Settings, name: str) -> None:
    """Take `name` off the roster (they can no longer log in); their system user and home stay."""
    name = normalize_name(name)
    with roster_lock(settings) as users:
        if name not in users:
            raise RosterError(f"no account {name!r}")
        del users[name]


def check_login(settings: Settings, name: object, password: object) -> str | None:
    """The hub user name if (name, password) matches the roster, else None. Never raises on bad input."""
    if not isinstance(name, str) or not isinstance(password, str) or len(password) > 1024:
        return None
    try:
        name = normalize_name(name)
        users = load_roster(settings)
    except RosterError:
        verify_password(password, DUMMY_HASH)
        return None
    user = users.get(name)
    if user is None:
        verify_password(password, DUMMY_HASH)
        return None
    return name if verify_password(password, str(user.get("password", ""))) else None
