"""The message layer: English by default, a catalog per language, clear errors."""
import pytest

from attnlib import i18n


def test_english_by_default_and_fallback(monkeypatch):
    assert i18n.get_language() == "en"
    assert i18n.t("d_k = {d_k}", d_k=8) == "d_k = 8"
    monkeypatch.setitem(i18n._catalogs, "zh", {"d_k = {d_k}": "d_k 等于 {d_k}"})
    i18n.set_language("zh")
    try:
        assert i18n.t("d_k = {d_k}", d_k=8) == "d_k 等于 8"
        assert i18n.t("no translation yet") == "no translation yet"
    finally:
        i18n.set_language("en")


def test_rejects_unknown_language():
    with pytest.raises(ValueError, match="language must be one of"):
        i18n.set_language("fr")
