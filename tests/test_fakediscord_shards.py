"""Several guilds in the fake Discord: each has its own roles, members, channel and commands."""

from __future__ import annotations

import aiohttp
import pytest
from fakediscord import FakeDiscord, P


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
