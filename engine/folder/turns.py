"""Turns and the two append-only logs they land in: transcript.md and backstage/<actor>.log.

A turn block renders to markdown a writer reads in Obsidian and parses back to the same Turn
(round-trip exact for any text, including lines that look like headings or labels, which are
escaped with a backslash; engine.folder.sections). A cue is one line without comments: whatever a
writer scribbles under a turn's cue line, or in a comment on it, is theirs, never part of the
cue actors see. Pure functions; disk access lives in engine.folder.store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.catalog import CATALOGS, lang_of
from engine.folder.sections import escape, split, unescape

ANY = "ANY"

FIELDS = ("action", "dialogue", "cue")
LABELS = {lang: {f: text[f"label.{f}"] for f in FIELDS} for lang, text in CATALOGS.items()}
_FIELD_OF = {label.casefold(): field for table in LABELS.values() for field, label in table.items()}
_FIELD_OF.update({"动作": "action", "台词": "dialogue"})

_HEADING = re.compile(r"^## ([0-9]{1,9}) · (.+?)\s*$")  # 9 digits: int() never refuses it
_LABEL = re.compile(r"^\*\*([^*]+)\*\*[:：] ?(.*)$")
_BACKSTAGE_HEADING = re.compile(r"^## ([0-9]{1,9})\s*$")
# A writer's comment on a cue line (HTML or Obsidian style) is theirs, not part of the name.
_COMMENT = re.compile(r"<!--.*?(?:-->|$)|%%.*?(?:%%|$)")


@dataclass(frozen=True)
class Turn:
    """One actor's output as it stands on the public record."""

    number: int
    actor: str
    action: str = ""
    dialogue: str = ""
    cue: str = ""


def labels_for(language: str) -> dict[str, str]:
    return LABELS[lang_of(language)]


def _value_lines(value: str) -> list[str]:
    first, *rest = value.split("\n")
    return [first] + [escape(line) for line in rest]


def recorded_cue(cue: str) -> str:
    """A cue as the record keeps it: its first line, without comment markers. The cue line may
    carry a writer's own Obsidian comment (`%% … %%`, `<!-- … -->`), which reading drops, so a
    cue that held a marker itself would come back changed."""
    first = cue.split("\n")[0]
    return re.sub(r"%%|<!--", "", first).strip()


def render_turn(turn: Turn, language: str = "zh") -> str:
    """The markdown block appended to transcript.md for one turn (ends with a blank line)."""
    labels = labels_for(language)
    out = [f"## {turn.number} · {turn.actor}"]
    for field in ("action", "dialogue", "cue"):
        value = getattr(turn, field) if field != "cue" else recorded_cue(turn.cue)
        if value or field == "cue":
            lines = _value_lines(value)
            out.append(f"**{labels[field]}**: {lines[0]}".rstrip())
            out.extend(lines[1:])
    return "\n".join(out) + "\n\n"


def parse_transcript(text: str) -> list[Turn]:
    """Every turn block in transcript.md; text before the first block is a free header."""
    turns: list[Turn] = []
    # Every `## ` line ends a turn: the next may be a stage block (engine.folder.stage) or a writer's
    # own heading, whose lines belong to no turn.
    for section in split(text):
        heading = _HEADING.match(section.line)
        if heading is None:
            continue
        values = _labelled(section.lines)
        turns.append(
            Turn(
                number=int(heading.group(1)),
                actor=heading.group(2),
                **{k: "\n".join(v).strip() for k, v in values.items() if k != "cue"},
                cue=_COMMENT.sub("", values.get("cue", [""])[0]).strip(),
            )
        )
    return turns


def _labelled(lines: tuple[str, ...]) -> dict[str, list[str]]:
    """A turn's fields: each from its `**Label**:` line through the lines below it."""
    values: dict[str, list[str]] = {}
    field: str | None = None
    for line in lines:
        label = _LABEL.match(line)
        if label and label.group(1).strip().casefold() in _FIELD_OF:
            field = _FIELD_OF[label.group(1).strip().casefold()]
            values[field] = [label.group(2)]
        elif field is not None:
            values[field].append(unescape(line))
    return values


def render_decision(number: int, actor: str, reason: str) -> str:
    """The block appended to stage_manager.log before turn `number`.

    The reason is the stage manager's free text: a line in it that looks like a block heading
    ("## before turn 9", "## 3") is escaped, so takes.cut_log never cuts the log there.
    """
    lines = reason.strip().split("\n")
    body = "\n".join(escape(line) for line in lines)
    return f"## before turn {number} → {actor}\n{body}\n\n"


def render_thought(number: int, thought: str) -> str:
    """The block appended to backstage/<actor>.log for one turn."""
    lines = thought.strip().split("\n")
    body = "\n".join(escape(line) for line in lines)
    return f"## {number}\n{body}\n\n"


# The room's record of a note that reached the actor (engine.folder.attribution.backstage_note):
# a whole line of its own, which a thought line can never be (sections.escape).
NOTE_LINE = re.compile(r"<!-- note .*-->\s*$")


def parse_backstage(text: str) -> dict[int, str]:
    """Turn number → thought, from one actor's backstage log (a `## ` line that is not a turn
    number is part of the thought above it; a note's record line is nobody's thought)."""
    if "<!-- note " not in text:
        return {int(s.match.group(1)): s.body() for s in split(text, _BACKSTAGE_HEADING)}
    return {
        int(s.match.group(1)): "\n".join(
            unescape(line) for line in s.lines if not NOTE_LINE.match(line)
        ).strip()
        for s in split(text, _BACKSTAGE_HEADING)
    }
