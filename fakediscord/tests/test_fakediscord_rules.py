"""Tests for Discord's rules as the fake enforces them on REST: content and name limits, DMs,
webhooks, threads, rate limits and OpenAPI validation.
"""

from __future__ import annotations

import asyncio

import aiohttp
import discord
import pytest

from fakediscord import FakeDiscord  # tests/ is on sys.path (rootdir conftest)
from fakediscord.tinybot import TinyBot

pytestmark = pytest.mark.asyncio


async def test_content_over_2000_rejected(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus long", user="bob")
    reply = await handle
    assert reply["data"]["content"] == "too long, sorry"
    [exc] = bot.errors
    assert exc.status == 400 and exc.code == 50035
    assert "content" in exc.text or "2000" in exc.text
    assert (
        handle.rejected[0]["errors"]["data"]["content"]["_errors"][0]["code"]
        == "BASE_TYPE_MAX_LENGTH"
    )
    assert fake.spec_violations == []  # a rule rejection, not a spec violation


async def test_channel_message_over_2000_rejected(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    with pytest.raises(discord.HTTPException) as info:
        await channel.send("y" * 2001)
    assert info.value.code == 50035
    await channel.send("y" * 2000)
    assert len(fake.messages_in(fake.channel_id)[-1]["content"]) == 2000


@pytest.mark.parametrize("name", ["Clyde the clown", "my DISCORD bot", ""])
async def test_webhook_username_rules(fake: FakeDiscord, bot: TinyBot, name: str):
    hook = await bot.ensure_webhook(bot.get_channel(fake.channel_id))
    with pytest.raises(discord.HTTPException) as info:
        await hook.send("hello", username=name or " ")
    assert info.value.status == 400 and info.value.code == 50035
    assert fake.messages_in(fake.channel_id) == []


async def test_webhook_name_rules_on_create(fake: FakeDiscord, bot: TinyBot):
    with pytest.raises(discord.HTTPException) as info:
        await bot.get_channel(fake.channel_id).create_webhook(name="clyde")
    assert info.value.code == 50035


async def test_dm_open_and_closed(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus dm", {"member": fake.users["bob"]}, user="alice")
    await handle.wait_followups(1)
    assert handle.contents == ["sent"]
    assert [m["content"] for m in fake.dms_to("bob")] == ["psst, the show starts soon"]

    handle = await fake.slash("circus dm", {"member": fake.users["carol"]}, user="alice")
    await handle.wait_followups(1)
    assert handle.contents == ["cannot DM: 50007"]
    assert fake.dms_to("carol") == []
    assert ("POST", "/users/@me/channels") in [(r.method, r.path) for r in fake.requests]


async def test_webhook_429_retried_by_discord_py(fake: FakeDiscord, bot: TinyBot):
    hook = await bot.ensure_webhook(bot.get_channel(fake.channel_id))
    fake.rate_limit_next_webhook_executes(2, retry_after=0.02)
    msg = await hook.send("after the storm", username="Weather", wait=True)
    assert msg.content == "after the storm"
    executes = fake.requests_to("POST", "/webhooks/{webhook_id}/{webhook_token}")
    assert [r.status for r in executes] == [429, 429, 200]
    assert executes[0].response["retry_after"] == 0.02


async def test_webhook_bucket_rate_limit(fake: FakeDiscord, bot: TinyBot):
    hook = await bot.ensure_webhook(bot.get_channel(fake.channel_id))
    fake.set_webhook_rate_limit(2, per=0.1, send_headers=False)
    for i in range(3):
        await hook.send(f"m{i}")
    statuses = [
        r.status for r in fake.requests_to("POST", "/webhooks/{webhook_id}/{webhook_token}")
    ]
    assert statuses.count(429) >= 1 and statuses.count(204) == 3
    assert [m["content"] for m in fake.messages_in(fake.channel_id)] == ["m0", "m1", "m2"]


async def test_webhook_limit_per_channel(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    for i in range(15):
        await channel.create_webhook(name=f"hook{i}")
    with pytest.raises(discord.HTTPException) as info:
        await channel.create_webhook(name="one too many")
    assert info.value.code == 30007
    assert len(fake.webhooks_in(fake.channel_id)) == 15


async def test_deleted_webhook_then_recreated(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    hook = await bot.ensure_webhook(channel)
    await fake.delete_webhook(hook.id)
    with pytest.raises(discord.NotFound) as info:
        await hook.send("anyone there?")
    assert info.value.code == 10015
    bot.webhook = None
    hook2 = await bot.ensure_webhook(channel)
    assert hook2.id != hook.id
    await hook2.send("back again")
    assert [m["content"] for m in fake.messages_in(fake.channel_id)] == ["back again"]


async def test_archived_thread_rules(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    thread = await channel.create_thread(name="old act", type=discord.ChannelType.public_thread)
    hook = await bot.ensure_webhook(channel)
    first = await hook.send("before", thread=thread, wait=True)
    await fake.archive_thread(thread.id)
    # editing in an archived thread fails like Discord (50083)
    with pytest.raises(discord.HTTPException) as info:
        await hook.edit_message(first.id, content="edited", thread=thread)
    assert info.value.code == 50083
    # posting through the webhook unarchives it
    await hook.send("wake up", thread=thread)
    assert fake.threads[thread.id]["thread_metadata"]["archived"] is False
    assert [m["content"] for m in fake.messages_in(thread.id)] == ["before", "wake up"]
    # and the bot can archive it itself
    await thread.edit(archived=True)
    assert fake.threads[thread.id]["thread_metadata"]["archived"] is True
    await thread.edit(archived=False)
    assert fake.threads[thread.id]["thread_metadata"]["archived"] is False


async def test_thread_from_message_and_attachments(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    msg = await channel.send(
        "the show", file=discord.File(__import__("io").BytesIO(b"hello"), "program.txt")
    )
    thread = await msg.create_thread(name="show thread")
    assert thread.id == msg.id
    [stored] = fake.messages_in(fake.channel_id)
    [att] = stored["attachments"]
    assert att["filename"] == "program.txt" and att["size"] == 5
    async with aiohttp.ClientSession() as session:
        async with session.get(att["url"]) as resp:
            assert await resp.read() == b"hello"
    hook = await bot.ensure_webhook(channel)
    await hook.send(
        "with file", thread=thread, file=discord.File(__import__("io").BytesIO(b"abc"), "a.txt")
    )
    [m] = fake.messages_in(thread.id)
    assert m["attachments"][0]["filename"] == "a.txt"
    async with channel.typing():
        pass
    assert fake.typing and fake.typing[0][0] == fake.channel_id


async def test_spec_violation_is_recorded_and_rejected(fake: FakeDiscord, bot: TinyBot):
    route = discord.http.Route("POST", "/channels/{channel_id}/threads", channel_id=fake.channel_id)
    with pytest.raises(discord.HTTPException) as info:
        await bot.http.request(route, json={"name": "x" * 101, "type": 11})
    assert info.value.status == 400
    assert len(fake.spec_violations) == 1 and "name" in fake.spec_violations[0]
    fake.spec_violations.clear()


async def test_bot_rest_429_retried(fake: FakeDiscord, bot: TinyBot):
    fake.rate_limit_next("POST", "/channels/{channel_id}/messages", 1, retry_after=0.02)
    await bot.get_channel(fake.channel_id).send("eventually")
    assert [r.status for r in fake.requests_to("POST", "/channels/{channel_id}/messages")] == [
        429,
        200,
    ]


async def test_webhook_bucket_headers_avoid_429(fake: FakeDiscord, bot: TinyBot):
    hook = await bot.ensure_webhook(bot.get_channel(fake.channel_id))
    fake.set_webhook_rate_limit(2, per=0.1, send_headers=True)
    loop = asyncio.get_running_loop()
    started = loop.time()
    for i in range(3):
        await hook.send(f"m{i}")
    assert loop.time() - started >= 0.05  # discord.py waited for the bucket to reset
    statuses = [
        r.status for r in fake.requests_to("POST", "/webhooks/{webhook_id}/{webhook_token}")
    ]
    assert statuses == [204, 204, 204]


async def test_partial_webhook_from_id_and_token(fake: FakeDiscord, bot: TinyBot):
    made = await bot.get_channel(fake.channel_id).create_webhook(name="stored")
    # what a bot does with an id/token it persisted: Webhook.from_url() only accepts discord.com
    hook = discord.Webhook.partial(made.id, made.token, client=bot)
    msg = await hook.send("from storage", username="Keeper", wait=True)
    assert msg.author.name == "Keeper"
    assert fake.messages_in(fake.channel_id)[-1]["username"] == "Keeper"
