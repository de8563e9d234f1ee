"""Every word the bot shows a person comes from the catalog: no sentence is written in bot/.

A string literal handed to something a person reads — a reply, a message, a thread line, a
form's title or a field's label, a button, a choice, an embed, a command's description — is a
catalog key (said through `t`/`words`), never English (or Chinese) typed in place. Log lines,
custom ids and file names are no one's reading and are not looked at. Command text is named by
`cmd.*` codes, with zh-TW (zh.py) and zh-CN (zh_hans.py) forms for every one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from engine.catalog import EN, ZH, picker_text
from engine.catalog.zh_hans import TEXT as ZH_HANS

ROOT = Path(__file__).resolve().parents[2]
BOT = sorted((ROOT / "bot").glob("*.py"))

# Calls a person reads the text of: every positional string, and these keywords.
SINKS = {
    "reply", "send", "send_message", "edit_message", "edit", "status_line", "_whisper",
    "Modal", "TextInput", "Button", "Choice", "Embed", "add_field", "create_thread",
    "locale_str", "command", "describe", "Group", "__init__", "AppCommandError", "print",
}  # fmt: skip
TEXT_KEYWORDS = {"content", "title", "label", "placeholder", "description", "text"}
# A `name` is shown for a choice or an embed field (a command's or group's name is an id).
NAMED = {"Choice": {"name"}, "add_field": {"name", "value"}, "create_thread": {"name"}}
# Calls whose keywords are the option descriptions themselves (describe(turns=...)).
ALL_KEYWORDS = {"describe"}
WORD = re.compile(r"[^\W\d_]{3,}")  # three letters in a row: words, not markup like ```md


def is_key(text: str) -> bool:
    return any(k in EN for k in (text, "bot." + text, "bot.stage." + text))


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _words(node: ast.expr) -> str | None:
    """The typed text of a literal argument if it holds words and is not a catalog key."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
        return text if WORD.search(text) and not is_key(text) else None
    if isinstance(node, ast.JoinedStr):
        typed = "".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
        return typed if WORD.search(typed) else None
    if isinstance(node, ast.BinOp):  # "..." + x, "..." % x
        return _words(node.left) or _words(node.right)
    return None


def literal_words(source: str) -> list[str]:
    """Each literal sentence `source` hands to something a person reads, as `line: text`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or _name(node.func) not in SINKS:
            continue
        sink = _name(node.func)
        shown = TEXT_KEYWORDS | NAMED.get(sink, set())
        every = sink in ALL_KEYWORDS
        args = [*node.args, *(k.value for k in node.keywords if every or k.arg in shown)]
        for arg in args:
            text = _words(arg)
            if text is not None:
                found.append(f"{node.lineno}: {text}")
    return found


@pytest.mark.parametrize(
    "source, found",
    [
        ('await reply(interaction, "Saved.")', ["1: Saved."]),
        ('await reply(interaction, t("take_saved", lang, take=1))', []),
        ('await reply(interaction, "take_saved")', []),  # a key, said by the reply's caller
        ('await interaction.followup.send(f"Take {n} is saved")', ["1: Take  is saved"]),
        ('await reply(interaction, f"```md\\n{text}\\n```")', []),  # markup, no words
        ('await reply(interaction, f"{why}\\n{kept}")', []),
        ('stage.status_line("-# cut after turn " + str(n))', ["1: -# cut after turn "]),
        ('super().__init__(title="New actor", timeout=None)', ["1: New actor"]),
        ('TextInput(label="Bio", custom_id="bio")', ["1: Bio"]),  # three letters make a word
        ('TextInput(label="Prior story", custom_id="prior_story")', ["1: Prior story"]),
        ('Button(label=t("backstory.accept_button", lang), custom_id="backstory:accept")', []),
        ('Choice(name="all four", value="all")', ["1: all four"]),
        ('Choice(name=words("cmd.export.format.all"), value="all")', []),
        ('command(name="run", description="Let it play")', ["1: Let it play"]),
        ('describe(turns="How many turns")', ["1: How many turns"]),
        ('describe(turns=words("cmd.run.turns"))', []),
        ('Embed(title=t("report_title", lang, scene=s, take=1), colour=0x2E8B57)', []),
        ('log.warning("scene %s: could not record post %s", name, message_id)', []),
        ('discord.File(data, filename=f"{actor}-soul.md")', []),
        ('channel.send("我們開始吧")', ["1: 我們開始吧"]),
        ('channel.edit(archived=False)', []),
    ],
)  # fmt: skip
def test_a_literal_a_person_reads_is_found_and_a_log_line_or_an_id_is_not(source, found):
    assert literal_words(source) == found


@pytest.mark.parametrize("path", BOT, ids=lambda p: p.name)
def test_the_bot_types_no_sentence_of_its_own(path):
    assert literal_words(path.read_text(encoding="utf-8")) == []


def test_every_command_code_has_both_chinese_scripts_and_no_blanks():
    codes = {k for k in EN if k.startswith("cmd.")}
    assert codes and set(ZH_HANS) == codes
    assert all("{" not in EN[k] + ZH[k] + ZH_HANS[k] for k in codes)
    assert all(len(picker_text(k, loc)) <= 100 for k in codes for loc in ("en", "zh-TW", "zh-CN"))


@pytest.mark.parametrize(
    "locale, expected",
    [("zh-TW", "讓這場戲自己走 N 輪"), ("zh-CN", "让这场戏自己走 N 轮"), ("en-US", "Let the scene play by itself for N turns")],
)  # fmt: skip
def test_a_command_is_described_in_the_script_of_each_locale(locale, expected):
    assert picker_text("cmd.run.description", locale) == expected


def test_the_translator_goes_by_code_not_by_english():
    import asyncio

    from discord import Locale, app_commands

    from bot.i18n import CommandTranslator, words

    translator = CommandTranslator()

    async def say(text: app_commands.locale_str, locale: Locale) -> str | None:
        return await translator.translate(text, locale, None)  # type: ignore[arg-type]

    by_code = words("cmd.cut.description")
    same_english = app_commands.locale_str(by_code.message)  # no code: nothing to translate
    assert asyncio.run(say(by_code, Locale.taiwan_chinese)) == "立刻停下排練"
    assert asyncio.run(say(by_code, Locale.chinese)) == "立刻停下排练"
    assert asyncio.run(say(by_code, Locale.american_english)) is None
    assert asyncio.run(say(same_english, Locale.taiwan_chinese)) is None
