"""The pure decisions behind setting a scene up from Discord: a name already taken, a form
field too long, the soul a three-part form makes, context.md's settings kept apart from its
public body, and what a director reads about a drafted prior story."""

from __future__ import annotations

import pytest

from bot.commands.backstory import PREVIEW, draft_message
from bot.commands.cast import SoulParts, compose_soul, name_taken, too_long
from bot.commands.context import split_context, with_body
from bot.commands.scenes import blank_language, template_for
from bot.render import render_warnings
from engine.folder.soul import missing_parts

ALIASES = {"林小姐": ("林曉雯",), "刑警": ("王警官",), "Ruth": ()}


@pytest.mark.parametrize(
    "name, taken",
    [
        ("林小姐", "林小姐"),
        ("王警官", "刑警"),  # an alias is taken too
        ("ruth", "Ruth"),
        ("ＲＵＴＨ", "Ruth"),  # full-width letters are the same name
        ("律師", None),
        ("林", None),  # part of a name is another name
    ],
)
def test_a_name_that_is_someone_s_name_or_alias_is_taken(name, taken):
    assert name_taken(name, list(ALIASES), ALIASES) == taken


@pytest.mark.parametrize(
    "values, over",
    [
        ({"bio": "x" * 4000, "notes": ""}, None),
        ({"bio": "x", "notes": "y" * 4001}, ("notes", 4001)),
        ({"bio": "字" * 4001}, ("bio", 4001)),
    ],
)
def test_a_form_field_over_the_limit_is_named(values, over):
    assert too_long(values) == over


@pytest.mark.parametrize(
    "parts, language, soul",
    [
        (
            SoulParts("小姐。", "那晚她在場。", "想走。"),
            "zh",
            "## 角色小傳\n\n小姐。\n\n## 前期劇本\n\n那晚她在場。\n\n## 導戲筆記\n\n想走。\n",
        ),
        (
            SoulParts("A cook.\n\nQuiet.", "", ""),
            "en",
            "## Bio\n\nA cook.\n\nQuiet.\n\n## Prior story\n\n## Director's notes\n",
        ),
    ],
)
def test_a_three_part_form_makes_a_soul_with_the_three_headed_parts(parts, language, soul):
    assert compose_soul(parts, language) == soul
    assert missing_parts(soul) == ()  # the engine reads all three parts in it


@pytest.mark.parametrize(
    "text, header, body",
    [
        (
            "---\nlanguage: zh\n---\n# 審訊\n深夜。\n",
            "---\nlanguage: zh\n---\n",
            "# 審訊\n深夜。\n",
        ),
        ("\ufeff---\nmodel: x\n---\r\nbody\r\n", "\ufeff---\nmodel: x\n---\r\n", "body\r\n"),
        ("# no settings\n", "", "# no settings\n"),
        ("---\nunclosed: yes\n", "", "---\nunclosed: yes\n"),
        ("---\n---\nbody", "---\n---\n", "body"),
    ],
)
def test_context_settings_stay_apart_from_the_public_body(text, header, body):
    assert split_context(text) == (header, body)
    assert header + body == text


@pytest.mark.parametrize(
    "header, body, whole",
    [
        (
            "---\nlanguage: zh\n---\n",
            "# 審訊\n深夜。",
            "---\nlanguage: zh\n---\n\n# 審訊\n深夜。\n",
        ),
        ("---\nlanguage: zh\n---", "\n\nbody\n\n", "---\nlanguage: zh\n---\n\nbody\n"),
        ("", "body", "body\n"),
        ("---\na: 1\n---\n", "", "---\na: 1\n---\n"),
    ],
)
def test_a_new_body_goes_back_under_the_settings_as_they_were(header, body, whole):
    assert with_body(header, body) == whole
    assert split_context(whole)[0].rstrip("\n") == header.rstrip("\n")


@pytest.mark.parametrize(
    "state, lang, head, shows_draft",
    [
        ("draft", "en", "**Rose** — draft prior story (9 characters):", True),
        ("accepted", "zh", "✅ **Rose**——已寫入為他的前期劇本（soul.md 第二部分）：", True),
        ("edited", "en", "✅ **Rose** — your edit is written as their prior story", True),
        ("dropped", "en", "🗑 **Rose** — draft dropped; their soul.md is unchanged.", False),
    ],
)
def test_a_draft_message_says_its_state_and_quotes_the_draft_unless_dropped(
    state, lang, head, shows_draft
):
    text = draft_message("Rose", "She knew.", state, lang)
    assert text.startswith(head)
    assert ("> She knew." in text) is shows_draft


def test_a_long_draft_is_cut_to_a_preview_that_fits_one_message():
    text = draft_message("Rose", "x" * 5000, "draft", "en")
    assert len(text) <= 2000 and text.endswith("…") and text.count("x") == PREVIEW


@pytest.mark.parametrize(
    "lines, lang, shown",
    [
        ((), "en", ""),
        (
            ("actors/Rose/soul.md: it has no text",),
            "en",
            "⚠ To fix (directors only):\n• actors/Rose/soul.md: it has no text",
        ),
        (("a\nb", "c"), "zh", "⚠ 待修正（只有導演看得到）：\n• a b\n• c"),
    ],
)
def test_warnings_are_one_line_each(lines, lang, shown):
    assert render_warnings(lines, lang) == shown


@pytest.mark.parametrize(
    "chosen, locale, language",
    [
        ("en", "zh-TW", "en"),  # chosen wins
        (None, "zh-TW", "zh"),
        (None, "zh-CN", "zh"),
        (None, "en-US", None),  # the engine reads it from the names
        (None, "", None),
    ],
)
def test_a_blank_scene_speaks_the_language_chosen_else_a_chinese_discord_s(
    chosen, locale, language
):
    assert blank_language(chosen, locale) == language


@pytest.mark.parametrize(
    "chosen, offered, template",
    [
        ("wake", ["interrogation", "wake"], "wake"),
        (None, ["interrogation", "wake"], "interrogation"),
        (None, ["wake", "zoo"], "wake"),
        (None, [], "interrogation"),
    ],
)
def test_a_new_scene_starts_from_the_chosen_template_else_the_default_else_the_first(
    chosen, offered, template
):
    assert template_for(chosen, offered) == template
