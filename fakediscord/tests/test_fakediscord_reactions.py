"""Tests for fakediscord's reactions: members react (gateway MESSAGE_REACTION_ADD/REMOVE with
Discord's payload, only with the reactions intent) and the bot reacts through REST."""

from __future__ import annotations

import asyncio

import discord
import pytest

from fakediscord import FakeDiscord, P
from fakediscord.tinybot import TinyBot

pytestmark = pytest.mark.asyncio


async def wait_for(predicate, what: str):
    for _ in range(2000):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"gave up waiting for {what}")


async def webhook_line(fake: FakeDiscord) -> dict:
    """A webhook post in a thread, made the way the fake's own start command makes one."""
    handle = await fake.slash("circus start", {"topic": "cats"}, user="alice")
    await handle.wait_followups(2)
    thread = fake.thread_by_name("act: cats")
    return next(m for m in fake.messages_in(int(thread["id"])) if m["webhook_id"])


async def test_a_member_reacting_reaches_the_bot_as_raw_events(fake: FakeDiscord, bot: TinyBot):
    added: list[discord.RawReactionActionEvent] = []
    removed: list[discord.RawReactionActionEvent] = []

    async def on_raw_reaction_add(event: discord.RawReactionActionEvent) -> None:
        added.append(event)

    async def on_raw_reaction_remove(event: discord.RawReactionActionEvent) -> None:
        removed.append(event)

    bot.add_listener(on_raw_reaction_add)
    bot.add_listener(on_raw_reaction_remove)
    line = await webhook_line(fake)

    assert await fake.react(int(line["id"]), "⭐", user="bob")
    assert not await fake.react(int(line["id"]), "⭐", user="bob")  # once per user and emoji
    await fake.react(int(line["id"]), "⭐", user="alice")
    await wait_for(lambda: len(added) == 2, "two reactions")
    bob = added[0]
    assert str(bob.emoji) == "⭐" and bob.emoji.is_unicode_emoji()
    assert bob.user_id == fake.users["bob"].id and bob.channel_id == int(line["channel_id"])
    assert bob.message_id == int(line["id"]) and bob.guild_id == fake.guild_id
    assert bob.member is not None and bob.member.display_name == "bob"
    assert bob.message_author_id == int(line["webhook_id"])
    assert bob.event_type == "REACTION_ADD" and not bob.burst
    assert fake.reactions_on(int(line["id"])) == {
        "⭐": [fake.users["bob"].id, fake.users["alice"].id]
    }
    shown = fake.messages_in(int(line["channel_id"]))[-1]["reactions"]
    assert shown[0]["count"] == 2 and shown[0]["me"] is False

    assert await fake.unreact(int(line["id"]), "⭐", user="bob")
    assert not await fake.unreact(int(line["id"]), "⭐", user="bob")
    await wait_for(lambda: len(removed) == 1, "the removal")
    assert removed[0].user_id == fake.users["bob"].id and removed[0].member is None
    assert fake.reactions_on(int(line["id"])) == {"⭐": [fake.users["alice"].id]}

    payload = next(e["d"] for e in fake.gateway_events if e["t"] == "MESSAGE_REACTION_ADD")
    assert set(payload) == {
        "user_id", "channel_id", "message_id", "guild_id", "member", "emoji",
        "message_author_id", "burst", "burst_colors", "type",
    }  # fmt: skip
    payload = next(e["d"] for e in fake.gateway_events if e["t"] == "MESSAGE_REACTION_REMOVE")
    assert set(payload) == {
        "user_id", "channel_id", "message_id", "guild_id", "emoji", "burst", "type",
    }  # fmt: skip


async def test_without_the_reactions_intent_no_reaction_event_is_sent(fake: FakeDiscord):
    bot = TinyBot(fake)
    bot._connection._intents.reactions = False  # before login: IDENTIFY carries the intents
    async with fake.connected(bot):
        line = await webhook_line(fake)
        await fake.react(int(line["id"]), "⭐", user="bob")
        await fake.unreact(int(line["id"]), "⭐", user="bob")
    assert fake.reactions_on(int(line["id"])) == {}
    assert not [e for e in fake.gateway_events if e["t"].startswith("MESSAGE_REACTION")]


async def test_the_bot_reacts_and_clears_reactions_through_rest(fake: FakeDiscord, bot: TinyBot):
    line = await webhook_line(fake)
    thread = bot.get_channel(int(line["channel_id"])) or await bot.fetch_channel(
        int(line["channel_id"])
    )
    message = await thread.fetch_message(int(line["id"]))
    await fake.react(int(line["id"]), "⭐", user="bob")

    fake.set_bot_permissions(P.BOT_DEFAULT & ~P.ADD_REACTIONS)
    fake.roles[fake.guild_id]["permissions"] = str(P.EVERYONE_DEFAULT & ~P.ADD_REACTIONS)
    await message.add_reaction("⭐")  # joining an existing reaction needs no Add Reactions
    with pytest.raises(discord.Forbidden):
        await message.add_reaction("🎭")  # a new one does
    fake.errors.clear()
    assert fake.reactions_on(int(line["id"])) == {"⭐": [fake.users["bob"].id, fake.bot_user.id]}
    fetched = await thread.fetch_message(int(line["id"]))
    users = [u.id async for u in fetched.reactions[0].users()]
    assert sorted(users) == sorted([fake.users["bob"].id, fake.bot_user.id])
    assert fetched.reactions[0].me and fetched.reactions[0].count == 2

    await fetched.remove_reaction("⭐", discord.Object(fake.users["bob"].id))
    await fetched.remove_reaction("⭐", bot.user)
    assert fake.reactions_on(int(line["id"])) == {}
    await fake.react(int(line["id"]), "🎭", user="alice")
    await fetched.clear_reactions()
    assert fake.reactions_on(int(line["id"])) == {}
    kinds = [e["t"] for e in fake.gateway_events if e["t"].startswith("MESSAGE_REACTION")]
    assert kinds[-1] == "MESSAGE_REACTION_REMOVE_ALL"
