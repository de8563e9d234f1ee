"""The director's commands that are not a run: whispers, souls, takes, replay and status.

A command group of Rehearsal, built on engine.scene_access (the scene's files, events and lock).
Every whole-scene change takes the cross-process run lock, so a take or a replay never sees
another process's half-made turn; notes are read-modify-written under their own short lock.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from engine import budget, frontmatter, llm, spendlog, tokens
from engine.budget import Budget, Limit, Spend, SpendGuard
from engine.errors import BadRequest, BadSceneFile, CircusError, SceneBusy
from engine.events import NoteAdded, TakeSaved
from engine.frontmatter import BOM
from engine.models import (
    actor_model,
    api_base,
    context_tokens,
    extra_params,
    sent_reply_cap,
    stage_manager_model,
    turn_timeout,
)
from engine.notes import (
    NOTE_MOST_CHARS,
    add_note,
    dropped_notes,
    empty_notes,
    may_fit_anywhere,
)
from engine.prompts import summarize_messages
from engine.scene import (
    CONTEXT,
    NOTES,
    STAGE_MANAGER_LOG,
    TRANSCRIPT,
    USAGE_LOG,
    SceneState,
    backstage_path,
    soul_path,
)
from engine.scene_access import SceneAccess
from engine.settings import MAX_FILE_BYTES, ORIGINS, SoulSettings, check_untrusted_soul
from engine.soul import bio_part, parse_soul, replace_prior_story
from engine.takes import (
    TakeInfo,
    cut_log,
    resolve_take,
    save_take,
    take_dir,
    take_info,
    take_numbers,
)
from engine.taketree import record_parent
from engine.turns import parse_transcript
from engine.view import Actor


def given_text(text: str, path: object, rel: str) -> str:
    """The text a command was given, or BadSceneFile if it is not text or is too big."""
    if not isinstance(text, str):
        raise BadSceneFile(path, "error.file.not_text_given", rel=rel)
    text = text.removeprefix(BOM)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate (JSON can carry one): not text
        raise BadSceneFile(path, "error.file.not_text_given", rel=rel) from None
    if size > MAX_FILE_BYTES:
        raise BadSceneFile(path, "error.file.given_too_big", rel=rel, kb=MAX_FILE_BYTES // 1024)
    return text


@dataclass(frozen=True)
class Status:
    scene: str
    take: int
    turns: int
    cast: tuple[str, ...]
    mode: str  # idle | running (here, or in another process: held_by)
    progress: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    model_calls: int
    saved_takes: tuple[int, ...]
    repairs: int = 0  # turns a re-ask fixed
    fallbacks: int = 0  # turns no reply could be read for: a stand-in (silence) was played
    budgets: tuple[Budget, ...] = ()  # each budget that applies, with what is spent
    on_stage: tuple[str, ...] = ()
    players: tuple[tuple[str, str], ...] = ()  # (actor, who plays them)
    # (actor, or "" for everyone; how many of its oldest whispers prompts leave out)
    notes_dropped: tuple[tuple[str, int], ...] = ()
    held_by: tuple[int, str] | None = None  # (pid, host) of another process running the scene

    def _left(self, scope: str, unit: str) -> float | None:
        found = [b.left for b in self.budgets if (b.scope, b.unit) == (scope, unit)]
        return found[0] if found else None

    @property
    def scene_usd_left(self) -> float | None:
        return self._left("scene", "usd")

    @property
    def scene_tokens_left(self) -> int | None:
        left = self._left("scene", "tokens")
        return None if left is None else int(left)

    @property
    def daily_usd_left(self) -> float | None:
        return self._left("day", "usd")

    @property
    def daily_tokens_left(self) -> int | None:
        left = self._left("day", "tokens")
        return None if left is None else int(left)


@dataclass(frozen=True)
class ReplayResult:
    take: int  # the take the new attempt will be saved as
    from_take: int
    kept_turns: int
    autosaved: int | None  # the take the unsaved work was saved as first, if any


class SceneCommands(SceneAccess):
    """Whispers, souls, takes, replay and status for one scene folder."""

    # ----------------------------------------------------------------- whispers
    async def note(self, text: str, actor: Actor | None = None) -> int:
        """Whisper to everyone (actor None) or to one actor; used from the next turn. Returns
        how many of that section's oldest notes no longer fit in a prompt (the frontend warns:
        they stay in director_notes.md, but no model reads them)."""
        if not text or not text.strip():
            raise BadRequest("error.note_empty")
        if len(text.strip()) > NOTE_MOST_CHARS:
            raise BadRequest("error.note_too_long", most=NOTE_MOST_CHARS, length=len(text.strip()))
        state = await self.state()
        target = state.member(actor) if actor is not None else None
        async with self.files.store.file_lock("notes"):  # the bot and a terminal may both whisper
            current = await self.files.store.read(NOTES)
            if current is None:
                current = empty_notes(state.cast, state.language)
            await self.files.store.write_atomic(
                NOTES, add_note(current, text, target, state.language)
            )
        self.events.emit(NoteAdded(self.name, target, text.strip()))
        return (await self.notes_dropped()).get(target or "", 0)

    async def notes_dropped(self) -> dict[str, int]:
        """Per whisper section (an actor, or "" for everyone): how many of its oldest notes
        the prompts leave out, each measured for the models that read it."""
        state = await self.state()
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

    # ----------------------------------------------------------------- souls
    async def soul_text(self, actor: Actor) -> str:
        name = (await self.state()).member(actor)
        return await self.files.store.read(soul_path(name)) or ""

    async def set_soul(self, actor: Actor, text: str, *, origin: str = "operator") -> None:
        """Replace an actor's soul.md; refused (nothing written) if its front matter is broken.

        `origin="discord"`: the text came from an untrusted member, so it may not set
        `api_base`, nor a `model`/`fallback_model` outside `allowed_models()` (Refused).
        """
        if origin not in ORIGINS:
            raise ValueError(f"origin must be one of {ORIGINS}, not {origin!r}")
        name = (await self.state()).member(actor)
        rel = soul_path(name)
        path = self.root / rel
        text = given_text(text, path, rel)
        new = parse_soul(name, text, path, rel)
        if not new.body:
            raise BadSceneFile(path, "error.file.soul_empty", rel=rel)
        if origin == "discord":
            current = await self._soul_on_disk(name)
            check_untrusted_soul(SoulSettings(**new.settings), current, self.config)
        if self.running:
            raise SceneBusy(self.name)
        await self.files.store.write_atomic(rel, text)

    async def _soul_on_disk(self, name: str) -> SoulSettings | None:
        """The settings in `name`'s soul.md now (None if it is missing or unreadable)."""
        rel = soul_path(name)
        try:
            text = await self.files.store.read(rel, limit=MAX_FILE_BYTES)
            if text is None:
                return None
            return SoulSettings(**parse_soul(name, text, self.root / rel, rel).settings)
        except CircusError:
            return None

    async def summarize_for(self, actor: Actor, full_history: str, write: bool = True) -> str:
        """Draft part 2 of `actor`'s soul (what they know) from the director's full backstory."""
        if not full_history.strip():
            raise BadRequest("error.backstory_empty")
        state = await self.state()
        name = state.member(actor)
        soul = state.souls[name]
        config = self.config
        model = stage_manager_model(state.settings, config)
        # a summary spends from the same budgets, and is recorded like every other call
        guard = await self._spend_guard()
        guard.begin_turn(
            self._limits(state), await self._scene_spent(state), take=await self.current_take()
        )
        call = llm.ModelCall(
            model=model,
            messages=summarize_messages(name, bio_part(soul.body), full_history, state.language),
            api_base=api_base(soul, state.settings, config),
            timeout=turn_timeout(state.settings, config),
            max_tokens=sent_reply_cap(model, "free", config),
            extra=extra_params(model, config),
            retries=config.model_retries,
            purpose="summarize",
        )
        reply = await self.models.complete(call, gate=guard)
        story = reply.text.strip()
        if write and story:
            await self._write_prior_story(name, story)
        return story

    async def _write_prior_story(self, name: str, story: str) -> None:
        """Replace part 2 of `name`'s soul.md with `story`; its settings and other parts stay."""
        language = (await self.state()).language
        text = await self.files.store.read(soul_path(name)) or ""
        _, body = frontmatter.split(text, self.root / soul_path(name))
        new_body = replace_prior_story(body, story, language)
        header = text[: len(text) - len(body)] if body and text.endswith(body) else ""
        await self.files.store.write_atomic(soul_path(name), header + new_body)

    # ----------------------------------------------------------------- takes
    async def save_take(self) -> int:
        if self.running:
            raise SceneBusy(self.name)
        with self.files.store.held(self.name):  # never snapshot another process's half-turn
            self.files.forget()
            state = await self.state()
            number = await self._save_locked()
        self.events.emit(TakeSaved(self.name, number, len(state.turns)))
        return number

    async def _save_locked(self) -> int:
        number = await self.current_take()
        return await save_take(self.files.store, await self._take_files(number))

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
            raise BadRequest("error.until_range", take=number, last=last)
        with store.held(self.name):  # no run may start (here or in another process) mid-replay
            self.files.forget()
            state = await self.state()
            autosaved = saved_as = None
            current = await self.current_take()
            if state.turns:
                saved_as = await self._is_saved(await store.read(TRANSCRIPT) or "")
                if saved_as is None:
                    autosaved = await self._save_locked()
                    self.events.emit(TakeSaved(self.name, autosaved, len(state.turns)))
            files = await self._before_replay(
                current, saved_as, number, until, await self.current_take()
            )
            files[TRANSCRIPT] = cut_log(take_text, until)
            for rel in [backstage_path(a) for a in state.cast] + [STAGE_MANAGER_LOG]:
                files[rel] = cut_log(await store.read(f"{source}/{rel}") or "", until)
            await store.commit_rewrites(files)
            await record_parent(store, await self.current_take(), number, until)  # issue 21
        return ReplayResult(await self.current_take(), number, until, autosaved)

    # ----------------------------------------------------------------- spend
    async def usage_rows(self) -> list[dict[str, Any]]:
        """The scene's usage rows (one per role per landed turn); unreadable lines and rows
        whose spend is not numbers ≥ 0 skipped (engine.spendlog)."""
        text = await self.files.store.read(USAGE_LOG) or ""
        return spendlog.read_rows(text, self.files.store.path(USAGE_LOG))

    async def spend_rows(self) -> list[dict[str, Any]]:
        """Every call the scene paid for, landed or not (its calls.jsonl); for a scene from
        before that record, its usage rows."""
        rows = await spendlog.read_call_rows(self.files.store)
        return rows if rows is not None else await self.usage_rows()

    async def _spend_guard(self) -> SpendGuard:
        """A spend gate for this scene's calls: each is recorded in the scene's calls.jsonl and
        the account's daily ledger as it returns."""
        calls = await spendlog.CallLog.open(self.files.store, budget.utcnow())
        return SpendGuard(
            self.name, self.ledger, price=self.models.price, config=self.config, calls=calls
        )

    def _limits(self, state: SceneState) -> tuple[Limit, ...]:
        """The budgets that apply: the scene's own, and the account's daily ones if any."""
        scene = budget.scene_limits(state.settings, self.root / CONTEXT)
        return scene + (budget.daily_limits(self.config) if self.ledger is not None else ())

    async def _scene_spent(self, state: SceneState) -> Spend:
        if not budget.scene_limits(state.settings, self.root / CONTEXT):
            return Spend()  # nothing to compare it with: skip reading the call record
        return spendlog.total(await self.spend_rows())

    def _day_spent(self) -> Spend:
        if self.ledger is None:
            return Spend()
        now = budget.utcnow()
        return spendlog.day_spend(self.ledger.rows(spendlog.utc_day(now)), now)

    async def budgets(self, state: SceneState | None = None) -> tuple[Budget, ...]:
        """Each budget that applies to this scene now, with what is spent against it."""
        state = state or await self.state()
        limits = self._limits(state)
        if not limits:
            return ()
        return budget.budgets(limits, await self._scene_spent(state), self._day_spent())

    async def refuse_if_spent(self, state: SceneState) -> None:
        """BudgetExceeded now if a budget is used up: a run that cannot make one call never
        starts (and never takes the lock)."""
        refusal = budget.check(await self.budgets(state))
        if refusal is not None:
            raise refusal

    # ----------------------------------------------------------------- status
    async def status(self) -> Status:
        state = await self.state()
        spent = await self.spend_rows()  # every call made, landed or not
        prompt = completion = calls = repairs = fallbacks = 0
        cost: float | None = None
        for row in spent:
            if "carried_from" in row:  # a replay's copy of a kept turn: counted where it was made
                continue
            prompt += int(row.get("prompt_tokens") or 0)
            completion += int(row.get("completion_tokens") or 0)
            calls += spendlog.calls_of(row)
            if row.get("cost_usd") is not None:
                cost = (cost or 0.0) + float(row["cost_usd"])
        for row in await self.usage_rows():  # the landed turns
            if "carried_from" in row:
                continue
            fallback = row.get("fallback") is True
            repairs += row.get("repaired") is True and not fallback
            fallbacks += fallback
        limits = self._limits(state)
        scene = spendlog.total(spent) if limits else Spend()
        # Another process's run holds the scene's lock (the one that refuses a second run).
        held_by = None if self.running else self.files.store.lock_owner()
        return Status(
            scene=self.name,
            take=await self.current_take(),
            turns=len(state.turns),
            cast=tuple(state.cast),
            mode="running" if self.running or held_by else "idle",
            progress=self._progress,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost_usd=cost,
            model_calls=calls,
            saved_takes=tuple(await take_numbers(self.files.store)),
            repairs=repairs,
            fallbacks=fallbacks,
            budgets=budget.budgets(limits, scene, self._day_spent()) if limits else (),
            on_stage=tuple(state.on_stage),
            players=tuple((a, p) for a, p in state.players.items() if a in state.souls),
            notes_dropped=tuple((await self.notes_dropped()).items()),
            held_by=held_by,
        )
