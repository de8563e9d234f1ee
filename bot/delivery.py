"""Which of a scene's turns reached its thread, so a bot killed mid-run posts the rest once.

Invariant: the mark (.circus/discord-posted.json, written by the engine's store atomically)
names the last turn whose every message Discord accepted, and moves in post order (the
webhook queue is FIFO). A restarted bot posts the transcript's turns after the mark and nothing
else: turns on the record when the scene was bound to its thread are never posted, and the one
turn that may have landed just before a kill (accepted, not yet marked) is recognised in the
thread and not posted twice. DMs of those turns' thoughts are not sent again (backstage/ has
them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine import BadSceneFile, Turn, read_frontend_file, whole_number, write_frontend_file

POSTED = "discord-posted"  # the engine keeps it as .circus/discord-posted.json


def fingerprint(actor: str, action: str, dialogue: str) -> str:
    """Which turn a mark names, whatever take it was in (take numbers move when a take is
    saved; the transcript does not): its actor and words, spacing aside."""
    text = "\n".join(" ".join(part.split()) for part in (actor, action, dialogue))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def turn_fingerprint(turn: Turn) -> str:
    return fingerprint(turn.actor, turn.action, turn.dialogue)


@dataclass(frozen=True)
class Mark:
    """The last turn the thread has: its number and fingerprint (turn 0: none at all)."""

    turn: int
    print: str = ""


def read_mark(scene_dir: Path) -> Mark | None:
    """The scene's mark, or None if it has none (a scene bound before marks were kept)."""
    try:
        data = read_frontend_file(scene_dir, POSTED)
    except BadSceneFile:  # a torn mark must not keep the scene from attaching: no catch-up
        return None
    if data is None:
        return None
    turn, digest = whole_number(data.get("turn"), 9), data.get("print")
    if turn is None or not isinstance(digest, str) or len(digest) > 64:
        return None
    return Mark(turn, digest)


def write_mark(scene_dir: Path, mark: Mark) -> None:
    write_frontend_file(scene_dir, POSTED, {"turn": mark.turn, "print": mark.print})


def mark_of(turns: list[Turn]) -> Mark:
    """The mark that says the thread has all of `turns` (a transcript, in order)."""
    if not turns:
        return Mark(0)
    return Mark(turns[-1].number, turn_fingerprint(turns[-1]))


def unposted(turns: list[Turn], mark: Mark | None) -> list[Turn]:
    """The turns of the transcript `turns` the thread does not have: those after the marked
    one, or all of them if the marked turn is not in it (a take begun since)."""
    if mark is None:
        return []
    if mark.turn == 0:
        return list(turns)
    for i, turn in enumerate(turns):
        if turn.number == mark.turn and turn_fingerprint(turn) == mark.print:
            return list(turns[i + 1 :])
    return list(turns)


Message = tuple[str, str]  # (persona, text) as the thread shows it


def already_there(
    pending: list[Turn], last: Message | None, render: Callable[[Turn], list[Message]]
) -> int:
    """How many of `pending` to skip: 1 if the thread's last message is the first pending
    turn's last message — accepted by Discord just before the kill, not yet marked — else 0."""
    if not pending or last is None:
        return 0
    messages = render(pending[0])
    return 1 if messages and messages[-1] == last else 0
