"""The director's whispers: a note to everyone or to one actor, and what no longer fits.

A command group of Rehearsal over the scene on disk (engine.rehearsal.scene_access). director_notes.md
is read-modify-written under its own short lock (the bot and a terminal may both whisper);
a refused note writes nothing. Each note ends with its author's comment (engine.folder.attribution):
who, in which take, after which turn — the room's record, which no prompt reads.
"""

from __future__ import annotations

import asyncio

from engine.clock import utcnow
from engine.config import Config
from engine.door import tokens
from engine.errors import BadRequest
from engine.events import NoteAdded
from engine.folder.attribution import note_mark
from engine.folder.names import Actor
from engine.folder.role_models import actor_model, context_tokens, stage_manager_model
from engine.folder.sanitize import clean_text
from engine.folder.scene import NOTES
from engine.folder.whispers import (
    NOTE_MOST_CHARS,
    add_note,
    dropped_notes,
    empty_notes,
    may_fit_anywhere,
)
from engine.rehearsal.scene_access import SceneAccess
from engine.vocabulary import Author


class Notes:
    """Whispers for one scene folder."""

    def __init__(self, scene: SceneAccess, config: Config) -> None:
        self.scene, self.config = scene, config

    async def note(self, text: str, actor: Actor | None = None, *, by: Author | None = None) -> int:
        """Whisper to everyone (actor None) or to one actor; used from the next turn, and
        attributed to `by` (None: the scene's director, unnamed). Returns how many of that
        section's oldest notes no longer fit in a prompt (the frontend warns: they stay in
        director_notes.md, but no model reads them). Who may whisper to whom is the caller's
        decision (engine.rehearsal.room_commands.author_of)."""
        text = clean_text(text or "")  # a whisper is saved as it will be read: no controls
        if not text.strip():
            raise BadRequest("error.note_empty")
        if len(text.strip()) > NOTE_MOST_CHARS:
            raise BadRequest("error.note_too_long", most=NOTE_MOST_CHARS, length=len(text.strip()))
        state = await self.scene.state()
        target = state.member(actor) if actor is not None else None
        store = self.scene.store
        take = await self.scene.current_take()
        async with store.file_lock("notes"):  # the bot and a terminal may both whisper
            current = await store.read(NOTES)
            if current is None:
                current = empty_notes(state.cast, state.language)
            mark = note_mark(by, take, state.last_turn, utcnow())
            await store.write_atomic(NOTES, add_note(current, text, target, state.language, mark))
        self.scene.events.emit(NoteAdded(self.scene.name, target, text.strip()))
        return (await self.dropped()).get(target or "", 0)

    async def dropped(self) -> dict[str, int]:
        """Per whisper section (an actor, or "" for everyone): how many of its oldest notes
        the prompts leave out, each measured for the models that read it."""
        state = await self.scene.state()
        cast = [a for a in state.cast if a in state.souls]
        sections = [state.whispers.everyone, *(state.whispers.for_actor(a) for a in cast)]
        if all(may_fit_anywhere(text) for text in sections):
            return {}  # the usual case, known without a tokenizer (nor litellm) loaded
        models = {a: actor_model(state.souls[a], state.settings, self.config) for a in cast}
        sm = stage_manager_model(state.settings, self.config)

        def reader(model: str) -> tuple[int, tokens.Counter]:
            return context_tokens(model, self.config), tokens.counter(model)

        def measure() -> dict[str, int]:  # a first count may load a tokenizer: off the loop
            readers = {a: reader(m) for a, m in models.items()}
            return dropped_notes(state.whispers, readers, [reader(sm)])

        return await asyncio.to_thread(measure)
