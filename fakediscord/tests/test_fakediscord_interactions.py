"""Tests for fakediscord's interactions: slash commands, followups, autocomplete, modals,
components, and the single-ack and initial-response-deadline rules.
"""

from __future__ import annotations

import discord
import pytest

from fakediscord import FakeDiscord  # tests/ is on sys.path (rootdir conftest)
from fakediscord.tinybot import TinyBot

pytestmark = pytest.mark.asyncio


async def test_slash_defer_thread_webhook_followups(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash(
        "circus start", {"topic": "cats", "partner": fake.users["bob"]}, user="alice"
    )
    callback = await handle
    assert callback["type"] == 5
    await handle.wait_followups(2)
    thread = fake.thread_by_name("act: cats")
    assert thread["type"] == 11 and int(thread["parent_id"]) == fake.channel_id
    posted = fake.messages_in(int(thread["id"]))
    assert [(m["username"], m["content"], m["avatar_url"]) for m in posted] == [
        ("Ringmaster Rex", "Ladies and gentlemen: cats!", "https://example.com/rex.png")
    ]
    assert posted[0]["webhook_id"] is not None
    # first followup replaced the "thinking" message, second is ephemeral
    assert handle.original["content"] == f"started <#{thread['id']}> with bob"
    assert handle.followups[1]["flags"] & 64
    channel_msgs = fake.messages_in(fake.channel_id)
    assert [m["type"] for m in channel_msgs] == [
        20,
        18,
    ]  # deferred command reply, thread-created notice
    assert fake.unhandled == []


async def test_autocomplete(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.autocomplete("circus start", {"topic": "c"}, focused="topic", user="bob")
    await handle
    assert [c["value"] for c in handle.choices] == ["cats", "clowns", "canons"]
    handle = await fake.autocomplete(
        "circus start", {"topic": "topic"}, focused="topic", user="bob"
    )
    await handle
    assert len(handle.choices) == 25


async def test_modal_roundtrip(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus new", user="alice")
    await handle
    assert handle.modal["custom_id"] == "new_act"
    submitted = await fake.submit_modal(handle, {"topic": "jugglers", "notes": "bring pins"})
    reply = await submitted
    assert reply["type"] == 4 and reply["data"]["content"] == "act about jugglers"
    assert bot.modal_results == [("jugglers", "bring pins")]


async def test_double_ack_rejected(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus twice", user="bob")
    await handle.wait_event("rejected")
    [exc] = bot.errors
    assert exc.status == 400 and exc.code == 40060
    assert handle.callback["data"]["content"] == "once"


async def test_initial_response_deadline(fake: FakeDiscord, bot: TinyBot):
    fake.interaction_deadline = 0.05
    bot.sleep_before_reply = 0.1
    handle = await fake.slash("circus slow", user="bob")
    await handle.wait_event("rejected")
    [exc] = bot.errors
    assert isinstance(exc, discord.NotFound) and exc.code == 10062
    assert handle.callback is None


async def test_label_modal(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus cast", user="bob")
    await handle
    assert handle.modal["components"][0]["type"] == 18
    reply = await (await fake.submit_modal(handle, {"actor_name": "Mimi"}))
    assert reply["type"] == 6
    assert bot.modal_results == [("label", "Mimi")]


async def test_component_click_and_select(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus curtain", user="alice")
    await handle
    message_id = int(handle.original["id"])
    picked = await fake.click(message_id, "curtain:pick", user="alice", values=[fake.users["bob"]])
    assert (await picked)["type"] == 6
    assert bot.picked == [fake.users["bob"].id]
    clicked = await fake.click(message_id, "curtain:raise", user="bob")
    assert (await clicked)["type"] == 7
    [msg] = [m for m in fake.messages_in(fake.channel_id) if int(m["id"]) == message_id]
    assert msg["content"] == "curtain raised by bob" and msg["components"] == []
