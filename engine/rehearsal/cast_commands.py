"""The director's commands that change who is in a scene and what the stage is: add, remove and
rename an actor, read and replace context.md, and the warnings a hand-built scene deserves.

A command group of Rehearsal over the scene on disk (engine.rehearsal.scene_access). Every change is checked whole before anything is written, takes
the cross-process run lock (never beside a run), and lands in one journaled step, so a refused
or failed command leaves the folder exactly as it was.
"""

from __future__ import annotations

import json

from engine.config import Config
from engine.errors import BadRequest, BadSceneFile, CircusError
from engine.folder import frontmatter
from engine.folder.carried import CARRIED, unedited_warnings
from engine.folder.checkup import SceneWarning, check_scene
from engine.folder.names import MAX_CAST, Actor, check_name, name_key
from engine.folder.scene import (
    CAPTAINS,
    CONTEXT,
    CONTEXT_DRAFT,
    NOTES,
    PLAYERS,
    SceneState,
    backstage_path,
    draft_path,
    refuse_alias_clash,
    soul_path,
)
from engine.folder.settings import (
    MAX_FILE_BYTES,
    check_untrusted_context,
    check_untrusted_soul,
    context_model,
    context_settings,
    soul_model,
)
from engine.folder.soul import blank_soul, parse_soul
from engine.folder.stage import configured
from engine.folder.whispers import rename_section, with_section, without_section
from engine.rehearsal.results import check_origin, given_text
from engine.rehearsal.room_commands import rename_captains, without_actor
from engine.rehearsal.run_slot import RunSlot
from engine.rehearsal.scene_access import SceneAccess
from engine.vocabulary import Origin


class Cast:
    """Cast, context and warnings for one scene folder."""

    def __init__(self, scene: SceneAccess, slot: RunSlot, config: Config) -> None:
        self.scene, self.slot, self.config = scene, slot, config

    # ----------------------------------------------------------------- the cast
    def _new_name(self, state: SceneState, name: str, old: str | None = None) -> str:
        """`name` checked as a newcomer's: a valid name that is no one else's name or alias."""
        name = check_name(name, "Actor")
        for other, aliases in state.aliases().items():
            if other == old:
                continue
            if name_key(name) == name_key(other):
                raise BadRequest("error.actor_exists", name=name)
            if any(name_key(name) == name_key(a) for a in aliases):
                raise BadRequest("error.name_is_alias", name=name, other=other)
        return name

    async def _context_with_cast(
        self, state: SceneState, cast: list[str], renamed: dict[str, str] | None = None
    ) -> str:
        """context.md with its cast / on_stage lists following `cast` (if it has them)."""
        text = await self.scene.store.read(CONTEXT, limit=MAX_FILE_BYTES) or ""
        for key in ("cast", "on_stage"):
            value = state.settings.get(key)
            if value is None:
                continue
            if renamed:
                new = [renamed.get(n, n) for n in value]
            else:
                new = [n for n in value if n in cast]
                if key == "cast":
                    new += [n for n in cast if n not in new]
            text = frontmatter.with_setting(text, key, new)
        return text

    async def _change(self, plan) -> object:  # plan: async (SceneState) -> (files, apply)
        """Check a change on the scene as it is (a refusal writes nothing, not even the lock
        file), then take the run lock and check it again on the folder as it is now, and only
        then write it: `plan` returns (files to rewrite, a function that writes the rest)."""
        self.slot.refuse_if_running()
        await plan(await self.scene.state())
        with self.scene.store.held(self.scene.name):
            # and the notes' lock: a whisper landing while director_notes.md is rewritten (an
            # actor's section removed or renamed) would otherwise be lost
            async with self.scene.store.file_lock("notes"):
                self.scene.files.forget()
                try:
                    files, apply = await plan(await self.scene.state())
                    return await apply(files)
                finally:
                    self.scene.files.forget()

    async def add(
        self, name: str, soul_text: str | None = None, *, origin: Origin = "operator"
    ) -> Actor:
        """Add an actor with `soul_text` as their soul.md (None: the three parts to fill in).

        Refused, with nothing written: a bad name, a name that is another actor's name or
        alias, a 13th actor, a soul whose settings are broken or whose alias is another actor's
        name; from Discord, a soul setting only the operator may choose."""
        check_origin(origin)

        async def plan(state: SceneState):
            new = self._new_name(state, name)
            if len(state.cast) >= MAX_CAST:
                raise BadRequest("error.cast_full", most=MAX_CAST)
            rel = soul_path(new)
            path = self.scene.root / rel
            text = (
                blank_soul(state.language)
                if soul_text is None
                else given_text(soul_text, path, rel)
            )
            soul = parse_soul(new, text, path, rel)
            if not soul.body:
                raise BadSceneFile(path, "error.file.soul_empty", rel=rel)
            if origin == "member":
                check_untrusted_soul(soul_model(soul.settings), None, self.config)
            refuse_alias_clash(self.scene.root, {**state.aliases(), new: soul.aliases})
            files = {rel: text, CONTEXT: await self._context_with_cast(state, [*state.cast, new])}
            notes = await self.scene.store.read(NOTES)
            if notes is not None:
                files[NOTES] = with_section(notes, new)

            async def apply(files: dict[str, str]) -> Actor:
                await self.scene.store.commit_rewrites(files)
                return Actor(new)

            return files, apply

        return await self._change(plan)  # type: ignore[return-value]

    async def remove(self, actor: Actor) -> int:
        """Take an actor out of the scene: their folder and their whispers in
        director_notes.md go, context.md's cast and on_stage forget them. Their lines stay in
        the transcript and the saved takes (history). Returns how many whispers went."""
        dropped = 0

        async def plan(state: SceneState):
            nonlocal dropped
            name = state.member(actor)
            if len(state.cast) == 1:
                raise BadRequest("error.cast_last", name=name)
            rest = [a for a in state.cast if a != name]
            files = {CONTEXT: await self._context_with_cast(state, rest)}
            captains = without_actor(state.captains, name)  # their captains go with them
            if captains is not None:
                files[CAPTAINS] = captains
            notes = await self.scene.store.read(NOTES)
            dropped = 0
            if notes is not None:
                kept, dropped = without_section(notes, name)
                if kept != notes:
                    files[NOTES] = kept

            async def apply(files: dict[str, str]) -> None:
                self.scene.store.remove(f"actors/{name}")
                await self.scene.store.commit_rewrites(files)

            return files, apply

        await self._change(plan)
        return dropped

    async def rename(self, actor: Actor, new_name: str) -> Actor:
        """Rename an actor before the first turn of the current take (folder, cast, on_stage,
        whispers, who plays and who captains them); after it, refused: the record already names them."""
        store = self.scene.store

        async def plan(state: SceneState):
            old = state.member(actor)
            if state.turns:
                raise BadRequest("error.rename_after_turns", name=old, turns=len(state.turns))
            new = self._new_name(state, new_name, old=old)
            cast = [new if a == old else a for a in state.cast]
            files = {CONTEXT: await self._context_with_cast(state, cast, {old: new})}
            notes = await store.read(NOTES)
            if notes is not None:
                files[NOTES] = rename_section(notes, old, new)
            if old in state.players:
                players = {(new if a == old else a): p for a, p in state.players.items()}
                files[PLAYERS] = json.dumps(players, ensure_ascii=False, indent=2) + "\n"
            captains = rename_captains(state.captains, old, new)
            if captains is not None:
                files[CAPTAINS] = captains

            async def apply(files: dict[str, str]) -> Actor:
                if new == old:
                    return Actor(old)
                moved: list[tuple[str, str]] = []
                try:
                    for src, dst in ((f"actors/{old}", f"actors/{new}"),
                                     (backstage_path(old), backstage_path(new))):  # fmt: skip
                        if store.path(src).exists():
                            store.move(src, dst)
                            moved.append((src, dst))
                    await store.commit_rewrites(files)
                except (CircusError, OSError):
                    for src, dst in reversed(moved):  # put them back: nothing half-renamed
                        store.move(dst, src)
                    raise
                return Actor(new)

            return files, apply

        return await self._change(plan)  # type: ignore[return-value]

    # ----------------------------------------------------------------- context
    async def context_text(self) -> str:
        """context.md as written (settings and public stage facts)."""
        await self.scene.state()  # SceneNotFound for a folder that is not a scene
        return await self.scene.store.read(CONTEXT, limit=MAX_FILE_BYTES) or ""

    async def set_context(self, text: str, *, origin: Origin = "operator") -> None:
        """Replace context.md; refused (nothing written) if its settings are broken, its cast
        or on_stage names are not names, or (from Discord) it changes an operator setting."""
        check_origin(origin)
        path = self.scene.root / CONTEXT
        text = given_text(text, path, CONTEXT)
        raw, _ = frontmatter.split(text, path, CONTEXT)
        new = context_settings(raw, path, CONTEXT)
        for name in new.cast or ():
            check_name(name, "Actor")
        state = await self.scene.state()
        if new.on_stage is not None:
            configured(new.as_dict(), state.cast, path)
        if origin == "member":
            current = context_model(state.settings) if state.settings else None
            check_untrusted_context(new, current, self.config)
        self.slot.refuse_if_running()
        with self.scene.store.held(self.scene.name):
            await self.scene.store.write_atomic(CONTEXT, text)
            self.scene.files.forget()

    async def save_context_draft(self, text: str) -> str:
        """Keep a context.md edit that could not be used, in drafts/context.md (never loaded,
        never in a take). Returns that path inside the scene."""
        await self.scene.state()  # SceneNotFound for a folder that is not a scene
        path = self.scene.root / CONTEXT_DRAFT
        await self.scene.store.write_atomic(CONTEXT_DRAFT, given_text(text, path, CONTEXT_DRAFT))
        return CONTEXT_DRAFT

    async def context_draft(self) -> str | None:
        """The kept draft of context.md, if there is one."""
        return await self.scene.store.read(CONTEXT_DRAFT, limit=MAX_FILE_BYTES)

    async def drop_context_draft(self) -> None:
        self.scene.store.remove(CONTEXT_DRAFT)

    # ----------------------------------------------------------------- warnings
    async def warnings(self) -> tuple[SceneWarning, ...]:
        """One warning per problem a hand-built scene has that does not stop it loading."""
        store = self.scene.store
        context = await store.read(CONTEXT, limit=MAX_FILE_BYTES) or ""
        souls = {}
        for actor in self.scene.files.actor_names():
            try:
                souls[actor] = await store.read(soul_path(actor), limit=MAX_FILE_BYTES)
            except CircusError:
                continue  # unreadable: the loader says why
        drafts = [a for a in souls if store.path(draft_path(a)).is_file()]
        context_draft = store.path(CONTEXT_DRAFT).is_file()
        carried = await store.read(CARRIED, limit=MAX_FILE_BYTES) or ""
        found = check_scene(context, souls, drafts, context_draft=context_draft)
        return found + unedited_warnings(carried, souls)
