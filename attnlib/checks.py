"""Exercise checkers: each returns nothing on success and prints/raises clear feedback otherwise."""
from __future__ import annotations

# ---- shared helpers ----

# ---- 01 / 02 ----

# ---- 03 / 04 ----

# ---- 05 ----

# ---- 06 ----

# ---- 07 ----
