"""Benchmark: 20 scenes rehearsing at once in one bot, against the fake Discord.

The real CircusBot logs into fakediscord; every scene runs a scripted model with 200 ms
latency per call. Measured:
  * interaction acknowledgement: from the interaction being dispatched to the bot's first
    callback reaching Discord (every /scene new, /run, /status, /note and autocomplete);
  * the bot's own overhead per posted turn: from the engine emitting TurnCompleted to the
    turn's message being queued for its webhook (rendering, splitting, routing; excluding
    model time and Discord HTTP time);
  * /cut in all 20 scenes at once while they run: from the interaction to its confirmation;
    then ⏹ Cut pressed on every scene's panel (a component interaction) the same way;
  * the panels (bot.panel.message): edits of the panel messages per scene-minute of running, and REST
    calls per posted turn (everything the bot sent while the scenes ran, panels included).
Targets: ack p95 ≤ 1 s; overhead median ≤ 10 ms; /cut and ⏹ Cut p95 ≤ 1 s; panel edits per
scene ≤ 1 + wall/2 s (the first change at once, then one every 2 s: 30 a minute). Prints a table; exit code 1 if a target fails.

    python bench/bench_bot.py [--scenes 20] [--turns 10] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def bench(scenes: int, turns: int, latency: float, channels: int) -> int:
    from bot.app import CircusBot
    from engine import Config
    from engine.providers.scripted import ScriptedModels
    from fakediscord import FakeDiscord

    acks: list[float] = []

    async def timed(coro_factory) -> object:
        started = asyncio.get_running_loop().time()
        handle = await coro_factory()
        await handle.response(timeout=30)
        acks.append(asyncio.get_running_loop().time() - started)
        return handle

    with tempfile.TemporaryDirectory() as tmp:
        scenes_dir = Path(tmp)
        async with FakeDiscord() as fake:
            channel_ids = [fake.channel_id] + [
                fake.add_text_channel(f"room-{i}") for i in range(1, channels)
            ]
            # every scene plays the scripted improv through one door (no environment involved)
            config = Config(model="scripted/improv")
            door = ScriptedModels(config=config, latency=latency)
            bot = CircusBot(scenes_dir, guild_id=fake.guild_id, models=door, config=config)
            async with fake.connected(bot):
                # Warm up litellm's import and the first model call outside the measurement.
                warm = await timed(
                    lambda: fake.slash("scene new", {"name": "warmup", "template": "wake"})
                )
                await warm.wait_followups(1, timeout=30)
                thread = int(fake.thread_by_name("🎭 warmup")["id"])
                h = await timed(lambda: fake.slash("cue", {"actor": "Ruth"}, channel_id=thread))
                await h.wait_followups(1, timeout=30)
                await until_finished(fake, [thread], 1)
                acks.clear()
                for scene_thread in bot.scene_threads.values():
                    scene_thread.overhead.clear()

                names = [f"scene-{i:02d}" for i in range(scenes)]
                templates = ["interrogation", "wake"]
                created = await asyncio.gather(
                    *(
                        timed(
                            lambda n=n, i=i: fake.slash(
                                "scene new",
                                {"name": n, "template": templates[i % 2]},
                                channel_id=channel_ids[i % channels],
                            )
                        )
                        for i, n in enumerate(names)
                    )
                )
                await asyncio.gather(*(h.wait_followups(1, timeout=30) for h in created))
                threads = [int(fake.thread_by_name(f"🎭 {n}")["id"]) for n in names]

                started = time.perf_counter()
                sent_before = len(fake.requests)
                runs = await asyncio.gather(
                    *(
                        timed(lambda t=t: fake.slash("run", {"turns": turns}, channel_id=t))
                        for t in threads
                    )
                )
                await asyncio.gather(*(h.wait_followups(1, timeout=30) for h in runs))
                # While the scenes play, directors keep poking at them.
                for round_ in range(3):
                    await asyncio.gather(
                        *(timed(lambda t=t: fake.slash("status", channel_id=t)) for t in threads),
                        *(
                            timed(
                                lambda t=t: fake.autocomplete(
                                    "cue", {"actor": ""}, focused="actor", channel_id=t
                                )
                            )
                            for t in threads
                        ),
                        *(
                            timed(
                                lambda t=t, r=round_: fake.slash(
                                    "note", {"text": f"note {r}"}, channel_id=t
                                )
                            )
                            for t in threads
                        ),
                    )
                    await asyncio.sleep(latency * 2)
                await until_finished(fake, threads, 1)
                await bot.drain()
                await bot.panels.settled()
                wall = time.perf_counter() - started
                during = fake.requests[sent_before:]
                panel_ids = {str(bot.scene_thread_in(t).binding.panel_id) for t in threads}
                panel_edits = sum(
                    1
                    for q in during
                    if q.method == "PATCH"
                    and q.template == "/channels/{channel_id}/messages/{message_id}"
                    and q.path.rsplit("/", 1)[-1] in panel_ids
                )
                rest_calls = sum(1 for q in during if not q.path.startswith("/interactions/"))
                overhead = [x for t in threads for x in bot.scene_thread_in(t).overhead]
                posted = sum(
                    1
                    for t in threads
                    for m in fake.messages_in(t)
                    if m["webhook_id"] and m["username"] != "Circus"
                )

                # /cut in every scene while all of them are mid-run.
                runs = await asyncio.gather(
                    *(
                        timed(lambda t=t: fake.slash("run", {"turns": 50}, channel_id=t))
                        for t in threads
                    )
                )
                await asyncio.gather(*(h.wait_followups(1, timeout=30) for h in runs))
                await asyncio.sleep(latency * 3)
                cuts: list[float] = []

                async def cut(thread: int) -> None:
                    began = asyncio.get_running_loop().time()
                    handle = await fake.slash("cut", channel_id=thread)
                    await handle.wait_followups(1, timeout=30)
                    cuts.append(asyncio.get_running_loop().time() - began)
                    assert "卡" in handle.contents[0] or "Cut" in handle.contents[0]

                await asyncio.gather(*(cut(t) for t in threads))
                await bot.drain()

                # ⏹ Cut on every panel while all the scenes run again (directors on phones).
                runs = await asyncio.gather(
                    *(
                        timed(lambda t=t: fake.slash("run", {"turns": 50}, channel_id=t))
                        for t in threads
                    )
                )
                await asyncio.gather(*(h.wait_followups(1, timeout=30) for h in runs))
                presses: list[float] = []

                async def press_cut(name: str, thread: int) -> None:
                    panel_id = bot.scene_thread_in(thread).binding.panel_id
                    await until_cut_enabled(fake, thread, panel_id)
                    began = asyncio.get_running_loop().time()
                    handle = await fake.click(panel_id, f"circus:cut:0:{name}")
                    await handle.response(timeout=30)
                    acks.append(asyncio.get_running_loop().time() - began)
                    await handle.wait_followups(1, timeout=30)
                    presses.append(asyncio.get_running_loop().time() - began)

                await asyncio.gather(
                    *(press_cut(n, t) for n, t in zip(names, threads, strict=True))
                )
                await bot.drain()
                await bot.panels.settled()

                rejected = sum(len(h.rejected) for h in fake.interactions.values())
                violations = len(fake.spec_violations)

    ack_p95 = pct(acks, 0.95)
    over_med = statistics.median(overhead) if overhead else float("nan")
    edits_per_minute = panel_edits / (scenes * wall / 60)
    edit_bound = 1 + wall / 2.0  # the coalescer: the first change at once, then one per 2 s
    rows = [
        ("scenes × turns", f"{scenes} × {turns}", ""),
        ("model latency per call", f"{latency * 1000:.0f} ms", ""),
        ("wall time for all runs", f"{wall:.2f} s", ""),
        ("turns posted", f"{posted}", f"expected {scenes * turns}"),
        ("interactions acknowledged", f"{len(acks)}", f"rejected {rejected}"),
        ("ack p50", f"{pct(acks, 0.5) * 1000:.1f} ms", ""),
        ("ack p95", f"{ack_p95 * 1000:.1f} ms", "target ≤ 1000 ms"),
        ("ack max", f"{max(acks) * 1000:.1f} ms", ""),
        ("/cut → confirmed, p95", f"{pct(cuts, 0.95) * 1000:.1f} ms", "target ≤ 1000 ms"),
        (
            "⏹ Cut (panel) → confirmed, p95",
            f"{pct(presses, 0.95) * 1000:.1f} ms",
            "target ≤ 1000 ms",
        ),
        ("panel edits per scene-minute", f"{edits_per_minute:.1f}", "30 + one first edit"),
        ("panel edits per scene", f"{panel_edits / scenes:.1f}", f"target ≤ {edit_bound:.1f}"),
        ("panel edits per turn", f"{panel_edits / max(posted, 1):.2f}", ""),
        ("REST calls per turn", f"{rest_calls / max(posted, 1):.2f}", "panels included"),
        ("overhead per turn p50", f"{over_med * 1000:.2f} ms", "target ≤ 10 ms"),
        ("overhead per turn p95", f"{pct(overhead, 0.95) * 1000:.2f} ms", ""),
        ("spec violations", f"{violations}", "target 0"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'metric'.ljust(width)} | {'value':>12} | note")
    print(f"{'-' * width}-+-{'-' * 12}-+-{'-' * 18}")
    for name, value, note in rows:
        print(f"{name.ljust(width)} | {value:>12} | {note}")
    ok = (
        ack_p95 <= 1.0
        and pct(cuts, 0.95) <= 1.0
        and pct(presses, 0.95) <= 1.0
        and panel_edits / scenes <= edit_bound
        and over_med <= 0.010
        and posted == scenes * turns
        and violations == 0
        and rejected == 0
    )
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


async def until_finished(fake, threads: list[int], count: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        done = all(
            sum(1 for m in fake.messages_in(t) if m["username"] == "Circus" and "■" in m["content"])
            >= count
            for t in threads
        )
        if done:
            return
        if time.monotonic() > deadline:
            raise TimeoutError("runs did not finish")
        await asyncio.sleep(0.05)


async def until_cut_enabled(fake, thread: int, panel_id: int, timeout: float = 60) -> None:
    """Wait until the panel shows ⏹ Cut enabled (the scene is running), as a director would."""
    deadline = time.monotonic() + timeout
    while True:
        [panel] = [m for m in fake.messages_in(thread) if m["id"] == str(panel_id)]
        buttons = [c for row in panel["components"] for c in row["components"]]
        if any(c["custom_id"].startswith("circus:cut:") and not c.get("disabled") for c in buttons):
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the panel never offered Cut")
        await asyncio.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--channels", type=int, default=4)
    args = parser.parse_args()
    return asyncio.run(bench(args.scenes, args.turns, args.latency, args.channels))


if __name__ == "__main__":
    sys.exit(main())
