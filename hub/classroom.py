"""The class on one server: names, passwords, the roster file, system users and notebook copies.

Standard library only, so the roster script, the hub's config, the load test and the tests share it.

Each hub user `alice` runs as the system user `jupyter-alice` (the prefix The Littlest JupyterHub
uses), whose home is mode 0700 and holds `notebooks/`, the student's own copy of the course.
System accounts get no password: nobody logs in to them by ssh or su, only through the hub, whose
passwords are scrypt hashes in `<state>/roster.json` (mode 0600 in a 0700 root-owned folder).
"""
from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import hmac
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
ROLES = ("student", "teacher")
NAME_RE = re.compile(r"[a-z][a-z0-9_-]{0,19}")
# Unambiguous characters (no 0/O, 1/l/I): read aloud or copied from paper without mistakes.
PASSWORD_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
SCRYPT = {"n": 2**14, "r": 8, "p": 1}  # about 16 MB and a few tens of ms per check
NOBODY = 65534  # uid/gid of `nobody`: stands for "any student" in the access check


class RosterError(Exception):
    """A problem the teacher can fix (a bad name, a missing file): printed as one message, no traceback."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """Where the hub keeps its state and its students, and which course it serves."""

    state: Path  # jupyterhub.sqlite, cookie secret, roster.json: root only (0700)
    home_base: Path  # system users' homes: <home_base>/<prefix><name>
    prefix: str  # system user of hub user `alice` = prefix + "alice"
    venv: Path  # the course's venv: the students' Python, kernel and JupyterLab
    notebooks: Path  # copied into each home as notebooks/ (with notebooks/zh/ when it exists)
    # Per-student runtime folders (kernel connection files and their Unix sockets): root-owned base,
    # one 0700 folder per student. Short paths, since a Unix socket path is at most 107 bytes.
    runtime_base: Path = Path("/run/jupyter-course")

    @classmethod
    def from_env(cls, env: dict | None = None) -> "Settings":
        """Settings from HUB_STATE, HUB_HOME_BASE, HUB_USER_PREFIX, HUB_VENV, HUB_NOTEBOOKS (all optional)."""
        env = os.environ if env is None else env
        return cls(
            state=Path(env.get("HUB_STATE") or ROOT / "hub" / "state").resolve(),
            home_base=Path(env.get("HUB_HOME_BASE") or "/home"),
            prefix=env.get("HUB_USER_PREFIX") or "jupyter-",
            venv=Path(env.get("HUB_VENV") or ROOT / ".venv").absolute(),
            notebooks=Path(env.get("HUB_NOTEBOOKS") or ROOT / "notebooks").resolve(),
            runtime_base=Path(env.get("HUB_RUNTIME_BASE") or "/run/jupyter-course"),
        )

    def as_env(self) -> dict[str, str]:
        """The environment variables that give these settings back through `from_env`."""
        return {
            "HUB_STATE": str(self.state),
            "HUB_HOME_BASE": str(self.home_base),
            "HUB_USER_PREFIX": self.prefix,
            "HUB_VENV": str(self.venv),
            "HUB_NOTEBOOKS": str(self.notebooks),
            "HUB_RUNTIME_BASE": str(self.runtime_base),
        }

    @property
    def roster_file(self) -> Path:
        return self.state / "roster.json"

    def system_user(self, name: str) -> str:
        """The system account that runs hub user `name`'s server."""
        return self.prefix + name

    def runtime_dir(self, name: str) -> Path:
        """JUPYTER_RUNTIME_DIR of hub user `name`: where their kernels' sockets live."""
        return self.runtime_base / self.system_user(name)


# ---------------------------------------------------------------------------------------------- names


def normalize_name(raw: str) -> str:
    """A hub user name from what the teacher typed: stripped, lower case, checked.

    Args:
        raw: one name as written in the roster file.
    Returns:
        The name the student types at the login page.
    Raises:
        RosterError: the name is not 1-20 characters of a-z, 0-9, '-', '_' starting with a letter.
    """
    name = raw.strip().lower()
    if not NAME_RE.fullmatch(name):
        raise RosterError(
            f"{raw.strip()!r} is not a usable name: use 1-20 characters a-z, 0-9, '-' or '_', starting with a letter"
        )
    return name


def read_names(path: Path) -> list[str]:
    """The names in a roster file: one per line; blank lines and '#' comments are skipped.

    Raises:
        RosterError: the file is missing, unreadable, empty, or has bad or repeated names
        (every bad line is listed, and nothing is created).
    """
    path = Path(path)
    if not path.is_file():
        raise RosterError(f"roster file {str(path)!r} not found: give a text file with one student name per line")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"cannot read roster file {str(path)!r}: {exc}") from None
    names: list[str] = []
    problems: list[str] = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            name = normalize_name(text)
        except RosterError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        if name in names:
            problems.append(f"line {number}: {name!r} is listed twice")
            continue
        names.append(name)
    if problems:
        raise RosterError(f"roster file {str(path)!r} has problems; no account was created:\n  " + "\n  ".join(problems))
    if not names:
        raise RosterError(f"roster file {str(path)!r} lists no names (one name per line; '#' starts a comment)")
    return names


# ------------------------------------------------------------------------------------------ passwords


def new_password() -> str:
    """A random password in four groups of three, e.g. 'k7m-q4w-z9p-3fa' (about 60 bits)."""
    chars = "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(12))
    return "-".join(chars[i : i + 3] for i in range(0, 12, 3))


def hash_password(password: str) -> str:
    """'scrypt$n$r$p$salt$hash' for storing; the password itself is never written anywhere."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **SCRYPT)
    return f"scrypt${SCRYPT['n']}${SCRYPT['r']}${SCRYPT['p']}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """True if `password` matches the stored hash; False for anything else, malformed input included."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p))
    except (ValueError, TypeError, AttributeError):
        return False
    return hmac.compare_digest(got.hex(), digest)


# The same work for an unknown name as for a known one, so timing does not tell which names exist.
DUMMY_HASH = hash_password(secrets.token_hex(8))


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


# ------------------------------------------------------------------------------------- system users


def require_root(what: str) -> None:
    """Raise RosterError unless running as root (system users can only be created by root)."""
    if os.geteuid() != 0:
        raise RosterError(f"{what} creates a system user per student, which needs root: run it with sudo")


def ensure_system_user(settings: Settings, name: str) -> pwd.struct_passwd:
    """Create the system user of hub user `name` if missing (no password, home 0700); return it.

    Raises:
        RosterError: the account exists but this hub did not create it, or useradd failed.
    """
    sysname = settings.system_user(name)
    home = settings.home_base / sysname
    try:
        entry = pwd.getpwnam(sysname)
    except KeyError:
        settings.home_base.mkdir(parents=True, exist_ok=True)
        cmd = ["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/bash",
               "--user-group", "--comment", "attention course hub", sysname]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RosterError(f"useradd {sysname} failed: {done.stderr.strip() or done.returncode}")
        entry = pwd.getpwnam(sysname)
    else:
        if Path(entry.pw_dir) != home:
            raise RosterError(
                f"system user {sysname} already exists with home {entry.pw_dir}, not one this hub created "
                f"(expected {home}); pick another name or HUB_USER_PREFIX"
            )
        home.mkdir(exist_ok=True)
        os.chown(home, entry.pw_uid, entry.pw_gid)
    os.chmod(home, 0o700)
    return entry


def as_user(entry: pwd.struct_passwd) -> dict:
    """subprocess keyword arguments that run a command as that system user, in its home."""
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": [], "cwd": entry.pw_dir,
            "env": {"HOME": entry.pw_dir, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}}


def notebook_sources(settings: Settings) -> list[Path]:
    """The course's notebooks a student gets: notebooks/*.ipynb and, once it exists, notebooks/zh/*.ipynb."""
    found = sorted(settings.notebooks.glob("*.ipynb"))
    zh = settings.notebooks / "zh"
    if zh.is_dir():
        found += sorted(zh.glob("*.ipynb"))
    return found


def copy_notebooks(settings: Settings, entry: pwd.struct_passwd, target: str = "notebooks") -> Path:
    """Copy the course notebooks into <home>/<target>, as the student (so no root write in their home)."""
    dest = Path(entry.pw_dir) / target
    script = (
        "import shutil, sys, pathlib\n"
        "src, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])\n"
        "for f in sys.argv[3:]:\n"
        "    out = dest / pathlib.Path(f).relative_to(src)\n"
        "    out.parent.mkdir(parents=True, exist_ok=True)\n"
        "    shutil.copyfile(f, out)\n"
    )
    files = [str(f) for f in notebook_sources(settings)]
    cmd = [str(settings.venv / "bin" / "python"), "-c", script, str(settings.notebooks), str(dest), *files]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, **as_user(entry))
    except OSError as exc:
        raise RosterError(f"copying the notebooks for {entry.pw_name} failed: {exc}") from None
    if done.returncode != 0:
        raise RosterError(f"copying the notebooks for {entry.pw_name} failed: {done.stderr.strip()[-400:]}")
    return dest


def student_access_problem(settings: Settings) -> str | None:
    """A sentence if an unprivileged user (nobody) cannot run the course's venv or read its notebooks."""
    python = settings.venv / "bin" / "python"
    sources = notebook_sources(settings)
    if not sources:
        return f"no notebooks found in {settings.notebooks}"
    probe = f"import attnlib, jupyterhub, jupyterlab; open({str(sources[0])!r}, 'rb').read(1)"
    try:
        done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=120,
                              user=NOBODY, group=NOBODY, extra_groups=[], cwd="/", env={"PATH": "/usr/bin:/bin"})
        detail = (done.stderr.strip().splitlines() or [""])[-1]
        ok = done.returncode == 0
    except (OSError, subprocess.SubprocessError) as exc:
        detail, ok = str(exc), False
    if ok:
        return None
    real = python.resolve()
    if not os.access(python, os.X_OK) or detail.startswith("[Errno 13]") or "Permission denied" in detail:
        return (f"students cannot run {python} (it is {real}: {detail or 'permission denied'}). The course's venv and "
                f"the Python it was made from must be readable by every user: clone the course under /srv or /opt and "
                f"build the venv from a system Python, e.g. make hub PYTHON=/usr/bin/python3 (pyenv or conda under "
                f"/root cannot be used)")
    return f"students cannot use the course's venv {settings.venv}: {detail}"


def ensure_runtime_dir(settings: Settings, entry: pwd.struct_passwd, name: str) -> Path:
    """The student's runtime folder: in a root-owned base (so nobody else can plant a link), theirs, 0700."""
    settings.runtime_base.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(settings.runtime_base, 0o755)
    path = settings.runtime_dir(name)
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(mode=0o700, exist_ok=True)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    os.chmod(path, 0o700)
    return path


def prepare_home(settings: Settings, name: str) -> pwd.struct_passwd:
    """Before a server starts: the system user exists, its home is 0700, its notebooks are there."""
    entry = ensure_system_user(settings, name)
    if not (Path(entry.pw_dir) / "notebooks").exists():
        copy_notebooks(settings, entry)
    ensure_runtime_dir(settings, entry, name)
    return entry


def reset_notebooks(settings: Settings, name: str) -> tuple[Path, Path | None]:
    """Give `name` a fresh copy of the notebooks; the old one is kept as notebooks-before-reset-<time>.

    Returns:
        (new copy, old copy's new path, or None if there was none).
    """
    entry = ensure_system_user(settings, name)
    old = Path(entry.pw_dir) / "notebooks"
    kept = None
    if old.exists() or old.is_symlink():
        kept = old.with_name(f"notebooks-before-reset-{time.strftime('%Y%m%d-%H%M%S')}")
        done = subprocess.run(["mv", "--no-target-directory", str(old), str(kept)], capture_output=True,
                              text=True, **as_user(entry))
        if done.returncode != 0:
            raise RosterError(f"could not move {old} aside: {done.stderr.strip()}")
    return copy_notebooks(settings, entry), kept


def delete_system_user(settings: Settings, name: str) -> None:
    """Remove the system user of `name` and its home (used by the load test and the tests' cleanup)."""
    sysname = settings.system_user(name)
    try:
        entry = pwd.getpwnam(sysname)
    except KeyError:
        return
    kill_processes_of(entry.pw_uid)
    subprocess.run(["userdel", "--remove", sysname], capture_output=True)
    shutil.rmtree(settings.home_base / sysname, ignore_errors=True)
    shutil.rmtree(settings.runtime_dir(name), ignore_errors=True)


def processes_of(uid: int) -> list[int]:
    """Pids of the processes that run as `uid`."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if d.stat().st_uid == uid:
                    pids.append(int(d.name))
            except OSError:
                continue
    return pids


def kill_processes_of(uid: int) -> None:
    """SIGKILL every process running as `uid`, by pid (a student's leftover server or kernel)."""
    if uid == 0:
        raise ValueError("uid must be a student's, got 0 (root)")
    for pid in processes_of(uid):
        try:
            os.kill(pid, 9)
        except OSError:
            pass


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
