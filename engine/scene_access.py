"""What every group of a rehearsal's commands stands on: one scene folder, its events, whether a
run is going, and the one way a turn lands.

Invariant: the command groups (engine.scene_commands, engine.stage_commands, engine.harvest) and
Rehearsal's run loop read the scene only through `state()`, and a turn — a model's or a person's
— lands only through `_commit`: whole, through the store's journal, or not at all.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from engine.budget import SpendGuard, utcnow
from engine.casting import ANY, cue_candidates
from engine.config import Config
from engine.errors import AmbiguousActor, UnknownActor
from engine.events import EventHub, TurnCompleted
from engine.ledger import Ledger
from engine.llm import LiteLLMModels, Models
from engine.performance import Performance, Usage
from engine.scene import (
    STAGE_KEY,
    STAGE_MANAGER_LOG,
    TRANSCRIPT,
    USAGE_LOG,
    SceneFiles,
    SceneState,
    backstage_path,
)
from engine.takes import take_dir, take_numbers
from engine.turns import Turn, render_thought, render_turn
from engine.view import Actor


class SceneAccess:
    """One scene folder as the commands see it; Rehearsal and its command groups build on it."""

    def __init__(
        self,
        root: Path | str,
        *,
        models: Models | None = None,
        config: Config | None = None,
        account: str | None = None,
    ) -> None:
        self.files = SceneFiles(Path(root))
        self.root = self.files.root
        self.name = self.files.name
        self.events = EventHub()
        # The operator's settings: a frontend hands its own; a library caller that does not gets
        # the environment as it is now, read once for this scene's parts.
        self.config = config or Config.from_env(os.environ)
        self.models: Models = models or LiteLLMModels(self.config)  # the model door
        self.account = account
        self.ledger = Ledger(self.root.parent, account) if account else None
        self._task: asyncio.Task[Any] | None = None  # the run, while one goes
        self._progress = ""  # what the run is doing, for status
        self._spend: SpendGuard | None = None  # the run's spend gate (None outside a run)

    # ----------------------------------------------------------------- reading
    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def state(self) -> SceneState:
        return await self.files.load()

    async def resolve_actor(self, name: str) -> Actor:
        """The cast member `name` means (a name or an alias, `@` and honorifics tolerated, a
        Latin name only as a whole word); AmbiguousActor when it could mean several,
        UnknownActor when nobody. The one resolve: commands take the Actor it returns and only
        check that they are still in the cast (`SceneState.member`)."""
        state = await self.state()
        found = [a for a in cue_candidates(name, state.aliases()) if a != ANY]
        if len(found) > 1:  # never guess whom a private word is for: ask
            raise AmbiguousActor(name, found)
        if not found or found[0] not in state.cast:
            raise UnknownActor(name, state.cast)
        return Actor(found[0])

    async def current_take(self) -> int:
        """The working take's number: the last saved take's + 1."""
        numbers = await take_numbers(self.files.store)
        return (numbers[-1] if numbers else 0) + 1

    async def _is_saved(self, transcript: str) -> int | None:
        """The saved take whose transcript is exactly this one (the latest), if any."""
        for n in reversed(await take_numbers(self.files.store)):
            if await self.files.store.read(f"{take_dir(n)}/{TRANSCRIPT}") == transcript:
                return n
        return None

    # Hooks the harvest (engine.harvest) fills in: what a saved take carries inside its folder,
    # and what a replay carries over. Called with the run lock held.
    async def _take_files(self, number: int) -> dict[str, str]:
        return {}

    async def _before_replay(
        self, current: int, saved_as: int | None, source: int, until: int, new_take: int
    ) -> dict[str, str]:
        return {}

    # ----------------------------------------------------------------- landing a turn
    async def _commit(
        self,
        state: SceneState,
        *,
        take: int,
        number: int,
        actor: str,
        reason: str,
        result: Performance,
        sm_log: str,
        sm_usage: Usage | None,
        index: int = 1,
        total: int = 1,
    ) -> bool:
        """Land the turn whole, then announce it (TurnCompleted), for a model's turn and a
        person's line alike. Returns True if a cut arrived meanwhile (honoured after)."""
        reply = result.reply
        turn = Turn(number, actor, reply.action, reply.dialogue, reply.cue)
        at = utcnow().isoformat(timespec="seconds")
        # contracts §4: the rows every reader of usage.jsonl expects (older rows lack the
        # take/at/reason/repaired/fallback keys; readers tolerate that)
        usage: list[dict[str, object]] = [
            {
                "turn": number,
                "role": actor,
                **result.usage.__dict__,
                "take": take,
                "at": at,
                "reason": reason,
                "repaired": result.repaired,
                "fallback": result.fallback,
                "wrote_for_others": result.wrote_for_others,
            }
        ]
        if sm_usage is not None:
            usage.append(
                {
                    "turn": number,
                    "role": "stage_manager",
                    **sm_usage.__dict__,
                    "take": take,
                    "at": at,
                }
            )
        appends = [
            (TRANSCRIPT, render_turn(turn, state.language)),
            (USAGE_LOG, "".join(json.dumps(u, ensure_ascii=False) + "\n" for u in usage)),
        ]
        if reply.thought:  # a person's line without a thought leaves the backstage alone
            appends.insert(0, (backstage_path(actor), render_thought(number, reply.thought)))
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
            self.files.remember_append(TRANSCRIPT, state.turns)
            self.files.remember_append(TRANSCRIPT, state.blocks, key=STAGE_KEY)
            if reply.thought:
                state.thoughts.setdefault(actor, {})[number] = reply.thought
                self.files.remember_append(backstage_path(actor), state.thoughts[actor])
        else:
            self.files.forget()
        self.events.emit(
            TurnCompleted(
                self.name,
                take=take,
                turn=number,
                actor=actor,
                action=reply.action,
                dialogue=reply.dialogue,
                cue=reply.cue,
                thought=reply.thought,
                repaired=result.repaired,
                fallback=result.fallback,
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
                cost_usd=result.usage.cost_usd,
                index=index,
                total=total,
                cut=reply.cut,
                played=reason == "played",
            )
        )
        return cut
