"""Harvest benchmark: how long a take report, the four exports and a take diff take to build.

Pure functions on a synthetic take (no model, no disk), sized like a five-minute scene and
beyond; the report's near-repeat search compares each line with every earlier one, so it is
the part that grows fastest. Prints a markdown table.

    python bench/bench_harvest.py [--sizes 50,200,500]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.export import FORMATS, ExportLine, ScriptMeta, render_exports  # noqa: E402
from engine.report import ReportInput, build_report  # noqa: E402
from engine.takediff import diff_takes  # noqa: E402
from engine.turns import Turn  # noqa: E402

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


def timed(fn) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50,200,500")
    args = parser.parse_args()
    aliases = {a: () for a in CAST}
    print("| turns | report (ms) | 4 exports (ms) | take diff (ms) |")
    print("|---:|---:|---:|---:|")
    for n in (int(x) for x in args.sizes.split(",")):
        turns = synthetic_take(n)
        other = turns[: n // 2] + synthetic_take(n - n // 2, seed=2)
        rows = [{"turn": t.number, "role": t.actor, "model": "m", "take": 1} for t in turns]
        data = ReportInput("bench", 1, True, turns, rows, (), aliases, "zh")
        meta = ScriptMeta("bench", "1", "2026-01-01", "", "zh", aliases)
        lines = [ExportLine(t.number, t.actor, t.action, t.dialogue, t.cue) for t in turns]
        report_ms = timed(lambda data=data: build_report(data))
        export_ms = timed(lambda meta=meta, lines=lines: render_exports(meta, lines, FORMATS))
        diff_ms = timed(
            lambda t=turns, o=other: diff_takes((1, True, t, 0), (2, False, o, 0), language="zh")
        )
        print(f"| {n} | {report_ms:.1f} | {export_ms:.1f} | {diff_ms:.1f} |")


if __name__ == "__main__":
    main()
