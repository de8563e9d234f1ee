"""A rehearsal: the director's commands on one scene folder, and the run loop behind them.

Invariants: at most one run per scene (in this process and across processes, via a lock file);
every turn is decided, performed, then committed whole through the store's journal, and only
then announced; a cut cancels the turn in flight and nothing half-made lands. The folder is the
state: a new Rehearsal on the same folder continues exactly where the last one stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from engine.cast_commands import CastCommands
from engine.casting import longest_silent, match_cue, next_on_stage
from engine.catalog import say
from engine.config import DEFAULT_TURNS, MAX_TURNS, Config
from engine.errors import (
    BadRequest,
    BudgetExceeded,
    CircusError,
    NobodyOnStage,
    SceneBusy,
)
from engine.events import (
    Cut,
    ErrorEvent,
    RunFinished,
    RunStarted,
    StageManagerDecided,
    StillWaiting,
    TurnStarted,
    WaitingForPlayer,
)
from engine.harvest import HarvestCommands
from engine.llm import ModelError, Models
from engine.models import actor_model, turn_timeout
from engine.notes import NOTE_MOST_CHARS
from engine.performance import Usage, ask_stage_manager, perform
from engine.scene import DIRECTIONS, SceneState
from engine.stage import after_event, quiet
from engine.stage_commands import PlayedLine, StageCommands
from engine.templates import is_template
from engine.turns import render_decision
from engine.view import Actor, SceneView, view_of

log = logging.getLogger("circus.engine")
TURN_DEADLINE_FACTOR = 3  # a turn may span a few model calls (retry, repair, fallback)


def error_event(
    scene: str,
    exc: CircusError,
    turn: int | None = None,
    actor: str | None = None,
    language: str = "en",
) -> ErrorEvent:
    """The event that tells a run's listeners about `exc`: its catalog code and fields."""
    return ErrorEvent(scene, exc.message_key, dict(exc.values), turn, actor, language)


@dataclass(frozen=True)
class RunResult:
    turns_done: int
    reason: str  # completed | cut | error | budget
    last_turn: int


class Rehearsal(StageCommands, HarvestCommands, CastCommands):
    """Director commands for one scene folder. Frontends hold one per scene."""

    def __init__(
        self,
        root: Path | str,
        *,
        models: Models | None = None,
        config: Config | None = None,
        account: str | None = None,
    ) -> None:
        """`models` is the model door (default: litellm, configured by `config`); `config` the
        operator's settings (default: the environment now). `account` names whose daily budget
        the runs spend (the bot: discord-<guild id>); its ledger lives beside the scene, under
        <scenes folder>/.circus/spend/."""
        super().__init__(root, models=models, config=config, account=account)
        self._language = "zh"
        self.recovered = self.files.store.recover_if_idle(self.name)

    async def view(self) -> SceneView:
        """The scene as a frontend may read it: a frozen snapshot (engine.view)."""
        return view_of(await self.files.load(), self.config)

    # ----------------------------------------------------------------- running
    async def start_run(
        self,
        turns: int = DEFAULT_TURNS,
        start: Actor | None = None,
        mode: str = "run",
        direction: str = "",
    ) -> asyncio.Task[RunResult]:
        """Start a run in the background and return its task (SceneBusy if one is going).

        A run that is only waiting for a person's line gives way: the director may cue
        someone else (the wait is cut; nothing was in flight)."""
        if self.running and self._waiting is None:
            raise SceneBusy(self.name)
        if not isinstance(turns, int) or not 1 <= turns <= MAX_TURNS:
            raise BadRequest("error.turn_count", most=MAX_TURNS, turns=turns)
        if is_template(self.root, self.config):  # a template is copied (`new`), never played
            raise BadRequest("error.run_template", scene=self.name)
        if len(direction.strip()) > NOTE_MOST_CHARS:  # a direction is a one-off note
            raise BadRequest(
                "error.direction_too_long", most=NOTE_MOST_CHARS, length=len(direction.strip())
            )
        # Check everything before taking the lock, so a refused run writes nothing at all.
        state = await self.state()
        self._language = state.language
        first = state.member(start) if start is not None else None
        await self._check_start(state, first)
        await self.refuse_if_spent(state)
        if self.running and self._waiting is not None:
            await self.cut()
        if self.running:
            raise SceneBusy(self.name)
        if self.files.store.lock(self.name, announce=True):
            self.files.forget()  # a crashed turn was just completed on disk
        self._task = asyncio.create_task(self._run(turns, first, mode, direction))
        # Let the task take its first step: a task cancelled before it starts would never
        # reach the code that releases the scene lock.
        await asyncio.sleep(0)
        return self._task

    async def run(self, turns: int = DEFAULT_TURNS, start: Actor | None = None) -> RunResult:
        """RUN mode: let the scene go `turns` turns by itself, optionally from `start`."""
        return await (await self.start_run(turns, start, "run"))

    async def resume(self, turns: int = DEFAULT_TURNS) -> RunResult:
        """Back to RUN mode from where the scene stopped."""
        return await (await self.start_run(turns, None, "resume"))

    async def cue(self, actor: Actor, direction: str = "") -> RunResult:
        """CUE mode: one turn by `actor`; `direction` is private to them for this turn."""
        return await (await self.start_run(1, actor, "cue", direction.strip()))

    async def cut(self) -> bool:
        """Stop the run now. Returns False when nothing was running."""
        task = self._task
        if task is None or task.done():
            return False
        task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        except (TimeoutError, asyncio.CancelledError):
            pass
        return True

    async def wait(self) -> RunResult | None:
        if self._task is None:
            return None
        return await self._task

    async def _run(self, turns: int, first: str | None, mode: str, direction: str) -> RunResult:
        done, reason, failures, take = 0, "completed", 0, 0
        avoid: str | None = None
        try:
            # The run's spend gate goes with every model call it makes, and only those.
            self._spend = await self._spend_guard()
            take = await self.current_take()
            self.events.emit(RunStarted(self.name, take, turns, mode))
            await self._open_take(await self.state())
            while done < turns:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise asyncio.CancelledError  # a cut that landed between awaits
                self._progress = f"turn {done + 1}/{turns}"
                forced = first if done == 0 else None
                try:
                    await self._turn(
                        take=take,
                        index=done + 1,
                        total=turns,
                        forced=forced,
                        forced_reason="director_cue" if mode == "cue" else "start",
                        direction=direction if done == 0 else "",
                        avoid=avoid,
                    )
                    failures, avoid = 0, None
                except ModelError as exc:
                    failures += 1
                    turn = self.files.last_turn_seen() + 1
                    self.events.emit(error_event(self.name, exc, turn, exc.actor))
                    avoid = exc.actor
                    if failures >= 2 or forced:
                        reason = "error"
                        break
                    continue  # a skipped turn is not a turn: try the next speaker
                done += 1
        except asyncio.CancelledError:
            reason = "cut"
        except BudgetExceeded as exc:  # stopped before a call: nothing of that turn landed
            turn = self.files.last_turn_seen() + 1
            self.events.emit(error_event(self.name, exc, turn, language=self._language))
            reason = "budget"
        except CircusError as exc:  # e.g. a writer saved a broken soul.md mid-run
            self.events.emit(error_event(self.name, exc))
            reason = "error"
        except Exception as exc:  # a disk error, or a bug: the run still ends, and says why
            log.exception("run in %s failed", self.root)
            fields = {"error": repr(exc), "kind": type(exc).__name__}
            self.events.emit(ErrorEvent(self.name, "error.run_crashed", fields))
            reason = "error"
        finally:
            self.files.store.unlock()
            self._progress = ""
        last = self.files.last_turn_seen()
        if reason == "cut":
            self.events.emit(Cut(self.name, take, last))
        self.events.emit(RunFinished(self.name, take, done, reason))
        return RunResult(done, reason, last)

    async def _turn(
        self,
        *,
        take: int,
        index: int,
        total: int,
        forced: str | None,
        forced_reason: str,
        direction: str,
        avoid: str | None,
    ) -> None:
        state = await self.state()
        await self._budget_turn(state, take)
        number = state.last_turn + 1
        speakers = [t.actor for t in state.turns]
        present = state.on_stage
        if not present:
            raise NobodyOnStage()
        sm_usage: Usage | None = None
        sm_log = ""
        if forced:
            actor, reason = forced, forced_reason
        else:
            last_cue = match_cue(state.turns[-1].cue, state.aliases()) if state.turns else None
            items = state.record
            start = state.cast if state.start is None else state.start
            choice = next_on_stage(
                present,
                quiet(state.cast, items, start),
                speakers[-1] if speakers else None,
                last_cue,
                state.neglect_turns,
                after_event=after_event(items),
                played=state.played,
            )
            actor, reason = choice.actor, choice.reason  # type: ignore[assignment]
            if actor == avoid and avoid is not None:
                actor, reason = (
                    longest_silent([a for a in present if a != avoid] or present, speakers),
                    "fallback",
                )
            if actor is None:
                decision = await ask_stage_manager(
                    state, avoid, models=self.models, config=self.config, gate=self._spend
                )
                actor, reason, sm_usage = decision.actor, "stage_manager", decision.usage
                if decision.fallback:
                    reason = "fallback"
                sm_log = render_decision(number, actor, decision.reason)
                self.events.emit(
                    StageManagerDecided(
                        self.name, take, number, actor, decision.reason, decision.fallback
                    )
                )
        if actor in state.played:
            line = await self._wait_for_player(take, number, actor, state.players[actor])
            if line is not None:
                self.events.emit(
                    TurnStarted(self.name, take, number, actor, "played", index, total)
                )
                state = await self.state()  # the record as it stands when the person spoke
                landed = self.land_played(
                    state,
                    take=take,
                    number=state.last_turn + 1,
                    actor=actor,
                    line=line,
                    index=index,
                    total=total,
                    sm_log=sm_log,
                    sm_usage=sm_usage,
                )
                if await landed:
                    raise asyncio.CancelledError
                return
        self.events.emit(TurnStarted(self.name, take, number, actor, reason, index, total))
        if direction:
            await self._log_direction(state, take, number, actor, direction)
        # One deadline for the whole turn, however many retries, repairs and fallbacks it takes.
        deadline = TURN_DEADLINE_FACTOR * turn_timeout(state.settings, self.config)
        try:
            async with asyncio.timeout(deadline), self._still_waiting(take, number, actor):
                result = await perform(
                    state,
                    actor,
                    direction,
                    neglected=reason == "neglect",
                    models=self.models,
                    config=self.config,
                    gate=self._spend,
                )
        except TimeoutError:
            raise ModelError(
                actor_model(state.souls[actor], state.settings, self.config),
                f"the turn took longer than {deadline:g} s",
                actor,
            ) from None
        except ModelError as exc:
            exc.actor = actor
            raise
        cut_during_commit = await self._commit(
            state,
            take=take,
            number=number,
            actor=actor,
            reason=reason,
            result=result,
            sm_log=sm_log,
            sm_usage=sm_usage,
            index=index,
            total=total,
        )
        if cut_during_commit:
            raise asyncio.CancelledError  # the turn landed whole; now honour the cut

    async def _log_direction(
        self, state: SceneState, take: int, number: int, actor: str, direction: str
    ) -> None:
        """Keep the director's cue direction in directions.md (by take and turn), for the
        director alone: it reaches `actor` in this turn's prompt only, and no model reads the
        file. Appended in one write, beside the turn (a cut turn keeps its direction)."""
        head = (
            ""
            if self.files.store.path(DIRECTIONS).exists()
            else say("directions.title", state.language) + "\n"
        )
        entry = say("directions.entry", state.language, take=take, turn=number, actor=actor)
        await self.files.store.append_line(DIRECTIONS, f"{head}\n{entry}\n\n{direction}\n")

    async def _wait_for_player(
        self, take: int, number: int, actor: str, player: str
    ) -> PlayedLine | None:
        """Wait for the person playing `actor` (a `say`), or None if they gave the role back."""
        future: asyncio.Future[PlayedLine | None] = asyncio.get_running_loop().create_future()
        self._waiting = (actor, future)
        self._progress = f"waiting for {actor}"
        self.events.emit(WaitingForPlayer(self.name, take, number, actor, player))
        try:
            return await future
        finally:
            self._waiting = None

    @contextlib.asynccontextmanager
    async def _still_waiting(self, take: int, number: int, actor: str) -> AsyncIterator[None]:
        """Say every few seconds that `actor`'s model has not answered yet, until it has."""
        interval, started = self.config.waiting_seconds, time.monotonic()

        async def tick() -> None:
            while True:
                await asyncio.sleep(interval)
                waited = time.monotonic() - started
                self.events.emit(StillWaiting(self.name, take, number, actor, waited))

        ticker = asyncio.create_task(tick(), name=f"waiting-{self.name}")
        try:
            yield
        finally:
            ticker.cancel()

    async def _budget_turn(self, state: SceneState, take: int) -> None:
        """Tell the run's spend gate the budgets, the scene's spend so far (its call record:
        every call made, landed or not) and the turn its calls are for."""
        if self._spend is not None:
            self._language = state.language
            self._spend.begin_turn(
                self._limits(state),
                await self._scene_spent(state),
                take=take,
                turn=state.last_turn + 1,
            )
