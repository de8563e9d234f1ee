"""Takes as a tree: a replay from turn K of take N makes a branch, recorded when it is made.

The record is `.circus/takes.jsonl` (append-only, outside every take): one row per replay,
`{"take": new, "parent": N, "turn": K}`, naming the take number the new attempt will be saved
as; a later row for the same take wins (a replay redone before anything was played). A take
without a row — a scene from before the record, or a take saved and then played on — reads as
the next link of a line: its parent is the take before it, from its last turn. Pure functions,
but `record_parent` (one appended line, through the store) and `read_parents`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.catalog import say
from engine.folder.attribution import Lineage
from engine.folder.numbers import whole_number
from engine.folder.store import STATE_DIR, SceneStore, parse_jsonl

LINEAGE = f"{STATE_DIR}/takes.jsonl"


@dataclass(frozen=True)
class Parent:
    take: int
    turn: int | None  # None: a take from before the record (read as a line)


async def record_parent(store: SceneStore, take: int, parent: int, turn: int) -> None:
    """Remember that `take` is being made from `parent` up to `turn` (a replay)."""
    row = {"take": take, "parent": parent, "turn": turn}
    await store.append_line(LINEAGE, json.dumps(row))


def parse_lineage(text: str) -> dict[int, Parent]:
    """take → its recorded parent; rows a person broke (not whole numbers) are skipped."""
    out: dict[int, Parent] = {}
    for row in parse_jsonl(text):
        take, parent = whole_number(row.get("take")), whole_number(row.get("parent"))
        turn = whole_number(row.get("turn"))
        if take is not None and parent is not None and turn is not None and parent < take:
            out[take] = Parent(parent, turn)
    return out


def parents(recorded: Mapping[int, Parent], takes: Sequence[int]) -> dict[int, Parent | None]:
    """Each take's parent: the recorded one, else the take before it (a line), else none."""
    known = sorted(set(takes))
    out: dict[int, Parent | None] = {}
    for i, take in enumerate(known):
        found = recorded.get(take)
        if found is not None and found.take in known:
            out[take] = found
        else:
            out[take] = Parent(known[i - 1], None) if i else None
    return out


def lineage_of(tree: Mapping[int, Parent | None], turns: Mapping[int, int]) -> Lineage:
    """Each take's parent and how many of its turns it kept (engine.folder.attribution): a
    replay the turns it was made up to, a take played on all its parent's turns."""
    out: dict[int, tuple[int, int | None]] = {}
    for take, parent in tree.items():
        if parent is not None:
            kept = parent.turn if parent.turn is not None else turns.get(parent.take)
            out[take] = (parent.take, kept)
    return out


async def read_parents(store: SceneStore, takes: Sequence[int]) -> dict[int, Parent | None]:
    return parents(parse_lineage(await store.read(LINEAGE) or ""), takes)


def _children(tree: Mapping[int, Parent | None]) -> dict[int | None, list[int]]:
    kids: dict[int | None, list[int]] = {}
    for take in sorted(tree):
        parent = tree[take]
        kids.setdefault(parent.take if parent else None, []).append(take)
    return kids


def _label(
    take: int,
    tree: Mapping[int, Parent | None],
    turns: Mapping[int, int],
    lang: str,
    current: int | None,
) -> str:
    text = say("tree.take", lang, take=take, turns=turns.get(take, 0))
    parent = tree[take]
    if parent is not None and parent.turn is not None:
        text += "  " + say("tree.from", lang, parent=parent.take, turn=parent.turn)
    if take == current:
        text += "  " + say("tree.current", lang)
    return text


def tree_lines(
    tree: Mapping[int, Parent | None],
    turns: Mapping[int, int],
    language: str,
    current: int | None = None,
) -> list[str]:
    """The tree drawn in text, a take per line, children under their parent (`current`: the
    working take, marked as not saved)."""
    kids = _children(tree)
    lines: list[str] = []

    # A stack, not recursion: takes that were never replayed read as one long line, a level each,
    # and a writer may keep a thousand of them.
    stack = [(root, "", True, True) for root in reversed(kids.get(None, []))]
    while stack:
        take, prefix, last, top = stack.pop()
        branch = "" if top else ("└─ " if last else "├─ ")
        lines.append(prefix + branch + _label(take, tree, turns, language, current))
        below = kids.get(take, [])
        inner = prefix if top else prefix + ("   " if last else "│  ")
        for i, child in reversed(list(enumerate(below))):
            stack.append((child, inner, i == len(below) - 1, False))
    return lines


def mermaid_tree(
    tree: Mapping[int, Parent | None], language: str, highlight: int | None = None
) -> str:
    """The tree as a Mermaid graph (Obsidian draws it); `highlight` marks one take."""
    out = ["```mermaid", "flowchart TD"]
    for take in sorted(tree):
        out.append(f"  take_{take}([{say('tree.node', language, take=take)}])")
    for take in sorted(tree):
        parent = tree[take]
        if parent is None:
            continue
        edge = ""
        if parent.turn is not None:
            edge = f"|{say('tree.edge', language, turn=parent.turn)}|"
        out.append(f"  take_{parent.take} -->{edge} take_{take}")
    if highlight is not None and highlight in tree:
        out.append(f"  style take_{highlight} stroke-width:3px")
    out.append("```")
    return "\n".join(out)
