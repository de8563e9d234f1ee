"""The writers' room: who captains whom — a writer assigned to one character, who reads that
character's private text and whispers to it alone.

A command group of Rehearsal over the scene on disk (engine.rehearsal.scene_access). Who captains
whom lives in .circus/captains.json (outside takes' meaning, so a restart keeps it), read-modify-
written under its own short lock and written atomically; a broken file is refused naming it,
never overwritten. `author_of` (pure) decides who a note's or cue's author is, and refuses a
captain reaching past their own character.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from engine.errors import BadRequest, NotYourCharacter
from engine.folder.attribution import author_name
from engine.folder.names import Actor
from engine.folder.sanitize import clean_text
from engine.folder.scene import CAPTAINS, CAPTAINS_MOST, WRITER_MOST_CHARS, parse_captains
from engine.folder.settings import MAX_FILE_BYTES
from engine.rehearsal.scene_access import SceneAccess
from engine.vocabulary import Author

Captains = Mapping[str, tuple[str, ...]]  # actor -> writers


def writer_id(raw: str) -> str:
    """A writer as captains.json keeps them: one clean line, bounded; BadRequest if empty."""
    text = " ".join(clean_text(str(raw or "")).split())
    if not text or len(text) > WRITER_MOST_CHARS:
        raise BadRequest("error.captain.writer", most=WRITER_MOST_CHARS)
    return text


def captained_by(captains: Captains, writer: str) -> frozenset[str]:
    """The actors `writer` captains."""
    return frozenset(actor for actor, writers in captains.items() if writer in writers)


def author_of(
    captains: Captains,
    writer: str,
    name: str,
    target: str | None,
    *,
    director: bool,
    cue: bool = False,
    captains_cue: bool = False,
) -> Author:
    """Who a whisper (or, `cue`, a cue) to `target` (None: everyone) is from. A director is a
    director whatever else they are; a captain may reach only their own character, and cue it
    only where the scene lets captains cue; anyone else is the trusted console's director."""
    if director:
        return Author(author_name(name), writer, "director")
    mine = captained_by(captains, writer)
    if not mine:
        return Author(author_name(name), writer, "director")
    yours = ", ".join(sorted(mine))
    if cue and not captains_cue:  # first: no character is theirs to cue in this scene
        raise NotYourCharacter("error.captain.no_cue")
    if target is None:
        raise NotYourCharacter("error.captain.everyone", yours=yours)
    if target not in mine:
        raise NotYourCharacter("error.captain.not_yours", yours=yours, actor=target)
    return Author(author_name(name), writer, "captain")


class Room:
    """Captains of one scene folder."""

    def __init__(self, scene: SceneAccess) -> None:
        self.scene = scene

    async def captains(self) -> dict[str, tuple[str, ...]]:
        """Actor -> the writers who captain them (only actors still in the cast)."""
        return dict((await self.scene.state()).captains)

    async def readers(self) -> Mapping[str, tuple[str, ...]]:
        """Actor -> their captains, from captains.json alone, re-read only when it changed: the
        bot asks on every turn whom a thought goes to (a captain of an actor no longer in the
        cast matches no turn)."""
        files = self.scene.files
        path = files.root / CAPTAINS
        return await files.small_file(CAPTAINS, lambda text: parse_captains(text, path), {})

    async def captained_by(self, writer: str) -> frozenset[str]:
        """The actors `writer` captains now (read afresh: a change takes effect at once)."""
        return captained_by(await self.captains(), writer)

    async def add(self, actor: Actor, writer: str) -> str:
        """`writer` captains `actor` from the next turn on (beside any other captains)."""
        name = (await self.scene.state()).member(actor)
        who = writer_id(writer)

        def add(current: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
            mine = current.get(name, ())
            if who not in mine and len(mine) >= CAPTAINS_MOST:
                raise BadRequest("error.captain.too_many", actor=name, most=CAPTAINS_MOST)
            return current | {name: tuple(dict.fromkeys((*mine, who)))}

        await self._rewrite(add)
        return name

    async def remove(self, actor: Actor, writer: str) -> bool:
        """`writer` no longer captains `actor` (from the next turn); False if they did not."""
        name = (await self.scene.state()).member(actor)
        who = writer_id(writer)
        removed = False

        def drop(current: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
            nonlocal removed
            mine = current.get(name, ())
            removed = who in mine
            rest = tuple(w for w in mine if w != who)
            return {a: w for a, w in (current | {name: rest}).items() if w}

        await self._rewrite(drop)
        return removed

    async def author(
        self, writer: str, target: Actor | None, *, name: str = "", cue: bool = False
    ) -> Author:
        """The author of a note (or cue) the console's `writer` sends to `target`: a captain of
        it, else a director — refused if they captain someone else (`author_of`)."""
        state = await self.scene.state()
        actor = state.member(target) if target is not None else None
        return author_of(
            state.captains, writer_id(writer), name or writer, actor, director=False, cue=cue,
            captains_cue=state.settings.get("captains_cue") is True,
        )  # fmt: skip

    async def _rewrite(self, change: Callable[[dict], dict]) -> None:
        store = self.scene.store
        async with store.file_lock("captains"):  # a short read-modify-write
            raw = await store.read(CAPTAINS, limit=MAX_FILE_BYTES) or ""
            # A broken file is refused (naming it), never overwritten with a guess.
            current = dict(parse_captains(raw, store.path(CAPTAINS)))
            updated = change(current)
            data = {a: list(w) for a, w in updated.items()}
            await store.write_atomic(CAPTAINS, json.dumps(data, ensure_ascii=False, indent=2))
        self.scene.files.forget()


def rename_captains(captains: Captains, old: str, new: str) -> str | None:
    """captains.json's text with `old`'s captains now `new`'s (None when `old` has none)."""
    if old not in captains:
        return None
    data = {(new if a == old else a): list(w) for a, w in captains.items()}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def without_actor(captains: Captains, actor: str) -> str | None:
    """captains.json's text without `actor`'s captains (None when `actor` has none)."""
    if actor not in captains:
        return None
    data = {a: list(w) for a, w in captains.items() if a != actor}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
