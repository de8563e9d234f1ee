"""Tests for fakediscord's gateway: login, guild cache, intents, compression, RECONNECT/RESUME."""

from __future__ import annotations

import asyncio

import discord
import pytest

from fakediscord import FakeDiscord, point_discord_py_at  # tests/ is on sys.path (rootdir conftest)
from fakediscord.tinybot import TinyBot

pytestmark = pytest.mark.asyncio


async def test_login_and_guild_cache(fake: FakeDiscord, bot: TinyBot):
    guild = bot.get_guild(fake.guild_id)
    assert guild is not None and guild.name == fake.guild_name
    assert bot.user.id == fake.bot_user.id
    assert bot.application_id == fake.application_id
    alice = guild.get_member(fake.users["alice"].id)
    bob = guild.get_member(fake.users["bob"].id)
    assert alice.guild_permissions.manage_threads
    assert not bob.guild_permissions.manage_threads
    assert [c["name"] for c in fake.guild_commands.values()] == ["circus"]
    assert fake.spec_violations == []
    assert fake.unhandled == []


async def test_human_messages_and_content_intent(fake: FakeDiscord):
    bot = TinyBot(fake, message_content=False)
    seen: list[discord.Message] = []

    async def on_message(message: discord.Message) -> None:
        seen.append(message)

    bot.add_listener(on_message)
    async with fake.connected(bot):
        await fake.post_message(fake.channel_id, "secret plans", user="bob")
        await fake.post_message(fake.channel_id, f"hey <@{fake.bot_user.id}>", user="bob")
        for _ in range(100):
            if len(seen) == 2:
                break
            await asyncio.sleep(0.005)
    assert [m.content for m in seen] == ["", f"hey <@{fake.bot_user.id}>"]


async def test_reconnect_resumes(fake: FakeDiscord, bot: TinyBot):
    await fake.force_reconnect()
    for _ in range(400):
        if any(e["t"] == "RESUMED" for e in fake.gateway_events):
            break
        await asyncio.sleep(0.005)
    assert [p["op"] for p in fake.gateway_received if p["op"] in (2, 6)] == [
        2,
        6,
    ]  # one IDENTIFY, one RESUME
    assert len(fake.gateway_connections) == 2
    handle = await fake.autocomplete("circus start", {"topic": "do"}, focused="topic", user="bob")
    await handle
    assert [c["value"] for c in handle.choices] == ["dogs"]


async def test_gateway_compression_and_identify(fake: FakeDiscord, bot: TinyBot):
    from discord import utils

    [query] = fake.gateway_connections
    assert query["v"] == "10" and query["encoding"] == "json"
    assert query.get("compress") == utils._ActiveDecompressionContext.COMPRESSION_TYPE
    [identify] = [p for p in fake.gateway_received if p["op"] == 2]
    assert identify["d"]["token"] == fake.token
    assert identify["d"]["intents"] & (1 << 15)  # message content intent as the bot asked


async def test_point_discord_py_at_restores():
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    before = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
    restore = point_discord_py_at("http://127.0.0.1:1")
    assert Route.BASE == "http://127.0.0.1:1/api/v10"
    assert str(DiscordWebSocket.DEFAULT_GATEWAY) == "ws://127.0.0.1:1/"
    restore()
    assert (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY) == before


async def test_without_members_intent_members_are_fetched(fake: FakeDiscord):
    bot = TinyBot(fake, members=False)
    async with fake.connected(bot):
        guild = bot.get_guild(fake.guild_id)
        assert guild.get_member(fake.users["alice"].id) is None
        member = await guild.fetch_member(fake.users["alice"].id)
        assert member.guild_permissions.manage_threads
        with pytest.raises(discord.NotFound):
            await guild.fetch_member(12345)


async def test_dropped_connection_resumes_and_replays(fake: FakeDiscord, bot: TinyBot):
    await fake.drop_connections(code=4000)
    # events dispatched while the bot is away are buffered and replayed on RESUME
    handle = await fake.autocomplete("circus start", {"topic": "cl"}, focused="topic", user="bob")
    await handle.response(timeout=3)
    assert [c["value"] for c in handle.choices] == ["clowns"]
    assert [p["op"] for p in fake.gateway_received if p["op"] in (2, 6)] == [2, 6]
