"""Benchmark: 40 scenes rehearsing at once, served by 1, 2 and 4 `circus bot` processes.

Each process is the real command with its own range of 4 shards (`--shards 0-3`; `0-1`,`2-3`;
`0`…`3`), against the fake Discord with `--servers` servers (a scene each by default: scenes of
one server share its channel's webhook, whose pace is Discord's); every model call goes to the
fake LiteLLM proxy, which answers after `--latency` seconds (a hosted model thinking). Each
process first plays a warm-up turn (litellm's import and first call take seconds); then,
measured per fleet from the first /run to the last run's closing line:
  * turns per second across all scenes;
  * the bot's overhead per turn: a scene's wall time minus the model time its calls took (the
    processes' own `circus_model_call_duration_seconds`, scraped from /metrics), per turn —
    what Circus and Discord add on top of the model.
A scene plays its turns one after another, so with a model that answers every call at once
the ceiling is scenes × 1 / (model seconds per turn); the table shows how close each fleet
gets. Prints a table; exit code 1 if any run fails.

    python bench/bench_shards.py [--scenes 40] [--servers 40] [--turns 6] [--latency 0.5]
                                 [--fleets 1,2,4]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHARDS = 4
SPLITS = {1: ["0-3"], 2: ["0-1", "2-3"], 4: ["0", "1", "2", "3"]}


def model_seconds(page: str) -> tuple[float, float, float]:
    """(seconds, calls) of model calls and Discord's 429s on one scraped /metrics page."""
    from prometheus_client.parser import text_string_to_metric_families

    seconds = calls = limited = 0.0
    for family in text_string_to_metric_families(page):
        if family.name == "circus_model_call_duration_seconds":
            for s in family.samples:
                if s.name.endswith("_sum"):
                    seconds += s.value
                elif s.name.endswith("_count"):
                    calls += s.value
        elif family.name == "circus_discord_requests":
            limited += sum(s.value for s in family.samples if s.labels.get("status") == "429")
    return seconds, calls, limited


async def fleet(
    processes: int, scenes: int, turns: int, latency: float, servers: int
) -> dict[str, float]:
    from fakeproviders.litellm_proxy import FakeLiteLLMProxy
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

    from fakediscord import FakeDiscord

    with tempfile.TemporaryDirectory() as tmp:
        scenes_dir = Path(tmp) / "scenes"
        scenes_dir.mkdir()
        proxy = FakeLiteLLMProxy(CAST, {MODEL: 1e-6}, latency=latency)
        async with FakeDiscord() as fake, proxy as gateway:
            guilds = guilds_over_shards(fake, SHARDS, per_shard=max(1, servers // SHARDS))
            env = bot_env(fake, scenes_dir, gateway)
            bots = [
                BotProcess(ids, SHARDS, env, Path(tmp) / f"bot{i}.log")
                for i, ids in enumerate(SPLITS[processes])
            ]
            studio = Studio(fake)
            try:
                async with running(bots):
                    await until(
                        lambda: (
                            sum(fake.shard_sessions().values()) == SHARDS and fake.global_commands
                        ),
                        what="every shard connected",
                    )
                    # Warm every process up outside the measurement (litellm's import and
                    # its first call take seconds): one scene per shard plays a turn.
                    warm = [f"warm{i}" for i in range(SHARDS)]
                    firsts = {(g >> 22) % SHARDS: g for g in reversed(guilds)}
                    for i, n in enumerate(warm):
                        await studio.new_scene(firsts[i], n)
                        await studio.command(n, "run", {"turns": 1})
                    await until(lambda: all(studio.ended(n) for n in warm), what="warm-up")
                    names = [f"s{i:02d}" for i in range(scenes)]
                    await asyncio.gather(
                        *(studio.new_scene(guilds[i % len(guilds)], n) for i, n in enumerate(names))
                    )
                    before = [model_seconds(b.scrape()) for b in bots]
                    started = time.perf_counter()
                    await asyncio.gather(
                        *(studio.command(n, "run", {"turns": turns}) for n in names)
                    )
                    ended: dict[str, float] = {}

                    def all_ended() -> bool:
                        now = time.perf_counter()
                        for n in names:
                            if n not in ended and studio.ended(n):
                                ended[n] = now
                        return len(ended) == len(names)

                    await until(all_ended, timeout=600, what="every run to finish")
                    wall = max(ended.values()) - started
                    after = [model_seconds(b.scrape()) for b in bots]
            except BaseException:
                for b in bots:
                    print(b.tail(), file=sys.stderr)
                raise
            made = sum(len(studio.lines(n)) for n in names)
            spent = sum(a[0] - b[0] for a, b in zip(after, before, strict=True))
            calls = sum(a[1] - b[1] for a, b in zip(after, before, strict=True))
            limited = sum(a[2] - b[2] for a, b in zip(after, before, strict=True))
            scene_seconds = sum(ended[n] - started for n in names)
            return {
                "processes": processes,
                "turns": made,
                "wall": wall,
                "turns_per_s": made / wall,
                "calls_per_turn": calls / made,
                "model_s_per_turn": spent / made,
                "overhead_ms": 1000 * (scene_seconds - spent) / made,
                "ceiling": scenes / (spent / made),
                "limited": limited,
            }


async def bench(fleets: list[int], scenes: int, turns: int, latency: float, servers: int) -> int:
    rows = []
    for n in fleets:
        rows.append(await fleet(n, scenes, turns, latency, servers))
    print(
        f"\n{scenes} scenes in {servers} servers × {turns} turns, model latency {latency:.2f} s "
        "per call, 4 shards"
    )
    head = (
        "| processes | turns | wall s | turns/s | ceiling turns/s | calls/turn "
        "| model s/turn | overhead ms/turn | Discord 429s |"
    )
    print(head)
    print("|---:" * 9 + "|")
    for r in rows:
        print(
            f"| {r['processes']} | {r['turns']} | {r['wall']:.1f} | {r['turns_per_s']:.2f} "
            f"| {r['ceiling']:.2f} | {r['calls_per_turn']:.2f} | {r['model_s_per_turn']:.2f} "
            f"| {r['overhead_ms']:.0f} | {r['limited']:.0f} |"
        )
    return 0 if all(r["turns"] == scenes * turns for r in rows) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=40)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--servers", type=int, default=40, help="Discord servers (scenes share)")
    parser.add_argument("--fleets", default="1,2,4")
    args = parser.parse_args()
    fleets = [int(n) for n in args.fleets.split(",")]
    return asyncio.run(bench(fleets, args.scenes, args.turns, args.latency, args.servers))


if __name__ == "__main__":
    sys.exit(main())
