"""A live panel on a page without a kernel (the static site and slides): its states, a snapshot and a note.

The site builder (scripts/sitebuild/) executes the notebooks with ATTNLIB_STATIC=1. A panel displayed there
calls `panel_bundle(panel)`: the figures at the panel's current settings (the snapshot the slides show) and, for
every panel, every state of a grid of control values, computed with the panel's own update, which the page's HTML
controls redraw (no kernel, no network; the site builder thins the grids of a page to its STATE_BUDGET). The
constants and the visible strings of the static edition (TEXT, per language) are defined here once, for both sides.
"""
from __future__ import annotations

import html
import json
import os
from typing import Any, Optional

from ..i18n import get_language
from .states import label, panel_states, shown

STATIC_ENV = "ATTNLIB_STATIC"  # "1": panels display as snapshots
SNAPSHOT_MIME = "application/vnd.attnlib.panel-snapshot+json"  # {"figures": [plotly JSON, ...]}
STATES_MIME = "application/vnd.attnlib.panel-states+json"  # see panel_states
NOTE_CLASS = "al-static-note"  # class of the note's <div>
BINDER_SLOT = "<!--binder-->"  # where the site builder puts the notebook's Binder link

# Every visible string of the static edition, per language (the site builder reads the page strings here too).
TEXT = {
    "en": {
        "snapshot_at": " (static snapshot at {settings}).",
        "snapshot": " (static snapshot).",
        "live_in_lab": " In JupyterLab or on Binder the sliders move these figures live.",
        "live_here": "Live on this page (computed when the site was built, no kernel): {names}.",
        "needs_lab": "Needs JupyterLab or Binder: {names}.",
        "all_live": "Every control of this panel is live here.",
        "steps": " ({n} of its {total} values)",
        "thinned": ("A control with fewer values here than in JupyterLab was thinned: the page holds the figures of "
                    "every combination of the controls, computed when the site was built, in at most {mb} MB."),
        "no_state": "This combination was not computed for the page: move another control, or run it on Binder.",
        "failed": "The notebook's code raised here: {error}",
        "disabled_title": "Moves in JupyterLab or on Binder",
        "binder_link": "Open this notebook on Binder",
        "binder_nav": "Run it live on Binder",
        "all_notebooks": "All notebooks",
        "slides": "Slides", "page": "page", "figure": "Figure", "name_sep": ", ", "sentence_sep": " ",
        "twin": "中文",
        "widget_note": "{label}: this interactive panel runs in JupyterLab or on Binder.",
        "index_title": "Course index",
        "slides_title": "Course slides",
        "index_site": ("This is the static edition of the course: nothing here needs a kernel or a network "
                       "connection. On every page the panels' controls move their figures (computed when "
                       "the site was built, over fewer values than in JupyterLab where a page would grow too "
                       "large); every panel moves freely in JupyterLab (`make lab`) or on Binder."),
        "index_slides": ("These are the slides for the classroom: every figure shows its initial state and "
                         "nothing here needs a kernel or a network connection. The live panels move in "
                         "JupyterLab (`make lab`) or on Binder."),
        "index_header": "| # | Notebook | Article section | What you do | |",
        "continued": "{label} (continued)",
        "show_code": "Show the code", "nav_label": "Course navigation", "live_panel": "Live panel",
        "on": "on", "off": "off", "list_sep": ", ",
    },
    "zh": {
        "snapshot_at": "（静态快照：{settings}）。",
        "snapshot": "（静态快照）。",
        "live_in_lab": "在 JupyterLab 或 Binder 中，滑块会实时改变这些图。",
        "live_here": "本页可直接操作（建站时已算好，无需内核）：{names}。",
        "needs_lab": "需要 JupyterLab 或 Binder：{names}。",
        "all_live": "本面板的所有控件在本页都可操作。",
        "steps": "（取其 {total} 个值中的 {n} 个）",
        "thinned": "取值比 JupyterLab 中少的控件是精简过的：网页存有控件每种组合的图（建站时算好），每页至多 {mb} MB。",
        "no_state": "建站时没有计算这个组合：请换一个控件，或在 Binder 上运行。",
        "failed": "笔记本的代码在这里报错：{error}",
        "disabled_title": "在 JupyterLab 或 Binder 中可操作",
        "binder_link": "在 Binder 上打开这个笔记本",
        "binder_nav": "在 Binder 上实时运行",
        "all_notebooks": "全部笔记本",
        "slides": "幻灯片", "page": "网页", "figure": "图", "name_sep": "、", "sentence_sep": "",
        "twin": "English",
        "widget_note": "{label}：这个交互面板需要在 JupyterLab 或 Binder 中运行。",
        "index_title": "课程目录",
        "slides_title": "课程幻灯片",
        "index_site": ("这是课程的静态版：这里的一切都不需要内核，也不需要联网。每一页上面板的控件都能改变它们的图"
                       "（建站时已算好；网页会太大时，取值比 JupyterLab 中少）。所有面板都可以在 JupyterLab"
                       "（`make lab`）或 Binder 中自由操作。"),
        "index_slides": ("这是课堂用的幻灯片：每幅图显示初始状态，不需要内核，也不需要联网。交互面板可以在 "
                         "JupyterLab（`make lab`）或 Binder 中操作。"),
        "index_header": "| # | 笔记本 | 文章章节 | 内容 | |",
        "continued": "{label}（续）",
        "show_code": "显示代码", "nav_label": "课程导航", "live_panel": "交互面板",
        "on": "开", "off": "关", "list_sep": "，",
    },
}


def text(key: str, language: Optional[str] = None, **values: Any) -> str:
    """The static edition's string `key` in `language` (default: attnlib's current language), filled in."""
    strings = TEXT.get(language or get_language(), TEXT["en"])
    template = strings.get(key, TEXT["en"][key])
    return template.format(**values) if values else template


def is_static() -> bool:
    """True when panels must display as snapshots (the environment variable STATIC_ENV is "1")."""
    return os.environ.get(STATIC_ENV) == "1"


def setting(value: Any) -> str:
    """A control value as a page shows it in the current language: on/off translated, numbers as `shown`."""
    return text("on" if value else "off") if isinstance(value, bool) else shown(value)


def _note(panel: Any) -> str:
    """The note under a panel's title: its settings, its caption, where the sliders move (BINDER_SLOT for the link)."""
    settings = text("list_sep").join(f"{label(name, c)} = {setting(c.value)}"
                         for name, c in panel.controls.items() if not getattr(c, "disabled", False))
    parts = [f"<b>{html.escape(panel.title)}</b>" if panel.title else f"<b>{text('live_panel')}</b>",
             html.escape(text("snapshot_at", settings=settings) if settings else text("snapshot")),
             f" {html.escape(panel.caption)}" if getattr(panel, "caption", "") else "",
             f"{html.escape(text('live_in_lab'))} {BINDER_SLOT}"]
    return f'<div class="{NOTE_CLASS}">{"".join(parts)}</div>'


def is_main(panel: Any) -> bool:
    """True for the notebook's main panel (panel.main, or the al-main-panel class of its widget)."""
    main = getattr(panel, "main", None)
    if main is not None:
        return bool(main)
    widget = getattr(panel, "widget", None)
    return "al-main-panel" in getattr(widget, "_dom_classes", ())


def panel_bundle(panel: Any) -> dict:
    """The panel for a page without a kernel: note, snapshot at its settings and its states.

    Args: panel: a LivePanel (its title, caption, controls, figures and figures_at are read, nothing is changed).
    Returns: {"text/plain": repr(panel), "text/html": a note (class NOTE_CLASS, BINDER_SLOT for the link),
        SNAPSHOT_MIME: {"figures": [plotly JSON of each figure]}, STATES_MIME: panel_states(panel) plus "title",
        "caption" and "main" (is_main)}.
    """
    bundle = {
        "text/plain": repr(panel),
        "text/html": _note(panel),
        SNAPSHOT_MIME: {"figures": [json.loads(f.to_json(validate=False)) for f in panel.figures]},
    }
    bundle[STATES_MIME] = dict(panel_states(panel), title=panel.title, caption=getattr(panel, "caption", ""),
                               main=is_main(panel))
    return bundle

