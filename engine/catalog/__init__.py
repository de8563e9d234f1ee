"""Every fixed sentence Circus says, to a model or to a person: one catalog per language.

`en.py` and `zh.py` each hold one dict, key -> str.format template, with the same keys and
the same placeholders (tests/engine/test_catalog.py); `zh_hans.py` holds the Simplified-script text of
Discord's command picker (`cmd.*` keys) for zh-CN users. `is_zh` is the one place that decides which
language a setting or a Discord locale means; `say` fills a template in it. Plain dicts: cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from engine.catalog.en import TEXT as EN
from engine.catalog.zh import TEXT as ZH
from engine.catalog.zh_hans import TEXT as ZH_HANS

CATALOGS: Mapping[str, Mapping[str, str]] = {"en": EN, "zh": ZH}


def is_zh(language: object) -> bool:
    """A scene's `language` setting or a Discord locale means Chinese: it starts with "zh"."""
    return str(language or "").lower().startswith("zh")


def lang_of(language: object) -> str:
    """The catalog for `language`: "zh" or "en" (everything not Chinese is English)."""
    return "zh" if is_zh(language) else "en"


class Phrase:
    """A catalog sentence not yet given a language: a value inside another sentence (rendered
    in that sentence's language), or the message an error carries until a frontend shows it."""

    __slots__ = ("key", "values")

    def __init__(self, key: str, /, **values: object) -> None:
        self.key = key
        self.values = values

    def render(self, language: object) -> str:
        return say(self.key, language, **self.values)

    def __repr__(self) -> str:
        return f"Phrase({self.key!r}, **{self.values!r})"


@lru_cache(maxsize=256)
def _table(language: object) -> Mapping[str, str]:
    return CATALOGS[lang_of(language)]  # prompts say dozens of sentences per turn: decide once


def picker_text(key: str, locale: object) -> str:
    """A `cmd.*` sentence (Discord's command picker) in a Discord locale: zh-CN in Simplified
    script (zh_hans.py), any other Chinese in zh.py's Traditional, everything else English."""
    if str(locale or "").lower() in ("zh-cn", "zh_cn", "zh-hans"):
        return ZH_HANS[key]
    return CATALOGS[lang_of(locale)][key]


def say(key: str, language: object, /, **values: object) -> str:
    """The sentence `key` in `language`, filled with `values`: a Phrase value is said in the
    same language, and a list or tuple is joined with the language's separator (", " / "、")."""
    table = _table(language)
    template = table[key]
    if not values:
        return template
    for name, value in values.items():
        if isinstance(value, Phrase):
            values[name] = value.render(language)
        elif isinstance(value, (list, tuple)):
            values[name] = table["list.sep"].join(map(str, value))
    return template.format(**values)
