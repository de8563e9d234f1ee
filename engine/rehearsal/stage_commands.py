"""The director's stage commands — enter, exit, event — and a person playing a character.

A command group of Rehearsal over the scene on disk (engine.rehearsal.scene_access); the run loop
shares its opening blocks, a played line's landing and the start check (functions here). Every command checks everything
before it writes (a refusal writes nothing), and writes under the cross-process run lock through
the store's journal, so a block lands whole and never between a run's read of the record and its
commit. Who plays whom lives in .circus/players.json (outside takes), so a restart keeps it. A
played line is an ordinary turn on the record; only usage rows and frontends know a person wrote
it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engine.config import Config
from engine.door.boot import settle_imports
from engine.door.llm import transport
from engine.errors import (
    BadRequest,
    NobodyOnStage,
    NotPlaying,
    NotYourTurn,
    OffStage,
    OnStage,
    UnknownActor,
)
from engine.events import StageChanged
from engine.folder.names import Actor
from engine.folder.sanitize import clean_text
from engine.folder.scene import PLAYERS, TRANSCRIPT, SceneState, parse_players
from engine.folder.settings import MAX_FILE_BYTES
from engine.folder.stage import (
    ENTER,
    EVENT,
    EXIT,
    OPENING,
    PRESENT,
    StageBlock,
    next_key,
    render_block,
)
from engine.folder.turns import ANY
from engine.rehearsal.run_slot import PlayedLine, RunSlot
from engine.rehearsal.scene_access import Floor, Landing, SceneAccess
from engine.reply.cue import match_cue
from engine.reply.read import Reply
from engine.turn.performance import Performance, Usage
from engine.turn.routing import check_models, run_models

CONSOLE = "console"  # the player id of a person at the local console


class Stage:
    """Entrances, exits, stage events, and lines said by the people playing actors."""

    def __init__(self, scene: SceneAccess, slot: RunSlot) -> None:
        self.scene, self.slot = scene, slot

    # ----------------------------------------------------------------- the stage
    async def enter(self, actor: Actor) -> StageBlock:
        """`actor` walks on; everyone present (and the actor) sees it happen."""
        name = (await self.scene.state()).member(actor)
        return await self._add_block(StageBlock(0, 0, ENTER, actor=name))

    async def exit(self, actor: Actor) -> StageBlock:
        """`actor` walks off; from now on they learn only that time passes."""
        name = (await self.scene.state()).member(actor)
        return await self._add_block(StageBlock(0, 0, EXIT, actor=name))

    async def event(self, text: str) -> StageBlock:
        """A public happening (a phone rings); the stage manager picks who reacts first."""
        text = (text or "").strip()
        if not text:
            raise BadRequest("error.event_empty")
        return await self._add_block(StageBlock(0, 0, EVENT, text=text))

    @property
    def waiting_for(self) -> str | None:
        """The played actor a run is waiting for right now, if any."""
        return self.slot.waiting_for

    async def on_stage(self) -> list[str]:
        return (await self.scene.state()).on_stage

    async def _add_block(self, block: StageBlock) -> StageBlock:
        self.slot.refuse_if_running()
        await self._check_block(await self.scene.state(), block)  # refuse before taking the lock
        with self.scene.store.held(self.scene.name):
            self.scene.files.forget()
            state = await self.scene.state()
            await self._check_block(state, block)
            first = opening(state)
            after, seq = next_key(state.last_turn, [*state.blocks, *first])
            block = StageBlock(after, seq, block.kind, block.actor, block.text, block.names)
            await append_blocks(self.scene, state, [*first, block])
        return block

    async def _check_block(self, state: SceneState, block: StageBlock) -> None:
        if block.kind == ENTER and block.actor in state.on_stage:
            raise OnStage(block.actor)
        if block.kind == EXIT and block.actor not in state.on_stage:
            raise OffStage(block.actor)

    # ----------------------------------------------------------------- players
    async def players(self) -> dict[str, str]:
        """Actor -> who plays them (only actors still in the cast)."""
        state = await self.scene.state()
        return {a: p for a, p in state.players.items() if a in state.souls}

    async def play(self, actor: Actor, player: str = CONSOLE) -> str:
        """`player` plays `actor` from now on (and no other actor in this scene)."""
        name = (await self.scene.state()).member(actor)
        await self._rewrite_players(
            lambda current: {a: p for a, p in current.items() if p != player} | {name: player}
        )
        return name

    async def unplay(self, actor: Actor | None = None, player: str | None = None) -> list[str]:
        """Give actors back to their models: `actor`, or every actor `player` plays. Both:
        `actor` only if `player` plays them (a player frees their own role, nobody else's:
        NotPlaying otherwise, decided under the players lock so a /play in between counts)."""
        name = (await self.scene.state()).member(actor) if actor is not None else None
        freed: list[str] = []

        def drop(current: dict[str, str]) -> dict[str, str]:
            if name is not None and player is not None and current.get(name) != player:
                raise NotPlaying(name)
            keep = {}
            for a, p in current.items():
                if a == name or (name is None and p == player):
                    freed.append(a)
                else:
                    keep[a] = p
            return keep

        await self._rewrite_players(drop)
        waiting = self.slot.waiting
        if waiting is not None and waiting[0] in freed and not waiting[1].done():
            waiting[1].set_result(None)  # the run goes on: the model plays this turn
        return freed

    async def _rewrite_players(self, change: Any) -> None:
        store = self.scene.store
        async with store.file_lock("players"):  # a short read-modify-write
            raw = await store.read(PLAYERS, limit=MAX_FILE_BYTES) or ""
            # A broken file is refused (naming it), never overwritten: who plays whom is the
            # players' own word, and a stale "nobody" would hand roles to the models.
            updated = change(parse_players(raw, store.path(PLAYERS)))
            await store.write_atomic(PLAYERS, json.dumps(updated, ensure_ascii=False, indent=2))

    # ----------------------------------------------------------------- lines
    async def say(
        self,
        actor: Actor,
        dialogue: str = "",
        action: str = "",
        cue: str = "",
        thought: str = "",
        *,
        player: str | None = None,
    ) -> int | None:
        """A line for `actor`, written by a person. `player` (when given) must be the one
        playing them. While a run waits for this actor, the line is its turn and the run goes
        on; with no run, it lands now. Returns the turn number when it landed here."""
        state = await self.scene.state()
        name = state.member(actor)
        # A person's text is data like a model's: no controls, bidi overrides or broken Unicode.
        action, dialogue, cue, thought = (
            clean_text(x).strip() for x in (action, dialogue, cue, thought)
        )
        line = PlayedLine(action, dialogue, cue, thought)
        if not line.action and not line.dialogue:
            raise BadRequest("error.line_empty")
        if player is not None and state.players.get(name) != player:
            raise NotPlaying(name)
        if name not in state.on_stage:
            raise OffStage(name)
        line = PlayedLine(line.action, line.dialogue, self._cue(state, line.cue), line.thought)
        if self.slot.running:
            waiting = self.slot.waiting
            if waiting is None or waiting[0] != name or waiting[1].done():
                raise NotYourTurn(name)
            waiting[1].set_result(line)
            return None
        with self.scene.store.held(self.scene.name):
            self.scene.files.forget()
            state = await self.scene.state()
            if name not in state.on_stage:
                raise OffStage(name)
            await open_take(self.scene, state)
            self.scene.files.forget()
            state = await self.scene.state()
            take = await self.scene.current_take()
            number = state.last_turn + 1
            at = Landing(take, number, Floor(name, "played"))
            await land_played(self.scene, state, at, line)
        return number

    def _cue(self, state: SceneState, raw: str) -> str:
        """A typed cue as the cast name it means (or as typed, for the stage manager)."""
        matched = match_cue(raw, state.aliases()) if raw else None
        if matched == ANY:
            return ANY
        return matched or raw


def opening(state: SceneState) -> list[StageBlock]:
    """What a take records before anything else: who is on stage when it begins (if
    context.md says) and, with `opening: true`, the public context as an opening event."""
    if state.turns or state.blocks:
        return []
    blocks: list[StageBlock] = []
    if state.start is not None:
        blocks.append(StageBlock(0, len(blocks) + 1, PRESENT, names=tuple(state.start)))
    if state.settings.get("opening") is True and state.context:
        blocks.append(StageBlock(0, len(blocks) + 1, OPENING, text=state.context))
    return blocks


async def open_take(scene: SceneAccess, state: SceneState) -> None:
    """At the start of a run (lock held): record the take's opening blocks, if due."""
    blocks = opening(state)
    if blocks:
        await append_blocks(scene, state, blocks)


async def append_blocks(scene: SceneAccess, state: SceneState, blocks: list[StageBlock]) -> None:
    """Record stage blocks in the transcript in one journaled step, then announce each."""
    text = "".join(render_block(b, state.language) for b in blocks)
    await scene.store.commit_appends([(TRANSCRIPT, text)])
    scene.files.forget()
    take = await scene.current_take()
    for b in blocks:
        scene.events.emit(
            StageChanged(scene.name, take, b.after, b.seq, b.kind, b.actor, b.text, b.names)
        )


async def land_played(scene: SceneAccess, state: SceneState, at: Landing, line: PlayedLine) -> bool:
    """Commit a person's line as the turn `at` places and announce it; True if cut meanwhile.
    A stage-manager decision that handed them the ball (at.floor) lands with it."""
    reply = Reply(line.thought, line.action, line.dialogue, line.cue, bool(line.cue))
    return await scene.commit_turn(state, at, Performance(reply, Usage(model="", calls=0)))


async def check_start(state: SceneState, first: str | None, config: Config) -> None:
    """A run needs someone on stage, a named opener who is on stage, and models that
    litellm can route (engine.turn.routing)."""
    if not state.on_stage:
        raise NobodyOnStage()
    if first is not None and first not in state.on_stage:
        if first not in state.souls:
            raise UnknownActor(first, state.cast)
        raise OffStage(first)
    # Every model the run may call must be one litellm can route: one line now, rather
    # than a provider exception ending every turn. Off the loop: it may import litellm.
    models = run_models(state, config)
    if any(transport(m.model, {}, config) == "litellm" for m in models):
        settle_imports()  # litellm may load in the thread beside this one's imports
    await asyncio.to_thread(check_models, models)
