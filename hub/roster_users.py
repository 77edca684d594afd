"""The system side of a student: their system user, home (0700), notebook copy, runtime folder and processes.

Each hub user `alice` runs as the system user `jupyter-alice` (the prefix The Littlest JupyterHub uses). System
accounts get no password: nobody logs in to them by ssh or su, only through the hub. Standard library only.
"""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from pathlib import Path

from roster_settings import RosterError, Settings

NOBODY = 65534  # uid/gid of `nobody`: stands for "any student" in the access check


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
            raise RosterError(f"useradd {sysname} failed: {done.stderr.strip() or done.returncode}") from None
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
