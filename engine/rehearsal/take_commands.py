"""The director's takes: save the working take, list and show saved ones, replay one.

A command group of Rehearsal over the scene on disk (engine.rehearsal.scene_access). Every whole-scene
change takes the cross-process run lock, so a take or a replay never sees another process's
half-made turn; what a saved take carries beside its logs (its rows, its report) and what a
replay moves or carries over come from the harvest part it is handed (engine.rehearsal.harvest).
A replay keeps the source take's line notes on the turns it keeps, under their file's lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.catalog import say
from engine.errors import BadRequest
from engine.events import TakeSaved
from engine.folder.line_notes import LINE_NOTES, cut_line_notes, empty_line_notes
from engine.folder.line_notes import LOCK as LINE_NOTES_LOCK
from engine.folder.scene import STAGE_MANAGER_LOG, TRANSCRIPT, backstage_path
from engine.folder.turns import parse_transcript
from engine.rehearsal.results import ReplayResult
from engine.rehearsal.run_slot import RunSlot
from engine.rehearsal.scene_access import SceneAccess
from engine.takes.folders import (
    TakeInfo,
    cut_log,
    resolve_take,
    save_take,
    take_dir,
    take_info,
    take_numbers,
)
from engine.takes.tree import record_parent

if TYPE_CHECKING:
    from engine.rehearsal.harvest import Harvest


class Takes:
    """Saved takes and replays for one scene folder."""

    def __init__(self, scene: SceneAccess, slot: RunSlot, harvest: Callable[[], Harvest]) -> None:
        """`harvest` gives the harvest part, asked for by a save or a replay only: listing or
        showing takes never loads the report and export modules."""
        self.scene, self.slot, self._harvest = scene, slot, harvest

    @property
    def harvest(self) -> Harvest:
        return self._harvest()

    async def save(self) -> int:
        self.slot.refuse_if_running()
        scene = self.scene
        with scene.store.held(scene.name):  # never snapshot another process's half-turn
            scene.files.forget()
            state = await scene.state()
            same = await scene.is_saved(await scene.store.read(TRANSCRIPT) or "")
            if same is not None:  # a second take of the very same turns is none
                if not await self._notes_go_with(same):
                    raise BadRequest("error.take_saved_already", take=same)
                return same  # what changed since is the room's notes: they join that take
            number = await self._save_locked()
        scene.events.emit(TakeSaved(scene.name, number, len(state.turns)))
        return number

    async def _save_locked(self) -> int:
        number = await self.scene.current_take()
        return await save_take(self.scene.store, await self.harvest.take_files(number))

    async def saved(self) -> list[TakeInfo]:
        store = self.scene.store
        return [await take_info(store, n) for n in await take_numbers(store)]

    async def show(self, ref: str | int) -> str:
        number = await resolve_take(self.scene.store, ref)
        return await self.scene.store.read(f"{take_dir(number)}/{TRANSCRIPT}") or ""

    async def replay(self, ref: str | int, until: int | None = None) -> ReplayResult:
        """Start a new attempt from a saved take (up to turn `until`) with today's souls/notes."""
        self.slot.refuse_if_running()
        scene, store = self.scene, self.scene.store
        number = await resolve_take(store, ref)
        take_text = await store.read(f"{take_dir(number)}/{TRANSCRIPT}") or ""
        last = max((t.number for t in parse_transcript(take_text)), default=0)
        if until is None:
            until = last
        if not isinstance(until, int) or until < 0 or until > last:
            raise BadRequest("error.until_range", take=number, last=last)
        with store.held(scene.name):  # no run may start (here or in another process) mid-replay
            async with store.file_lock(LINE_NOTES_LOCK):  # nor a note land on a dropped turn
                autosaved = await self._replay_locked(number, until, take_text)
        return ReplayResult(await scene.current_take(), number, until, autosaved)

    async def _replay_locked(self, number: int, until: int, take_text: str) -> int | None:
        """The replay's rewrite, both locks held: the working take is saved first unless it is
        one already (returns the number it was saved as), then the source take's logs, rows and
        line notes, cut at turn `until`, replace the working take's in one step."""
        scene, store = self.scene, self.scene.store
        source = take_dir(number)
        scene.files.forget()
        state = await scene.state()
        current = await scene.current_take()
        autosaved, saved_as = await self._keep_working_take(len(state.turns))
        if saved_as is not None:
            await self._notes_go_with(saved_as)
        files = await self.harvest.before_replay(
            current, saved_as, number, until, await scene.current_take()
        )
        files[TRANSCRIPT] = cut_log(take_text, until)
        for rel in [backstage_path(a) for a in state.cast] + [STAGE_MANAGER_LOG]:
            files[rel] = cut_log(await store.read(f"{source}/{rel}") or "", until)
        kept = await store.read(f"{source}/{LINE_NOTES}")
        if kept is not None or await store.read(LINE_NOTES) is not None:
            title = empty_line_notes(say("line_notes.title", state.language))
            files[LINE_NOTES] = cut_line_notes(kept, until) if kept is not None else title
        await store.commit_rewrites(files)
        await record_parent(store, await scene.current_take(), number, until)  # the tree
        return autosaved

    async def _notes_go_with(self, saved_as: int) -> bool:
        """The working take is take `saved_as` already (lock held): notes written on its lines
        since it was saved go into that take's line-notes.md, as its picks go to it. Returns
        whether there were any."""
        store = self.scene.store
        working = await store.read(LINE_NOTES)
        target = f"{take_dir(saved_as)}/{LINE_NOTES}"
        if working is not None and working != await store.read(target):
            await store.write_atomic(target, working)
            return True
        return False

    async def _keep_working_take(self, turns: int) -> tuple[int | None, int | None]:
        """(autosaved, saved_as) before a replay (lock held): the working take is saved first
        unless it already is one (saved_as), so a replay never loses a turn."""
        if not turns:
            return None, None
        scene = self.scene
        saved_as = await scene.is_saved(await scene.store.read(TRANSCRIPT) or "")
        if saved_as is not None:
            return None, saved_as
        autosaved = await self._save_locked()
        scene.events.emit(TakeSaved(scene.name, autosaved, turns))
        return autosaved, None
