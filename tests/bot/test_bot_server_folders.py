"""Scenes kept by server, as a room on Discord sees them: a scene made in the terminal stays the
operator's — no server lists or opens it unless the operator names that server
(CIRCUS_TERMINAL_SCENE_SERVERS) or gives it the scene (`circus scene give`); then it becomes
the server's that opens it; a failed open leaves it where it was; two servers may each have a
scene of the same name."""

from __future__ import annotations

import pytest
from botkit import copy_template, room
from folderkit import files_under

from bot.server_folders import give_scene
from engine import is_scene
from fakediscord import P


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


async def test_a_terminal_scene_opened_in_a_server_moves_into_its_folder(tmp_path, monkeypatch):
    async with room(tmp_path, start=False) as r:
        monkeypatch.setenv("CIRCUS_TERMINAL_SCENE_SERVERS", str(r.fake.guild_id))
        await r.start_bot()
        copy_template("interrogation", r.scenes_dir / "夜")  # `circus new` in the terminal
        assert "夜" in await r.ask("scene list")
        text = await r.ask("scene open", {"name": "夜"})
        thread = int(r.fake.thread_by_name("🎭 夜")["id"])
        assert f"<#{thread}>" in text
        assert not (r.scenes_dir / "夜").exists() and is_scene(r.home / "夜")
        assert "▶" in await r.ask("run", {"turns": 1}, channel=thread)


async def test_a_failed_open_of_a_terminal_scene_leaves_it_in_the_terminal(tmp_path, monkeypatch):
    async with room(tmp_path, start=False) as r:
        monkeypatch.setenv("CIRCUS_TERMINAL_SCENE_SERVERS", str(r.fake.guild_id))
        await r.start_bot()
        copy_template("interrogation", r.scenes_dir / "夜")
        r.fake.set_bot_permissions(P.BOT_DEFAULT & ~P.MANAGE_WEBHOOKS)
        text = await r.ask("scene open", {"name": "夜"})
        assert "Manage Webhooks" in text or "管理 Webhook" in text
        assert not r.fake.threads
        assert is_scene(r.scenes_dir / "夜") and not (r.home / "夜").exists()


async def test_no_server_can_list_or_claim_the_operators_terminal_scene(tmp_path, monkeypatch):
    """The attack: a member with Manage Threads in a second server the bot is in tries the
    operator's scenes/ops_secret. Only the server the operator named sees terminal scenes."""
    async with room(tmp_path, start=False) as r:
        other = r.fake.add_guild("Second room")
        monkeypatch.setenv("CIRCUS_TERMINAL_SCENE_SERVERS", str(r.fake.guild_id))
        await r.start_bot(every_server=True)
        secret = copy_template("interrogation", r.scenes_dir / "ops_secret")
        before = files_under(secret)
        channel = r.fake.guild_channel(other)
        listed = await r.fake.slash("scene list", {}, channel_id=channel)
        await listed.response(timeout=60)
        opened = await r.fake.slash("scene open", {"name": "ops_secret"}, channel_id=channel)
        await opened.response(timeout=60)
        if opened.callback_type == 5:
            await opened.wait_followups(1, timeout=60)
        assert "ops_secret" not in "\n".join(listed.contents)
        assert "ops_secret" in "\n".join(opened.contents)  # told there is no such scene
        assert not [t for t in r.fake.threads.values() if t["guild_id"] == str(other)]
        assert files_under(secret) == before  # unmoved, untouched
        assert not (r.scenes_dir / str(other) / "ops_secret").exists()
        assert "ops_secret" in await r.ask("scene list")  # the named server still sees it
    # and the operator's own run still finds it where it was made
    assert is_scene(secret)


async def test_without_the_setting_no_server_sees_a_terminal_scene(tmp_path):
    async with room(tmp_path) as r:
        copy_template("interrogation", r.scenes_dir / "夜")
        assert "夜" not in await r.ask("scene list")
        assert "夜" in await r.ask("scene open", {"name": "夜"})  # "no scene called 夜"
        assert not r.fake.threads and is_scene(r.scenes_dir / "夜")


async def test_a_scene_the_operator_gave_to_a_server_opens_there(tmp_path):
    async with room(tmp_path) as r:
        copy_template("interrogation", r.scenes_dir / "夜")
        give_scene(r.scenes_dir, "夜", r.fake.guild_id)  # `circus scene give 夜 --server ID`
        assert "夜" in await r.ask("scene list")
        text = await r.ask("scene open", {"name": "夜"})
        assert f"<#{r.fake.thread_by_name('🎭 夜')['id']}>" in text
        assert is_scene(r.home / "夜")


async def test_two_servers_each_have_their_own_scene_of_one_name(tmp_path):
    async with room(tmp_path, start=False) as r:
        other = r.fake.add_guild("Second room")
        await r.start_bot(every_server=True)
        await r.new_scene("審訊室")
        made = await r.fake.slash(
            "scene new",
            {"name": "審訊室", "template": "interrogation"},
            channel_id=r.fake.guild_channel(other),
        )
        await made.wait_followups(1, timeout=60)
        assert "<#" in made.contents[-1]
        assert is_scene(r.home / "審訊室") and is_scene(r.scenes_dir / str(other) / "審訊室")
        threads = [t for t in r.fake.threads.values() if t["name"] == "🎭 審訊室"]
        assert sorted(t["guild_id"] for t in threads) == sorted([str(r.fake.guild_id), str(other)])
