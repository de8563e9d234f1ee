"""Harvest benchmark: how long a take report, the four exports and a take diff take to build.

Pure functions on synthetic takes (no model, no disk), from a five-minute scene to the 1,000-turn
take and beyond, of three kinds: "words" draws each
line from 15 words (every line shares bigrams with every other: the index's worst case),
"circles" recombines 20 phrases (a take going round in circles: many near repeats), "prose"
draws characters Zipf-like from 3,000 (ordinary dialogue). Prints a markdown table, then one
of how the report grows: its time at 100 and at 1,000 turns of each kind, and their ratio
(target: the 1,000-turn report within 0.5 s and within 12× the 100-turn one; 10× is linear).

    python bench/bench_harvest.py [--sizes 50,100,200,500,1000,2000] [--kinds words,circles,prose]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.folder.turns import Turn  # noqa: E402
from engine.harvest.diff import diff_takes  # noqa: E402
from engine.harvest.export import FORMATS, ExportLine, ScriptMeta, render_exports  # noqa: E402
from engine.harvest.report import ReportInput, build_report  # noqa: E402

CAST = ("林小姐", "刑警", "律師", "Ruth")
WORDS = "監視器 信封 十一點 我在家 說過 三次 你 不 是 這麼 說的 the file harbour night lied".split()


def synthetic_take(n: int, seed: int = 1) -> list[Turn]:
    rng = random.Random(seed)
    turns = []
    for i in range(1, n + 1):
        actor = CAST[i % len(CAST)]
        line = "".join(rng.choice(WORDS) for _ in range(rng.randint(4, 20)))
        action = "把杯子推到桌子中央。" if i % 3 == 0 else ""
        turns.append(Turn(i, actor, action, line, CAST[(i + 1) % len(CAST)]))
    return turns


PHRASES = ["你那天晚上到底在哪裡", "我已經說過三次了", "監視器拍到你的車", "信封裡面是什麼",
           "我不記得了", "你在說謊", "十一點我在家", "律師來之前我不說話", "那個人是誰",
           "你為什麼要躲", "我們都冷靜一下", "這跟我沒有關係", "你認識死者嗎", "我只是路過",
           "你的手為什麼在抖", "再問一次", "他欠我錢", "港口那邊有人看到你", "我要打電話",
           "你先坐下"]  # fmt: skip
CHARS = [chr(0x4E00 + k) for k in range(3000)]
ZIPF = [1 / (k + 1) for k in range(3000)]


def circling_take(n: int, seed: int = 1) -> list[Turn]:
    rng = random.Random(seed)
    turns = []
    for i in range(1, n + 1):
        line = "，".join(rng.choice(PHRASES) for _ in range(rng.randint(2, 5))) + "。"
        turns.append(Turn(i, CAST[i % len(CAST)], "", line, CAST[(i + 1) % len(CAST)]))
    return turns


def prose_take(n: int, seed: int = 1) -> list[Turn]:
    rng = random.Random(seed)
    turns = []
    for i in range(1, n + 1):
        line = "".join(rng.choices(CHARS, ZIPF, k=rng.randint(8, 40)))
        turns.append(Turn(i, CAST[i % len(CAST)], "", line, CAST[(i + 1) % len(CAST)]))
    return turns


KINDS = {"words": synthetic_take, "circles": circling_take, "prose": prose_take}


GROWTH = (100, 1000)  # the sizes whose report times are compared
TARGET_MS, TARGET_RATIO = 500.0, 12.0


def timed(fn, repeats: int = 5) -> float:
    """The best of `repeats` runs, each started after a full collection: the garbage earlier
    runs left behind is not charged to this one (a 100-turn report takes a few ms, about one
    gen-2 collection of a big heap)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50,100,200,500,1000,2000")
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    aliases = {a: () for a in CAST}
    reports: dict[tuple[str, int], float] = {}
    print("| take | turns | report (ms) | 4 exports (ms) | take diff (ms) |")
    print("|---|---:|---:|---:|---:|")
    for kind, n in ((k, int(x)) for k in args.kinds.split(",") for x in args.sizes.split(",")):
        make = KINDS[kind]
        turns = make(n)
        other = turns[: n // 2] + make(n - n // 2, seed=2)
        rows = [{"turn": t.number, "role": t.actor, "model": "m", "take": 1} for t in turns]
        data = ReportInput("bench", 1, True, turns, rows, (), aliases, "zh")
        meta = ScriptMeta("bench", "1", "2026-01-01", "", "zh", aliases)
        lines = [ExportLine(t.number, t.actor, t.action, t.dialogue, t.cue) for t in turns]
        report_ms = timed(lambda data=data: build_report(data))
        reports[(kind, n)] = report_ms
        export_ms = timed(lambda meta=meta, lines=lines: render_exports(meta, lines, FORMATS))
        diff_ms = timed(
            lambda t=turns, o=other: diff_takes((1, True, t, 0), (2, False, o, 0), language="zh")
        )
        print(f"| {kind} | {n} | {report_ms:.1f} | {export_ms:.1f} | {diff_ms:.1f} |")
    growth(reports, args.kinds.split(","))


def growth(reports: dict[tuple[str, int], float], kinds: list[str]) -> None:
    """The report's time at 100 and 1,000 turns, their ratio, and whether both targets hold."""
    small, large = GROWTH
    measured = [k for k in kinds if (k, small) in reports and (k, large) in reports]
    if not measured:
        return
    print()
    print(f"| take | report at {small} (ms) | report at {large:,} (ms) | ratio | target met |")
    print("|---|---:|---:|---:|---|")
    for kind in measured:
        a, b = reports[(kind, small)], reports[(kind, large)]
        met = "yes" if b <= TARGET_MS and b <= TARGET_RATIO * a else "no"
        print(f"| {kind} | {a:.1f} | {b:.1f} | {b / a:.1f}× | {met} |")


if __name__ == "__main__":
    main()
