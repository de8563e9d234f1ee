"""The record as each role reads it, rendered once and extended turn by turn (issue #31).

Invariant: `actor_record` and `stage_record` give exactly what rendering the whole record from
scratch gives — the same lines, costs and window (tests/engine/test_prompt_memo.py holds the
prompts of the code before these memos). A rendering is kept with the walked record it renders
(engine.folder.record_walk), which is rebuilt whenever the record read from disk is no longer,
by content, an extension of it; an actor's rendering is also rebuilt when a thought it showed is
no longer that actor's thought. So a writer's edit on disk always reaches the next prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.door.tokens import Counter
from engine.folder.record_walk import Walked, walked
from engine.folder.stage import StageBlock
from engine.folder.turns import Turn
from engine.turn.record_lines import block_line, missed_line, public_line, thought_line

# The record may grow to HISTORY_BUDGET tokens of the reading model (≈ 100 turns of a Chinese
# scene in o200k tokens, far past a 5-minute one; less where the model's context is smaller);
# the turn that would pass it drops the oldest turns down to WINDOW_KEEP of it in one block. So
# the prompt's start changes about once per 60 turns on a hosted model, and every other prompt
# of an actor begins with all of its previous one (providers' prompt caches and the embedded
# model's saved state reuse it). Measured in bench/bench_prompts.py.
HISTORY_BUDGET = 6000
WINDOW_KEEP = 0.4
RENDERS = 64  # renderings kept per walked record (its roles × languages × tokenizers)

Scan = tuple[int, int, int]  # window_start's walk: (costs read, first shown, their total)


def window_start(
    costs: Sequence[int], budget: int = HISTORY_BUDGET, keep: float = WINDOW_KEEP
) -> int:
    """Index of the first turn shown; the turns from there on cost at most `budget`.

    The record grows turn by turn; a turn that takes it past `budget` drops the oldest turns
    down to `keep` × budget, in one block. A pure function of the costs, so the start of
    consecutive prompts stays put between those rare trims.
    """
    return _scan(costs, budget, keep, (0, 0, 0))[1]


def _scan(costs: Sequence[int], budget: int, keep: float, state: Scan) -> Scan:
    """window_start's walk over `costs`, resumed from `state` (where it stopped before)."""
    low = budget * keep
    read, start, total = state
    for i in range(read, len(costs)):
        total += costs[i]
        if total > budget:
            while start <= i and total > low:
                total -= costs[start]
                start += 1
    return len(costs), start, total


@dataclass(frozen=True)
class Shown:
    """What of a record a prompt shows: how many lines are left out before it, the lines shown,
    and which of those are the reader's own turns."""

    start: int
    lines: list[str]
    own: list[int]


@dataclass(eq=False)
class _Rendering:
    """The record's lines rendered so far for one reader, with their costs (a stretch the
    reader is missing right now is counted, not yet a line), the thought shown on each of its
    own turns, and where each window budget's walk stopped."""

    n: int = 0  # items rendered
    lines: list[str] = field(default_factory=list)
    own: list[bool] = field(default_factory=list)
    costs: list[int] = field(default_factory=list)
    missed: int = 0
    own_numbers: list[int] = field(default_factory=list)
    own_thoughts: list[str | None] = field(default_factory=list)
    scans: dict[tuple[int, float], Scan] = field(default_factory=dict)

    def add(self, line: str, own: bool, count: Counter) -> None:
        self.lines.append(line)
        self.own.append(own)
        self.costs.append(count(line) + 1)  # + its newline

    def window(self, budget: int, keep: float, tail: str | None, count: Counter) -> Shown:
        """The lines from window_start on, `tail` (a line not yet final) after the others."""
        key = (budget, keep)
        state = _scan(self.costs, budget, keep, self.scans.pop(key, (0, 0, 0)))
        self.scans[key] = state
        if len(self.scans) > 4:  # a budget moves only when the soul, stage or a whisper does
            del self.scans[next(iter(self.scans))]
        if tail is not None:
            self.costs.append(count(tail) + 1)
            try:
                state = _scan(self.costs, budget, keep, state)
            finally:
                self.costs.pop()
        start = state[1]
        lines = self.lines[start:]
        if tail is not None and start <= len(self.lines):
            lines.append(tail)
        return Shown(start, lines, [i for i, mine in enumerate(self.own[start:]) if mine])


_lock = threading.Lock()  # take ledgers build prompts in worker threads


def _rendering(seen: Walked, key: object) -> _Rendering:
    """The rendering of `seen` kept under `key` (a new one if none is)."""
    found = seen.renders.pop(key, None)
    if not isinstance(found, _Rendering) or found.n > seen.n:
        found = _Rendering()  # none yet, or one of a longer record another thread walked
    seen.renders[key] = found
    if len(seen.renders) > RENDERS:
        del seen.renders[next(iter(seen.renders))]
    return found


def actor_record(
    name: str,
    cast: Sequence[str],
    record: tuple[Sequence[Turn], Sequence[StageBlock]],
    own_thoughts: Mapping[int, str],
    language: str,
    count: Counter,
    budget: int,
) -> Shown:
    """The record as `name` witnessed it (its turns and the stage blocks), windowed to
    `budget`: what happened while it was on stage, with its own thoughts under its own turns,
    and for a stretch it missed only how many turns passed — never what."""
    seen = walked(cast, *record)
    with _lock:
        done = _rendering(seen, ("actor", name, language, count))
        if list(map(own_thoughts.get, done.own_numbers)) != done.own_thoughts:
            done = seen.renders[("actor", name, language, count)] = _Rendering()  # edited
        for item, before, after in seen.steps(done.n):
            if name not in before and name not in after:
                done.missed += isinstance(item, Turn)
                continue
            if done.missed:
                done.add(missed_line(done.missed, language), False, count)
                done.missed = 0
            if isinstance(item, StageBlock):
                done.add(block_line(item, language), False, count)
                continue
            text = public_line(item, language)
            if item.actor == name:
                thought = own_thoughts.get(item.number)
                done.own_numbers.append(item.number)
                done.own_thoughts.append(thought)
                if thought:
                    text += "\n" + thought_line(thought, language)
            done.add(text, item.actor == name, count)
        done.n = seen.n
        tail = missed_line(done.missed, language) if done.missed else None
        return done.window(budget, WINDOW_KEEP, tail, count)


def stage_record(
    turns: Sequence[Turn], stage: Sequence[StageBlock], language: str, count: Counter, budget: int
) -> Shown:
    """The whole public record (the stage manager's view), windowed to `budget`."""
    seen = walked((), turns, stage)
    with _lock:
        done = _rendering(seen, ("stage", language, count))
        for item, _before, _after in seen.steps(done.n):
            line = (
                public_line(item, language)
                if isinstance(item, Turn)
                else block_line(item, language)
            )
            done.add(line, False, count)
        done.n = seen.n
        return done.window(budget, WINDOW_KEEP, None, count)
