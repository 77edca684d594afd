"""The live panels of a page: HTML controls over the states computed at build time (attnlib.widgets.static).

The kernel that executed the notebook (ATTNLIB_STATIC=1) left each panel's states in its output (STATES_MIME):
every state of a grid of control values, computed by the panel's own update. `fit_page` thins the grids of a
page's panels until their embedded JSON fits STATE_BUDGET together (the largest panel's busiest control first,
to about half its values: the states of the other values are dropped, none is computed again). Each panel becomes
an element of class al-static-panel: a caption (what is live here, which control was thinned and why, what needs
JupyterLab or Binder), one input/select per control (a control outside the grid is shown disabled), the figures
at the panel's settings, the states as JSON, and a call to assets/static_panel.js, which redraws them as a live
view in JupyterLab does: head grids, saturation figures and score histograms on canvases (assets/panel_view.js,
attnlib's own view), the others with Plotly.react.
"""
from __future__ import annotations

import html
import json
from typing import Optional

from attnlib.widgets.states import STATE_BUDGET, thinned
from attnlib.widgets.static import text


class PanelOverBudget(SystemExit):
    """A panel's states exceed STATE_BUDGET: the build stops, naming the control to thin."""


def over_budget_message(where: str, info: dict) -> str:
    """What to do when a panel's states do not fit the page budget."""
    return (f"build_site: {where}: the panel's states exceed {info['budget']:,} bytes per page "
            f"({info['states']} states). Thin the control '{info['control']}' (it has {info['values']} values in "
            f"the grid): give the panel static_grid={{'{info['control']}': [fewer values], ...}}.")


def check_budget(where: str, states: dict, budget: int = STATE_BUDGET) -> int:
    """The bytes of embedded state; raises PanelOverBudget (naming the control to thin) when over `budget`."""
    if "over_budget" in states:
        raise PanelOverBudget(over_budget_message(where, states["over_budget"]))
    size = len(embedded_json(states).encode())
    if size > budget:
        counts = {c["name"]: len(c["values"]) for c in states["controls"]}
        name = max(reversed(list(counts)), key=counts.get)
        raise PanelOverBudget(over_budget_message(where, {"budget": budget, "states": len(states["states"]),
                                                          "control": name, "values": counts[name]}))
    return size


def embedded_size(states: dict) -> int:
    """Bytes of the JSON the page embeds for this panel."""
    return len(embedded_json(states).encode())


def thin(states: dict, name: str) -> dict:
    """The panel's states with control `name` thinned to about half its values (its current value kept): the
    states of the other values and the pool pieces no state uses any more are dropped."""
    k = next(i for i, c in enumerate(states["controls"]) if c["name"] == name)
    c = states["controls"][k]
    kept = [c["values"].index(v) for v in thinned(c["values"], c["values"][c["index"]])]  # old indices
    new_index = {old: new for new, old in enumerate(kept)}
    kept_states = {}
    for key, state in states["states"].items():
        parts = key.split(",")
        if int(parts[k]) in new_index:
            parts[k] = str(new_index[int(parts[k])])
            kept_states[",".join(parts)] = state
    used = sorted({i for s in kept_states.values() if isinstance(s, list) for f in s for i in [*f[0], *f[1:]]})
    piece = {old: new for new, old in enumerate(used)}
    control = dict(c, values=[c["values"][i] for i in kept], labels=[c["labels"][i] for i in kept],
                   index=new_index[c["index"]])
    return dict(states, controls=[control if i == k else x for i, x in enumerate(states["controls"])],
                pool=[states["pool"][i] for i in used],
                states={key: [[[piece[t] for t in f[0]], *(piece[i] for i in f[1:])] for f in s]
                        if isinstance(s, list) else s for key, s in kept_states.items()})


def control_to_thin(states: dict) -> Optional[str]:
    """The control with the most values (the later one on a tie; the first control, the panel's main one, only
    when every other one is down to one value), or None when each has one value."""
    counts = {c["name"]: len(c["values"]) for c in states["controls"]}
    rest = [n for n in list(counts)[1:] if counts[n] > 1]
    name = max(reversed(rest), key=counts.get) if rest else next(iter(counts), None)
    return name if name is not None and counts[name] > 1 else None


def fit_page(where: str, panels: list[dict], budget: int = STATE_BUDGET) -> list[dict]:
    """The panels of a page, thinned until their embedded JSON fits `budget` together.

    While over, the panel with the most bytes (a main panel's counted half: it keeps more) loses about half the
    values of its control_to_thin. Raises PanelOverBudget when nothing is left to thin.
    """
    for states in panels:
        if "over_budget" in states:
            raise PanelOverBudget(over_budget_message(where, states["over_budget"]))
    panels, sizes = list(panels), [embedded_size(s) for s in panels]
    while sum(sizes) > budget:
        can = [j for j, s in enumerate(panels) if control_to_thin(s)]
        if not can:
            raise PanelOverBudget(f"build_site: {where}: {sum(sizes):,} bytes of panel states, over {budget:,} per "
                                  "page, and every control is down to one value: give the panels fewer figures")
        i = max(can, key=lambda j: sizes[j] / (2 if panels[j].get("main") else 1))
        panels[i] = thin(panels[i], control_to_thin(panels[i]))
        sizes[i] = embedded_size(panels[i])
    return panels


def embedded_json(states: dict) -> str:
    """The JSON the page embeds: controls, base figures, pool, states, figure kinds and the panel's strings."""
    language = states.get("language", "en")
    keep = {k: states[k] for k in ("controls", "base", "pool", "states", "kinds", "texts")}
    keep["text"] = {k: text(k, language) for k in ("no_state", "failed")}
    return json.dumps(keep, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


def is_live(control: dict) -> bool:
    """True when a control moves on the page (more than one value in the grid)."""
    return control["kind"] != "fixed" and len(control["values"]) > 1


def control_html(c: dict, language: str) -> str:
    """One control: a range input over the grid's values, a select, or a checkbox (disabled when not live)."""
    name, label = html.escape(c["name"]), html.escape(c["label"])
    off = "" if is_live(c) else f' disabled title="{html.escape(text("disabled_title", language))}"'
    cls = "al-control" if is_live(c) else "al-control al-disabled"
    if c["kind"] == "checkbox":
        checked = " checked" if c["values"][c["index"]] else ""
        return (f'<label class="{cls}"><input type="checkbox" data-al-control="{name}"{checked}{off}> '
                f'{label}</label>')
    if c["kind"] == "select":
        opts = "".join(f'<option value="{i}"{" selected" if i == c["index"] else ""}>{html.escape(lab)}</option>'
                       for i, lab in enumerate(c["labels"]))
        return f'<label class="{cls}">{label} <select data-al-control="{name}"{off}>{opts}</select></label>'
    top = max(len(c["values"]) - 1, 0)
    return (f'<label class="{cls}">{label} <input type="range" min="0" max="{top}" step="1" value="{c["index"]}" '
            f'data-al-control="{name}" aria-valuetext="{html.escape(c["labels"][c["index"]])}"{off}> '
            f'<output data-al-for="{name}">{html.escape(c["labels"][c["index"]])}</output></label>')


def caption_html(states: dict, binder_link: str, language: str) -> str:
    """Which controls are live on this page (and how many of their values), why some have fewer values than in
    JupyterLab (thinned to fit the page), which need JupyterLab or Binder."""
    live, fixed, fewer = [], [], False
    for c in states["controls"]:
        thinned_here = c["kind"] != "fixed" and len(c["values"]) < c.get("total", 0)
        fewer = fewer or thinned_here
        if is_live(c):
            steps = text("steps", language, n=len(c["values"]), total=c["total"]) if thinned_here else ""
            live.append(c["label"] + steps)
        else:
            fixed.append(c["label"])
    sep, space = text("name_sep", language), text("sentence_sep", language)
    parts = [text("live_here", language, names=sep.join(live))] if live else []
    if fewer:
        parts.append(text("thinned", language, mb=f"{STATE_BUDGET / 1e6:g}"))
    if fixed:
        parts.append(text("needs_lab", language, names=sep.join(fixed)))
    else:
        parts.append(text("all_live", language) + space + text("live_in_lab", language).strip())
    return f'<div class="al-static-caption">{html.escape(space.join(parts))} {binder_link}</div>'


def live_panel_html(states: dict, figures_html: str, panel_id: str, binder_link: str) -> str:
    """The interactive panel (class al-main-panel too for the notebook's main one): title, caption, controls,
    status line, figures, embedded states."""
    language = states.get("language", "en")
    title = f'<div class="al-static-title"><b>{html.escape(states.get("title") or "")}</b>'
    if states.get("caption"):
        title += f' <span>{html.escape(states["caption"])}</span>'
    title += "</div>"
    controls = "".join(control_html(c, language) for c in states["controls"])
    main = " al-main-panel" if states.get("main", True) else ""
    return (f'<div class="al-static-panel{main}" id="{panel_id}" data-al-live="1">{title}'
            f'{caption_html(states, binder_link, language)}'
            f'<div class="al-static-controls">{controls}</div>'
            f'<div class="al-static-status" role="status" aria-live="polite"></div>'
            f'<div class="al-static-figures">{figures_html}</div>'
            f'<script type="application/json" class="al-states">{embedded_json(states)}</script></div>')
