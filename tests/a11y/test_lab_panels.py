"""axe-core's WCAG 2.0/2.1 A and AA rules inside each notebook's main live panel in JupyterLab, both editions.

The notebook is run in JupyterLab in Debian's Chromium (tests/browser/conftest.py's `ran`); axe checks the main
panel's own elements (`.al-main-panel`): none may break a serious or critical rule. JupyterLab's interface is not
ours: its violations (everything outside the panel) are printed in the test's output, never failed on.
"""
from __future__ import annotations

import pytest

from attnlib.bench.a11y import IMPACTS, axe_run, counts

PANEL = ".al-main-panel"


def lines(violations: list[dict]) -> list[str]:
    """One line per element: rule, impact, element, axe's reason."""
    return [f"{v['rule']} ({v['impact']}: {v['help']}) at {n['target']}: {n['html']} -- {n['why']}"
            for v in violations for n in v["nodes"]]


@pytest.mark.browser
def test_main_panel_has_no_serious_or_critical_violation(ran):
    if ran.run.problems():
        pytest.fail("Run All did not finish cleanly (tests/browser/test_notebooks_in_browser.py says why)",
                    pytrace=False)
    ran.main_panel()
    ours = axe_run(ran.page, include=[PANEL])
    theirs = axe_run(ran.page, exclude=[PANEL])["violations"]
    total = counts(theirs)
    print(f"{ran.name}: JupyterLab's own interface (not failed on): "
          + ", ".join(f"{k} {total[k]}" for k in IMPACTS))
    for text in lines(theirs):
        print(f"  JupyterLab: {text}")
    bad = [v for v in ours["violations"] if v["impact"] in ("critical", "serious")]
    assert not bad, (f"{ran.name}: the main panel breaks serious/critical WCAG rules (axe {ours['version']}):\n"
                     + "\n".join(lines(bad)))
