"""axe's colour-contrast check of highlighted code, one token per style (attnlib/bench/a11y.py): it still finds a
token that fails, in whatever code block it sits, and it finds the same elements as checking every token does.

The page is written here: 60 code blocks of well-contrasted tokens (#1a1a1a on #f5f5f5, as the site's code), then a
block on a dark output background with the same token classes (fails: same colours, different background), then a
token whose colour alone fails (#a0a0a0 on #f5f5f5, 2.3:1), in the last block.
"""
from __future__ import annotations

import pytest

from attnlib.bench.a11y import audit, axe_run

pytestmark = pytest.mark.browser

GOOD = '<span class="n">weights</span><span class="o">=</span><span class="mi">128</span>'
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>code</title><style>
div.highlight {{ background: #f5f5f5; }} .highlight .n, .highlight .o, .highlight .mi {{ color: #1a1a1a; }}
.jp-OutputArea div.highlight {{ background: #3a3a3a; }} .highlight .weak {{ color: #a0a0a0; }}
</style></head><body><main><h1>code</h1>
{good}
<div class="jp-OutputArea"><div class="highlight"><pre id="dark">{line}</pre></div></div>
<div class="highlight"><pre>{line} <span class="weak" id="weak">scores</span></pre></div>
</main></body></html>"""


def contrast_targets(violations: list[dict]) -> set[str]:
    """The elements that break axe's color-contrast rule."""
    return {n["target"] for v in violations if v["rule"] == "color-contrast" for n in v["nodes"]}


def test_one_token_per_style_finds_what_every_token_finds(tmp_path, browser, browser_context_args):
    good = "\n".join(f'<div class="highlight"><pre>{GOOD}</pre></div>' for _ in range(60))
    page = tmp_path / "code.html"
    page.write_text(PAGE.format(good=good, line=GOOD), encoding="utf-8")
    context = browser.new_context(**browser_context_args)
    try:
        row = audit(context, page)  # the sampled check, as the site's test runs it
        tab = context.new_page()
        tab.goto(page.as_uri())
        every = axe_run(tab)["violations"]  # every token checked
    finally:
        context.close()
    kept, skipped = row["code_tokens"]
    # prediction: 3 styles on the light blocks, the same 3 on the dark one, the weak one: 7 checked; the other 180
    # (57 x 3 on the first blocks ... 177, and the last block's 3) skipped
    assert (kept, skipped) == (7, 180), row["code_tokens"]
    sampled = contrast_targets([{"rule": r["rule"], "nodes": r["nodes"]} for r in row["rules"]])
    assert "#weak" in sampled, row["rules"]  # the weak colour, in the last of 62 blocks
    assert any(t.startswith("#dark") for t in sampled), row["rules"]  # good colours on the dark output block
    assert sampled == contrast_targets(every)
