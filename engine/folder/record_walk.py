"""The record walked once and extended as it grows: its order, who is on stage, who is quiet.

Invariant: every answer is exactly engine.folder.stage's from scratch (merge, walk, on_stage,
quiet) on the same values. A memo is extended only when the turns and blocks it was built from
are, by content (==, never identity or turn numbers alone), a prefix of the ones asked about
and everything new sorts after all of it; otherwise — a writer's edit, a take cut back, a block
typed in mid-record — it is rebuilt. Only the speed depends on the memo.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from engine.folder.stage import ENTER, EXIT, PRESENT, Item, StageBlock, merge
from engine.folder.turns import Turn

MEMOS = 8  # records kept, most recent first (a rehearsal needs one or two; tests a few more)


def _key(item: Item) -> tuple[int, int]:
    return (item.number, 0) if isinstance(item, Turn) else item.key


@dataclass(eq=False)
class _Memo:
    """One record walked so far. Its lists only ever grow, so an index read stays true."""

    cast: tuple[str, ...]
    turns: tuple[Turn, ...] = ()
    blocks: tuple[StageBlock, ...] = ()
    items: list[Item] = field(default_factory=list)
    before: list[frozenset[str]] = field(default_factory=list)
    after: list[frozenset[str]] = field(default_factory=list)
    present: frozenset[str] = frozenset()  # after the last item
    quiet: dict[str, int] = field(default_factory=dict)  # after the last item
    # What a higher wing renders of this record (engine.turn.record_memo), kept and dropped
    # with it: a record rebuilt after an edit starts with nothing rendered.
    renders: dict[object, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.present = frozenset(self.cast)  # a record begins with the whole cast on stage
        self.quiet = {a: 0 for a in self.cast}

    def extends_to(self, turns: tuple[Turn, ...], blocks: tuple[StageBlock, ...]) -> bool:
        """Walk on to `turns` and `blocks` if they extend this record; False if they do not."""
        old_t, old_b = len(self.turns), len(self.blocks)
        if len(turns) < old_t or len(blocks) < old_b:
            return False
        if turns[:old_t] != self.turns or blocks[:old_b] != self.blocks:
            return False
        new = merge(turns[old_t:], blocks[old_b:])
        if new and self.items and _key(new[0]) <= _key(self.items[-1]):
            return False  # something new sorts among the old: the order is not an append
        self._walk(new)
        self.turns, self.blocks = turns, blocks  # the newest objects: the next check is by identity
        return True

    def _walk(self, new: Sequence[Item]) -> None:
        """engine.folder.stage.walk and quiet, one item at a time, from where they stopped."""
        known, present, counts = set(self.cast), self.present, self.quiet
        for item in new:
            before = present
            if isinstance(item, StageBlock):
                if item.kind == PRESENT:
                    present = frozenset(n for n in item.names if n in known)
                elif item.kind == ENTER and item.actor in known:
                    present = present | {item.actor}
                elif item.kind == EXIT:
                    present = present - {item.actor}
                if item.kind == ENTER and item.actor in counts:
                    counts[item.actor] = 0
            else:
                for actor in present:
                    counts[actor] = counts.get(actor, 0) + 1
                if item.actor in counts:
                    counts[item.actor] = 0
            self.items.append(item)
            self.before.append(before)
            self.after.append(present)
        self.present = present


@dataclass(frozen=True)
class Walked:
    """A record as walked, for reading only: its first `n` items, who was on stage just before
    and just after each, and (after the last) who is on stage and how long each was quiet."""

    memo: _Memo
    n: int
    present: frozenset[str]
    quiet: dict[str, int]

    @property
    def renders(self) -> dict[object, object]:
        return self.memo.renders

    @property
    def items(self) -> list[Item]:
        return self.memo.items[: self.n]

    def steps(self, start: int = 0) -> Iterator[tuple[Item, frozenset[str], frozenset[str]]]:
        """engine.folder.stage.walk's triples, from item `start` on."""
        memo = self.memo
        for i in range(start, self.n):
            yield memo.items[i], memo.before[i], memo.after[i]

    def since_last_turn(self) -> list[StageBlock]:
        """engine.folder.stage.since_last_turn, reading back only as far as the last turn."""
        out: list[StageBlock] = []
        for i in range(self.n - 1, -1, -1):
            item = self.memo.items[i]
            if isinstance(item, Turn):
                break
            out.append(item)
        return out[::-1]


_memos: list[_Memo] = []
_lock = threading.Lock()  # take ledgers are built in worker threads


def walked(cast: Sequence[str], turns: Sequence[Turn], blocks: Sequence[StageBlock]) -> Walked:
    """The record of `turns` and `blocks` walked for `cast`, extending a memo where one fits."""
    cast, turns, blocks = tuple(cast), tuple(turns), tuple(blocks)
    with _lock:
        memo = next((m for m in _memos if m.cast == cast and m.extends_to(turns, blocks)), None)
        if memo is None:
            memo = _Memo(cast)
            memo.extends_to(turns, blocks)
        else:
            _memos.remove(memo)
        _memos.insert(0, memo)
        del _memos[MEMOS:]
        return Walked(memo, len(memo.items), memo.present, dict(memo.quiet))


def merged(cast: Sequence[str], turns: Sequence[Turn], blocks: Sequence[StageBlock]) -> list[Item]:
    """engine.folder.stage.merge(turns, blocks)."""
    return walked(cast, turns, blocks).items


def on_stage_now(
    cast: Sequence[str], turns: Sequence[Turn], blocks: Sequence[StageBlock], start: Sequence[str]
) -> list[str]:
    """engine.folder.stage.on_stage(cast, merge(turns, blocks), start)."""
    seen = walked(cast, turns, blocks)
    present = seen.present if seen.n else set(start)
    return [a for a in cast if a in present]


def quiet_now(
    cast: Sequence[str], turns: Sequence[Turn], blocks: Sequence[StageBlock]
) -> dict[str, int]:
    """engine.folder.stage.quiet(cast, merge(turns, blocks), start), for any `start`."""
    return walked(cast, turns, blocks).quiet
