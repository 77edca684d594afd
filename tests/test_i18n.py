"""The message layer: English by default, one zh entry per template (same placeholders, none orphaned), Chinese
checkers and figures under set_language("zh"), and English output unchanged."""
import ast
import json
import re
import string
from pathlib import Path

import numpy as np
import pytest
import torch

import attnlib as al
from attnlib import checks, i18n, viz

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "attnlib" / "locale"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english_after_each_test():
    """Every test starts and ends in English, whatever it sets."""
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def _t_calls() -> tuple[dict[str, list[str]], list[str]]:
    """({template: ["file:line", ...]}, ["file:line" of a call to t whose first argument is not a str literal])."""
    templates: dict[str, list[str]] = {}
    bad = []
    for path in sorted((ROOT / "attnlib").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t":
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                first = node.args[0] if node.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    templates.setdefault(first.value, []).append(where)
                else:
                    bad.append(where)
    return templates, bad


def _placeholders(text: str) -> list[tuple]:
    """The (name, conversion, format spec) of each placeholder, sorted: "{x:.4f}" -> ("x", "", ".4f")."""
    parts = string.Formatter().parse(text)
    return sorted((name, conv or "", spec) for _, name, spec, conv in parts if name is not None)


def _files(language: str) -> dict[str, dict[str, str]]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted((LOCALE / language).glob("*.json"))}


def test_every_call_to_t_has_a_literal_template():
    templates, bad = _t_calls()
    assert len(templates) > 200, "the scan found too few templates: did the name `t` change?"
    assert not bad, f"t() needs a str literal as its first argument (the template), so this test can read it: {bad}"


def test_every_template_has_a_zh_entry_with_the_same_placeholders():
    templates, _ = _t_calls()
    zh = i18n.catalog("zh")
    missing = {k: v for k, v in templates.items() if k not in zh}
    assert not missing, f"templates without a Chinese entry in attnlib/locale/zh/*.json: {missing}"
    wrong = {k: (_placeholders(k), _placeholders(zh[k])) for k in templates if _placeholders(k) != _placeholders(zh[k])}
    assert not wrong, f"zh entries whose placeholders differ from the English template's: {wrong}"


def test_no_zh_entry_is_orphaned_and_files_agree():
    templates, _ = _t_calls()
    files = _files("zh")
    orphans = {name: [k for k in entries if k not in templates] for name, entries in files.items()}
    assert not any(orphans.values()), f"zh entries that no t() call uses (remove them): {orphans}"
    seen: dict[str, tuple[str, str]] = {}
    for name, entries in files.items():
        for key, text in entries.items():
            assert text.strip(), f"{name}: empty translation of {key!r}"
            if key in seen:
                assert seen[key][1] == text, f"{key!r} is translated differently in {seen[key][0]} and {name}"
            seen[key] = (name, text)


def test_english_by_default_fallback_and_reload():
    assert i18n.get_language() == "en"
    assert i18n.t("✓ Correct: {message}", message="d_k = 8") == "✓ Correct: d_k = 8"
    al.set_language("zh")
    assert i18n.t("✓ Correct: {message}", message="d_k = 8") == "✓ 正确：d_k = 8"
    assert i18n.t("no translation yet") == "no translation yet"
    first = i18n.catalog("zh")
    assert i18n.catalog("zh") is first  # read once: t is a dict lookup
    i18n.reload()
    assert i18n.catalog("zh") is not first and i18n.catalog("zh") == first


def test_rejects_unknown_language():
    with pytest.raises(ValueError, match="language must be one of"):
        i18n.set_language("fr")


def _merge_no_transpose(x):
    return x.contiguous().view(x.size(0), x.size(2), -1)  # [batch, seq, d_model] with heads mixed across tokens


@pytest.mark.parametrize("checker, answer, words", [
    (checks.check_weighted_sum, lambda w, v: w @ v, ["✓ 正确：", "矩阵乘积"]),
    (checks.check_weighted_sum, lambda w, v: v.mean(0).expand(w.shape[0], -1), ["✗ 还不对：", "简单平均"]),
    (checks.check_weighted_sum, "w @ v", ["✗ 还不对：", "这里需要一个函数"]),
    (checks.check_scaled_scores, lambda q, k: q @ k.transpose(-2, -1), ["✗ 还不对：", "忘了除以 √d_k"]),
    (checks.check_causal_mask, lambda n: torch.ones(n, n).triu(), ["✗ 还不对：", "转置", "下三角"]),
    (checks.check_merge_heads, _merge_no_transpose, ["✗ 还不对：", "头 0·词元 1"]),
    (checks.check_window_pairs, lambda n, w: n * (2 * w + 1), ["✗ 还不对：", "窗口"]),
])
def test_checkers_speak_chinese(run, checker, answer, words):
    al.set_language("zh")
    _, out = run(checker, answer)
    assert out.startswith(words[0]) and all(w in out for w in words), out
    assert "Correct" not in out and "Not yet" not in out


def test_the_chinese_edition_checks_its_own_sentence(run):
    al.set_language("zh")  # 这只动物没有过马路，因为它太…: 10 tokens, so the weights differ from the English 0.493
    ok, out = run(checks.check_undecided_word, {"adjective": 1.0, "of-living": 1.0, "of-place": 1.0})
    assert ok and out.startswith("✓ 正确：「它」分给「动物」的权重是 0.494，分给「马路」的是 0.494：难分高下。"), out
    assert "0.943" in out and out.endswith("。\n"), out
    row = checks.nb01.animal_street_it_row({"adjective": 1.0, "of-living": 1.0}, 3.0)  # [10]
    assert row.shape == (10,) and float(row[1]) > 0.9  # 动物 is token 1


def _curves():
    return {k: al.saturation_curve([1, 4, 16], scaled=k == "scaled", n_queries=4) for k in ("scaled", "unscaled")}


def _figures():
    rng = np.random.default_rng(0)
    w = np.full(4, 0.25)
    return [
        viz.saturation_figure(w, _curves(), d_k=4, current={"entropy": 1.0, "max_weight": 0.5, "jacobian_norm": 0.1}),
        viz.qk_space_figure(rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), ["a", "b", "c"]),
        viz.convex_hull_figure(rng.normal(size=(4, 2)), w),
        viz.score_histogram_figure(rng.normal(size=50)),
        viz.complexity_figure({"naive": {"n": [64, 128], "time_ms": [1.0, 2.0], "memory_mb": [1.0, 4.0]}}),
    ]


def test_figures_have_chinese_titles_and_traces_are_found_by_their_english_names():
    al.set_language("zh")
    for fig in _figures():
        axes = [fig.layout[a].title.text for a in fig.layout if a.startswith(("xaxis", "yaxis"))]
        assert CJK.search(fig.layout.title.text), fig.layout.title.text
        assert all(CJK.search(a or "") or a in ("d_k", None) for a in axes), axes
    sat, qk, hull, hist, _ = _figures()
    assert viz.trace(sat, "unscaled", xaxis="x2").name == "未缩放"
    assert "熵" in viz.trace(sat, "unscaled", xaxis="x2").hovertemplate
    assert viz.trace(qk, "query q_i").name == "查询 q_i" and viz.trace(hull, "convex hull").name == "凸包"
    assert viz.trace(hist, "N(0, 1) density").name == "N(0, 1) 密度"
    al.set_language("en")  # a figure drawn in Chinese is still found, and updated, after switching back
    viz.update_saturation(sat, np.full(4, 0.25), curves=_curves(), d_k=16,
                          current={"entropy": 1.0, "max_weight": 0.5, "jacobian_norm": 0.1})
    assert viz.trace(sat, "this panel (mean of its rows)", xaxis="x3").x == (16,)


def test_english_output_is_unchanged(run):
    _, out = run(checks.check_weighted_sum, lambda w, v: w @ v)
    assert out == ("✓ Correct: output[i] = Σ_j weights[i, j] · values[j], which is the matrix product "
                   "weights @ values.\n")
    _, out = run(checks.check_weighted_sum, lambda w, v: None)
    assert out == ("✗ Not yet: with weights (3, 5) and values (5, 4): your function returned None; expected a "
                   "tensor of shape (3, 4) (did you forget `return`?)\n")
    _, out = run(checks.check_cnn_layers_needed, lambda d, k: -(-d // (k - 1)))
    assert out == ("✗ Not yet: cnn_layers_needed(2, 3) returned 1, expected 2. Each layer reaches (k − 1)/2 positions "
                   "to EACH side, not k − 1 to one side (that is a causal convolution; this one is centred).\n")
    sat, qk, hull, hist, cost = _figures()
    assert sat.layout.title.text == "Softmax saturation" and sat.layout.annotations[1].text == "entropy vs d_k"
    assert qk.layout.title.text == "Q and K space (d_k = 4, best plane, 76% shown)"
    assert [t.name for t in hull.data] == ["convex hull", "value vectors v_j", "output Σ w_j v_j"]
    assert hist.data[0].name == "q·k (var 1.02)" and hist.layout.xaxis.title.text == "score"
    assert cost.layout.yaxis2.title.text == "peak memory (MB, log scale)"


def test_explorer_controls_speak_chinese_as_the_page_shows_them():
    """Every control of both explorers, as a page shows it (widgets.states.control_spec): a Chinese label (d_k, a
    math symbol, stays), the mask's options in Chinese, and the values the code compares unchanged."""
    from attnlib.widgets.states import control_spec
    al.set_language("zh")
    explorer = al.widgets.AttentionExplorer(mask="padding", seq_len=4, heads=1, max_seq=8)
    for panel in (explorer, al.widgets.SaturationExplorer(n_keys=4)):
        for name, control in panel.controls.items():
            spec = control_spec(name, control)
            assert CJK.search(spec["label"]) or spec["label"] == "d_k", (name, spec["label"])
            if spec["kind"] == "select":
                assert all(CJK.search(label) for label in spec["labels"]), (name, spec["labels"])
    mask = control_spec("mask", explorer.controls["mask"])
    assert mask["values"] == list(al.widgets.MASKS) and mask["value"] == "padding"
    assert dict(zip(mask["values"], mask["labels"])) == {"none": "无", "causal": "因果", "padding": "填充",
                                                         "window": "窗口"}
    assert explorer.controls["mask"].label == "填充" and not explorer.controls["pad"].disabled  # _on_mask saw the kind
    explorer.controls["mask"].value = "window"
    assert explorer.status == "" and not explorer.controls["window"].disabled and explorer.controls["pad"].disabled
    al.set_language("en")
    assert [label for label, _ in al.widgets.AttentionExplorer().controls["mask"].options] == list(al.widgets.MASKS)
