"""The bot's words: `t(key)` says `bot.<key>` from engine's catalog; slash-command text by code.

Replies follow the scene's `language` (engine.is_zh decides); outside a scene they follow the
user's Discord locale. A command's and an option's text is named by a stable `cmd.*` code of
the catalog (`words`): Discord gets its English, and the translator its zh-TW / zh-CN forms,
which Discord shows per user. A missing key is a bug (KeyError).
"""

from __future__ import annotations

from discord import Locale, app_commands

from engine import lang_of, picker_text, say

__all__ = ["CommandTranslator", "lang_of", "t", "words"]  # lang_of is engine's


def t(key: str, lang: str, **values: object) -> str:
    """The sentence `bot.<key>` of the catalog in `lang` ("zh" or "en"), filled with `values`."""
    return say("bot." + key, lang, **values)


def words(key: str) -> app_commands.locale_str:
    """The command picker's text `key` (a `cmd.*` code): its English, carrying the code along
    for the translator."""
    return app_commands.locale_str(say(key, "en"), key=key)


class CommandTranslator(app_commands.Translator):
    """Gives Discord the Chinese text of every command and option description, by code."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        key = string.extras.get("key")
        if key is None or locale not in (Locale.taiwan_chinese, Locale.chinese):
            return None
        text = picker_text(key, locale.value)
        return None if text == string.message else text  # a name said alike needs no copy
