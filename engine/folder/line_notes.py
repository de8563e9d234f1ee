"""line-notes.md: the room's notes on lines of the take, one `## Turn N · actor` section per
noted line and one bullet per note (`- text — author (time)`), readable in Obsidian.

Invariant: a note and its author are stored on one line whose start can never read as
structure (a heading, a nested list, a quote), so a note can never make a section or pose as
another note's author; every rewrite changes only the lines it adds or the sections it drops,
so whatever a person wrote in the file by hand is kept, and a broken line is skipped, never
fatal. No prompt reads this file (engine.turn.prompts). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from engine.folder.sanitize import clean_text
from engine.folder.sections import split

LINE_NOTES = "line-notes.md"
LOCK = "line-notes"  # the file lock's name (.circus/line-notes.lock): adding, and a replay's cut
LINE_NOTE_MOST_CHARS = 1000  # one note on a line: a sentence or two; more is refused
AUTHOR_MOST_CHARS = 80  # an author's name as stored (Discord's display names are at most 32)
LINE_LONGEST = 4 * LINE_NOTE_MOST_CHARS  # a longer line is no note we wrote: never matched
_HEADING = re.compile(r"## Turn ([0-9]{1,9})\b(?: · (.*))?$")
_BULLET = re.compile(r"- (?P<text>.*) — (?P<by>.+?) \((?P<when>[^()]*)\)\s*$")
_DISCORD = re.compile(r"^(?P<name>.*?) \(discord:(?P<id>[0-9]{1,20})\)$")
_STRUCTURE = re.compile(r"[#>*+\-=|`~\\]|[0-9]+[.)]|\[")  # a start that markdown reads as markup


@dataclass(frozen=True)
class LineNote:
    """One note on one turn: its text, who wrote it (their Discord id, if from Discord), when."""

    turn: int
    actor: str
    text: str
    by: str
    when: str = ""
    by_id: int | None = None


def flat(text: object) -> str:
    """Text on one line: cleaned (engine.folder.sanitize), every run of whitespace one space."""
    return " ".join(clean_text(str(text or "")).split())


def author_name(by: object) -> str:
    """An author's name as stored: one line, no em dash or brackets that could end the note
    early, at most AUTHOR_MOST_CHARS characters."""
    name = flat(by).replace("—", "-").replace("(", "[").replace(")", "]")
    return name[:AUTHOR_MOST_CHARS].strip()


def _escaped(text: str) -> str:
    """A note's text as stored after `- `: a start markdown would read as markup is escaped."""
    return "\\" + text if _STRUCTURE.match(text) else text


def _unescaped(text: str) -> str:
    return text[1:] if text.startswith("\\") and len(text) > 1 else text


def bullet(note: LineNote) -> str:
    """The note's line in the file."""
    who = author_name(note.by) + (f" (discord:{note.by_id})" if note.by_id is not None else "")
    when = flat(note.when).replace("(", "[").replace(")", "]")
    return f"- {_escaped(flat(note.text))} — {who} ({when})"


def heading(turn: int, actor: str) -> str:
    return f"## Turn {turn} · {flat(actor)}"


def _note(turn: int, actor: str, line: str) -> LineNote | None:
    if len(line) > LINE_LONGEST:  # a hand-pasted wall of text is kept, not read as a note
        return None
    match = _BULLET.match(line)
    if match is None:
        return None
    by, by_id = match["by"].strip(), None
    if tagged := _DISCORD.match(by):
        by, by_id = tagged["name"].strip(), int(tagged["id"])
    text = _unescaped(match["text"].strip())
    if not text or not by:
        return None
    return LineNote(turn, actor, text, by, match["when"].strip(), by_id)


@dataclass(frozen=True)
class _Section:
    turn: int
    actor: str
    start: int  # where its heading begins in the text
    end: int  # where the next section begins (or the text ends)
    lines: tuple[str, ...]


def _sections(text: str) -> list[_Section]:
    return [
        _Section(int(s.match[1]), flat(s.match[2] or ""), s.offset, s.end_offset, s.lines)
        for s in split(text, _HEADING)
    ]


def parse_line_notes(text: str) -> list[LineNote]:
    """Every note in the file, in file order; a line that is not a note is skipped."""
    text = clean_text(text or "")
    out: list[LineNote] = []
    for section in _sections(text):
        for line in section.lines:
            note = _note(section.turn, section.actor, line)
            if note is not None:
                out.append(note)
    return out


def empty_line_notes(title: str) -> str:
    """A new file: its title (the catalog's, in the scene's language) and nothing else."""
    return f"# {title}\n"


def add_line_note(text: str, note: LineNote) -> str:
    """The file with `note` added: under its turn's section (after that section's last line),
    else in a new section placed in turn order. Nothing else in the file changes."""
    text = clean_text(text or "")
    line = bullet(note)
    sections = _sections(text)
    for section in sections:
        if section.turn == note.turn:
            body = text[section.start : section.end]
            kept = body.rstrip("\n")
            tail = body[len(kept) :] or "\n"
            return text[: section.start] + kept + "\n" + line + tail + text[section.end :]
    block = f"{heading(note.turn, note.actor)}\n{line}\n"
    later = [s for s in sections if s.turn > note.turn]
    if later:
        at = min(s.start for s in later)
        return text[:at] + block + "\n" + text[at:]
    if not text.strip():
        return text + block
    return text.rstrip("\n") + "\n\n" + block


def cut_line_notes(text: str, until: int) -> str:
    """The file without the sections of turns after `until` (a replay keeps the notes on the
    turns it keeps); the rest exactly as written."""
    out, at = [], 0
    for section in _sections(text):
        if section.turn > until:
            out.append(text[at : section.start])
            at = section.end
    out.append(text[at:])
    return "".join(out)


def notes_by_turn(notes: Iterable[LineNote]) -> dict[int, list[LineNote]]:
    """The notes grouped by turn, turns in order, each turn's notes in file order."""
    grouped: dict[int, list[LineNote]] = {}
    for note in sorted(notes, key=lambda n: n.turn):
        grouped.setdefault(note.turn, []).append(note)
    return grouped


def note_line(note: LineNote) -> str:
    """`- text — author`: a note as a report lists it (markdown; its text escaped as stored)."""
    return f"- {_escaped(note.text)} — {note.by}"
