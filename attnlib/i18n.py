"""One small message layer: attnlib's user-facing text as English templates, translated per language.

A template is the literal first argument of `t` (tests/test_i18n.py reads them with ast). With values it is a
str.format template ("{err:.4g}"; literal braces doubled, as in plotly's "%{{x}}"); without values it is returned
as it is ("%{x:.3f}"). A translation keeps every placeholder, with its format spec, and may reorder them.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any

LANGUAGES = ("en", "zh")  # English is the source; every other language has catalogs in attnlib/locale/<language>/
_current = ["en"]  # the language chosen by set_language (a list, so no `global` is needed)
_catalogs: dict[str, dict[str, str]] = {}


def set_language(language: str) -> None:
    """Choose the language of every message attnlib prints or draws from now on.

    Args:
        language: one of LANGUAGES ("en" or "zh").
    """
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {list(LANGUAGES)}, got {language!r}")
    _current[0] = language


def get_language() -> str:
    """The language chosen by set_language ("en" until then)."""
    return _current[0]


def catalog(language: str) -> dict[str, str]:
    """{English template: translation} for `language`: every attnlib/locale/<language>/*.json, read once."""
    if language not in _catalogs:
        folder = resources.files("attnlib") / "locale" / language
        merged: dict[str, str] = {}
        if folder.is_dir():
            for part in sorted(folder.iterdir(), key=lambda f: f.name):
                if part.name.endswith(".json"):
                    merged.update(json.loads(part.read_text(encoding="utf-8")))
        _catalogs[language] = merged
    return _catalogs[language]


def reload() -> None:
    """Forget the catalogs read so far: the next lookup reads attnlib/locale/ again (after a catalog is edited)."""
    _catalogs.clear()


def t(template: str, **values: Any) -> str:
    """`template` in the current language (English when no translation exists), filled with `values`.

    Args:
        template: the English text, with named placeholders such as "{d_k}" or "{weight:.3f}".
        values: the placeholders' values.

    Returns:
        the translated template, formatted.
    """
    language = get_language()
    text = template if language == "en" else catalog(language).get(template, template)
    return text.format(**values) if values else text
