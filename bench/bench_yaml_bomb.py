"""Benchmark: how long a hostile soul.md header costs, PyYAML's safe_load vs Circus's loader.

The "billion laughs" soul nests aliases N levels deep (9 items per level, ~50 bytes a level).
safe_load shares the aliased lists, so parsing alone is cheap; the cost comes when anything
walks the result (validation, repr in an error message): 9**N items. Circus refuses the first
anchor before anything is built. Also: 900 nested brackets, a flat list of 2,600 items (both
just under the 8,000-character header cap) and a 20,000-character header.
Prints a table (milliseconds, median of --repeat runs; walks that would take minutes are
skipped above --max-walk items).

    python bench/bench_yaml_bomb.py [--levels 4 6 8] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.errors import BadSceneFile  # noqa: E402
from engine.folder import frontmatter  # noqa: E402


def bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    lines.append(f"aliases: *a{levels - 1}")
    return "\n".join(lines)


def walk(value: object) -> int:
    if isinstance(value, list):
        return sum(walk(v) for v in value)
    return 1


def ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def circus(header: str) -> None:
    try:
        frontmatter.split(f"---\n{header}\n---\nbody", "soul.md")
    except BadSceneFile:
        return
    raise SystemExit("Circus accepted a hostile header")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[4, 6, 7])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-walk", type=int, default=10**7)
    args = parser.parse_args()
    rows = [("attack", "bytes", "safe_load ms", "safe_load+walk ms", "circus refuses ms")]
    for levels in args.levels:
        header = bomb(levels)
        load = ms(lambda h=header: yaml.safe_load(h), args.repeat)
        if 9**levels <= args.max_walk:
            walked = f"{ms(lambda h=header: walk(yaml.safe_load(h)['aliases']), 1):.1f}"
        else:
            walked = f"skipped (9^{levels} items)"
        refuse = ms(lambda h=header: circus(h), args.repeat)
        rows.append(
            (f"aliases ×{levels}", str(len(header)), f"{load:.2f}", walked, f"{refuse:.3f}")
        )
    flat = "aliases: [" + "x, " * 2600 + "]"
    rows.append(
        (
            "2,600-item list",
            str(len(flat)),
            f"{ms(lambda: yaml.safe_load(flat), args.repeat):.1f}",
            "-",
            f"{ms(lambda: frontmatter.load_header(flat), args.repeat):.1f} (parsed; schema refuses)",
        )
    )
    deep = "aliases: " + "[" * 900 + "]" * 900
    rows.append(
        (
            "900 nested [",
            str(len(deep)),
            "RecursionError",
            "-",
            f"{ms(lambda: circus(deep), args.repeat):.3f}",
        )
    )
    long = "model: " + "x" * 20_000
    rows.append(
        ("20 KB header", str(len(long)), "-", "-", f"{ms(lambda: circus(long), args.repeat):.3f}")
    )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
