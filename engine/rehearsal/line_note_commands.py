"""The room's notes on lines: add a note to a turn of the working take, list a take's notes.

A command group of Rehearsal over the scene on disk (engine.rehearsal.scene_access) and its
harvest (engine.rehearsal.harvest, for a take as read). line-notes.md (engine.folder.line_notes)
is read-modify-written atomically under its own short lock, which a replay also takes; a
refused note writes nothing. No prompt ever reads a note: it is the room's, not an actor's.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog import say
from engine.clock import utcnow
from engine.errors import BadRequest, TurnNotFound
from engine.folder.line_notes import (
    LINE_NOTE_MOST_CHARS,
    LINE_NOTES,
    LOCK,
    LineNote,
    add_line_note,
    author_name,
    empty_line_notes,
    flat,
    notes_by_turn,
    parse_line_notes,
)
from engine.folder.turns import Turn
from engine.rehearsal.harvest import Harvest, TakeView
from engine.rehearsal.scene_access import SceneAccess

TakeRef = int | str


@dataclass(frozen=True)
class NotedLine:
    """One noted turn of a take: who said what (empty if the turn is not in the take), and its
    notes in the order they were written."""

    take: int
    turn: int
    actor: str
    line: str
    notes: tuple[LineNote, ...]


def _same_line(a: Turn, b: Turn) -> bool:
    return (a.actor, a.action, a.dialogue) == (b.actor, b.action, b.dialogue)


class LineNotes:
    """Notes on lines for one scene folder."""

    def __init__(self, scene: SceneAccess, harvest: Harvest) -> None:
        self.scene, self.harvest = scene, harvest

    async def add(
        self, turn: int, text: str, by: str, *, take: TakeRef = "current", by_id: int | None = None
    ) -> LineNote:
        """Note `text` on turn `turn` of the working take, by `by` (their Discord id `by_id`).
        `take`: the take the writer saw the line in; a saved take's line is noted only while
        the working take still holds it unchanged (the note follows the line)."""
        text, name = flat(text), author_name(by)
        if not text:
            raise BadRequest("error.line_note_empty")
        if len(text) > LINE_NOTE_MOST_CHARS:
            raise BadRequest(
                "error.line_note_too_long", most=LINE_NOTE_MOST_CHARS, length=len(text)
            )
        if not name:
            raise BadRequest("error.line_note_needs_author")
        store = self.scene.store
        async with store.file_lock(LOCK):  # the bot, a terminal and a replay take turns
            working = await self.harvest.take_view("current")
            found = await self._turn(working, turn, take)
            note = LineNote(
                found.number, found.actor, text, name, utcnow().strftime("%Y-%m-%d %H:%M UTC"),
                by_id if isinstance(by_id, int) and not isinstance(by_id, bool) else None,
            )  # fmt: skip
            current = await store.read(LINE_NOTES)
            if current is None:
                language = (await self.scene.state()).language
                current = empty_line_notes(say("line_notes.title", language))
            await store.write_atomic(LINE_NOTES, add_line_note(current, note))
        return note

    async def _turn(self, working: TakeView, turn: int, take: TakeRef) -> Turn:
        """The working take's turn `turn`, if it is the line the writer saw in `take`."""
        seen = working if take == "current" else await self.harvest.take_view(take)
        line = seen.turn(turn) if isinstance(turn, int) else None
        if line is None:
            last = seen.turns[-1].number if seen.turns else 0
            raise TurnNotFound(seen.number, turn, last)
        now = working.turn(line.number)
        if now is None or not _same_line(now, line):
            raise BadRequest("error.line_note_old_take", take=seen.number, turn=line.number,
                             current=working.number)  # fmt: skip
        return now

    async def list(self, take: TakeRef = "current") -> list[NotedLine]:
        """Every noted turn of a take (the working one by default), in turn order."""
        view = await self.harvest.take_view(take)
        text = await self.scene.store.read(view.folder + LINE_NOTES) or ""
        out = []
        for number, notes in notes_by_turn(parse_line_notes(text)).items():
            turn = view.turn(number)
            actor = turn.actor if turn else notes[0].actor
            line = (turn.dialogue or turn.action) if turn else ""
            out.append(NotedLine(view.number, number, actor, line, tuple(notes)))
        return out
