"""Past one machine: two `circus bot` processes split 4 shards of 8 servers and play 16
scenes at once, every model call through one LiteLLM proxy. One process is killed with
`kill -9` mid-run and started again: its scenes come back to their threads with nothing lost
or doubled, and the other process never stalls.

The processes are the real command (subprocesses); Discord is fakediscord, sharding as
Discord does (each server's events only to its shard's connection); the model is the fake
LiteLLM proxy (tests/fakeproviders), answering with usage and the cost header.
"""

from __future__ import annotations

import json

import pytest
from fakeproviders.litellm_proxy import FakeLiteLLMProxy
from prometheus_client.parser import text_string_to_metric_families
from shardkit import (
    CAST,
    MODEL,
    BotProcess,
    Studio,
    bot_env,
    guilds_over_shards,
    running,
    until,
)

from engine.folder.turns import parse_transcript
from fakediscord import FakeDiscord

pytestmark = pytest.mark.asyncio

SHARDS = 4
TURNS = 8


def samples(page: str, name: str) -> list:
    """The samples of metric family `name` on a scraped /metrics page (prometheus_client's own
    parser: a page it cannot read fails the test)."""
    return [s for f in text_string_to_metric_families(page) if f.name == name for s in f.samples]


def counted(page: str, name: str) -> float:
    return sum(s.value for s in samples(page, name) if s.name == f"{name}_total")


async def test_two_processes_share_the_servers_and_a_killed_one_comes_back_whole(tmp_path):
    scenes_dir = tmp_path / "scenes"
    scenes_dir.mkdir()
    proxy = FakeLiteLLMProxy(CAST, {MODEL: 1e-6}, latency=0.05)
    async with FakeDiscord() as fake, proxy as gateway:
        guilds = guilds_over_shards(fake, SHARDS, per_shard=2)
        env = bot_env(fake, scenes_dir, gateway)
        a = BotProcess("0-1", SHARDS, env, tmp_path / "a.log")
        b = BotProcess("2-3", SHARDS, env, tmp_path / "b.log")
        studio = Studio(fake)
        try:
            async with running([a, b]):
                await until(
                    lambda: sum(fake.shard_sessions().values()) == SHARDS and fake.global_commands,
                    what="four shards connected and the commands synced",
                )
                assert sorted(fake.shard_sessions()) == [(s, SHARDS) for s in range(SHARDS)]
                for i, guild in enumerate(guilds):
                    for k in range(2):
                        await studio.new_scene(guild, f"g{i}s{k}")
                names = sorted(studio.threads)
                assert len(names) == 16
                a_names = [n for n in names if (studio.guild_of[n] >> 22) % SHARDS in (0, 1)]
                b_names = [n for n in names if n not in a_names]
                assert len(a_names) == len(b_names) == 8

                for name in names:
                    assert "▶" in await studio.command(name, "run", {"turns": TURNS})
                await until(
                    lambda: all(len(studio.lines(n)) >= 2 for n in a_names),
                    what="two turns in each of the first process's scenes",
                )
                a.kill()
                assert await a.wait() == -9
                # the other process never stalls: its scenes go on while the first is dead
                before = sum(len(studio.lines(n)) for n in b_names)
                await until(
                    lambda: sum(len(studio.lines(n)) for n in b_names) >= before + 8,
                    what="the second process's scenes to go on",
                )
                assert fake.shard_sessions()[(0, SHARDS)] == 0  # really dead

                await a.start()  # same shards: it re-attaches its scenes
                await until(
                    lambda: (
                        fake.shard_sessions().get((0, SHARDS))
                        and fake.shard_sessions().get((1, SHARDS))
                    ),
                    what="the restarted process to connect its shards",
                )
                await until(
                    lambda: all(studio.ended(n) >= 1 for n in b_names),
                    what="the second process's runs to finish",
                )
                # the restarted process answers in its scenes and plays them on (a scene
                # whose first run ended before the kill already has one ■: count from here)
                ended = {n: studio.ended(n) for n in a_names}
                for name in a_names:
                    assert "▶" in await studio.command(name, "run", {"turns": 2})
                await until(
                    lambda: all(studio.ended(n) > ended[n] for n in a_names),
                    what="the restarted process's runs to finish",
                )
                page_a, page_b = a.scrape(), b.scrape()
        except BaseException:
            print("--- a ---\n" + a.tail() + "\n--- b ---\n" + b.tail())
            raise

    # On disk: each scene in its own server's folder, whole.
    for name in names:
        scene = scenes_dir / str(studio.guild_of[name]) / name
        turns = parse_transcript((scene / "transcript.md").read_text("utf-8"))
        assert [t.number for t in turns] == list(range(1, len(turns) + 1)), name
        assert not (scene / ".circus" / "pending.json").exists()
        # In the thread: every turn on the record, once, in order — the killed process's
        # unposted turns were posted when it came back, none twice.
        lines = studio.lines(name)
        assert [m["username"] for m in lines] == [t.actor for t in turns], name
        for line, turn in zip(lines, turns, strict=True):
            assert turn.dialogue.split("\n")[0][:20] in line["content"], name
    assert all(len(parse_transcript((scenes_dir / str(studio.guild_of[n]) / n / "transcript.md").read_text("utf-8"))) == TURNS for n in b_names)  # fmt: skip
    assert not [p for p in scenes_dir.iterdir() if p.is_dir() and not p.name.isdigit()]

    # Exactly one process drove each scene: the second never restarted, and its /metrics count
    # exactly its own scenes' turns; the restarted one counts only what it made since.
    b_turns = sum(
        len(parse_transcript((scenes_dir / str(studio.guild_of[n]) / n / "transcript.md").read_text("utf-8")))
        for n in b_names
    )  # fmt: skip
    assert counted(page_b, "circus_turns") == b_turns
    assert counted(page_a, "circus_turns") == 2 * len(a_names)
    # Every model call went through the proxy, under its model name, and its cost came back
    # (labelled by the name the operator configured, not as sent: `litellm_proxy/...`).
    calls = counted(page_a, "circus_model_calls") + counted(page_b, "circus_model_calls")
    assert calls >= b_turns + 2 * len(a_names)
    assert {r["model"] for r in proxy.requests} == {MODEL}
    assert {s.labels.get("model") for s in samples(page_b, "circus_model_cost_usd")} == {MODEL}
    for name in b_names:
        usage = scenes_dir / str(studio.guild_of[name]) / name / ".circus" / "usage.jsonl"
        rows = [json.loads(line) for line in usage.read_text("utf-8").splitlines()]
        assert rows and all(row.get("cost_usd") for row in rows), name
    # no scene text or name in any label of either page
    for page in (page_a, page_b):
        for family in text_string_to_metric_families(page):
            for sample in family.samples:
                for value in sample.labels.values():
                    assert not any(n in value for n in names) and not any(c in value for c in CAST)


async def test_a_second_process_given_the_same_shards_by_mistake_corrupts_nothing(tmp_path):
    """Both processes get every event of the server (Discord lets two sessions share a shard):
    one runs the scene, the other is refused by the scene's lock, and the thread and the
    transcript hold each turn once."""
    scenes_dir = tmp_path / "scenes"
    scenes_dir.mkdir()
    proxy = FakeLiteLLMProxy(CAST, {MODEL: 1e-6}, latency=0.02)
    async with FakeDiscord() as fake, proxy as gateway:
        env = bot_env(fake, scenes_dir, gateway)
        first = BotProcess("0", 1, env, tmp_path / "first.log")
        twin = BotProcess("0", 1, env, tmp_path / "twin.log")
        studio = Studio(fake)
        try:
            async with running([first]):
                await until(lambda: fake.shard_sessions().get((0, 1)) and fake.global_commands)
                await studio.new_scene(fake.guild_id, "審訊室")
                async with running([twin]):
                    await until(lambda: fake.shard_sessions().get((0, 1)) == 2, what="the twin")
                    handle = await fake.slash(
                        "run", {"turns": TURNS}, channel_id=studio.threads["審訊室"]
                    )
                    await handle.response(timeout=180)
                    await until(lambda: studio.ended("審訊室"), what="the run to finish")
                    assert first.process.returncode is None and twin.process.returncode is None
        except BaseException:
            print("--- first ---\n" + first.tail() + "\n--- twin ---\n" + twin.tail())
            raise
    scene = scenes_dir / str(fake.guild_id) / "審訊室"
    turns = parse_transcript((scene / "transcript.md").read_text("utf-8"))
    assert [t.number for t in turns] == list(range(1, TURNS + 1))
    assert [m["username"] for m in studio.lines("審訊室")] == [t.actor for t in turns]
    assert studio.ended("審訊室") == 1
    # the process that lost the race says why, in one line, for the operator
    logs = first.log.read_text("utf-8") + twin.log.read_text("utf-8")
    assert "already answered by another process" in logs and "Traceback" not in logs
