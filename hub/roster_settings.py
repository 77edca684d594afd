"""Where the class lives and who is in it: Settings (paths, from HUB_* variables), RosterError, user names.

Standard library only (hub/classroom.py re-exports it for the roster script, the hub's config, the load test and
the tests).
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME_RE = re.compile(r"[a-z][a-z0-9_-]{0,19}")


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
        listed = "\n  ".join(problems)
        raise RosterError(f"roster file {str(path)!r} has problems; no account was created:\n  {listed}")
    if not names:
        raise RosterError(f"roster file {str(path)!r} lists no names (one name per line; '#' starts a comment)")
    return names
