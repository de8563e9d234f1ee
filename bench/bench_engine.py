"""Engine benchmark: overhead per turn, prompt size, prompt-cache friendliness, calls per turn.

Runs offline on the scripted model (instant, through the door's real call path) and prints a
markdown table. Engine overhead = a turn's wall time minus the time spent inside the model
door (the scripted door's `complete`), i.e. prompt build + parse + persistence + events.
How that cost grows with the scene is the overhead around turn 100 against around the last
turn (each the median of the 20 turns about it): flat is 1×.

    python bench/bench_engine.py [--turns 300]    # about turn 100 and turn 300
    python bench/bench_engine.py --full           # 1,000 turns: about turn 100 and turn 1,000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from engine import Config, Rehearsal  # noqa: E402
from engine.door import llm
from engine.events import TurnCompleted  # noqa: E402
from engine.folder.templates import new_scene  # noqa: E402
from engine.providers.scripted import ScriptedModels, ScriptedRequest  # noqa: E402

THOUGHTS = [
    "他問得太快，像早就知道答案。",
    "信封的事他提了兩次，是警告嗎？",
    "她的手在抖，她知道得更多。",
]
ACTIONS = ["把杯子推到桌子中央。", "靠回椅背，敲了三下桌面。", "沉默地翻過一頁筆錄。"]
LINES = [
    "「十一點我在家，說過三次了。」",
    "「監視器可不是這麼說的。」",
    "「我的當事人有權不回答。」",
]


def realistic(request: ScriptedRequest) -> str:
    """A ~60-token turn that always throws the ball to someone by name."""
    shape = request.shape
    others = [a for a in shape.cast if a != shape.speaker]
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[0]}\nREASON: scripted"
    i = request.index
    return (
        f"<thought>{THOUGHTS[i % 3]}</thought>\n<action>{ACTIONS[i % 3]}</action>\n"
        f"<dialogue>{LINES[(i + 1) % 3]}</dialogue>\n<cue>{others[i % len(others)]}</cue>"
    )


RUN_TURNS = 500  # the most turns one run order may ask for (engine.errors.BadRequest beyond)

# Every role plays the "bench" script, through its own door (no environment involved).
CONFIG = Config(model="scripted/bench", stage_manager_model="scripted/bench")


class ModelClock:
    """A model door that times every call through the real one, to subtract it from a turn."""

    def __init__(self, door: ScriptedModels) -> None:
        self.spent = 0.0
        self.door = door

    async def complete(
        self, call: llm.ModelCall, *, gate: llm.SpendGate | None = None
    ) -> llm.ModelReply:
        began = time.perf_counter()
        try:
            return await self.door.complete(call, gate=gate)
        finally:
            self.spent += time.perf_counter() - began

    def price(self, model: str) -> llm.Price | None:
        return self.door.price(model)

    def warm(self) -> None:
        self.door.warm()


def add_fourth_actor(scene: Path) -> None:
    src = next((scene / "actors").iterdir())
    shutil.copytree(src, scene / "actors" / "書記員")
    ctx = scene / "context.md"
    text = ctx.read_text(encoding="utf-8")
    if "cast:" in text:
        text = text.replace("cast: [", "cast: [書記員, ", 1)
    ctx.write_text(text, encoding="utf-8")


async def overhead(turns: int, workdir: Path, scripted: ScriptedModels) -> dict[str, float]:
    scene = new_scene(workdir / "overhead", "interrogation", config=Config.from_env(os.environ))
    add_fourth_actor(scene)
    clock = ModelClock(scripted)
    rehearsal = Rehearsal(scene, models=clock, config=CONFIG)
    per_turn: list[float] = []
    mark = {"t": 0.0, "model": 0.0}

    def on_event(event: object) -> None:
        if isinstance(event, TurnCompleted):
            now = time.perf_counter()
            per_turn.append((now - mark["t"]) - (clock.spent - mark["model"]))
            mark["t"], mark["model"] = now, clock.spent

    rehearsal.events.listen(on_event)
    await rehearsal.cue(await rehearsal.resolve_actor((await rehearsal.view()).cast[0]))  # warm up
    per_turn.clear()
    calls_before = len(scripted.calls)
    mark["t"], mark["model"] = time.perf_counter(), clock.spent
    for done in range(0, turns, RUN_TURNS):  # one run plays at most 500 turns
        await rehearsal.run(min(RUN_TURNS, turns - done))
    ms = [x * 1000 for x in per_turn]
    return {
        "median_ms": statistics.median(ms),
        "p95_ms": sorted(ms)[int(len(ms) * 0.95) - 1],
        "turn10_ms": about(ms, 10),
        "turn100_ms": about(ms, 100),
        "last_ms": about(ms, len(ms)),
        "ratio": about(ms, len(ms)) / about(ms, 100),
        "calls_per_turn": (len(scripted.calls) - calls_before) / turns,
        "actors": len((await rehearsal.state()).cast),
    }


def about(ms: list[float], turn: int) -> float:
    """The median overhead of the 20 turns around `turn` (1-based; the last 20 at the end)."""
    start = max(0, min(turn - 10, len(ms) - 20))
    return statistics.median(ms[start : start + 20])


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


async def prompts(turns: int, workdir: Path, scripted: ScriptedModels) -> dict[str, float]:
    scene = new_scene(workdir / "prompts", "interrogation", config=Config.from_env(os.environ))
    rehearsal = Rehearsal(scene, models=scripted, config=CONFIG)
    start = len(scripted.calls)
    await rehearsal.run(turns)
    litellm = llm.litellm_module()
    actor_calls = [c for c in scripted.calls[start:] if c.shape.kind == "actor"]
    tokens = [litellm.token_counter(model="gpt-4o", messages=list(c.messages)) for c in actor_calls]
    turn_tokens = [
        litellm.token_counter(model="gpt-4o", text=realistic(ScriptedRequest("x", (), c.shape, i)))
        for i, c in enumerate(actor_calls[:9])
    ]
    shares: list[float] = []
    last: dict[str, str] = {}
    for call in actor_calls:
        text = "\n".join(m["content"] for m in call.messages)
        prev = last.get(call.shape.speaker)
        if prev is not None:
            shares.append(common_prefix(prev, text) / len(text))
        last[call.shape.speaker] = text
    return {
        "max_tokens": max(tokens),
        "last_tokens": tokens[-1],
        "turn_tokens": statistics.mean(turn_tokens),
        "share_min": min(shares),
        "share_median": statistics.median(shares),
        "calls_per_turn": (len(scripted.calls) - start) / turns,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--scene-turns", type=int, default=40)
    parser.add_argument("--full", action="store_true", help="1,000 turns")
    args = parser.parse_args()
    if args.full:
        args.turns = 1000
    if args.turns < 120:
        parser.error("--turns must reach past turn 100 (at least 120)")
    with tempfile.TemporaryDirectory() as tmp:
        # one door for both scenes: the script's turn index runs on across them
        scripted = ScriptedModels({"bench": realistic}, config=CONFIG)
        o = await overhead(args.turns, Path(tmp), scripted)
        p = await prompts(args.scene_turns, Path(tmp), scripted)
    rows = [
        ("engine overhead per turn, median", f"{o['median_ms']:.2f} ms", "≤ 5 ms"),
        ("engine overhead per turn, p95", f"{o['p95_ms']:.2f} ms", ""),
        ("engine overhead per turn, about turn 10", f"{o['turn10_ms']:.2f} ms", ""),
        ("engine overhead per turn, about turn 100", f"{o['turn100_ms']:.2f} ms", ""),
        (
            f"engine overhead per turn, about turn {args.turns:,}",
            f"{o['last_ms']:.2f} ms",
            "",
        ),
        (
            f"cost at turn {args.turns:,} / turn 100",
            f"{o['ratio']:.2f}×",
            "flat is 1×",
        ),
        (
            f"model calls per turn ({args.turns} turns, {o['actors']} actors, explicit cues)",
            f"{o['calls_per_turn']:.3f}",
            "≤ 1.1",
        ),
        (
            f"prompt tokens per actor call, max ({args.scene_turns} turns, interrogation)",
            f"{p['max_tokens']:.0f}",
            "≤ 4,500",
        ),
        ("prompt tokens of the last actor call", f"{p['last_tokens']:.0f}", ""),
        ("tokens per scripted turn (thought+action+line+cue)", f"{p['turn_tokens']:.0f}", "≈ 60"),
        (
            "unchanged prefix of previous prompt (same actor), min",
            f"{p['share_min']:.3f}",
            "≥ 0.75",
        ),
        (
            "unchanged prefix of previous prompt (same actor), median",
            f"{p['share_median']:.3f}",
            "",
        ),
        ("model calls per turn (interrogation)", f"{p['calls_per_turn']:.3f}", "≤ 1.1"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"| {'measure'.ljust(width)} | value | target |")
    print(f"| {'-' * width} | ----- | ------ |")
    for name, value, target in rows:
        print(f"| {name.ljust(width)} | {value} | {target} |")


if __name__ == "__main__":
    asyncio.run(main())
