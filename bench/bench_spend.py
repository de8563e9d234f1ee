"""Benchmark: what counting every call costs a turn.

Each turn of a scene with a budget re-reads the scene's call record (.circus/calls.jsonl, one
row per model call, landed or not) and adds it up; each call appends one row as it returns.
Measured for records of 100, 1,000 and 10,000 calls (a long scene makes 2–3 calls a turn):
  * read + total: engine.spend.call_log.read_call_rows then total, as the gate does at each turn;
  * append: one CallLog.append (one O_APPEND write), as the gate does after each call.
Target: read + total of a 1,000-call record ≤ 20 ms (median). Prints a table; exit code 1 if
the target fails.

    python bench/bench_spend.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.folder.store import SceneStore  # noqa: E402
from engine.spend import call_log  # noqa: E402

TARGET_MS = 20.0


def row(n: int) -> dict:
    return {
        "at": "2026-12-02T03:00:00+00:00",
        "scene": "審訊室",
        "take": 1 + n // 300,
        "turn": 1 + n // 2,
        "kind": "stage_manager" if n % 2 else "actor",
        "role": "stage_manager" if n % 2 else "林小姐",
        "model": "openai/gpt-4o-mini",
        "prompt_tokens": 4500 + n,
        "completion_tokens": 180,
        "cost_usd": 0.00078,
    }


async def measure(calls: int, repeat: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = SceneStore(Path(tmp))
        log = await call_log.CallLog.open(store, datetime.now(UTC))
        for n in range(calls):
            log.append(row(n))
        reads, appends = [], []
        for _ in range(repeat):
            started = time.perf_counter()
            rows = await call_log.read_call_rows(store)
            call_log.total(rows or [])
            reads.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            log.append(row(calls))
            appends.append((time.perf_counter() - started) * 1000)
        return statistics.median(reads), statistics.median(appends)


async def main(repeat: int) -> int:
    print("| calls in the record | read + total (median ms) | append one (median ms) |")
    print("|---:|---:|---:|")
    ok = True
    for calls in (100, 1000, 10000):
        read, append = await measure(calls, repeat)
        print(f"| {calls:,} | {read:.2f} | {append:.3f} |")
        if calls == 1000 and read > TARGET_MS:
            ok = False
    print(f"\ntarget: read + total of 1,000 calls ≤ {TARGET_MS:g} ms: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    sys.exit(asyncio.run(main(parser.parse_args().repeat)))
