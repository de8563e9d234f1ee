"""A rehearsal: the one object a frontend holds for a scene folder — a small facade that builds
the parts and hands each what it uses.

Parts: the scene on disk (engine.rehearsal.scene_access), the run's slot (engine.rehearsal.run_slot), its spend
(engine.rehearsal.spending), the run loop (engine.rehearsal.run_loop) and the command groups — `takes`, `souls`,
`cast`, `stage`, `room` (captains), `notes`, `line_notes`, `spend`, `harvest`, `alerts`. No part
inherits from another; what two groups
share is a function or a part both are handed. The folder is the state: a new Rehearsal on the
same folder continues exactly where the last one stopped.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Collection
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import DEFAULT_TURNS, Config
from engine.folder.names import Actor
from engine.folder.scene import SceneState
from engine.folder.turns import Turn
from engine.rehearsal.orders import Cue, Order
from engine.rehearsal.results import Status, status_of
from engine.rehearsal.run_slot import RunSlot
from engine.rehearsal.scene_access import SceneAccess
from engine.rehearsal.spending import Spending
from engine.rehearsal.view import SceneView, view_of
from engine.spend.ledger import Ledger
from engine.vocabulary import Author

if TYPE_CHECKING:  # the groups' types; each group's module loads when the group is first used
    from engine.door.llm import Models
    from engine.rehearsal.alert_commands import Alerts
    from engine.rehearsal.cast_commands import Cast
    from engine.rehearsal.harvest import Harvest
    from engine.rehearsal.line_note_commands import LineNotes
    from engine.rehearsal.note_commands import Notes
    from engine.rehearsal.read_commands import Reading
    from engine.rehearsal.room_commands import Room
    from engine.rehearsal.run_loop import RunLoop, RunResult
    from engine.rehearsal.soul_commands import Souls
    from engine.rehearsal.stage_commands import Stage
    from engine.rehearsal.take_commands import Takes

__all__ = ["Rehearsal", "preload"]


class Rehearsal:
    """Director commands for one scene folder. Frontends hold one per scene."""

    def __init__(
        self,
        root: Path | str,
        *,
        models: Models | None = None,
        config: Config | None = None,
        account: str | None = None,
        players_here: Collection[str] | None = None,
    ) -> None:
        """`models` is the model door (default: litellm, configured by `config`); `config` the
        operator's settings (default: the environment, read once now). `account` names whose
        daily budget the runs spend (the bot: discord-<guild id>); its ledger lives beside the
        scene, under <scenes folder>/.circus/spend/. `players_here`: the players who can hand
        this process a line (the console: itself; a one-shot command: nobody); a run plays
        anyone else's role by its model (None: it waits for every player)."""
        self.scene = SceneAccess(root)
        self.files, self.root, self.name = self.scene.files, self.scene.root, self.scene.name
        self.events = self.scene.events
        self.config = config or Config.from_env(os.environ)
        if models is not None:  # else the `models` property builds the door on first use
            self.models = models
        self.account = account
        self.ledger = Ledger(self.root.parent, account) if account else None
        here = frozenset(players_here) if players_here is not None else None
        self.slot = RunSlot(self.name, here)
        self.recovered = self.files.store.recover_if_idle(self.name)

    # The parts and command groups, each built on its first use, so that a command pays only
    # for the modules it touches (`circus status` never loads the run loop, the prompts or
    # the reply reader). Each is built once and kept: the same object on every access.
    @functools.cached_property
    def models(self) -> Models:
        """The model door: litellm's, configured by `config`, unless one was handed in."""
        from engine.door.llm import LiteLLMModels

        return LiteLLMModels(self.config)

    @functools.cached_property
    def spend(self) -> Spending:
        return Spending(self.scene, lambda: self.models, self.config, self.ledger)

    @functools.cached_property
    def run_loop(self) -> RunLoop:
        from engine.rehearsal.run_loop import RunLoop

        return RunLoop(self.scene, self.slot, self.models, self.config, self.spend)

    @functools.cached_property
    def notes(self) -> Notes:
        from engine.rehearsal.note_commands import Notes

        return Notes(self.scene, self.config)

    @functools.cached_property
    def souls(self) -> Souls:
        from engine.rehearsal.soul_commands import Souls

        return Souls(self.scene, self.slot, self.models, self.config, self.spend)

    @functools.cached_property
    def cast(self) -> Cast:
        from engine.rehearsal.cast_commands import Cast

        return Cast(self.scene, self.slot, self.config)

    @functools.cached_property
    def stage(self) -> Stage:
        from engine.rehearsal.stage_commands import Stage

        return Stage(self.scene, self.slot)

    @functools.cached_property
    def room(self) -> Room:
        from engine.rehearsal.room_commands import Room

        return Room(self.scene)

    @functools.cached_property
    def harvest(self) -> Harvest:
        from engine.rehearsal.harvest import Harvest

        return Harvest(self.scene)

    @functools.cached_property
    def line_notes(self) -> LineNotes:
        from engine.rehearsal.line_note_commands import LineNotes

        return LineNotes(self.scene, self.harvest)

    @functools.cached_property
    def takes(self) -> Takes:
        from engine.rehearsal.take_commands import Takes

        return Takes(self.scene, self.slot, lambda: self.harvest)

    @functools.cached_property
    def alerts(self) -> Alerts:
        from engine.rehearsal.alert_commands import Alerts

        return Alerts(self.scene)

    @functools.cached_property
    def read(self) -> Reading:
        """The table read's commands, built on first use: the voice wing (and its audio
        libraries) loads for a read, not for every command that opens a scene."""
        from engine.rehearsal.read_commands import Reading

        return Reading(self.scene, self.harvest, self.spend, self.config)

    # ----------------------------------------------------------------- reading
    @property
    def running(self) -> bool:
        return self.slot.running

    async def state(self) -> SceneState:
        return await self.scene.state()

    async def view(self) -> SceneView:
        """The scene as a frontend may read it: a frozen snapshot (engine.rehearsal.view)."""
        return view_of(await self.files.load(), self.config)

    def frontend_lock(self, frontend: str) -> AbstractAsyncContextManager[None]:
        """Hold while a frontend reads, acts on and rewrites its own state in this scene, so two
        processes serving it (by mistake) take turns (the bot's catch-up of unposted turns)."""
        return self.scene.store.file_lock(frontend)

    async def record(self) -> tuple[Turn, ...]:
        """The working take's turns as the public record has them (what a thread shows)."""
        return tuple((await self.scene.state()).turns)

    async def resolve_actor(self, name: str, aliases_of: Collection[str] | None = None) -> Actor:
        """The cast member `name` means, by these actors' aliases (None: everyone's)
        (SceneAccess.resolve_actor)."""
        return await self.scene.resolve_actor(name, aliases_of)

    async def current_take(self) -> int:
        """The working take's number: the last saved take's + 1."""
        return await self.scene.current_take()

    async def status(self) -> Status:
        return await status_of(self.scene, self.slot, self.spend, await self.notes.dropped())

    # ----------------------------------------------------------------- running
    async def start_run(self, order: Order) -> asyncio.Task[RunResult]:
        """Start the run `order` asks for (`Run`, `Cue`, `Resume`, `Replay`) in the background
        and return its task (engine.rehearsal.run_loop)."""
        return await self.run_loop.start_run(order)

    async def run(self, turns: int = DEFAULT_TURNS, start: Actor | None = None) -> RunResult:
        """RUN mode: let the scene go `turns` turns by itself, optionally from `start`."""
        return await self.run_loop.run(turns, start)

    async def resume(self, turns: int = DEFAULT_TURNS) -> RunResult:
        """Back to RUN mode from where the scene stopped."""
        return await self.run_loop.resume(turns)

    async def cue(
        self, actor: Actor, direction: str = "", *, by: Author | None = None
    ) -> RunResult:
        """CUE mode: one turn by `actor`; `direction` is private to them for this turn; `by`:
        who cued (directions.md keeps it)."""
        return await (await self.run_loop.start_run(Cue(actor, direction, by)))

    async def cut(self) -> bool:
        """Stop the run now. Returns False when nothing was running."""
        return await self.run_loop.cut()

    async def wait(self) -> RunResult | None:
        return await self.run_loop.wait()


# What a command group, a run and a report load on first use (the order matters not).
PARTS = (
    "engine.door.llm",
    "engine.rehearsal.alert_commands",
    "engine.rehearsal.cast_commands",
    "engine.rehearsal.harvest",
    "engine.rehearsal.line_note_commands",
    "engine.rehearsal.note_commands",
    "engine.rehearsal.room_commands",
    "engine.rehearsal.run_loop",
    "engine.rehearsal.soul_commands",
    "engine.rehearsal.stage_commands",
    "engine.rehearsal.take_commands",
    "engine.harvest.report",
    "engine.folder.setting_schemas",
)


def preload() -> None:
    """Load every part now: for a long-running frontend (the bot), whose first run or first
    report would otherwise import them on its event loop, stalling every scene meanwhile. A
    one-shot command skips this and pays only for what it uses."""
    import importlib

    for name in PARTS:
        importlib.import_module(name)
