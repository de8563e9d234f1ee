"""Who wrote each whisper and cue, and whose came last before a turn: the room's record.

A whisper in director_notes.md and a cue in directions.md carry one HTML comment naming their
author — `<!-- by 小王 · captain · take 2 · after turn 4 · 2025-01-02T03:04:05Z -->` — which
Obsidian hides and no prompt reads (engine.folder.whispers strips comments). Invariant: an
author's name is untrusted (a Discord display name) and is cleaned so it can neither close the
comment, open another, nor start a line; only the comment at the very end of a note counts,
so text inside a note cannot pose as its author. `last_before` is pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from engine.folder.names import is_everyone
from engine.folder.sanitize import clean_text
from engine.folder.sections import split
from engine.vocabulary import Author, AuthorRole

NAME_MOST_CHARS = 40  # a display name is at most 32 on Discord; a console name is short
COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)  # unclosed: hidden to the end, as shown
_SECTION = re.compile(r"## (.+?)\s*$")
_NOTE_MARK = re.compile(
    r"<!-- (?:by (?P<name>[^<>\n]*?) · )?(?P<role>director|captain) · take (?P<take>[0-9]{1,9})"
    r" · after turn (?P<turn>[0-9]{1,9})(?: · (?P<at>[0-9TZ:.+-]{1,40}))? -->\s*\Z"
)
_CUE_MARK = re.compile(
    r"^<!-- (?:by (?P<name>[^<>\n]*?) · )?(?P<role>director|captain) · take (?P<take>[0-9]{1,9})"
    r" · turn (?P<turn>[0-9]{1,9})(?: · (?P<at>[0-9TZ:.+-]{1,40}))? · for (?P<actor>[^<>\n]+?)"
    r" -->$",
    re.MULTILINE,
)
# What a name may not hold: comment and markdown structure (the rest of a name is kept).
_UNSAFE = str.maketrans({"<": "‹", ">": "›", "-": "‐", "·": "•", "#": "＃", "%": "％", "`": "ˋ"})

MarkKind = Literal["note", "cue"]
LeadRole = Literal["director", "captain", "nobody"]


def author_name(raw: str) -> str:
    """A name as an attribution shows it: one short line, no comment or heading syntax."""
    text = unicodedata.normalize("NFC", clean_text(str(raw or "")))
    text = " ".join(text.translate(_UNSAFE).split())
    return text[:NAME_MOST_CHARS].strip()


def _stamp(at: datetime | None) -> str:
    return f" · {at.strftime('%Y-%m-%dT%H:%M:%SZ')}" if at is not None else ""


def _by(author: Author | None) -> tuple[str, AuthorRole]:
    if author is None:
        return "", "director"
    name = author_name(author.name)
    return (f"by {name} · " if name else ""), author.role


def note_mark(author: Author | None, take: int, after: int, at: datetime | None = None) -> str:
    """The comment closing a whisper's bullet: who wrote it, in which take, after which turn."""
    by, role = _by(author)
    return f"<!-- {by}{role} · take {take} · after turn {after}{_stamp(at)} -->"


def cue_mark(
    author: Author | None, take: int, turn: int, actor: str, at: datetime | None = None
) -> str:
    """The comment line under a cue's heading in directions.md: who cued `actor` for `turn`."""
    by, role = _by(author)
    return f"<!-- {by}{role} · take {take} · turn {turn}{_stamp(at)} · for {actor} -->"


def strip_comments(text: str) -> str:
    """`text` as a prompt reads it: without HTML comments (an unclosed one hides the rest)."""
    if "<!--" not in text:
        return text
    return "\n".join(line.rstrip() for line in COMMENT.sub("", text).split("\n"))


@dataclass(frozen=True)
class Mark:
    """One note or cue on the room's record. A note written after turn `turn` reaches the
    turns after it; a cue reaches the turn `turn` it started."""

    kind: MarkKind
    take: int
    turn: int
    target: str | None  # the actor it reached; None: everyone
    name: str
    role: AuthorRole
    at: str = ""  # when (ISO, UTC), if recorded: orders marks written between the same turns


@dataclass(frozen=True)
class Lead:
    """Whose note or cue came last before a turn (role "nobody": none did)."""

    role: LeadRole
    mark: Mark | None = None


NOBODY = Lead("nobody")


def _note_items(body: Iterable[str]) -> list[str]:
    items: list[str] = []
    for line in body:
        if items and (not line or line[:1].isspace()):
            items[-1] += "\n" + line
        elif line.strip():
            items.append(line)
    return items


def note_marks(text: str, cast: Iterable[str]) -> list[Mark]:
    """The attributed whispers of director_notes.md (a note without its comment is left out:
    nobody knows when it was written)."""
    names = set(cast)
    out: list[Mark] = []
    for section in split(text, _SECTION):
        heading = section.match.group(1)
        if is_everyone(heading):
            target = None
        elif heading in names:
            target = heading
        else:
            continue  # a section nobody reads reached nobody
        for item in _note_items(section.lines):
            found = _NOTE_MARK.search(item.rstrip())
            if found is not None:
                out.append(_mark("note", found, target))
    return out


def cue_marks(text: str) -> list[Mark]:
    """The attributed cues of directions.md."""
    return [_mark("cue", m, m.group("actor")) for m in _CUE_MARK.finditer(text)]


def _mark(kind: MarkKind, found: re.Match[str], target: str | None) -> Mark:
    role: AuthorRole = "captain" if found.group("role") == "captain" else "director"
    return Mark(
        kind, int(found.group("take")), int(found.group("turn")), target,
        found.group("name") or "", role, found.group("at") or "",
    )  # fmt: skip


def _position(mark: Mark) -> tuple[int, int, str]:
    # A note after turn k sits between k and k+1; a cue for turn T just before T.
    spot = 4 * mark.turn + 2 if mark.kind == "note" else 4 * mark.turn - 1
    return mark.take, spot, mark.at


# take → (the take it was made from, how many of that take's turns it kept: None, unknown).
# A take it does not name was made from the take before it (engine.takes.tree reads it).
Lineage = Mapping[int, tuple[int, int | None]]


def _parent(lineage: Lineage, take: int) -> tuple[int, int | None] | None:
    found = lineage.get(take)
    if found is not None and found[0] < take:
        return found
    return (take - 1, None) if take > 1 and found is None else None


def played_in(lineage: Lineage, take: int, turn: int) -> int:
    """The take turn `turn` of take `take` was played in: a replay or a take played on copies
    the turns it kept from its parent, and a copied turn was played in the parent (or further
    up). Pure."""
    while (parent := _parent(lineage, take)) is not None:
        kept = parent[1]
        if kept is None or turn > kept:
            break
        take = parent[0]
    return take


def _ancestors(lineage: Lineage, take: int) -> dict[int, int | None]:
    """The takes `take` was made from, each with the last of its turns `take` kept (None: all
    known ones)."""
    out: dict[int, int | None] = {}
    cutoff: int | None = None
    while (parent := _parent(lineage, take)) is not None and parent[0] not in out:
        take, kept = parent
        cutoff = kept if cutoff is None else (cutoff if kept is None else min(cutoff, kept))
        out[take] = cutoff
    return out


def _reached_before(mark: Mark, take: int, turn: int, ancestors: Mapping[int, int | None]) -> bool:
    if mark.kind == "note":
        # Whispers live in director_notes.md, whatever the take (a replay keeps today's), and
        # take numbers only grow: one written before the turn was played was there to read.
        return (mark.take, _position(mark)[1]) < (take, 4 * turn)
    if mark.take == take:
        return _position(mark)[1] < 4 * turn
    if mark.take not in ancestors:
        return False  # a later take, or a sibling: the cue was for a turn of another branch
    kept = ancestors[mark.take]
    return kept is None or mark.turn <= kept  # a cue counts only for a turn the line kept


def last_before(
    marks: Sequence[Mark], take: int, turn: int, actor: str, lineage: Lineage | None = None
) -> Lead:
    """Whose note or cue reached `actor` last before its turn `turn` of take `take` (a cue for
    that very turn included): a captain's, a director's, or nobody's. A turn a take copied from
    its parent (`lineage`) keeps the answer of the take it was played in: only marks made
    before it was played count — a note from any take (the notes file is the scene's), a cue
    only in that take or the takes it was made from. Pure."""
    lineage = lineage or {}
    origin = played_in(lineage, take, turn)
    ancestors = _ancestors(lineage, origin)
    reached = [
        m
        for m in marks
        if (m.target is None or m.target == actor) and _reached_before(m, origin, turn, ancestors)
    ]
    if not reached:
        return NOBODY
    last = max(enumerate(reached), key=lambda pair: (_position(pair[1]), pair[0]))[1]
    return Lead(last.role, last)


def record_line(mark: Mark) -> str:
    """A note's line in the backstage log of an actor it reached, written with that actor's
    next thought: who wrote it and when — a comment no thought or prompt holds
    (engine.folder.turns.NOTE_LINE)."""
    by = f"by {mark.name} · " if mark.name else ""
    at = f" · {mark.at}" if mark.at else ""
    return f"<!-- note {by}{mark.role} · take {mark.take} · after turn {mark.turn}{at} -->"


def read_before(marks: Sequence[Mark], take: int, since: int, turn: int, actor: str) -> list[Mark]:
    """The notes that reached `actor` for its turn `turn` of take `take`: written after turn
    `since` (its previous turn, or 0) and before `turn`, to them or to everyone. Pure."""
    read = [
        m
        for m in marks
        if m.kind == "note"
        and m.take == take
        and since <= m.turn < turn
        and (m.target is None or m.target == actor)
    ]
    return sorted(read, key=lambda m: (m.turn, m.at))  # in the order they were written
