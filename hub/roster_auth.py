"""RosterAuthenticator: each student logs in with the password `make hub-roster` printed for them.

Passwords are checked against the scrypt hashes in the roster file (hub/classroom.py), which is
re-read on every login, so accounts added while the hub runs can log in at once. A wrong password,
an unknown name or a malformed request all give the login page's "Invalid username or password"
(HTTP 403), never a traceback. Teachers in the roster are hub admins.

Why not the alternatives: PAM would need system passwords, which also open ssh and su to every
student account; SharedPasswordAuthenticator lets anyone with the one password log in as any
student; NativeAuthenticator is a sign-up flow with its own package. Here the system accounts stay
without password and the only door is the hub's.
"""
from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from classroom import RosterError, Settings, check_login, load_roster
from jupyterhub.auth import Authenticator
from traitlets import Unicode


class RosterAuthenticator(Authenticator):
    """Log in with a name and password from the course roster (hub/state/roster.json)."""

    state_dir = Unicode(
        "", config=True, help="Folder holding roster.json; empty means HUB_STATE or hub/state."
    )

    def _settings(self) -> Settings:
        settings = Settings.from_env()
        return dataclasses.replace(settings, state=Path(self.state_dir)) if self.state_dir else settings

    async def authenticate(self, handler, data):
        """Return {"name", "admin"} for a roster name with its password, else None."""
        if not isinstance(data, dict):
            return None
        settings = self._settings()
        # scrypt takes tens of ms: off the event loop, so 30 students logging in at once do not stall the hub
        name = await asyncio.get_running_loop().run_in_executor(
            None, check_login, settings, data.get("username"), data.get("password")
        )
        if name is None:
            self.log.warning("Failed login for %r", str(data.get("username"))[:40])
            return None
        role = load_roster(settings).get(name, {}).get("role")
        return {"name": name, "admin": role == "teacher"}

    def check_allowed(self, username, authentication=None):
        """Only names on the roster may log in (and keep access while they stay on it)."""
        try:
            return username in load_roster(self._settings())
        except RosterError as exc:
            self.log.error("%s", exc)
            return False
