"""Spend as recorded on disk: the scene's record of every model call (`.circus/calls.jsonl`),
and the one reader of spend rows (that file, usage.jsonl, the daily ledger).

Invariants: every call that returned gets a row, appended when it returns, whether or not its
turn lands; a row counts only if each spend number in it is a finite number ≥ 0 — any other
row is skipped with a warning naming its file and line — so what a file says may use a budget
up but never gives any of it back.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from engine.folder.scene import USAGE_LOG
from engine.folder.store import SceneStore

log = logging.getLogger("circus.engine")

CALLS_LOG = ".circus/calls.jsonl"  # one row per model call, landed or not
SPEND_KEYS = ("prompt_tokens", "completion_tokens", "cost_usd", "calls")
EARLIER = "earlier"  # the kind of the row that carries a scene's spend from before calls.jsonl

Row = dict[str, Any]


@dataclass(frozen=True)
class Spend:
    usd: float = 0.0
    tokens: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.usd + other.usd, self.tokens + other.tokens)

    def __sub__(self, other: Spend) -> Spend:
        return Spend(self.usd - other.usd, self.tokens - other.tokens)

    def of(self, unit: str) -> float:
        return self.usd if unit == "usd" else self.tokens


# ----------------------------------------------------------------------------- reading rows
def spend_problem(row: Mapping[str, Any]) -> str | None:
    """The first spend key whose value is not a finite number ≥ 0 (absent or null is fine:
    no tokens, or a price nobody knows)."""
    for key in SPEND_KEYS:
        value = row.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return key
        if not math.isfinite(value) or value < 0:
            return key
    return None


_warned: set[tuple[str, int]] = set()  # (file, line) already reported: one warning each


def _warn(where: object, line: int, why: str) -> None:
    if (str(where), line) in _warned:
        return
    _warned.add((str(where), line))
    log.warning("ignoring line %d of %s: %s", line, where, why)


def read_rows(text: str, where: object, first_line: int = 1) -> list[Row]:
    """The rows of a .jsonl spend log that may count. A torn line (a crash) or foreign text is
    skipped; a row whose spend is not finite numbers ≥ 0 is skipped too, with a warning naming
    the file and line (line numbers start at `first_line`)."""
    rows = []
    # split on newlines only: a row may hold U+2028 and other characters splitlines() breaks at
    lines = text.split("\n")
    for number, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            if number - first_line < len(lines) - 1:  # not a last line still being written
                _warn(where, number, "not a JSON row")
            continue
        if not isinstance(row, dict):
            _warn(where, number, "not a JSON object")
            continue
        key = spend_problem(row)
        if key is not None:
            _warn(where, number, f"{key} is {row[key]!r}, not a number ≥ 0")
            continue
        rows.append(row)
    return rows


def row_spend(row: Mapping[str, Any]) -> Spend:
    """What one row (already read by `read_rows`) spent; an unknown cost counts $0 (its tokens
    still count, which is what a token budget is for)."""
    tokens = int(row.get("prompt_tokens") or 0) + int(row.get("completion_tokens") or 0)
    return Spend(float(row.get("cost_usd") or 0.0), tokens)


def calls_of(row: Mapping[str, Any]) -> int:
    """How many calls a row stands for: one, unless it says (a landed turn's usage row)."""
    calls = row.get("calls")
    return 1 if calls is None else int(calls)


def total(rows: Iterable[Mapping[str, Any]]) -> Spend:
    out = Spend()
    for row in rows:
        out = out + row_spend(row)
    return out


def utc_day(now: datetime) -> date:
    return now.astimezone(UTC).date()


def day_spend(rows: Iterable[Mapping[str, Any]], now: datetime) -> Spend:
    """What the rows spent on `now`'s UTC day (a row without a readable time counts: caution)."""
    today = utc_day(now)
    out = Spend()
    for row in rows:
        try:
            at = datetime.fromisoformat(str(row["at"]))
            day = utc_day(at if at.tzinfo else at.replace(tzinfo=UTC))
        except (KeyError, ValueError):
            day = today
        if day == today:
            out = out + row_spend(row)
    return out


# ----------------------------------------------------------------------------- the call record
def earlier_row(usage_rows: Iterable[Mapping[str, Any]], at: str) -> Row | None:
    """The first row of a scene's calls.jsonl when its usage.jsonl predates it: everything the
    landed turns spent until then, so starting the per-call record never lowers the spend."""
    rows = [r for r in usage_rows if "carried_from" not in r]  # a replay's copies cost nothing
    if not rows:
        return None
    costs = [float(r["cost_usd"]) for r in rows if r.get("cost_usd") is not None]
    return {
        "at": at,
        "kind": EARLIER,
        "prompt_tokens": sum(int(r.get("prompt_tokens") or 0) for r in rows),
        "completion_tokens": sum(int(r.get("completion_tokens") or 0) for r in rows),
        "cost_usd": sum(costs) if costs else None,
        "calls": sum(calls_of(r) for r in rows),
    }


class CallLog:
    """One scene's calls.jsonl: a row appended as each model call returns, never rewritten.

    `append` is synchronous: the spend gate settles a call in a `finally` that a cut may be
    unwinding, where awaiting a thread is not safe. One O_APPEND write per row.
    """

    def __init__(self, store: SceneStore, earlier: Row | None = None) -> None:
        self.store = store
        self._first = json.dumps(earlier, ensure_ascii=False) if earlier else ""

    @classmethod
    async def open(cls, store: SceneStore, now: datetime) -> CallLog:
        """The scene's call record; an old scene's spend so far is carried into its first row."""
        if store.signatures([CALLS_LOG])[CALLS_LOG] is not None:
            return cls(store)
        usage = read_rows(await store.read(USAGE_LOG) or "", store.path(USAGE_LOG))
        return cls(store, earlier_row(usage, now.isoformat(timespec="seconds")))

    def append(self, row: Mapping[str, Any]) -> None:
        self.store.append_now(CALLS_LOG, json.dumps(dict(row), ensure_ascii=False), self._first)
        self._first = ""


async def read_call_rows(store: SceneStore) -> list[Row] | None:
    """Every counted row of the scene's calls.jsonl; None when the scene has none yet."""
    text = await store.read(CALLS_LOG)
    return None if text is None else read_rows(text, store.path(CALLS_LOG))
