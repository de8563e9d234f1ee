"""The line bin: picks.md at the scene root lists the picked turns for people, and is the state.

`render_picks` and `parse_picks` round-trip exactly (parse(render(p)) == p, and rendering a
parsed file gives the same text back); the parser tolerates a writer's edits (labels in either
language, blank lines, a changed header, a vote count that no longer matches). A value line that
could be read as structure is escaped with a backslash, as in transcript.md. A voter is one
person whatever the case they type their name in (`Ana` and `ana` are one vote, shown as first
spelled). Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from engine.catalog import CATALOGS, lang_of
from engine.folder.sections import escape, split, unescape

PICKS = "picks.md"
STAR = "⭐"

_HEADER = {lang: text["picks.header"] for lang, text in CATALOGS.items()}
_LABELS = {
    lang: {f: text[f"label.{f}"] for f in ("action", "dialogue", "note")}
    for lang, text in CATALOGS.items()
}
_FIELD_OF = {label.casefold(): f for table in _LABELS.values() for f, label in table.items()}
_FIELD_OF.update({"动作": "action", "台词": "dialogue", "备注": "note"})

_HEADING = re.compile(
    r"^## take[_ ]?([0-9]{1,9})\s*·\s*(?:turn|第)\s*([0-9]{1,9})\s*(?:輪|轮)?\s*·\s*(.+?)"
    r"(?:\s*·\s*" + STAR + r"\s*\d+)?\s*$",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^\*\*([^*]+)\*\*[:：] ?(.*)$")
_VOTE = re.compile(r"^- " + STAR + r" ?(.*)$")


@dataclass(frozen=True)
class Pick:
    """One picked turn: where it is, what was said, who voted for it (the picker first)."""

    take: int
    turn: int
    actor: str
    action: str = ""
    dialogue: str = ""
    votes: tuple[str, ...] = ()
    note: str = ""


def _same_voter(a: str, b: str) -> bool:
    """Whether two names are one voter: equal but for case."""
    return a.casefold() == b.casefold()


def _voted(votes: tuple[str, ...] | list[str], by: str) -> bool:
    return any(_same_voter(v, by) for v in votes)


def _with_votes(votes: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    """`votes`, then each of `more` not yet among them (the first spelling kept)."""
    out = list(votes)
    for name in more:
        if not _voted(out, name):
            out.append(name)
    return tuple(out)


def render_pick(pick: Pick, language: str = "zh") -> str:
    labels = _LABELS[lang_of(language)]
    out = [f"## take_{pick.take} · turn {pick.turn} · {pick.actor} · {STAR} {len(pick.votes)}"]
    for field in ("action", "dialogue", "note"):
        value = getattr(pick, field)
        if value:
            first, *rest = value.split("\n")
            out.append(f"**{labels[field]}**: {first}".rstrip())
            out.extend(escape(line, also=(f"- {STAR}",)) for line in rest)
    out.extend(f"- {STAR} {name}" for name in pick.votes)
    return "\n".join(out) + "\n"


def render_picks(picks: list[Pick], language: str = "zh") -> str:
    """The whole picks.md: a header for people, then one block per pick in pick order."""
    blocks = [_HEADER[lang_of(language)]] + [render_pick(p, language) for p in picks]
    return "\n".join(blocks)


def parse_picks(text: str) -> list[Pick]:
    """Every pick block in picks.md; text before the first block is a free header."""
    picks: list[Pick] = []
    # Only a pick's heading starts a block: a writer's own `## ` line stays in the one above.
    for section in split(text.replace("\r\n", "\n"), _HEADING):
        heading = section.match
        pick = Pick(int(heading.group(1)), int(heading.group(2)), heading.group(3).strip())
        picks.append(_pick_fields(pick, section.lines))
    return picks


def _pick_fields(pick: Pick, lines: tuple[str, ...]) -> Pick:
    """A pick with its labelled fields and vote lines read in."""
    values: dict[str, list[str]] = {}
    votes: list[str] = []
    field: str | None = None
    for line in lines:
        vote = _VOTE.match(line)
        if vote:
            name = vote.group(1).strip()
            if name and not _voted(votes, name):
                votes.append(name)
            field = None
            continue
        label = _LABEL.match(line)
        if label and label.group(1).strip().casefold() in _FIELD_OF:
            field = _FIELD_OF[label.group(1).strip().casefold()]
            values[field] = [label.group(2)]
            continue
        if field is not None:
            values[field].append(unescape(line))
    text = {k: "\n".join(v).strip() for k, v in values.items()}
    return replace(
        pick,
        votes=tuple(votes),
        action=text.get("action", pick.action),
        dialogue=text.get("dialogue", pick.dialogue),
        note=text.get("note", pick.note),
    )


def find(picks: list[Pick], take: int, turn: int) -> int | None:
    """The index of the pick of (take, turn), or None."""
    for i, p in enumerate(picks):
        if p.take == take and p.turn == turn:
            return i
    return None


def add_vote(picks: list[Pick], new: Pick, by: str, note: str = "") -> tuple[list[Pick], Pick]:
    """Pick `new`'s turn for `by`: a new pick, another vote, or (same voter) no change."""
    out = list(picks)
    i = find(out, new.take, new.turn)
    if i is None:
        pick = replace(new, votes=(by,), note=note.strip())
        out.append(pick)
        return out, pick
    pick = out[i]
    if _voted(pick.votes, by):
        return out, pick
    pick = replace(pick, votes=pick.votes + (by,), note=pick.note or note.strip())
    out[i] = pick
    return out, pick


def remove_vote(
    picks: list[Pick], take: int, turn: int, by: str | None
) -> tuple[list[Pick], Pick | None] | None:
    """Remove the pick (by None) or one voter's vote (and the pick when no vote is left).

    Returns (new list, the pick as it remains or None), or None when there was nothing to remove.
    """
    i = find(picks, take, turn)
    if i is None:
        return None
    out = list(picks)
    pick = out[i]
    if by is None:
        del out[i]
        return out, None
    if not _voted(pick.votes, by):
        return None
    pick = replace(pick, votes=tuple(v for v in pick.votes if not _same_voter(v, by)))
    if not pick.votes:
        del out[i]
        return out, None
    out[i] = pick
    return out, pick


def retarget(picks: list[Pick], from_take: int, to_take: int) -> list[Pick]:
    """Point every pick of one take at another (the same turns, saved under another number);
    a turn picked under both numbers becomes one pick with both sets of votes."""
    out: list[Pick] = []
    for p in picks:
        if p.take == from_take:
            p = replace(p, take=to_take)
        i = find(out, p.take, p.turn)
        if i is None:
            out.append(p)
        else:
            old = out[i]
            out[i] = replace(old, votes=_with_votes(old.votes, p.votes), note=old.note or p.note)
    return out
