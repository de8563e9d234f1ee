"""Per-turn metadata of a take: the usage rows (.circus/usage.jsonl, contract §4) of its turns.

A row is written when a turn lands and names the take being played; a take that continues an
earlier one (saved, then played on) or a replay's kept turns resolve to the latest take ≤ this
one that has a row for that turn. Readers tolerate old rows without the newer keys and skip torn
lines. Saved takes carry their rows in takes/take_<n>/turns.jsonl. Pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from engine.folder.store import parse_jsonl
from engine.spend.call_log import spend_problem

TURNS_FILE = "turns.jsonl"  # inside takes/take_<n>/
STAGE_MANAGER = "stage_manager"

Row = dict[str, Any]


def parse_rows(text: str) -> list[Row]:
    """A take's usage rows. A row whose spend is not finite numbers ≥ 0 (a hand-edited or
    tampered file) is left out, as the budgets leave it out: a report never says "$nan"."""
    return [
        row
        for row in parse_jsonl(text)
        if isinstance(row.get("turn"), int) and spend_problem(row) is None
    ]


def render_rows(rows: Iterable[Row]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _take_of(row: Row) -> int | None:
    take = row.get("take")
    return take if isinstance(take, int) else None


def rows_for_take(rows: list[Row], take: int, turns: Iterable[int]) -> list[Row]:
    """The rows of this take's turns: per turn, those of the latest take ≤ `take` that has any
    (later rows of that take win, e.g. a replay's carried rows). Rows without a take are used
    only when no row of that turn names one (an old scene)."""
    wanted = set(turns)
    best: dict[int, int] = {}
    for row in rows:
        t, n = _take_of(row), row["turn"]
        if n in wanted and t is not None and t <= take and t >= best.get(n, -1):
            best[n] = t
    out = []
    for row in rows:
        n = row["turn"]
        if n not in wanted:
            continue
        if n in best:
            if _take_of(row) == best[n]:
                out.append(row)
        elif _take_of(row) is None:
            out.append(row)
    # One actor row and one stage-manager row per turn: the last written wins.
    last: dict[tuple[int, bool], Row] = {}
    for row in out:
        last[(row["turn"], row.get("role") == STAGE_MANAGER)] = row
    return sorted(last.values(), key=lambda r: (r["turn"], r.get("role") != STAGE_MANAGER))


def carried_rows(rows: list[Row], until: int, new_take: int, source: int) -> list[Row]:
    """A replay's kept turns, re-labelled for the new attempt. Their tokens were spent by the
    source take, so the copies cost nothing (status and budgets are not counted twice)."""
    out = []
    for row in rows:
        if row["turn"] <= until:
            out.append(
                {
                    **row,
                    "take": new_take,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "cost_usd": 0.0,
                    "calls": 0,
                    "cached_tokens": 0,  # nor what their provider's prompt cache did
                    "cache_write_tokens": 0,
                    "cache_saved_usd": 0.0,
                    "carried_from": source,
                }
            )
    return out


def actor_rows(rows: list[Row]) -> dict[int, Row]:
    """Turn number → that turn's actor row."""
    return {r["turn"]: r for r in rows if r.get("role") != STAGE_MANAGER}
