"""The run loop: a run's turns, one at a time — decided, performed, committed whole, announced.

Invariants: at most one run per scene (in this process and across processes, via a lock file);
every turn is decided, performed, then committed whole through the store's journal
(SceneAccess.commit_turn), and only then announced; a cut cancels the turn in flight and nothing
half-made lands. Who speaks next is decided by pure functions (engine.turn.casting, engine.folder.stage);
this module only sequences them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

from engine.catalog import say
from engine.clock import utcnow
from engine.config import DEFAULT_TURNS, MAX_TURNS, Config
from engine.door.llm import ModelError, Models
from engine.errors import BadRequest, BudgetExceeded, CircusError, NobodyOnStage, SceneBusy
from engine.events import (
    Cut,
    ErrorEvent,
    PlayerAway,
    RunFinished,
    RunStarted,
    StageManagerDecided,
    StillWaiting,
    TurnStarted,
    WaitingForPlayer,
)
from engine.folder.attribution import cue_mark
from engine.folder.names import Actor
from engine.folder.role_models import actor_model, turn_timeout
from engine.folder.sanitize import clean_text
from engine.folder.scene import DIRECTIONS, SceneState
from engine.folder.stage import after_event
from engine.folder.templates import is_template
from engine.folder.turns import render_decision
from engine.folder.whispers import NOTE_MOST_CHARS
from engine.redact import redact
from engine.rehearsal.orders import Cue, Order, Resume, Run
from engine.rehearsal.run_slot import PlayedLine, RunSlot
from engine.rehearsal.run_watch import RunWatch, Until
from engine.rehearsal.scene_access import Floor, Landing, SceneAccess
from engine.rehearsal.spending import Spending
from engine.rehearsal.stage_commands import check_start, land_played, open_take
from engine.reply.cue import match_cue
from engine.spend.budget import SpendGuard
from engine.turn.casting import longest_silent, next_on_stage
from engine.turn.performance import Performance, ask_stage_manager, perform
from engine.vocabulary import Author, FinishReason, RunMode, TurnReason

log = logging.getLogger("circus.engine")
TURN_DEADLINE_FACTOR = 3  # a turn may span a few model calls (retry, repair, fallback)


@dataclass(frozen=True)
class RunResult:
    turns_done: int
    reason: FinishReason
    last_turn: int


@dataclass
class _Tally:
    """How far a run got: kept outside the turn loop, so a cut still reports it."""

    take: int = 0
    done: int = 0


def error_event(
    scene: str,
    exc: CircusError,
    turn: int | None = None,
    actor: str | None = None,
    language: str = "en",
) -> ErrorEvent:
    """The event that tells a run's listeners about `exc`: its catalog code and fields."""
    return ErrorEvent(scene, exc.message_key, dict(exc.values), turn, actor, language)


def choose_speaker(state: SceneState, avoid: str | None) -> tuple[str | None, TurnReason]:
    """(actor, reason) by the scene's own rules (pure); (None, …) leaves it to the stage
    manager. `avoid`: an actor whose model just failed, passed over if anyone else is there."""
    present = state.on_stage
    last_cue = match_cue(state.turns[-1].cue, state.aliases()) if state.turns else None
    choice = next_on_stage(
        present,
        state.quiet,
        state.turns[-1].actor if state.turns else None,
        last_cue,
        state.neglect_turns,
        after_event=after_event(state.record),
        played=state.played,
    )
    if choice.actor == avoid and avoid is not None:
        others = [a for a in present if a != avoid] or present
        return longest_silent(others, [t.actor for t in state.turns]), "fallback"
    return choice.actor, choice.reason


class RunLoop:
    """The runs of one scene: start, cue, resume, cut, wait — and each turn of a run."""

    def __init__(
        self,
        scene: SceneAccess,
        slot: RunSlot,
        models: Models,
        config: Config,
        spending: Spending,
    ) -> None:
        self.scene, self.slot, self.models = scene, slot, models
        self.config, self.spending = config, spending
        self._spend: SpendGuard | None = None  # the run's spend gate (None outside a run)
        self._language = "zh"  # the scene's, as the run last read it (for a budget stop)
        self._cue_by: Author | None = None  # who cued the run's first turn (a Cue order)
        self.watch = RunWatch(scene.events, scene.name, spending)  # facts alerts wait for

    # ----------------------------------------------------------------- the director's verbs
    async def start_run(self, order: Order) -> asyncio.Task[RunResult]:
        """Start the run `order` asks for in the background and return its task (SceneBusy if
        one is going).

        A run that is only waiting for a person's line gives way: the director may cue
        someone else (the wait is cut; nothing was in flight)."""
        scene, slot = self.scene, self.slot
        turns, start, direction = order.turns, order.start, order.direction.strip()
        if slot.running and slot.waiting is None:
            raise SceneBusy(scene.name)
        self._check_request(turns, direction)
        # Check everything before taking the lock, so a refused run writes nothing at all.
        state = await scene.state()
        self._language = state.language
        first = state.member(start) if start is not None else None
        await check_start(state, first, self.config)
        await self.spending.refuse_if_spent(state)
        if slot.running and slot.waiting is not None:
            await self.cut()
        if slot.running:
            raise SceneBusy(scene.name)
        if scene.store.lock(scene.name, announce=True):
            scene.files.forget()  # a crashed turn was just completed on disk
        self._cue_by = order.by
        until = Until(scene.events, scene.name, order.until)
        slot.task = asyncio.create_task(self._run(turns, first, order.mode, direction, until))
        # Let the task take its first step: a task cancelled before it starts would never
        # reach the code that releases the scene lock.
        await asyncio.sleep(0)
        return slot.task

    def _check_request(self, turns: int, direction: str) -> None:
        if not isinstance(turns, int) or not 1 <= turns <= MAX_TURNS:
            raise BadRequest("error.turn_count", most=MAX_TURNS, turns=turns)
        if is_template(self.scene.root, self.config):  # a template is copied, never played
            raise BadRequest("error.run_template", scene=self.scene.name)
        if len(direction.strip()) > NOTE_MOST_CHARS:  # a direction is a one-off note
            raise BadRequest(
                "error.direction_too_long", most=NOTE_MOST_CHARS, length=len(direction.strip())
            )

    async def run(self, turns: int = DEFAULT_TURNS, start: Actor | None = None) -> RunResult:
        """RUN mode: let the scene go `turns` turns by itself, optionally from `start`."""
        return await (await self.start_run(Run(turns, start)))

    async def resume(self, turns: int = DEFAULT_TURNS) -> RunResult:
        """Back to RUN mode from where the scene stopped."""
        return await (await self.start_run(Resume(turns)))

    async def cue(self, actor: Actor, direction: str = "") -> RunResult:
        """CUE mode: one turn by `actor`; `direction` is private to them for this turn."""
        return await (await self.start_run(Cue(actor, direction)))

    async def cut(self) -> bool:
        """Stop the run now. Returns False when nothing was running."""
        task = self.slot.task
        if task is None or task.done():
            return False
        task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        except (TimeoutError, asyncio.CancelledError):
            pass
        return True

    async def wait(self) -> RunResult | None:
        if self.slot.task is None:
            return None
        return await self.slot.task

    # ----------------------------------------------------------------- a run
    async def _run(
        self, turns: int, first: str | None, mode: RunMode, direction: str, until: Until
    ) -> RunResult:
        scene, tally = self.scene, _Tally()
        reason: FinishReason = "completed"
        self._spend = None
        try:
            # The run's spend gate goes with every model call it makes, and only those.
            self._spend = await self.spending.guard()
            tally.take = await scene.current_take()
            scene.events.emit(RunStarted(scene.name, tally.take, turns, mode))
            opened = await scene.state()
            await open_take(scene, opened)
            await self.watch.begin(opened)  # its budgets as the run starts (no second load)
            reason = await self._turns(tally, turns, first, mode, direction, until)
        except asyncio.CancelledError:
            reason = "cut"
        except BudgetExceeded as exc:  # stopped before a call: nothing of that turn landed
            turn = scene.files.last_turn_seen() + 1
            scene.events.emit(error_event(scene.name, exc, turn, language=self._language))
            reason = "budget"
        except CircusError as exc:  # e.g. a writer saved a broken soul.md mid-run
            scene.events.emit(error_event(scene.name, exc))
            reason = "error"
        except Exception as exc:  # a disk error, or a bug: the run still ends, and says why
            log.exception("run in %s failed", scene.root)
            fields = {"error": redact(repr(exc), self.config.secrets), "kind": type(exc).__name__}
            scene.events.emit(ErrorEvent(scene.name, "error.run_crashed", fields))
            reason = "error"
        finally:
            until.close()
            scene.store.unlock()
            self.slot.progress = ""
        last = scene.files.last_turn_seen()
        if reason == "cut":
            scene.events.emit(Cut(scene.name, tally.take, last))
        scene.events.emit(self._finished(tally, reason))
        self._spend = None
        return RunResult(tally.done, reason, last)

    def _finished(self, tally: _Tally, reason: FinishReason) -> RunFinished:
        """The run's end, with what every call it made was billed (its spend gate's record)."""
        gate = self._spend
        if gate is None:  # it ended before its first call could be made
            return RunFinished(self.scene.name, tally.take, tally.done, reason)
        cost = gate.spent.usd if gate.priced else None
        return RunFinished(
            self.scene.name, tally.take, tally.done, reason, gate.spent.tokens, cost, gate.unpriced
        )

    async def _turns(
        self,
        tally: _Tally,
        turns: int,
        first: str | None,
        mode: RunMode,
        direction: str,
        until: Until,
    ) -> FinishReason:
        """The run's turns, counted in `tally`; a turn whose model fails is skipped (the next
        speaker is tried), twice in a row — or a forced one — ends the run ("error"); a turn
        that meets one of `until`'s conditions ends it ("completed": it did what was asked)."""
        failures, avoid = 0, None
        while tally.done < turns:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError  # a cut that landed between awaits
            self.slot.progress = f"turn {tally.done + 1}/{turns}"
            forced = first if tally.done == 0 else None
            try:
                await self._turn(
                    take=tally.take,
                    index=tally.done + 1,
                    total=turns,
                    forced=forced,
                    forced_reason="director_cue" if mode == "cue" else "start",
                    direction=direction if tally.done == 0 else "",
                    avoid=avoid,
                )
                failures, avoid = 0, None
            except ModelError as exc:
                failures += 1
                turn = self.scene.files.last_turn_seen() + 1
                self.scene.events.emit(error_event(self.scene.name, exc, turn, exc.actor))
                avoid = exc.actor
                if failures >= 2 or forced:
                    return "error"
                continue  # a skipped turn is not a turn: try the next speaker
            tally.done += 1
            if await self._after_turn(tally.take, until):
                break
        return "completed"

    async def _after_turn(self, take: int, until: Until) -> bool:
        """What the landed turn made true (RunWatch); True if the run should stop there."""
        # The record is loaded only for what needs it: a turn is not a second load.
        await self.watch.after_turn(take, self.scene.state)
        if not until.conditions:  # (nothing was kept for it either: see Until)
            return False
        return await until.met(await self.scene.state()) is not None

    # ----------------------------------------------------------------- a turn
    async def _turn(
        self,
        *,
        take: int,
        index: int,
        total: int,
        forced: str | None,
        forced_reason: TurnReason,
        direction: str,
        avoid: str | None,
    ) -> None:
        state = await self.scene.state()
        await self._budget_turn(state, take)
        number = state.last_turn + 1
        if not state.on_stage:
            raise NobodyOnStage()
        if forced:
            floor = Floor(forced, forced_reason)
        else:
            floor = await self._pick(state, take, number, avoid)
        if floor.actor in state.played:
            player = state.players[floor.actor]
            if not self.slot.answers(player):  # nobody here can type it: never wait forever
                self.scene.events.emit(
                    PlayerAway(self.scene.name, take, number, floor.actor, player)
                )
            elif await self._played_turn(state, take, number, floor, index, total):
                return
        events, name = self.scene.events, self.scene.name
        events.emit(TurnStarted(name, take, number, floor.actor, floor.reason, index, total))
        if forced and forced_reason == "director_cue":
            await self._log_direction(state, take, number, floor.actor, direction)
        result = await self._perform(state, take, number, floor, direction)
        at = Landing(take, number, floor, index, total)
        cut_during_commit = await self.scene.commit_turn(state, at, result)
        if cut_during_commit:
            raise asyncio.CancelledError  # the turn landed whole; now honour the cut

    async def _pick(self, state: SceneState, take: int, number: int, avoid: str | None) -> Floor:
        """Who speaks: the scene's rules, else the stage manager (a model call)."""
        actor, reason = choose_speaker(state, avoid)
        if actor is not None:
            return Floor(actor, reason)
        decision = await ask_stage_manager(
            state, avoid, models=self.models, config=self.config, gate=self._spend
        )
        self.scene.events.emit(
            StageManagerDecided(
                self.scene.name, take, number, decision.actor, decision.reason, decision.fallback
            )
        )
        return Floor(
            decision.actor,
            "fallback" if decision.fallback else "stage_manager",
            decision.usage,
            render_decision(number, decision.actor, decision.reason),
        )

    async def _played_turn(
        self, state: SceneState, take: int, number: int, floor: Floor, index: int, total: int
    ) -> bool:
        """A person plays `floor.actor`: wait for their line and land it (True), or False if
        they gave the role back meanwhile (the model plays this turn)."""
        line = await self._wait_for_player(take, number, floor.actor, state.players[floor.actor])
        if line is None:
            return False
        scene = self.scene
        scene.events.emit(
            TurnStarted(scene.name, take, number, floor.actor, "played", index, total)
        )
        state = await scene.state()  # the record as it stands when the person spoke
        # The person's line lands on the record as it stands when they spoke.
        at = Landing(take, state.last_turn + 1, replace(floor, reason="played"), index, total)
        cut = await land_played(scene, state, at, line)
        if cut:
            raise asyncio.CancelledError
        return True

    async def _perform(
        self, state: SceneState, take: int, number: int, floor: Floor, direction: str
    ) -> Performance:
        """The actor's model plays the turn, within one deadline for the whole turn, however
        many retries, repairs and fallbacks it takes; ModelError names the actor."""
        actor = floor.actor
        deadline = TURN_DEADLINE_FACTOR * turn_timeout(state.settings, self.config)
        try:
            async with asyncio.timeout(deadline), self._still_waiting(take, number, actor):
                return await perform(
                    state,
                    actor,
                    direction,
                    neglected=floor.reason == "neglect",
                    models=self.models,
                    config=self.config,
                    gate=self._spend,
                )
        except TimeoutError:
            raise ModelError(
                actor_model(state.souls[actor], state.settings, self.config),
                f"the turn took longer than {deadline:g} s",
                actor,
                kind="timeout",
            ) from None
        except ModelError as exc:
            exc.actor = actor
            raise

    async def _log_direction(
        self, state: SceneState, take: int, number: int, actor: str, direction: str
    ) -> None:
        """Keep a cue and its direction in directions.md (by take and turn, with who cued), for
        the room alone: the direction reaches `actor` in this turn's prompt only, and no model
        reads the file. Appended in one write, beside the turn (a cut turn keeps its cue)."""
        store = self.scene.store
        title = say("directions.title", state.language)
        head = "" if store.path(DIRECTIONS).exists() else title + "\n"
        entry = say("directions.entry", state.language, take=take, turn=number, actor=actor)
        mark = cue_mark(self._cue_by, take, number, actor, utcnow())
        # The direction is the cuer's text: no line of it may read as a cue's mark (its author).
        shown = clean_text(direction).replace("<!--", "<!‐‐")
        body = f"\n{shown}\n" if direction else ""
        await store.append_line(DIRECTIONS, f"{head}\n{entry}\n{body}{mark}\n")

    async def _wait_for_player(
        self, take: int, number: int, actor: str, player: str
    ) -> PlayedLine | None:
        """Wait for the person playing `actor` (a `say`), or None if they gave the role back."""
        future: asyncio.Future[PlayedLine | None] = asyncio.get_running_loop().create_future()
        self.slot.waiting = (actor, future)
        self.slot.progress = f"waiting for {actor}"
        self.scene.events.emit(WaitingForPlayer(self.scene.name, take, number, actor, player))
        try:
            return await future
        finally:
            self.slot.waiting = None

    @contextlib.asynccontextmanager
    async def _still_waiting(self, take: int, number: int, actor: str) -> AsyncIterator[None]:
        """Say every few seconds that `actor`'s model has not answered yet, until it has."""
        interval, started = self.config.waiting_seconds, time.monotonic()

        async def tick() -> None:
            while True:
                await asyncio.sleep(interval)
                waited = time.monotonic() - started
                self.scene.events.emit(StillWaiting(self.scene.name, take, number, actor, waited))

        ticker = asyncio.create_task(tick(), name=f"waiting-{self.scene.name}")
        try:
            yield
        finally:
            ticker.cancel()

    async def _budget_turn(self, state: SceneState, take: int) -> None:
        """Tell the run's spend gate the budgets, the scene's spend so far and the turn."""
        if self._spend is not None:
            self._language = state.language
            await self.spending.begin_turn(self._spend, state, take)
