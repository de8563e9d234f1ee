"""The bot's decisions as plain functions, tested by tables: names, splitting, rendering,
labels, permissions, bindings and the localisation tables."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.binding import Binding, can_direct, list_scenes, read_binding, scan_bindings, write_binding
from bot.i18n import lang_of, t
from bot.render import (
    autocomplete_names,
    pack_messages,
    render_turn_message,
    sanitise_webhook_name,
    scene_card,
    split_message,
    stage_manager_dm,
    thought_dm,
)
from engine import BadSceneFile


@pytest.mark.parametrize(
    "name, expected",
    [
        ("林小姐", "林小姐"),
        ("  Ruth\n Nowak ", "Ruth Nowak"),
        ("Clyde", "Cl\u0443de"),
        ("Mr DISCORD", "Mr DISC\u041eRD"),
        ("discordclyde", "disc\u043erdcl\u0443de"),
        ("everyone", "everyone ·"),
        ("here", "here ·"),
        ("@admin#1:x", "＠admin＃1：x"),
        ("", "Actor"),
        ("   ", "Actor"),
        ("x" * 100, "x" * 80),
    ],
)
def test_sanitise_webhook_name(name, expected):
    assert sanitise_webhook_name(name) == expected


@given(st.text(max_size=200))
def test_sanitised_names_are_always_acceptable(name):
    out = sanitise_webhook_name(name)
    assert 1 <= len(out) <= 80 and out == out.strip()
    assert "discord" not in out.lower() and "clyde" not in out.lower()
    assert out.lower() not in {"everyone", "here"}


@pytest.mark.parametrize(
    "text, limit, expected",
    [
        ("", 10, []),
        ("short", 10, ["short"]),
        ("line one\nline two", 12, ["line one", "line two"]),
        ("First one. Second one.", 15, ["First one.", "Second one."]),
        ("第一句。第二句。第三句。", 8, ["第一句。第二句。", "第三句。"]),
        ("aaaa bbbb cccc", 9, ["aaaa bbbb", "cccc"]),
        ("x" * 25, 10, ["x" * 10, "x" * 10, "x" * 5]),
    ],
)
def test_split_message(text, limit, expected):
    assert split_message(text, limit) == expected


@given(st.text(alphabet=string.ascii_letters + " .\n。！", max_size=3000), st.integers(20, 500))
def test_split_message_keeps_every_character_within_the_limit(text, limit):
    chunks = split_message(text, limit)
    assert all(1 <= len(c) <= limit for c in chunks)
    assert re.sub(r"\s", "", "".join(chunks)) == re.sub(r"\s", "", text)


@pytest.mark.parametrize(
    "action, dialogue, cue, lang, expected",
    [
        ("拍桌子", "你說謊。", "林小姐", "zh", "*拍桌子*\n你說謊。\n-# → 林小姐"),
        ("", "Hello.", "", "en", "Hello."),
        ("sits *down*", "", "ANY", "en", "*sits \\*down\\**\n-# → anyone"),
        ("", "", "", "zh", "*（沉默）*"),
        ("", "# not a heading\n-# nor small", "", "en", "\\# not a heading\n\\-# nor small"),
        ("a\nb", "", "", "en", "*a*\n*b*"),
    ],
)
def test_render_turn_message(action, dialogue, cue, lang, expected):
    assert render_turn_message(action, dialogue, cue, lang) == expected


@pytest.mark.parametrize(
    "lang, label",
    [
        ("zh", "🎭 **審訊室** · 第 2 條 · 第 7 輪 · **刑警**"),
        ("en", "🎭 **審訊室** · take 2 · turn 7 · **刑警**"),
    ],
)
def test_thought_dm_is_labelled_with_scene_take_turn_and_actor(lang, label):
    assert thought_dm("審訊室", 2, 7, "刑警", "他在怕。\n真的。", lang) == (
        f"{label}\n> 他在怕。\n> 真的。"
    )
    assert stage_manager_dm("審訊室", 2, 7, "刑警", "why", lang).startswith(label)


def test_scene_card_shows_public_context_and_cast_only():
    card = scene_card("審訊室", "深夜。", ["林小姐", "刑警"], [42], "zh")
    assert card.startswith("**場景：審訊室**") and "深夜。" in card
    assert "林小姐, 刑警" in card and "<@42>" in card


def test_pack_messages_joins_small_items_and_respects_the_limit():
    assert pack_messages(["a", "b", "c"], limit=5) == ["a\n\nb", "c"]
    assert pack_messages(["x" * 12], limit=5) == ["xxxxx", "xxxxx", "xx"]


@pytest.mark.parametrize(
    "current, expected",
    [
        ("", ["林小姐", "刑警", "律師"]),
        ("刑", ["刑警"]),
        ("王", ["刑警"]),  # by alias
        ("師", ["律師"]),  # substring after prefixes
        ("nobody", []),
    ],
)
def test_autocomplete_names(current, expected):
    aliases = {"刑警": ("王警官",), "林小姐": ("林",)}
    assert autocomplete_names(current, ["林小姐", "刑警", "律師"], aliases) == expected


def test_autocomplete_offers_at_most_25():
    assert len(autocomplete_names("", [f"a{i}" for i in range(40)])) == 25


@pytest.mark.parametrize(
    "user, directors, manage_threads, allowed",
    [
        (1, (1,), False, True),
        (2, (1, 2), False, True),
        (3, (1, 2), False, False),
        (3, (1, 2), True, True),
        (3, (), False, False),
    ],
)
def test_who_may_direct(user, directors, manage_threads, allowed):
    assert can_direct(user, Binding(9, 8, 7, directors), manage_threads) is allowed


@pytest.mark.parametrize(
    "user, guild, manage_threads, old, expected",
    [
        (1, 9, False, None, (1,)),  # unbound: Discord let them use /scene, so it is theirs
        (1, 9, False, Binding(9, 8, 7, (2,)), "not_director"),
        (1, 9, True, Binding(9, 8, 7, (2,)), (2, 1)),  # Manage Threads in the scene's server
        (2, 9, False, Binding(9, 8, 7, (2,)), (2,)),
        (1, 5, True, Binding(9, 8, 7, (2,)), "elsewhere"),  # a moderator of another server
        (2, 5, False, Binding(9, 8, 7, (2,)), (2,)),  # its own director, from anywhere
        (1, 9, False, Binding(9, 8, 7, ()), (1,)),  # nobody directs it any more, here
        (1, 5, True, Binding(9, 8, 7, ()), "elsewhere"),
    ],
)
def test_who_may_open_a_scene(user, guild, manage_threads, old, expected):
    from bot.binding import opening

    assert opening(user, guild, manage_threads, old) == expected


def test_binding_round_trips_atomically_and_scans(tmp_path):
    scene = tmp_path / "審訊室"
    (scene / "actors").mkdir(parents=True)
    (scene / "context.md").write_text("x", encoding="utf-8")
    (tmp_path / "templates" / "t").mkdir(parents=True)
    (tmp_path / "templates" / "context.md").write_text("x", encoding="utf-8")
    binding = Binding(1, 2, 3, (4, 5), 6)
    write_binding(scene, binding)
    assert read_binding(scene) == binding
    assert [p.name for p in (scene / ".circus").iterdir()] == ["discord.json"]
    assert scan_bindings(tmp_path) == {"審訊室": binding}
    assert list_scenes(tmp_path) == ["審訊室"]
    assert binding.with_director(4) is binding
    assert binding.with_director(7).directors == (4, 5, 7)
    assert binding.without_director(4).directors == (5,)
    (scene / ".circus" / "discord.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(BadSceneFile, match="discord.json"):  # unreadable is never "unbound"
        read_binding(scene)
    assert scan_bindings(tmp_path) == {}  # left unattached until fixed, and said so in the log


@pytest.mark.parametrize(
    "language, expected", [("zh", "zh"), ("zh-TW", "zh"), ("en", "en"), ("en-US", "en"), ("", "en")]
)
def test_reply_language(language, expected):
    assert lang_of(language) == expected
    assert t("cut_done", language) == {"zh": "✂ 卡！", "en": "✂ Cut."}[expected]


def test_every_command_and_option_description_has_chinese():
    import discord
    from discord import app_commands

    from bot.commands import directing as commands
    from bot.commands import harvest, scenes

    tree = app_commands.CommandTree(discord.Client(intents=discord.Intents.none()))
    tree.add_command(scenes.build(["x"]))
    commands.setup(tree)
    harvest.setup(tree)
    texts = []
    for command in tree.get_commands():
        items = [command, *getattr(command, "walk_commands", lambda: [])()]
        for item in items:
            texts.append(item.description)
            texts += [p.description for p in getattr(item, "parameters", [])]
            if command.name != "scene":  # fixed choices (template choices are folder names)
                texts += [c.name for p in getattr(item, "parameters", []) for c in p.choices]
    from engine import picker_text
    from engine.catalog.en import TEXT as EN

    code_of = {text: key for key, text in EN.items() if key.startswith("cmd.")}  # by code only
    missing = [text for text in texts if text not in code_of]
    assert missing == []
    chinese = [
        picker_text(code_of[text], locale) for text in texts for locale in ("zh-TW", "zh-CN")
    ]
    assert all(chinese) and all(len(text) <= 100 for text in chinese)


def test_a_server_sees_only_its_own_scenes_and_the_loose_ones_if_the_operator_says(tmp_path):
    from bot.server_folders import visible_scenes

    for folder in ("1/ours", "9/theirs", "loose", "1/copied"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "context.md").write_text("x", encoding="utf-8")
    write_binding(tmp_path / "1/ours", Binding(guild_id=1, channel_id=2, thread_id=3))
    write_binding(tmp_path / "9/theirs", Binding(guild_id=9, channel_id=8, thread_id=6))
    write_binding(tmp_path / "1/copied", Binding(guild_id=9, channel_id=8, thread_id=4))
    assert visible_scenes(tmp_path, 1, frozenset({1, 5})) == ["loose", "ours"]
    assert visible_scenes(tmp_path, 9, frozenset({1, 5})) == ["theirs"]
    assert visible_scenes(tmp_path, 5, frozenset({1, 5})) == ["loose"]
    assert visible_scenes(tmp_path, 1, frozenset()) == ["ours"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("{root}/審訊室/actors/律師/soul.md: bad", "actors/律師/soul.md: bad"),
        ("{root}/my scene/context.md：壞了", "context.md：壞了"),
        ("No scene at {root}/x (no context.md there)", "No scene at x (no context.md there)"),
        ("`{root}/審訊室/transcript.md`", "`transcript.md`"),
        ("the scenes are fine", "the scenes are fine"),  # the folder's name alone is no path
        ("/elsewhere{root}/a/b.md", "/elsewhere{root}/a/b.md"),  # only the root itself
    ],
)
def test_scrub_removes_server_paths(tmp_path, text, expected):
    from bot.render import scrub

    root = tmp_path / "scenes"
    root.mkdir()
    assert scrub(text.format(root=root), root) == expected.format(root=root)


def test_scrub_with_a_relative_scenes_folder():
    from pathlib import Path

    from bot.render import scrub

    assert scrub("see scenes/x/a.md, not myscenes/y", Path("scenes")) == "see a.md, not myscenes/y"
