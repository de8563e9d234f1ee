"""Who is on stage, as part of the public record: stage blocks between turns in transcript.md.

A stage block (an opening, a stage event, an entrance, an exit, or who is on stage when a take
begins) is numbered `after.seq` — the last turn before it and its place among the blocks after
that turn — so `## 5.1 · 事件` sorts between turns 5 and 6 and a take cut at turn 5 keeps it.
Blocks round-trip exactly (body lines are escaped like a turn's). Who is on stage at any point
is derived from the record alone; `on_stage` in context.md only seeds an empty record. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from engine.catalog import CATALOGS, lang_of
from engine.errors import BadSceneFile
from engine.folder.sections import escape, split, unescape
from engine.folder.turns import Turn
from engine.vocabulary import BlockKind

OPENING: Final = "opening"
EVENT: Final = "event"
ENTER: Final = "enter"
EXIT: Final = "exit"
PRESENT: Final = "present"
KINDS: tuple[BlockKind, ...] = (OPENING, EVENT, ENTER, EXIT, PRESENT)
LABELS = {lang: {k: text[f"stage.{k}"] for k in KINDS} for lang, text in CATALOGS.items()}
_KIND_OF: dict[str, BlockKind] = {
    label.casefold(): kind for table in LABELS.values() for kind, label in table.items()
}
_KIND_OF.update({"开场": OPENING, "进场": ENTER, "在场": PRESENT})
# ASCII digits, at most 9 (engine.folder.numbers): a hand-typed 5,000-digit heading is just a line.
HEADING = re.compile(r"^## ([0-9]{1,9})\.([0-9]{1,9}) · (.+?)\s*$")


@dataclass(frozen=True)
class StageBlock:
    """One public happening that is not an actor's turn."""

    after: int  # the last turn before it (0: before the first turn)
    seq: int  # its place among the blocks after that turn, from 1
    kind: BlockKind
    actor: str = ""  # enter / exit
    text: str = ""  # opening / event
    names: tuple[str, ...] = ()  # present

    @property
    def key(self) -> tuple[int, int]:
        return (self.after, self.seq)


Item = Turn | StageBlock


def _labels(language: str) -> dict[BlockKind, str]:
    return LABELS[lang_of(language)]


def render_block(block: StageBlock, language: str = "zh") -> str:
    """The markdown block appended to transcript.md (ends with a blank line)."""
    head = f"## {block.after}.{block.seq} · {_labels(language)[block.kind]}"
    if block.kind in (ENTER, EXIT):
        return f"{head} · {block.actor}\n\n"
    body = block.names if block.kind == PRESENT else block.text.split("\n")
    return head + "\n" + "\n".join(escape(line) for line in body) + "\n\n"


def parse_blocks(text: str) -> list[StageBlock]:
    """Every stage block in transcript.md, in file order (turn blocks are skipped)."""
    blocks: list[StageBlock] = []
    for section in split(text):  # every `## ` line: a turn, a block, or a writer's heading
        match = HEADING.match(section.line)
        if match is None:
            continue
        label, _, actor = match.group(3).partition(" · ")
        kind = _KIND_OF.get(label.strip().casefold())
        if kind is None or (kind in (ENTER, EXIT) and not actor.strip()):
            continue
        after, seq = int(match.group(1)), int(match.group(2))
        if kind == PRESENT:
            names = tuple(n.strip() for n in map(unescape, section.lines) if n.strip())
            blocks.append(StageBlock(after, seq, kind, names=names))
        elif kind in (OPENING, EVENT):
            blocks.append(StageBlock(after, seq, kind, text=section.body()))
        else:
            blocks.append(StageBlock(after, seq, kind, actor=actor.strip()))
    return blocks


def merge(turns: Iterable[Turn], blocks: Iterable[StageBlock]) -> list[Item]:
    """Turns and stage blocks in the order they happened."""
    keyed: list[tuple[tuple[int, int], Item]] = [((t.number, 0), t) for t in turns]
    keyed += [(b.key, b) for b in blocks]
    keyed.sort(key=lambda pair: pair[0])
    return [item for _, item in keyed]


def next_key(last_turn: int, blocks: Sequence[StageBlock]) -> tuple[int, int]:
    """The number of a block recorded now, after turn `last_turn`."""
    seqs = [b.seq for b in blocks if b.after == last_turn]
    return last_turn, max(seqs, default=0) + 1


def configured(settings: Mapping[str, Any], cast: Sequence[str], path: object) -> list[str]:
    """Who context.md puts on stage when a take begins (default: the whole cast)."""
    value = settings.get("on_stage")
    if value is None:
        return list(cast)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadSceneFile(path, "error.file.on_stage_not_list", rel="context.md")
    unknown = [v for v in value if v not in cast]
    if unknown:
        raise BadSceneFile(
            path,
            "error.file.on_stage_unknown",
            rel="context.md",
            unknown=tuple(unknown),
            cast=tuple(cast),
        )
    return [a for a in cast if a in value]


def walk(
    cast: Sequence[str], items: Sequence[Item], start: Sequence[str] | None = None
) -> Iterator[tuple[Item, frozenset[str], frozenset[str]]]:
    """Each item with who was on stage just before and just after it.

    A record begins with the whole cast on stage unless a `present` block says otherwise;
    `start` (context.md's on_stage) applies only to an empty record, which has no items.
    """
    known = set(cast)
    present = frozenset(known if start is None else set(start) & known)
    if items:
        present = frozenset(known)
    for item in items:
        before = present
        if isinstance(item, StageBlock):
            if item.kind == PRESENT:
                present = frozenset(n for n in item.names if n in known)
            elif item.kind == ENTER and item.actor in known:
                present = present | {item.actor}
            elif item.kind == EXIT:
                present = present - {item.actor}
        yield item, before, present


def on_stage(cast: Sequence[str], items: Sequence[Item], start: Sequence[str]) -> list[str]:
    """Who is on stage now, in cast order."""
    present = set(start) if not items else set(cast)
    for _, _, after in walk(cast, items):
        present = set(after)
    return [a for a in cast if a in present]


def quiet(cast: Sequence[str], items: Sequence[Item], start: Sequence[str]) -> dict[str, int]:
    """Turns each actor has been silent *while on stage*: since they last spoke or entered.

    Neglect protection reads this, so a stretch spent off stage never counts as neglect.
    """
    counts = {a: 0 for a in cast}
    present = set(start) if not items else set(cast)
    for item, _, after in walk(cast, items):
        present = set(after)
        if isinstance(item, Turn):
            for actor in present:
                counts[actor] = counts.get(actor, 0) + 1
            if item.actor in counts:
                counts[item.actor] = 0
        elif item.kind == ENTER and item.actor in counts:
            counts[item.actor] = 0
    return counts


def since_last_turn(items: Sequence[Item]) -> list[StageBlock]:
    """The stage blocks recorded after the last turn (what the next speaker reacts to)."""
    out: list[StageBlock] = []
    for item in reversed(items):
        if isinstance(item, Turn):
            break
        out.append(item)
    return out[::-1]


def after_event(items: Sequence[Item]) -> bool:
    """True when a stage event (or the opening) happened since the last turn."""
    return any(b.kind in (EVENT, OPENING) for b in since_last_turn(items))
