"""End to end, when Discord itself gets in the way: closed DMs, rate limits and a deleted
webhook, an archived or deleted thread, a line over Discord's 2,000 characters, a missing
permission. The real discord.py client against the fake Discord, as in test_bot_e2e.py; every
request is checked against Discord's OpenAPI spec.
"""

from __future__ import annotations

import asyncio

import pytest
from botkit import Gate, copy_template, finished, room

from engine.providers.scripted import ScriptedRequest


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def transcript(r, scene: str) -> str:
    return (r.home / scene / "transcript.md").read_text(encoding="utf-8")


async def test_closed_dms_are_explained_once_and_nothing_goes_to_the_thread(tmp_path):
    async with room(tmp_path) as r:
        r.let_open_scenes("carol")
        thread = await r.new_scene("審訊室", user="carol")
        first = await r.slash("run", {"turns": 2}, user="carol", channel=thread)
        await finished(r, thread)
        await first.wait_followups(2)
        assert any("私訊" in c and "backstage/" in c for c in first.contents)
        assert first.ephemeral

        second = await r.slash("run", {"turns": 1}, user="carol", channel=thread)
        await finished(r, thread, 2)
        await second.wait_followups(1)
        assert not any("backstage/" in c for c in second.contents)
        assert "weighs" not in r.everything_public()
        backstage = r.home / "審訊室" / "backstage"
        assert "weighs" in "".join(p.read_text("utf-8") for p in backstage.glob("*.log"))


async def test_webhook_trouble_429_and_a_deleted_webhook(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        # more 429s in a row than discord.py retries by itself (5): the bot's own queue waits
        # out `retry_after` and the line still lands
        r.fake.rate_limit_next_webhook_executes(8, retry_after=0.01)
        await r.ask("run", {"turns": 1}, channel=thread)
        await finished(r, thread)
        assert len(r.lines(thread)) == 1

        (hook,) = r.fake.webhooks_in(r.fake.channel_id)
        await r.fake.delete_webhook(int(hook["id"]))
        await r.ask("run", {"turns": 1}, channel=thread)
        await finished(r, thread, 2)
        assert len(r.lines(thread)) == 2
        assert len(r.fake.webhooks_in(r.fake.channel_id)) == 1


async def test_an_archived_thread_is_revived_and_a_deleted_one_is_reported(tmp_path, scripted):
    gate = Gate()
    scripted.register("gate", gate)
    async with room(tmp_path, models=scripted) as r:
        thread = await r.new_scene("審訊室")
        await r.fake.archive_thread(thread)
        assert "▶" in await r.ask("run", {"turns": 1}, channel=thread)  # back after a week
        await finished(r, thread)

        context = r.home / "審訊室" / "context.md"
        context.write_text(
            context.read_text("utf-8").replace("---\n", "---\nmodel: scripted/gate\n", 1),
            encoding="utf-8",
        )
        gate.actor_calls = 1  # the next actor call waits
        await r.ask("run", {"turns": 1}, channel=thread)
        await asyncio.wait_for(gate.waiting.wait(), 10)
        await r.fake.archive_thread(thread)  # archived while the actor was thinking
        gate.release.set()
        await finished(r, thread, 2)
        assert len(r.lines(thread)) == 2
        assert not r.fake.threads[thread]["thread_metadata"]["archived"]

        gate.release.clear()
        gate.waiting.clear()
        run = await r.slash("run", {"turns": 1}, channel=thread)
        await run.wait_followups(1)
        await asyncio.wait_for(gate.waiting.wait(), 10)
        del r.fake.threads[thread]  # someone deleted the scene's thread
        gate.release.set()
        await run.wait_followups(2, timeout=10)
        assert "無法把" in run.contents[-1] and "/scene open" in run.contents[-1]
        await r.drain()
        assert any("無法把" in d for d in r.dms("alice"))
        assert len(r.lines(thread)) == 2


async def test_long_lines_are_split_under_2000_characters(tmp_path, scripted):
    speech = " ".join(f"Sentence number {i} is here." for i in range(52))  # < 1500 chars
    gesture = " ".join(f"Gesture {i}." for i in range(50))  # < 600 chars

    def long_script(request: ScriptedRequest) -> str:
        if request.index == 0:
            return (
                f"<thought>t</thought><action>{gesture}</action><dialogue>{speech}</dialogue>"
                "<cue>ANY</cue>"
            )
        return "<thought>t</thought><dialogue>" + "Blah. " * 20_000 + "</dialogue><cue>ANY</cue>"

    scripted.register("long", long_script)
    async with room(tmp_path, models=scripted) as r:
        copy_template("wake", r.home / "wake")
        context = r.home / "wake" / "context.md"
        context.write_text(
            context.read_text("utf-8").replace("---\n", "---\nmodel: scripted/long\n", 1),
            encoding="utf-8",
        )
        await r.ask("scene open", {"name": "wake"})
        thread = int(r.fake.thread_by_name("🎭 wake")["id"])
        await r.ask("cue", {"actor": "Ruth"}, channel=thread)
        await finished(r, thread)
        posts = [m["content"] for m in r.thread(thread) if m["username"] == "Ruth"]
        assert len(posts) == 2 and all(len(p) <= 2000 for p in posts)
        assert (
            " ".join(posts).replace("*", "").split()
            == (gesture + " " + speech + " -# → anyone").split()
        )

        # A 120 KB reply is cut at the cap: two posts at most, and the directors are told.
        await r.ask("cue", {"actor": "Ruth"}, channel=thread)
        await finished(r, thread, 2)
        posts = [m["content"] for m in r.thread(thread) if m["username"] == "Ruth"][2:]
        assert 1 <= len(posts) <= 2 and all(len(p) <= 2000 for p in posts)
        assert any("✂" in d and "dialogue" in d for d in r.dms("alice"))


async def test_a_missing_permission_gives_an_actionable_message(tmp_path):
    from fakediscord import P

    async with room(tmp_path) as r:
        r.fake.set_bot_permissions(P.BOT_DEFAULT & ~P.MANAGE_WEBHOOKS)
        text = await r.ask("scene new", {"name": "審訊室", "template": "interrogation"})
        assert "Manage Webhooks" in text or "管理 Webhook" in text
        assert not (r.home / "審訊室").exists() and not r.fake.threads

        r.fake.set_bot_permissions(P.BOT_DEFAULT & ~P.CREATE_PUBLIC_THREADS)
        everyone = r.fake.roles[r.fake.guild_id]
        everyone["permissions"] = str(P.EVERYONE_DEFAULT & ~P.CREATE_PUBLIC_THREADS)
        text = await r.ask("scene new", {"name": "審訊室", "template": "interrogation"})
        assert "Create Public Threads" in text
        assert not (r.home / "審訊室").exists()
