"""The read's script: what is read aloud, in which voice, with which pause after it; and the
cue sheet that says when each line starts.

Invariant: a take's script holds only what its thread showed — the heading, the opening and the
stage's events, each turn's action (the narrator) and dialogue (the actor); never a thought.
A director's thoughts read is a script of its own (`thoughts_script`), for its own file. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.catalog import say
from engine.folder.stage import ENTER, EVENT, EXIT, OPENING, StageBlock
from engine.folder.turns import Turn
from engine.folder.voices import Casting, Voice

LINE_PAUSE = 0.35  # seconds after a line within a turn
TURN_PAUSE = 0.8  # seconds after a turn (and after the heading, the opening, an event)
MAX_CHARS = 1500  # a longer text is read as several lines, cut between sentences
_SENTENCE = re.compile(r"(?<=[.!?。！？…])\s*")
_MARKS = re.compile(r"[*_`#>~]+")  # markdown a voice would spell out


@dataclass(frozen=True)
class Line:
    """One thing read aloud: by whom (`speaker`: the actor, or "" for the narrator), in which
    voice, for which turn (None: the heading), and the silence after it (seconds)."""

    text: str
    voice: Voice
    speaker: str
    turn: int | None
    pause: float


def spoken(text: str) -> str:
    """A field as a voice reads it: markdown marks dropped, whitespace made single."""
    return " ".join(_MARKS.sub(" ", text).split())


def _chunks(text: str) -> list[str]:
    """`text` in pieces of at most MAX_CHARS, cut after a sentence where one ends in time."""
    out: list[str] = []
    while len(text) > MAX_CHARS:
        head = text[:MAX_CHARS]
        ends = [m.end() for m in _SENTENCE.finditer(head) if 0 < m.end() < MAX_CHARS]
        cut = ends[-1] if ends else MAX_CHARS
        out.append(text[:cut].strip())
        text = text[cut:].strip()
    return [*out, text] if text else out


def _lines(text: str, voice: Voice, speaker: str, turn: int | None, pause: float) -> list[Line]:
    pieces = _chunks(spoken(text))
    return [
        Line(p, voice, speaker, turn, pause if i == len(pieces) - 1 else LINE_PAUSE)
        for i, p in enumerate(pieces)
    ]


def _block_text(block: StageBlock, language: str) -> str:
    if block.kind in (OPENING, EVENT):
        return block.text
    if block.kind in (ENTER, EXIT):
        key = "export.enters" if block.kind == ENTER else "export.exits"
        return say(key, language, actor=block.actor)
    return ""  # who is on stage as a take begins: not part of the play


def take_script(
    heading: str,
    items: Sequence[Turn | StageBlock],
    casting: Casting,
    language: str,
) -> list[Line]:
    """The heading, then the take's stage blocks and turns in the order they happened."""
    narrator = casting.narrator
    out = _lines(heading, narrator, "", None, TURN_PAUSE)
    for item in items:
        if isinstance(item, StageBlock):
            out += _lines(_block_text(item, language), narrator, "", item.after, TURN_PAUSE)
            continue
        voice = casting.actors.get(item.actor, narrator)
        said = _lines(item.dialogue, voice, item.actor, item.number, LINE_PAUSE)
        out += _lines(item.action, narrator, "", item.number, LINE_PAUSE)
        out += said
        if out and out[-1].turn == item.number:
            last = out[-1]
            out[-1] = Line(last.text, last.voice, last.speaker, last.turn, TURN_PAUSE)
    return out


def thoughts_script(
    turns: Sequence[Turn], thoughts: Mapping[int, str], casting: Casting, language: str
) -> list[Line]:
    """A director's read of the thoughts: for each turn that had one, the narrator names the
    turn and its actor, and the thoughts' own voice reads it."""
    out: list[Line] = []
    for turn in turns:
        thought = thoughts.get(turn.number, "")
        if not spoken(thought):
            continue
        label = say("read.thought_of", language, actor=turn.actor, turn=turn.number)
        out += _lines(label, casting.narrator, "", turn.number, LINE_PAUSE)
        out += _lines(thought, casting.thoughts, turn.actor, turn.number, TURN_PAUSE)
    return out


def clock(seconds: float) -> str:
    """`m:ss.s` (or `h:mm:ss.s`) for a cue sheet."""
    tenths = round(seconds * 10)
    h, rest = divmod(tenths, 36000)
    m, rest = divmod(rest, 600)
    s = rest / 10
    return f"{h}:{m:02d}:{s:04.1f}" if h else f"{m}:{s:04.1f}"


def cue_sheet(
    title: str, lines: Sequence[Line], starts: Sequence[float], parts: Sequence[int], language: str
) -> str:
    """One row per line read: when it starts (`starts`: in its own part's file), its turn, who
    reads it and how it begins; a part's first line (`parts`: their indices) is preceded by the
    part's heading when the read is in several files."""
    narrator = say("read.narrator", language)
    rows = [title, ""]
    for i, (line, start) in enumerate(zip(lines, starts, strict=True)):
        if len(parts) > 1 and i in parts:
            rows.append(say("read.part", language, n=parts.index(i) + 1, of=len(parts)))
        turn = say("read.turn", language, n=line.turn) if line.turn else "—"
        who = line.speaker or narrator
        said = line.text if len(line.text) <= 60 else line.text[:59] + "…"
        rows.append(f"{clock(start)}  {turn}  {who} ({line.voice.name}): {said}")
    return "\n".join(rows) + "\n"
