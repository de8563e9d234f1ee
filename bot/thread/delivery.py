"""Which of a scene's turns reached its thread, so a bot killed mid-run posts the rest once.

Invariant: the mark (.circus/discord-posted.json, written by the engine's store atomically)
names the last turn of the working transcript whose every message Discord accepted in the
scene's current thread. Each run first marks what was on the record before it, so a mark never
names a turn of an older take. A restarted bot posts the turns after the mark and, when in
doubt (a writer edited or cut the transcript), fewer rather than twice: turns on the record
when the scene was bound to its thread are never posted, and messages of a turn that reached
the thread just before a kill (accepted, not yet marked) are recognised there and not posted
again. DMs of those turns' thoughts are not sent again (backstage/ has them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine import BadSceneFile, Turn, read_frontend_file, whole_number, write_frontend_file

POSTED = "discord-posted"  # the engine keeps it as .circus/discord-posted.json

Message = tuple[str, str]  # (persona, text) as the thread shows it


@dataclass(frozen=True)
class Mark:
    """The last turn the thread has (0: none of the working transcript)."""

    turn: int


def read_mark(scene_dir: Path) -> Mark | None:
    """The scene's mark, or None if it has none (a scene bound before marks were kept)."""
    try:
        data = read_frontend_file(scene_dir, POSTED)
    except BadSceneFile:  # a torn mark must not keep the scene from attaching: no catch-up
        return None
    if data is None:
        return None
    turn = whole_number(data.get("turn"), 9)
    return None if turn is None else Mark(turn)


def write_mark(scene_dir: Path, mark: Mark) -> None:
    write_frontend_file(scene_dir, POSTED, {"turn": mark.turn})


def mark_of(turns: Sequence[Turn]) -> Mark:
    """The mark that says the thread has all of `turns` (a transcript, in order)."""
    return Mark(turns[-1].number if turns else 0)


def unposted(turns: Sequence[Turn], mark: Mark | None) -> list[Turn]:
    """The turns of the transcript `turns` the thread does not have: those numbered after the
    mark (none when there is no mark: nothing says the thread lacks anything)."""
    if mark is None:
        return []
    return [t for t in turns if t.number > mark.turn]


def landed(messages: Sequence[Message], tail: Sequence[Message]) -> int:
    """How many of a turn's `messages` (in order) the thread already ends with: its last
    messages `tail` (oldest first) end with the turn's first j messages, for the largest j."""
    for j in range(min(len(messages), len(tail)), 0, -1):
        if list(tail[-j:]) == list(messages[:j]):
            return j
    return 0
