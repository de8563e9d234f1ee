"""Several guilds in the fake Discord: each has its own roles, members, channel and commands."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import discord
import pytest

from fakediscord import FakeDiscord, P
from fakediscord.sharding import SessionStarts, identify_shard, owns


@pytest.mark.parametrize(("shard_id", "count"), [(0, 1), (0, 4), (3, 4), (5, 16)])
def test_add_guild_on_a_shard_picks_an_id_of_that_shard(shard_id, count):
    fake = FakeDiscord(validate_spec=False)
    gid = fake.add_guild("Second", shard=(shard_id, count))
    assert (gid >> 22) % count == shard_id
    assert fake.guild_channel(gid) != fake.channel_id


def test_a_new_guild_has_its_own_everyone_bot_role_members_and_general_channel():
    fake = FakeDiscord(validate_spec=False)
    gid = fake.add_guild("Second")
    guild = fake.guilds[gid]
    assert guild.roles[gid]["name"] == "@everyone"  # discord.py's default_role needs this
    assert set(guild.members) == set(fake.members)  # bot, owner, alice, bob, carol
    assert fake.permissions_of("alice", gid) & P.MANAGE_THREADS
    assert not fake.permissions_of("bob", gid) & P.MANAGE_THREADS
    assert fake.permissions_of("owner", gid) == P.ALL
    cid = fake.guild_channel(gid)
    assert fake.guild_of(cid) == gid and fake.guild_of(fake.channel_id) == fake.guild_id
    fake.set_bot_permissions(0, guild_id=gid)  # the bot loses rights there only
    assert not fake._bot_has(P.MANAGE_WEBHOOKS, cid)
    assert fake._bot_has(P.MANAGE_WEBHOOKS, fake.channel_id)
    dave = fake.add_user("dave", manage_threads=True)  # later users join every guild
    assert fake.permissions_of(dave, gid) & P.MANAGE_THREADS


async def test_guild_routes_answer_per_guild():
    async with FakeDiscord() as fake:
        gid = fake.add_guild("Second")
        headers = {"Authorization": f"Bot {fake.token}"}
        app = fake.application_id
        async with aiohttp.ClientSession(headers=headers) as http:
            async with http.get(f"{fake.api_base}/guilds/{gid}") as r:
                assert (await r.json())["name"] == "Second"
            async with http.get(f"{fake.api_base}/guilds/{gid}/channels") as r:
                assert [c["id"] for c in await r.json()] == [str(fake.guild_channel(gid))]
            body = [{"name": "ping", "description": "Ping", "type": 1}]
            for guild in (fake.guild_id, gid):
                url = f"{fake.api_base}/applications/{app}/guilds/{guild}/commands"
                async with http.put(url, json=body) as r:
                    assert r.status == 200
            async with http.get(f"{fake.api_base}/guilds/{gid + 1}") as r:
                assert r.status == 404
        by_guild = sorted(c["guild_id"] for c in fake.guild_commands.values())
        assert by_guild == sorted([str(fake.guild_id), str(gid)])
        assert fake.find_command("ping", where=fake.guild_channel(gid))["guild_id"] == str(gid)
        assert fake.spec_violations == []


# --- the sharded gateway: Discord's rules, then the real AutoShardedClient against them ---


@pytest.mark.parametrize(
    ("shard", "expected"),
    [
        (None, (0, 1)),  # no shard: the one connection
        ([0, 1], (0, 1)),
        ([3, 4], (3, 4)),
        ([4, 4], None),  # past the count: 4010
        ([-1, 4], None),
        ([0, 0], None),
        ([1], None),
        ("0,4", None),
        ([True, 2], None),
        ([0.0, 2], None),
    ],
)
def test_the_identify_shard_is_id_and_count_or_the_connection_is_closed(shard, expected):
    d = {} if shard is None else {"shard": shard}
    assert identify_shard(d) == expected


@pytest.mark.parametrize(
    ("shard", "guild", "gets"),
    [
        ((0, 1), 5 << 22, True),
        ((1, 4), 5 << 22, True),  # 5 % 4 == 1
        ((2, 4), 5 << 22, False),
        ((0, 4), None, True),  # DMs reach shard 0
        ((1, 4), None, False),
    ],
)
def test_a_guilds_events_go_to_its_shard_and_dms_to_shard_zero(shard, guild, gets):
    assert owns(shard, guild) is gets


def test_each_bucket_identifies_once_per_five_seconds_and_spends_a_session_start():
    starts = SessionStarts(total=3, max_concurrency=2)
    assert starts.identify(0, now=100.0) and starts.identify(1, now=100.0)  # two buckets
    assert not starts.identify(2, now=101.0)  # bucket 0 again within 5 s: opcode 9
    assert starts.identify(2, now=105.0)
    assert not starts.identify(1, now=200.0)  # the day's three starts are spent
    assert starts.refused == [(2, 0), (1, 1)]
    assert starts.as_json()["remaining"] == 0


async def raw_identify(fake: FakeDiscord, d: dict) -> tuple[int | None, list[dict]]:
    """IDENTIFY over a bare websocket: (close code or None, the frames received)."""
    frames: list[dict] = []
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(fake.gateway_url) as ws:
            frames.append(await ws.receive_json())  # HELLO
            await ws.send_json({"op": 2, "d": {"token": fake.token, "intents": 0, **d}})
            msg = await ws.receive()
            if msg.type == aiohttp.WSMsgType.TEXT:
                frames.append(json.loads(msg.data))
                return None, frames
            return ws.close_code, frames


async def test_an_invalid_shard_is_closed_4010_and_too_many_guilds_4011():
    async with FakeDiscord() as fake:
        # on shard 1 of 8, so shard 0 of 8 holds at most the first guild, wherever its id falls
        fake.add_guild("Second", shard=(1, 8))
        assert (await raw_identify(fake, {"shard": [2, 2]}))[0] == 4010
        fake.guilds_per_shard = 1
        assert (await raw_identify(fake, {}))[0] == 4011
        code, frames = await raw_identify(fake, {"shard": [0, 8]})
        assert code is None and frames[-1]["t"] == "READY"
        assert frames[-1]["d"]["shard"] == [0, 8]


async def test_an_identify_too_soon_in_its_bucket_is_invalidated_and_the_limit_counts():
    async with FakeDiscord() as fake:
        fake.session_starts = SessionStarts(total=10, max_concurrency=1)
        assert (await raw_identify(fake, {"shard": [0, 2]}))[1][-1]["t"] == "READY"
        _, frames = await raw_identify(fake, {"shard": [1, 2]})  # same bucket, same moment
        assert frames[-1] == {"op": 9, "s": None, "t": None, "d": False}
        headers = {"Authorization": f"Bot {fake.token}"}
        async with aiohttp.ClientSession(headers=headers) as http:
            async with http.get(f"{fake.api_base}/gateway/bot") as r:
                body = await r.json()
        assert body["session_start_limit"]["remaining"] == 9  # the refused one spent nothing
        assert fake.spec_violations == []


async def test_a_sharded_client_gets_only_its_shards_guilds_and_their_events():
    async with FakeDiscord() as fake:
        guilds = [fake.guild_id] + [fake.add_guild(f"G{i}", shard=(i, 4)) for i in range(1, 4)]
        mine = [g for g in guilds if (g >> 22) % 4 in (0, 1)]
        client = discord.AutoShardedClient(
            intents=discord.Intents.default() | discord.Intents(message_content=True),
            shard_ids=[0, 1],
            shard_count=4,
        )
        heard: dict[int, asyncio.Event] = {g: asyncio.Event() for g in guilds}
        shard_of_message: dict[int, int] = {}

        async def on_message(message: discord.Message) -> None:
            if message.guild is not None:
                shard_of_message[message.guild.id] = message.guild.shard_id
                heard[message.guild.id].set()

        client.event(on_message)
        async with fake.connected(client, guild_id=mine[0]):
            await client.wait_until_ready()
            assert sorted(g.id for g in client.guilds) == sorted(mine)
            for g in guilds:
                await fake.post_message(fake.guild_channel(g), "hello", user="bob")
            for g in mine:
                await asyncio.wait_for(heard[g].wait(), 30)
            user = await client.fetch_user(fake.users["alice"].id)
            await user.send("a DM")
            sessions = list(fake._sessions.values())
        assert sorted(s.shard for s in sessions) == [(0, 4), (1, 4)]
        assert {g: shard_of_message[g] for g in mine} == {g: (g >> 22) % 4 for g in mine}
        for session in sessions:  # nothing of another shard's guilds ever reached a session
            for event in session.buffer:
                d = event["d"]
                guild = fake._event_guild(event["t"], d) if isinstance(d, dict) else None
                if event["t"] not in ("READY", "RESUMED"):
                    assert owns(session.shard, guild), (session.shard, event["t"])
        dm_events = [
            s.shard
            for s in sessions
            for e in s.buffer
            if e["t"] == "MESSAGE_CREATE" and "guild_id" not in e["d"]
        ]
        assert dm_events == [(0, 4)]  # the DM's echo reached shard 0 only
        assert fake.shard_sessions() == {(0, 4): 0, (1, 4): 0}  # closed on exit
        assert fake.spec_violations == []


async def test_without_a_count_the_client_asks_gateway_bot_and_connects_every_shard():
    async with FakeDiscord() as fake:
        fake.recommended_shards = 2
        other = fake.add_guild("Second", shard=(1, 2))
        client = discord.AutoShardedClient(intents=discord.Intents.default())
        async with fake.connected(client, guild_id=other):
            await client.wait_until_ready()
            assert client.shard_count == 2
            assert sorted(fake.shard_sessions()) == [(0, 2), (1, 2)]
        assert any(r.path.endswith("/gateway/bot") for r in fake.requests)
