"""The teacher's side without a running hub: bad input gets one clear sentence, never a traceback.

These run anywhere (no root, no Node.js): the checks they exercise come before anything is created.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "hub"))

import classroom  # noqa: E402

pytestmark = pytest.mark.hub


def run(script: str, *args: str, env: dict | None = None, tmp_path: Path) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "HUB_STATE": str(tmp_path / "state"), "HUB_HOME_BASE": str(tmp_path / "home"),
                "HUB_USER_PREFIX": "jx-never-", **(env or {})}
    return subprocess.run([sys.executable, str(ROOT / "hub" / script), *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "not found"),
        ("", "lists no names"),
        ("# only a comment\n\n", "lists no names"),
        ("alice\nBad Name!\n", "line 2: 'Bad Name!' is not a usable name"),
        ("alice\nbob\nALICE\n", "line 3: 'alice' is listed twice"),
        ("a" * 21 + "\n", "1-20 characters"),
        ("9lives\n", "starting with a letter"),
        (b"\xff\xfe\x00bad bytes", "cannot read roster file"),
    ],
    ids=["missing", "empty", "comments-only", "bad-name", "duplicate", "too-long", "digit-first", "not-utf8"],
)
def test_bad_roster_file_gets_one_clear_message(tmp_path, content, message):
    roster = tmp_path / "students.txt"
    if isinstance(content, bytes):
        roster.write_bytes(content)
    elif content is not None:
        roster.write_text(content)
    done = run("roster.py", "add", str(roster), tmp_path=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "state" / "roster.json").exists()  # nothing was created


def test_roster_names_are_normalised_and_comments_skipped(tmp_path):
    roster = tmp_path / "students.txt"
    roster.write_text("  Alice  # first row\n\nbob_2\nchen-li\n")
    assert classroom.read_names(roster) == ["alice", "bob_2", "chen-li"]


def test_port_in_use_is_named_with_the_fix(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run("launch.py", "--check", env={"HUB_PORT": str(port)}, tmp_path=tmp_path)
    assert done.returncode == 2
    assert f"port {port} on 127.0.0.1 is in use" in done.stderr and "HUB_PORT=" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_missing_node_is_named_with_the_fix(tmp_path):
    bin_dir = tmp_path / "bin"  # a PATH with useradd but no node
    bin_dir.mkdir()
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    (bin_dir / "useradd").symlink_to(useradd)
    done = run("launch.py", "--check", env={"PATH": str(bin_dir)}, tmp_path=tmp_path)
    assert done.returncode == 2
    assert "Node.js is not installed" in done.stderr and "make hub-deps" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_bad_port_number_is_named(tmp_path):
    done = run("launch.py", "--check", env={"HUB_PORT": "eighty"}, tmp_path=tmp_path)
    assert done.returncode == 2 and "HUB_PORT must be a whole number" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_passwords_hash_and_check():
    password = classroom.new_password()
    assert len(password) == 15 and password.count("-") == 3
    assert classroom.new_password() != password  # 60 random bits: a repeat has probability ~1e-18
    stored = classroom.hash_password(password)
    assert password not in stored and stored.startswith("scrypt$")
    assert classroom.verify_password(password, stored)
    assert not classroom.verify_password(password + "x", stored)
    assert not classroom.verify_password(password, "not a hash")
    assert not classroom.verify_password(password, "scrypt$zz$8$1$00$00")


def test_check_login_never_raises_on_odd_input(tmp_path):
    settings = classroom.Settings(state=tmp_path / "state", home_base=tmp_path, prefix="jx-never-",
                                  venv=Path(sys.prefix), notebooks=ROOT / "notebooks")
    classroom.save_roster(settings, {"alice": {"role": "student", "password": classroom.hash_password("right-one")}})
    assert classroom.check_login(settings, "alice", "right-one") == "alice"
    assert classroom.check_login(settings, " ALICE ", "right-one") == "alice"
    for name, password in (("alice", "wrong"), ("bob", "right-one"), (None, None), (["alice"], "right-one"),
                           ("alice", 42), ("Bad Name!", "x"), ("alice", "x" * 5000)):
        assert classroom.check_login(settings, name, password) is None
    (tmp_path / "state" / "roster.json").write_text("{ not json")
    assert classroom.check_login(settings, "alice", "right-one") is None
