"""A rehearsal: the director's commands on one scene folder, and the run loop behind them.

Invariants: at most one run per scene (in this process and across processes, via a lock file);
every turn is decided, performed, then committed whole through the store's journal, and only
then announced; a cut cancels the turn in flight and nothing half-made lands. The folder is the
state: a new Rehearsal on the same folder continues exactly where the last one stopped.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from engine import frontmatter
from engine.casting import longest_silent, match_cue, next_speaker
from engine.errors import BadRequest, BadSceneFile, CircusError, SceneBusy, UnknownActor
from engine.events import (
    Cut,
    ErrorEvent,
    EventHub,
    NoteAdded,
    RunFinished,
    RunStarted,
    StageManagerDecided,
    TakeSaved,
    TurnCompleted,
    TurnStarted,
)
from engine.llm import ModelError
from engine.models import actor_model, turn_timeout
from engine.notes import add_note, empty_notes
from engine.performance import Performance, Usage, ask_stage_manager, perform
from engine.scene import (
    NOTES,
    STAGE_MANAGER_LOG,
    TRANSCRIPT,
    SceneFiles,
    SceneState,
    backstage_path,
    soul_path,
)
from engine.soul import check_settings, replace_prior_story
from engine.takes import (
    TakeInfo,
    cut_log,
    resolve_take,
    save_take,
    take_dir,
    take_info,
    take_numbers,
)
from engine.turns import Turn, parse_transcript, render_thought, render_turn

USAGE_LOG = ".circus/usage.jsonl"
log = logging.getLogger("circus.engine")
MAX_RUN = 500
TURN_DEADLINE_FACTOR = 3  # a turn may span a few model calls (retry, repair, fallback)


@dataclass(frozen=True)
class RunResult:
    turns_done: int
    reason: str  # completed | cut | error
    last_turn: int


@dataclass(frozen=True)
class Status:
    scene: str
    take: int
    turns: int
    cast: tuple[str, ...]
    mode: str  # idle | running
    progress: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    model_calls: int
    saved_takes: tuple[int, ...]


@dataclass(frozen=True)
class ReplayResult:
    take: int  # the take the new attempt will be saved as
    from_take: int
    kept_turns: int
    autosaved: int | None  # the take the unsaved work was saved as first, if any


class Rehearsal:
    """Director commands for one scene folder. Frontends hold one per scene."""

    def __init__(self, root: Path | str, hub: EventHub | None = None) -> None:
        self.files = SceneFiles(Path(root))
        self.root = self.files.root
        self.name = self.files.name
        self.events = hub or EventHub()
        self._task: asyncio.Task[RunResult] | None = None
        self._progress = ""
        self.recovered = self.files.store.recover_if_idle(self.name)

    # ----------------------------------------------------------------- reading
    async def state(self) -> SceneState:
        return await self.files.load()

    async def resolve_actor(self, name: str) -> str:
        state = await self.state()
        matched = match_cue(name, state.aliases())
        if matched is None or matched not in state.cast:
            raise UnknownActor(name, state.cast)
        return matched

    async def current_take(self) -> int:
        numbers = await take_numbers(self.files.store)
        return (numbers[-1] if numbers else 0) + 1

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    # ----------------------------------------------------------------- running
    async def start_run(
        self, turns: int = 5, start: str | None = None, mode: str = "run", direction: str = ""
    ) -> asyncio.Task[RunResult]:
        """Start a run in the background and return its task (SceneBusy if one is going)."""
        if self.running:
            raise SceneBusy(self.name)
        if not isinstance(turns, int) or not 1 <= turns <= MAX_RUN:
            raise BadRequest(
                f"The number of turns must be between 1 and {MAX_RUN}, not {turns}.",
                f"輪數必須在 1 到 {MAX_RUN} 之間，不是 {turns}。",
            )
        # Check everything before taking the lock, so a refused run writes nothing at all.
        await self.state()
        first = await self.resolve_actor(start) if start else None
        if self.files.store.lock(self.name):
            self.files.forget()  # a crashed turn was just completed on disk
        self._task = asyncio.create_task(self._run(turns, first, mode, direction))
        # Let the task take its first step: a task cancelled before it starts would never
        # reach the code that releases the scene lock.
        await asyncio.sleep(0)
        return self._task

    async def run(self, turns: int = 5, start: str | None = None) -> RunResult:
        """RUN mode: let the scene go `turns` turns by itself, optionally from `start`."""
        return await (await self.start_run(turns, start, "run"))

    async def resume(self, turns: int = 5) -> RunResult:
        """Back to RUN mode from where the scene stopped."""
        return await (await self.start_run(turns, None, "resume"))

    async def cue(self, actor: str, direction: str = "") -> RunResult:
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
            take = await self.current_take()
            self.events.emit(RunStarted(self.name, take, turns, mode))
            while done < turns:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise asyncio.CancelledError  # a cut that landed between awaits
                self._progress = f"turn {done + 1}/{turns}"
                forced = first if done == 0 else None
                try:
                    await self._turn(
                        take,
                        done + 1,
                        turns,
                        forced,
                        "director_cue" if mode == "cue" else "start",
                        direction if done == 0 else "",
                        avoid,
                    )
                    failures, avoid = 0, None
                except ModelError as exc:
                    failures += 1
                    turn = self.files.last_turn_seen() + 1
                    self.events.emit(ErrorEvent(self.name, str(exc), turn, exc.actor))
                    avoid = exc.actor
                    if failures >= 2 or forced:
                        reason = "error"
                        break
                    continue  # a skipped turn is not a turn: try the next speaker
                done += 1
        except asyncio.CancelledError:
            reason = "cut"
        except CircusError as exc:  # e.g. a writer saved a broken soul.md mid-run
            self.events.emit(ErrorEvent(self.name, str(exc)))
            reason = "error"
        except Exception as exc:  # a disk error, or a bug: the run still ends, and says why
            log.exception("run in %s failed", self.root)
            self.events.emit(ErrorEvent(self.name, f"The run stopped: {exc!r}"))
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
        take: int,
        index: int,
        total: int,
        forced: str | None,
        forced_reason: str,
        direction: str,
        avoid: str | None,
    ) -> None:
        state = await self.state()
        number = state.last_turn + 1
        speakers = [t.actor for t in state.turns]
        sm_usage: Usage | None = None
        sm_log = ""
        if forced:
            actor, reason = forced, forced_reason
        else:
            last_cue = match_cue(state.turns[-1].cue, state.aliases()) if state.turns else None
            choice = next_speaker(state.cast, speakers, last_cue, None, state.neglect_turns)
            actor, reason = choice.actor, choice.reason  # type: ignore[assignment]
            if actor == avoid and avoid is not None:
                actor, reason = (
                    longest_silent([a for a in state.cast if a != avoid] or state.cast, speakers),
                    "fallback",
                )
            if actor is None:
                decision = await ask_stage_manager(state, exclude=avoid)
                actor, reason, sm_usage = decision.actor, "stage_manager", decision.usage
                if decision.fallback:
                    reason = "fallback"
                sm_log = f"## before turn {number} → {actor}\n{decision.reason.strip()}\n\n"
                self.events.emit(
                    StageManagerDecided(
                        self.name, take, number, actor, decision.reason, decision.fallback
                    )
                )
        self.events.emit(TurnStarted(self.name, take, number, actor, reason, index, total))
        # One deadline for the whole turn, however many retries, repairs and fallbacks it takes.
        deadline = TURN_DEADLINE_FACTOR * turn_timeout(state.settings)
        try:
            async with asyncio.timeout(deadline):
                result = await perform(state, actor, direction, neglected=reason == "neglect")
        except TimeoutError:
            raise ModelError(
                actor_model(state.souls[actor], state.settings),
                f"the turn took longer than {deadline:g} s",
                actor,
            ) from None
        except ModelError as exc:
            exc.actor = actor
            raise
        cut_during_commit = await self._commit(state, number, actor, result, sm_log, sm_usage)
        reply = result.reply
        self.events.emit(
            TurnCompleted(
                self.name, take, number, actor, reply.action, reply.dialogue, reply.cue,
                reply.thought, result.repaired, result.fallback, result.usage.prompt_tokens,
                result.usage.completion_tokens, result.usage.cost_usd, index, total,
            )
        )  # fmt: skip
        if cut_during_commit:
            raise asyncio.CancelledError  # the turn landed whole; now honour the cut

    async def _commit(
        self,
        state: SceneState,
        number: int,
        actor: str,
        result: Performance,
        sm_log: str,
        sm_usage: Usage | None,
    ) -> bool:
        """Land the turn whole. Returns True if a cut arrived meanwhile (honoured after)."""
        reply = result.reply
        turn = Turn(number, actor, reply.action, reply.dialogue, reply.cue)
        usage = [
            {"turn": number, "role": actor, **result.usage.__dict__},
        ]
        if sm_usage is not None:
            usage.append({"turn": number, "role": "stage_manager", **sm_usage.__dict__})
        appends = [
            (backstage_path(actor), render_thought(number, reply.thought)),
            (TRANSCRIPT, render_turn(turn, state.language)),
            (USAGE_LOG, "".join(json.dumps(u, ensure_ascii=False) + "\n" for u in usage)),
        ]
        if sm_log:
            appends.append((STAGE_MANAGER_LOG, sm_log))
        # Once the model has answered, a cut waits for the commit: the turn lands whole, is
        # announced, and only then does the run stop.
        # A writer may have edited the logs while the model was thinking: then the cached
        # parse is stale and must be re-read, not extended.
        fresh = self.files.unchanged([TRANSCRIPT, backstage_path(actor)])
        commit = asyncio.ensure_future(self.files.store.commit_appends(appends))
        cut = False
        try:
            await asyncio.shield(commit)
        except asyncio.CancelledError:
            cut = True
            await asyncio.wait([commit])
            commit.result()
        if fresh:
            state.turns.append(turn)
            state.thoughts.setdefault(actor, {})[number] = reply.thought
            self.files.remember_append(TRANSCRIPT, state.turns)
            self.files.remember_append(backstage_path(actor), state.thoughts[actor])
        else:
            self.files.forget()
        return cut

    # ----------------------------------------------------------------- whispers
    async def note(self, text: str, actor: str | None = None) -> None:
        """Whisper to everyone (actor None) or to one actor; used from the next turn."""
        if not text or not text.strip():
            raise BadRequest("A note needs some text.", "耳語需要內容。")
        state = await self.state()
        target = await self.resolve_actor(actor) if actor else None
        with self.files.store.notes_lock():  # a whisper from the bot and one from a terminal
            current = await self.files.store.read(NOTES)
            if current is None:
                current = empty_notes(state.cast, state.language)
            await self.files.store.write_atomic(
                NOTES, add_note(current, text, target, state.language)
            )
        self.events.emit(NoteAdded(self.name, target, text.strip()))

    # ----------------------------------------------------------------- souls
    async def soul_text(self, actor: str) -> str:
        name = await self.resolve_actor(actor)
        return await self.files.store.read(soul_path(name)) or ""

    async def set_soul(self, actor: str, text: str) -> None:
        """Replace an actor's soul.md; refused (nothing written) if its front matter is broken."""
        name = await self.resolve_actor(actor)
        path = self.root / soul_path(name)
        settings, body = frontmatter.split(text, path)
        check_settings(settings, path)
        if not body.strip():
            raise BadSceneFile(
                path,
                "the new soul.md has no text — nothing was written",
                "新的 soul.md 沒有內容——什麼都沒寫入",
            )
        if self.running:
            raise SceneBusy(self.name)
        await self.files.store.write_atomic(soul_path(name), text)

    async def summarize_for(self, actor: str, full_history: str, write: bool = True) -> str:
        """Draft part 2 of `actor`'s soul (what they know) from the director's full backstory."""
        from engine import llm
        from engine.models import api_base, extra_params, stage_manager_model, turn_timeout
        from engine.prompts import summarize_messages
        from engine.soul import bio_part

        if not full_history.strip():
            raise BadRequest("summarize_for needs the full backstory text.", "需要完整的前情文字。")
        name = await self.resolve_actor(actor)
        state = await self.state()
        soul = state.souls[name]
        model = stage_manager_model(state.settings)
        reply = await llm.complete(
            llm.ModelCall(
                model=model,
                messages=summarize_messages(
                    name, bio_part(soul.body), full_history, state.language
                ),
                api_base=api_base(soul, state.settings),
                timeout=turn_timeout(state.settings),
                extra=extra_params(model),
            )
        )
        story = reply.text.strip()
        if write and story:
            text = await self.files.store.read(soul_path(name)) or ""
            settings, body = frontmatter.split(text, self.root / soul_path(name))
            new_body = replace_prior_story(body, story, state.language)
            header = text[: len(text) - len(body)] if body and text.endswith(body) else ""
            await self.files.store.write_atomic(soul_path(name), header + new_body)
        return story

    # ----------------------------------------------------------------- takes
    async def save_take(self) -> int:
        if self.running:
            raise SceneBusy(self.name)
        with self.files.store.held(self.name):  # never snapshot another process's half-turn
            self.files.forget()
            state = await self.state()
            number = await save_take(self.files.store)
        self.events.emit(TakeSaved(self.name, number, len(state.turns)))
        return number

    async def list_takes(self) -> list[TakeInfo]:
        return [await take_info(self.files.store, n) for n in await take_numbers(self.files.store)]

    async def show_take(self, ref: str | int) -> str:
        number = await resolve_take(self.files.store, ref)
        return await self.files.store.read(f"{take_dir(number)}/{TRANSCRIPT}") or ""

    async def replay(self, ref: str | int, until: int | None = None) -> ReplayResult:
        """Start a new attempt from a saved take (up to turn `until`) with today's souls/notes."""
        if self.running:
            raise SceneBusy(self.name)
        store = self.files.store
        number = await resolve_take(store, ref)
        source = take_dir(number)
        take_text = await store.read(f"{source}/{TRANSCRIPT}") or ""
        last = max((t.number for t in parse_transcript(take_text)), default=0)
        if until is None:
            until = last
        if not isinstance(until, int) or until < 0 or until > last:
            raise BadRequest(
                f"take_{number} has turns 1–{last}; --until must be in that range.",
                f"take_{number} 只有第 1–{last} 輪；until 必須在這個範圍內。",
            )
        with store.held(self.name):  # no run may start (here or in another process) mid-replay
            self.files.forget()
            state = await self.state()
            autosaved = None
            if state.turns and not await self._is_saved(await store.read(TRANSCRIPT) or ""):
                autosaved = await save_take(store)
                self.events.emit(TakeSaved(self.name, autosaved, len(state.turns)))
            files = {TRANSCRIPT: cut_log(take_text, until)}
            for rel in [backstage_path(a) for a in state.cast] + [STAGE_MANAGER_LOG]:
                files[rel] = cut_log(await store.read(f"{source}/{rel}") or "", until)
            await store.commit_rewrites(files)
        return ReplayResult(await self.current_take(), number, until, autosaved)

    async def _is_saved(self, transcript: str) -> bool:
        for n in await take_numbers(self.files.store):
            if await self.files.store.read(f"{take_dir(n)}/{TRANSCRIPT}") == transcript:
                return True
        return False

    # ----------------------------------------------------------------- status
    async def status(self) -> Status:
        state = await self.state()
        text = await self.files.store.read(USAGE_LOG) or ""
        prompt = completion = calls = 0
        cost: float | None = None
        for line in text.splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            prompt += int(row.get("prompt_tokens", 0))
            completion += int(row.get("completion_tokens", 0))
            calls += int(row.get("calls", 1))
            if row.get("cost_usd") is not None:
                cost = (cost or 0.0) + float(row["cost_usd"])
        return Status(
            scene=self.name,
            take=await self.current_take(),
            turns=len(state.turns),
            cast=tuple(state.cast),
            mode="running" if self.running else "idle",
            progress=self._progress,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost_usd=cost,
            model_calls=calls,
            saved_takes=tuple(await take_numbers(self.files.store)),
        )
