"""Hub passwords: random ones to hand out on paper, stored only as scrypt hashes (standard library only)."""
from __future__ import annotations

import hashlib
import hmac
import secrets

# Unambiguous characters (no 0/O, 1/l/I): read aloud or copied from paper without mistakes.
PASSWORD_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
SCRYPT = {"n": 2**14, "r": 8, "p": 1}  # about 16 MB and a few tens of ms per check


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
