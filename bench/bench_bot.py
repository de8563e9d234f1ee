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
    calls per posted turn (everything the bot sent while the scenes ran, panels included);
  * the fake's own share: CPU seconds the fake spent checking requests against Discord's
    OpenAPI spec, in the same event loop as the bot (time the bot could not run).
Targets: ack p95 ≤ 1 s; overhead median ≤ 10 ms; /cut and ⏹ Cut p95 ≤ 1 s; panel edits per
scene ≤ 1 + wall/2 s (the first change at once, then one every 2 s: 30 a minute). Prints a table; exit code 1 if a target fails.

    python bench/bench_bot.py [--scenes 20] [--turns 10] [--latency 0.2] [--runs 1]
    python bench/bench_bot.py --against 0846f5f [--runs 3] [--same-fake] [--base HEAD]

--against REV checks REV out with `git worktree add` into a temporary folder and runs the
same harness (this script) on that tree's own bot, engine and fakediscord, alternating runs
of the two trees (ABBA) in fresh processes, and prints the median of each measure side by
side. --same-fake runs REV's bot and engine against this tree's fakediscord instead, to tell
a change in the bot from a change in the fake; --base REV2 puts REV2's tree in place of this
one (a working tree holds everyone's uncommitted edits).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def use_tree(tree: Path, same_fake: bool) -> None:
    """Import bot/ and engine/ (and fakediscord/, unless `same_fake`) from `tree`."""
    if same_fake:
        sys.path.insert(0, str(ROOT))
        import fakediscord  # noqa: F401  (cached: the tree's copy is never imported)

        sys.path.remove(str(ROOT))
    sys.path.insert(0, str(tree))
    import bot
    import engine
    import fakediscord as fake

    for package, home in ((bot, tree), (engine, tree), (fake, ROOT if same_fake else tree)):
        if not Path(package.__file__ or "").resolve().is_relative_to(home.resolve()):
            sys.exit(f"{package.__name__} came from {package.__file__}, not from {home}")


class SpecClock:
    """Times the fake's OpenAPI check of every request (CPU in the bot's event loop)."""

    def __init__(self, fake: Any) -> None:
        self.spent = 0.0
        self.calls = 0
        spec = fake.spec
        if spec is None:
            return
        real = spec.validate

        def validate(*args: Any, **kwargs: Any) -> list[str]:
            began = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - began
                self.calls += 1

        spec.validate = validate


class Acks:
    """Every acknowledgement's latency, from dispatch to the first callback."""

    def __init__(self) -> None:
        self.values: list[float] = []

    async def timed(self, coro_factory: Any) -> Any:
        loop = asyncio.get_running_loop()
        started = loop.time()
        handle = await coro_factory()
        await handle.response(timeout=30)
        self.values.append(loop.time() - started)
        return handle


async def warm_up(fake: Any, acks: Acks) -> None:
    """litellm's import and the first model call, outside the measurement."""
    warm = await acks.timed(lambda: fake.slash("scene new", {"name": "warmup", "template": "wake"}))
    await warm.wait_followups(1, timeout=30)
    thread = int(fake.thread_by_name("🎭 warmup")["id"])
    h = await acks.timed(lambda: fake.slash("cue", {"actor": "Ruth"}, channel_id=thread))
    await h.wait_followups(1, timeout=30)
    await until_finished(fake, [thread], 1)


async def create_scenes(
    fake: Any, acks: Acks, names: list[str], channel_ids: list[int]
) -> list[int]:
    templates = ["interrogation", "wake"]
    created = await asyncio.gather(
        *(
            acks.timed(
                lambda n=n, i=i: fake.slash(
                    "scene new",
                    {"name": n, "template": templates[i % 2]},
                    channel_id=channel_ids[i % len(channel_ids)],
                )
            )
            for i, n in enumerate(names)
        )
    )
    await asyncio.gather(*(h.wait_followups(1, timeout=30) for h in created))
    return [int(fake.thread_by_name(f"🎭 {n}")["id"]) for n in names]


async def start_runs(fake: Any, acks: Acks, threads: list[int], turns: int) -> None:
    runs = await asyncio.gather(
        *(
            acks.timed(lambda t=t: fake.slash("run", {"turns": turns}, channel_id=t))
            for t in threads
        )
    )
    await asyncio.gather(*(h.wait_followups(1, timeout=30) for h in runs))


async def poke(fake: Any, acks: Acks, threads: list[int], latency: float) -> None:
    """While the scenes play, directors keep poking at them."""
    for round_ in range(3):
        await asyncio.gather(
            *(acks.timed(lambda t=t: fake.slash("status", channel_id=t)) for t in threads),
            *(
                acks.timed(
                    lambda t=t: fake.autocomplete(
                        "cue", {"actor": ""}, focused="actor", channel_id=t
                    )
                )
                for t in threads
            ),
            *(
                acks.timed(
                    lambda t=t, r=round_: fake.slash("note", {"text": f"note {r}"}, channel_id=t)
                )
                for t in threads
            ),
        )
        await asyncio.sleep(latency * 2)


def run_counts(fake: Any, bot: Any, threads: list[int], sent_before: int) -> dict[str, Any]:
    """What the bot sent while the scenes ran: panel edits, REST calls, turns posted."""
    during = fake.requests[sent_before:]
    panel_ids = {str(bot.scene_thread_in(t).binding.panel_id) for t in threads}
    return {
        "panel_edits": sum(
            1
            for q in during
            if q.method == "PATCH"
            and q.template == "/channels/{channel_id}/messages/{message_id}"
            and q.path.rsplit("/", 1)[-1] in panel_ids
        ),
        "rest_calls": sum(1 for q in during if not q.path.startswith("/interactions/")),
        "overhead": [x for t in threads for x in bot.scene_thread_in(t).overhead],
        "posted": sum(
            1
            for t in threads
            for m in fake.messages_in(t)
            if m["webhook_id"] and m["username"] != "Circus"
        ),
    }


async def cut_all(
    fake: Any, bot: Any, acks: Acks, threads: list[int], latency: float
) -> list[float]:
    """/cut in every scene while all of them are mid-run."""
    await start_runs(fake, acks, threads, 50)
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
    return cuts


async def press_all(
    fake: Any, bot: Any, acks: Acks, names: list[str], threads: list[int]
) -> list[float]:
    """⏹ Cut on every panel while all the scenes run again (directors on phones)."""
    await start_runs(fake, acks, threads, 50)
    presses: list[float] = []

    async def press_cut(name: str, thread: int) -> None:
        panel_id = bot.scene_thread_in(thread).binding.panel_id
        await until_cut_enabled(fake, thread, panel_id)
        began = asyncio.get_running_loop().time()
        handle = await fake.click(panel_id, f"circus:cut:0:{name}")
        await handle.response(timeout=30)
        acks.values.append(asyncio.get_running_loop().time() - began)
        await handle.wait_followups(1, timeout=30)
        presses.append(asyncio.get_running_loop().time() - began)

    await asyncio.gather(*(press_cut(n, t) for n, t in zip(names, threads, strict=True)))
    await bot.drain()
    await bot.panels.settled()
    return presses


async def bench(scenes: int, turns: int, latency: float, channels: int) -> dict[str, Any]:
    from bot.app import CircusBot
    from engine import Config
    from engine.providers.scripted import ScriptedModels
    from fakediscord import FakeDiscord

    acks = Acks()
    with tempfile.TemporaryDirectory() as tmp:
        async with FakeDiscord() as fake:
            channel_ids = [fake.channel_id] + [
                fake.add_text_channel(f"room-{i}") for i in range(1, channels)
            ]
            # every scene plays the scripted improv through one door (no environment involved)
            config = Config(model="scripted/improv")
            door = ScriptedModels(config=config, latency=latency)
            bot = CircusBot(Path(tmp), guild_id=fake.guild_id, models=door, config=config)
            async with fake.connected(bot):
                await warm_up(fake, acks)
                acks.values.clear()
                for scene_thread in bot.scene_threads.values():
                    scene_thread.overhead.clear()
                spec = SpecClock(fake)
                cpu_before = time.process_time()

                names = [f"scene-{i:02d}" for i in range(scenes)]
                threads = await create_scenes(fake, acks, names, channel_ids)
                started = time.perf_counter()
                sent_before = len(fake.requests)
                await start_runs(fake, acks, threads, turns)
                await poke(fake, acks, threads, latency)
                await until_finished(fake, threads, 1)
                await bot.drain()
                await bot.panels.settled()
                wall = time.perf_counter() - started
                counts = run_counts(fake, bot, threads, sent_before)
                cuts = await cut_all(fake, bot, acks, threads, latency)
                presses = await press_all(fake, bot, acks, names, threads)
                cpu = time.process_time() - cpu_before
                rejected = sum(len(h.rejected) for h in fake.interactions.values())
                violations = len(fake.spec_violations)
    return measures(scenes, turns, wall, acks.values, cuts, presses, counts, spec, cpu) | {
        "rejected": rejected,
        "violations": violations,
    }


def measures(
    scenes: int,
    turns: int,
    wall: float,
    acks: list[float],
    cuts: list[float],
    presses: list[float],
    counts: dict[str, Any],
    spec: SpecClock,
    cpu: float,
) -> dict[str, Any]:
    overhead = counts["overhead"]
    posted = counts["posted"]
    return {
        "scenes": scenes,
        "turns": turns,
        "wall": wall,
        "posted": posted,
        "acks": len(acks),
        "ack_p50": pct(acks, 0.5),
        "ack_p95": pct(acks, 0.95),
        "ack_max": max(acks),
        "cut_p95": pct(cuts, 0.95),
        "press_p95": pct(presses, 0.95),
        "edits_per_minute": counts["panel_edits"] / (scenes * wall / 60),
        "edits_per_scene": counts["panel_edits"] / scenes,
        "edit_bound": 1 + wall / 2.0,  # the coalescer: the first change at once, then 1 per 2 s
        "edits_per_turn": counts["panel_edits"] / max(posted, 1),
        "rest_per_turn": counts["rest_calls"] / max(posted, 1),
        "over_p50": statistics.median(overhead) if overhead else float("nan"),
        "over_p95": pct(overhead, 0.95),
        "spec_cpu": spec.spent,
        "spec_per_request": spec.spent / max(spec.calls, 1),
        "cpu": cpu,
    }


def passes(m: dict[str, Any]) -> bool:
    return (
        m["ack_p95"] <= 1.0
        and m["cut_p95"] <= 1.0
        and m["press_p95"] <= 1.0
        and m["edits_per_scene"] <= m["edit_bound"]
        and m["over_p50"] <= 0.010
        and m["posted"] == m["scenes"] * m["turns"]
        and m["violations"] == 0
        and m["rejected"] == 0
    )


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


# (label, key, format, note); a note may name other measures with {key}
ROWS: list[tuple[str, str, Any, str]] = [
    ("wall time for all runs", "wall", lambda x: f"{x:.2f} s", ""),
    ("turns posted", "posted", lambda x: f"{x:.0f}", "expected {expected}"),
    ("interactions acknowledged", "acks", lambda x: f"{x:.0f}", "rejected {rejected:.0f}"),
    ("ack p50", "ack_p50", ms, ""),
    ("ack p95", "ack_p95", ms, "target ≤ 1000 ms"),
    ("ack max", "ack_max", ms, ""),
    ("/cut → confirmed, p95", "cut_p95", ms, "target ≤ 1000 ms"),
    ("⏹ Cut (panel) → confirmed, p95", "press_p95", ms, "target ≤ 1000 ms"),
    ("panel edits per scene-minute", "edits_per_minute", lambda x: f"{x:.1f}", "30 + first edit"),
    ("panel edits per scene", "edits_per_scene", lambda x: f"{x:.1f}", "target ≤ {edit_bound:.1f}"),
    ("panel edits per turn", "edits_per_turn", lambda x: f"{x:.2f}", ""),
    ("REST calls per turn", "rest_per_turn", lambda x: f"{x:.2f}", "panels included"),
    ("overhead per turn p50", "over_p50", lambda x: f"{x * 1000:.2f} ms", "target ≤ 10 ms"),
    ("overhead per turn p95", "over_p95", lambda x: f"{x * 1000:.2f} ms", ""),
    ("process CPU while measured", "cpu", lambda x: f"{x:.2f} s", "bot + fake + harness"),
    ("fake's OpenAPI check, CPU", "spec_cpu", lambda x: f"{x:.2f} s", "in the bot's loop"),
    ("fake's OpenAPI check per request", "spec_per_request", ms, ""),
    ("spec violations", "violations", lambda x: f"{x:.0f}", "target 0"),
]


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def table(columns: list[tuple[str, list[dict[str, Any]]]]) -> str:
    """One row per measure, one column per tree (the median of its runs, and their range)."""
    header = ["measure", *(name for name, _ in columns)]
    if len(columns) == 2:
        header.append("ratio")
    header.append("note")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    medians = [median_of(runs) for _, runs in columns]
    for label, key, fmt, note in ROWS:
        cells = [label]
        for (_, runs), med in zip(columns, medians, strict=True):
            cell = fmt(med[key])
            if len(runs) > 1 and key not in ("violations",):
                cell += f" ({fmt(min(r[key] for r in runs))}–{fmt(max(r[key] for r in runs))})"
            cells.append(cell)
        if len(columns) == 2:
            base = medians[1][key]
            cells.append(f"{medians[0][key] / base:.2f}×" if base else "")
        first = medians[0]
        cells.append(note.format(expected=int(first["scenes"] * first["turns"]), **first))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def child_run(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One run of this harness in a fresh process, on `tree`'s code."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--tree",
        str(tree),
        "--json",
        *("--scenes", str(args.scenes), "--turns", str(args.turns)),
        *("--latency", str(args.latency), "--channels", str(args.channels)),
    ]
    if args.same_fake:
        command.append("--same-fake")
    from_tree = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in from_tree.stdout.splitlines() if line.startswith("{")]
    if not lines:
        sys.exit(f"the run on {tree} failed:\n{from_tree.stderr[-3000:]}")
    return json.loads(lines[-1])


def short_rev(rev: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def checkout(rev: str, into: Path) -> Path:
    tree = into / short_rev(rev)
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), rev],
        check=True,
    )
    return tree


def against(rev: str, args: argparse.Namespace) -> int:
    """Runs of this tree (or --base REV) and of REV, alternating, printed side by side."""
    with tempfile.TemporaryDirectory(prefix="bench-bot-") as tmp:
        trees = [checkout(args.base, Path(tmp)) if args.base else ROOT, checkout(rev, Path(tmp))]
        try:
            results: list[list[dict[str, Any]]] = [[], []]
            for i in range(args.runs):  # ABBA: drift on the machine falls on both trees alike
                for k in (0, 1) if i % 2 == 0 else (1, 0):
                    results[k].append(child_run(trees[k], args))
                    print(f"run {i + 1}/{args.runs} on {trees[k]}: done", file=sys.stderr)
        finally:
            for tree in trees[1 if not args.base else 0 :]:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                    check=False,
                )
    fake_note = "this tree's fakediscord for both" if args.same_fake else "each tree's own code"
    print(
        f"{args.scenes} scenes × {args.turns} turns, {args.latency * 1000:.0f} ms a model call, "
        f"median (min–max) of {args.runs} runs each, alternating; {fake_note}"
    )
    names = [short_rev(args.base) if args.base else "this tree", short_rev(rev)]
    print(table(list(zip(names, results, strict=True))))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--runs", type=int, default=None, help="1, or 3 with --against")
    parser.add_argument("--against", metavar="REV", help="also run REV's tree, side by side")
    parser.add_argument("--base", metavar="REV", help="with --against: REV, not this tree")
    parser.add_argument("--same-fake", action="store_true", help="REV against this fakediscord")
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)  # a child run's code
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault(
        "CIRCUS_DISCORD_OPENAPI", str(ROOT / "fakediscord" / "discord-api-spec" / "openapi.json")
    )
    if args.against:
        args.runs = args.runs or 3
        return against(args.against, args)
    use_tree(args.tree or ROOT, args.same_fake and args.tree is not None)
    runs = []
    for _ in range(args.runs or 1):
        runs.append(asyncio.run(bench(args.scenes, args.turns, args.latency, args.channels)))
    if args.json:
        print(json.dumps(runs[-1]))
        return 0
    print(
        f"{args.scenes} scenes × {args.turns} turns, {args.latency * 1000:.0f} ms a model call"
        + (f", median of {len(runs)} runs" if len(runs) > 1 else "")
    )
    print(table([("value", runs)]))
    ok = all(passes(r) for r in runs)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


async def until_finished(fake: Any, threads: list[int], count: int, timeout: float = 120) -> None:
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


async def until_cut_enabled(fake: Any, thread: int, panel_id: int, timeout: float = 60) -> None:
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


if __name__ == "__main__":
    sys.exit(main())
