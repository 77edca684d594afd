"""A live panel on a page without a kernel (the static site and slides): a snapshot of its figures and a note.

The site builder (scripts/) executes the notebooks with ATTNLIB_STATIC=1 and imports these constants, so
the names below are defined here once, for both sides.
"""
from __future__ import annotations

import html
import json
import os
from typing import Any

from ..rounding import rounded

STATIC_ENV = "ATTNLIB_STATIC"  # "1": panels display as snapshots
SNAPSHOT_MIME = "application/vnd.attnlib.panel-snapshot+json"  # {"figures": [plotly JSON, ...]}
NOTE_CLASS = "al-static-note"  # class of the note's <div>
BINDER_SLOT = "<!--binder-->"  # where the site builder puts the notebook's Binder link


def is_static() -> bool:
    """True when panels must display as snapshots (the environment variable STATIC_ENV is "1")."""
    return os.environ.get(STATIC_ENV) == "1"


def _shown(value: Any) -> str:
    """A control value as the note prints it: on/off, 3 significant digits, or the value."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{rounded(value):.3g}" if isinstance(value, float) else str(value)


def snapshot_bundle(panel: Any) -> dict:
    """The panel at its current settings, for a page without a kernel.

    Args: panel: a LivePanel (its title, caption, controls and figures are read, nothing is changed).
    Returns: {"text/plain": repr(panel), "text/html": a note (class NOTE_CLASS) naming the settings and saying the
        sliders move in JupyterLab or on Binder, with BINDER_SLOT for the link, SNAPSHOT_MIME: {"figures": [plotly
        JSON of each figure]}}.
    """
    settings = ", ".join(
        f"{getattr(c, 'description', '') or name} = {_shown(c.value)}"
        for name, c in panel.controls.items() if not getattr(c, "disabled", False)
    )
    parts = [f"<b>{html.escape(panel.title)}</b>" if panel.title else "<b>Live panel</b>",
             f" (static snapshot at {html.escape(settings)})." if settings else " (static snapshot).",
             f" {html.escape(panel.caption)}" if panel.caption else "",
             f" In JupyterLab or on Binder the sliders move these figures live. {BINDER_SLOT}"]
    return {
        "text/plain": repr(panel),
        "text/html": f'<div class="{NOTE_CLASS}">{"".join(parts)}</div>',
        SNAPSHOT_MIME: {"figures": [json.loads(f.to_json(validate=False)) for f in panel.figures]},
    }
