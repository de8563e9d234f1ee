"""Small state files under .circus/ that a person broke by hand: the scene's thread binding
(discord.json) and who plays whom (players.json). Each is refused in one line naming the file
— an unreadable binding is never "unbound" (which anyone allowed /scene could take over)."""

from __future__ import annotations

import json

import pytest
from botkit import room
from clikit import circus

from engine import Actor, BadSceneFile, Rehearsal

BROKEN = ["{torn", "null", "[1, 2]", '"text"', '{"guild_id": "x"}', '{"thread_id": "9" }']


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


@pytest.mark.parametrize("broken", BROKEN)
async def test_an_unreadable_binding_is_refused_never_taken_over(tmp_path, broken):
    async with room(tmp_path) as r:
        r.fake.add_user("dave")
        r.let_open_scenes("bob", "dave")
        await r.new_scene("審訊室", user="bob")
        binding = r.home / "審訊室" / ".circus" / "discord.json"
        binding.write_text(broken, encoding="utf-8")

        text = await r.ask("scene open", {"name": "審訊室"}, user="dave")
        assert ".circus/discord.json" in text and "JSON" in text
        assert str(r.scenes_dir) not in text
        assert len(r.fake.threads) == 1  # no thread was made for dave
        assert binding.read_text(encoding="utf-8") == broken  # and nothing was rewritten
        assert "審訊室" not in await r.ask("scene list", user="dave")


async def test_a_bot_restarted_on_an_unreadable_binding_starts_and_leaves_that_scene_alone(
    tmp_path,
):
    async with room(tmp_path) as r:
        await r.new_scene("審訊室")
        await r.new_scene("雨夜")
        await r.stop_bot()
        (r.home / "審訊室" / ".circus" / "discord.json").write_text("[]", encoding="utf-8")
        bot = await r.start_bot()
        assert [scene_thread.name for scene_thread in bot.scene_threads.values()] == ["雨夜"]
        bound = json.loads((r.home / "雨夜" / ".circus" / "discord.json").read_text("utf-8"))
        assert int(bound["thread_id"]) in bot._threads


PLAYERS_BROKEN = ["null", "[1, 2]", '"林小姐"', "{torn", '{"林小姐": 3}', '{"林小姐": null}']


@pytest.mark.parametrize("broken", PLAYERS_BROKEN)
async def test_a_players_file_that_is_not_an_object_is_refused_naming_it(scene, broken):
    players = scene / ".circus" / "players.json"
    players.parent.mkdir(exist_ok=True)
    players.write_text(broken, encoding="utf-8")
    rehearsal = Rehearsal(scene)
    for command in (
        rehearsal.stage.players(),
        rehearsal.stage.play(Actor("林小姐")),
        rehearsal.stage.unplay(player="ann"),
        rehearsal.status(),
    ):
        with pytest.raises(BadSceneFile) as refused:
            await command
        shown = refused.value.in_language("en", relative=True)
        assert shown.startswith(".circus/players.json: is not the JSON object"), shown
    assert players.read_text(encoding="utf-8") == broken  # refused, never overwritten


def test_the_command_line_names_a_broken_players_file_in_one_line(scene):
    (scene / ".circus").mkdir(exist_ok=True)
    (scene / ".circus" / "players.json").write_text("null", encoding="utf-8")
    for argv in (("status", str(scene)), ("say", str(scene), "林小姐", "我沒有。")):
        result = circus(*argv, cwd=scene.parent)
        lines = result.stderr.strip().splitlines()
        assert result.returncode != 0 and len(lines) == 1, result.stderr
        assert ".circus/players.json" in lines[0] and "TypeError" not in lines[0]


async def test_an_empty_or_absent_players_file_means_nobody_plays(scene):
    assert await Rehearsal(scene).stage.players() == {}
    (scene / ".circus").mkdir(exist_ok=True)
    (scene / ".circus" / "players.json").write_text("  \n", encoding="utf-8")
    assert await Rehearsal(scene).stage.players() == {}
    assert await Rehearsal(scene).stage.play(Actor("林小姐"), "ann") == "林小姐"
    assert await Rehearsal(scene).stage.players() == {"林小姐": "ann"}
