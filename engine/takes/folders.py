"""Takes: full snapshots of a scene folder in takes/take_<n>/, and cutting a log at a turn.

A take is saved atomically (copied aside, then renamed into place) and never changed again.
`cut_log` keeps a log's text exactly as written up to a turn, so a replayed take reads the
same in Obsidian as the original.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.errors import TakeNotFound
from engine.folder.numbers import whole_number
from engine.folder.sections import split
from engine.folder.store import SceneStore
from engine.folder.turns import parse_transcript

TAKES = "takes"
# ASCII digits, at most 9: a folder `take_²` or a 5,000-digit heading is not a take or a turn
# (int() would refuse it with a ValueError), just a name or a line of text.
_TAKE = re.compile(r"^take_([0-9]{1,9})$")
_BLOCK = re.compile(r"## (?:before turn )?([0-9]{1,9})\b")


@dataclass(frozen=True)
class TakeInfo:
    number: int
    turns: int
    last_line: str


async def take_numbers(store: SceneStore) -> list[int]:
    names = await store.listdir(TAKES)
    return sorted(int(m.group(1)) for n in names if (m := _TAKE.match(n)))


def take_dir(number: int) -> str:
    return f"{TAKES}/take_{number}"


def parse_take_ref(ref: str | int) -> int | None:
    """`3`, `take_3` or `take3` → 3; anything else → None."""
    return whole_number(str(ref).strip().lower().removeprefix("take").lstrip("_ "))


async def resolve_take(store: SceneStore, ref: str | int) -> int:
    numbers = await take_numbers(store)
    number = parse_take_ref(ref)
    if number is None or number not in numbers:
        raise TakeNotFound(ref, numbers)
    return number


# Not part of a take: the takes themselves, the exports made from them, and the scene's line
# bin (picks.md points into the takes; a copy inside one would go stale).
NOT_IN_TAKE = {TAKES, "exports", "picks.md", "drafts"}  # drafts: engine.folder.scene.DRAFTS


async def next_take_number(store: SceneStore) -> int:
    numbers = await take_numbers(store)
    return (numbers[-1] if numbers else 0) + 1


async def save_take(store: SceneStore, extra: dict[str, str] | None = None) -> int:
    """Snapshot the scene as the next take, with `extra` files (e.g. its report) inside."""
    number = await next_take_number(store)
    await store.snapshot(take_dir(number), exclude=NOT_IN_TAKE, extra=extra)
    return number


async def take_info(store: SceneStore, number: int) -> TakeInfo:
    text = await store.read(f"{take_dir(number)}/transcript.md") or ""
    turns = parse_transcript(text)
    last = ""
    if turns:
        t = turns[-1]
        last = f"{t.actor}: {t.dialogue or t.action}".split("\n")[0][:120]
    return TakeInfo(number, len(turns), last)


def cut_log(text: str, until: int) -> str:
    """The log's text up to and including turn `until` (blocks headed `## N …`)."""
    for section in split(text, _BLOCK):
        if int(section.match.group(1)) > until:
            return text[: section.offset]
    return text
