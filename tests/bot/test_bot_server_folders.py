"""Scenes kept by server, as a room on Discord sees them: a scene made in the terminal is offered
in every server and becomes the server's that opens it; a failed open leaves it where it was;
two servers may each have a scene of the same name."""

from __future__ import annotations

import pytest
from botkit import copy_template, room

from engine import is_scene
from fakediscord import P


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


async def test_a_terminal_scene_opened_in_a_server_moves_into_its_folder(tmp_path):
    async with room(tmp_path) as r:
        copy_template("interrogation", r.scenes_dir / "夜")  # `circus new` in the terminal
        assert "夜" in await r.ask("scene list")
        text = await r.ask("scene open", {"name": "夜"})
        thread = int(r.fake.thread_by_name("🎭 夜")["id"])
        assert f"<#{thread}>" in text
        assert not (r.scenes_dir / "夜").exists() and is_scene(r.home / "夜")
        assert "▶" in await r.ask("run", {"turns": 1}, channel=thread)


async def test_a_failed_open_of_a_terminal_scene_leaves_it_in_the_terminal(tmp_path):
    async with room(tmp_path) as r:
        copy_template("interrogation", r.scenes_dir / "夜")
        r.fake.set_bot_permissions(P.BOT_DEFAULT & ~P.MANAGE_WEBHOOKS)
        text = await r.ask("scene open", {"name": "夜"})
        assert "Manage Webhooks" in text or "管理 Webhook" in text
        assert not r.fake.threads
        assert is_scene(r.scenes_dir / "夜") and not (r.home / "夜").exists()


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
