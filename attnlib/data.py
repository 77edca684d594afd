"""Toy sentences, hand-built embeddings and synthetic tasks; everything random is seeded."""
from __future__ import annotations

import torch

# ---- 01: the "animal / street" sentence with hand-built features ----

# ---- 02-04: toy inputs ----

# ---- 05: synthetic multi-relation task ----
