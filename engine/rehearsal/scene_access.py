"""The scene on disk as every part of a rehearsal reads and changes it: one folder, its events,
and the one way a turn lands.

Invariant: the command groups and the run loop read the scene only through `state()`, and a
turn — a model's or a person's — lands only through `commit_turn`: whole, through the store's
journal, or not at all, and is announced (TurnCompleted) only once it has landed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.clock import utcnow
from engine.errors import AmbiguousActor, UnknownActor
from engine.events import EventHub, TurnCompleted
from engine.folder.attribution import read_before, record_line
from engine.folder.names import Actor
from engine.folder.scene import (
    STAGE_KEY,
    STAGE_MANAGER_LOG,
    TRANSCRIPT,
    USAGE_LOG,
    SceneFiles,
    SceneState,
    backstage_path,
)
from engine.folder.turns import ANY, Turn, render_thought, render_turn
from engine.reply.cue import cue_candidates
from engine.takes.folders import take_dir, take_numbers
from engine.vocabulary import TurnReason

if TYPE_CHECKING:  # hints only: a scene is read without the turn wing (prompts, replies)
    from engine.turn.performance import Performance, Usage


@dataclass(frozen=True)
class Floor:
    """Who speaks a turn and why, and the stage manager's part in it (if it chose)."""

    actor: str
    reason: TurnReason
    sm_usage: Usage | None = None
    sm_log: str = ""  # its decision, for the director's log


@dataclass(frozen=True)
class Landing:
    """Where a turn lands and who has the floor: what travels together from the run loop
    through commit_turn into the logs, the usage rows and the TurnCompleted event."""

    take: int
    number: int
    floor: Floor
    index: int = 1  # its place in the run
    total: int = 1


class SceneAccess:
    """One scene folder: its files (and store), its events, its state, how a turn lands."""

    def __init__(self, root: Path | str, events: EventHub | None = None) -> None:
        self.files = SceneFiles(Path(root))
        self.store = self.files.store
        self.root = self.files.root
        self.name = self.files.name
        self.events = events or EventHub()

    async def state(self) -> SceneState:
        return await self.files.load()

    async def resolve_actor(self, name: str, aliases_of: Collection[str] | None = None) -> Actor:
        """The cast member `name` means (a name or an alias, `@` and honorifics tolerated, a
        Latin name only as a whole word); AmbiguousActor when it could mean several,
        UnknownActor when nobody. The one resolve: commands take the Actor it returns and only
        check that they are still in the cast (`SceneState.member`). Aliases live in souls,
        which are private: only the aliases of `aliases_of` count (None: everyone's), so who
        may not read a character cannot learn its aliases by trying names."""
        state = await self.state()
        aliases = state.aliases()
        if aliases_of is not None:
            aliases = {a: (names if a in aliases_of else ()) for a, names in aliases.items()}
        found = [a for a in cue_candidates(name, aliases) if a != ANY]
        if len(found) > 1:  # never guess whom a private word is for: ask
            raise AmbiguousActor(name, found)
        if not found or found[0] not in state.cast:
            raise UnknownActor(name, state.cast)
        return Actor(found[0])

    async def current_take(self) -> int:
        """The working take's number: the last saved take's + 1."""
        numbers = await take_numbers(self.store)
        return (numbers[-1] if numbers else 0) + 1

    async def is_saved(self, transcript: str) -> int | None:
        """The saved take whose transcript is exactly this one (the latest), if any."""
        for n in reversed(await take_numbers(self.store)):
            if await self.store.read(f"{take_dir(n)}/{TRANSCRIPT}") == transcript:
                return n
        return None

    # ----------------------------------------------------------------- landing a turn
    async def commit_turn(self, state: SceneState, at: Landing, result: Performance) -> bool:
        """Land the turn whole, then announce it (TurnCompleted), for a model's turn and a
        person's line alike. Returns True if a cut arrived meanwhile (honoured after)."""
        reply, actor = result.reply, at.floor.actor
        turn = Turn(at.number, actor, reply.action, reply.dialogue, reply.cue)
        appends = turn_appends(
            turn, reply.thought, state.language, usage_rows(at, result), at.floor.sm_log,
            notes_read(state, at.take, turn),
        )  # fmt: skip
        # A writer may have edited the logs while the model was thinking: then the cached
        # parse is stale and must be re-read, not extended.
        fresh = self.files.unchanged([TRANSCRIPT, backstage_path(actor)])
        cut = await self._land_whole(appends)
        if fresh:
            self._remember(state, turn, reply.thought)
        else:
            self.files.forget()
        self.events.emit(turn_completed(self.name, at, turn, result))
        return cut

    async def _land_whole(self, appends: list[tuple[str, str]]) -> bool:
        """Write the turn's appends in one journaled step. Once the model has answered, a cut
        waits for the commit: the turn lands whole, and True says a cut arrived meanwhile."""
        commit = asyncio.ensure_future(self.store.commit_appends(appends))
        try:
            await asyncio.shield(commit)
        except asyncio.CancelledError:
            await asyncio.wait([commit])
            commit.result()
            return True
        return False

    def _remember(self, state: SceneState, turn: Turn, thought: str) -> None:
        """Extend the cached parse with the turn just written (the logs were not edited)."""
        state.turns.append(turn)
        self.files.remember_append(TRANSCRIPT, state.turns)
        self.files.remember_append(TRANSCRIPT, state.blocks, key=STAGE_KEY)
        if thought:
            state.thoughts.setdefault(turn.actor, {})[turn.number] = thought
            self.files.remember_append(backstage_path(turn.actor), state.thoughts[turn.actor])


def usage_rows(landing: Landing, result: Performance) -> list[dict[str, object]]:
    """The turn's rows in usage.jsonl: the actor's, then the stage manager's if it chose."""
    take, number, floor = landing.take, landing.number, landing.floor
    at = utcnow().isoformat(timespec="seconds")
    # The rows every reader of usage.jsonl expects (docs/formats.md); older rows lack the
    # take/at/reason/repaired/fallback keys, and readers tolerate that.
    rows: list[dict[str, object]] = [
        {
            "turn": number,
            "role": floor.actor,
            **result.usage.__dict__,
            "take": take,
            "at": at,
            "reason": floor.reason,
            "repaired": result.repaired,
            "fallback": result.fallback,
            "wrote_for_others": result.wrote_for_others,
        }
    ]
    if floor.sm_usage is not None:
        sm = floor.sm_usage.__dict__
        rows.append({"turn": number, "role": "stage_manager", **sm, "take": take, "at": at})
    return rows


def notes_read(state: SceneState, take: int, turn: Turn) -> str:
    """The record lines of the attributed notes `turn`'s actor read since their last turn
    (engine.folder.attribution.read_before), for its backstage log: the walk back stops at
    that actor's previous turn."""
    marks = state.whispers.marks
    if not marks:
        return ""
    since = next((t.number for t in reversed(state.turns) if t.actor == turn.actor), 0)
    read = read_before(marks, take, since, turn.number, turn.actor)
    return "".join(record_line(m) + "\n" for m in read)


def turn_appends(
    turn: Turn,
    thought: str,
    language: str,
    usage: list[dict[str, object]],
    sm_log: str,
    notes: str = "",
) -> list[tuple[str, str]]:
    """What the turn adds to each log, in the order they are written; `notes`: the record of
    the notes its actor read (`notes_read`), written in its backstage log before the thought."""
    appends = [
        (TRANSCRIPT, render_turn(turn, language)),
        (USAGE_LOG, "".join(json.dumps(u, ensure_ascii=False) + "\n" for u in usage)),
    ]
    if thought:  # a person's line without a thought leaves the backstage alone
        text = notes + render_thought(turn.number, thought)
        appends.insert(0, (backstage_path(turn.actor), text))
    if sm_log:
        appends.append((STAGE_MANAGER_LOG, sm_log))
    return appends


def turn_completed(scene: str, at: Landing, turn: Turn, result: Performance) -> TurnCompleted:
    reply = result.reply
    return TurnCompleted(
        scene,
        take=at.take,
        turn=turn.number,
        actor=turn.actor,
        action=reply.action,
        dialogue=reply.dialogue,
        cue=reply.cue,
        thought=reply.thought,
        repaired=result.repaired,
        fallback=result.fallback,
        prompt_tokens=result.usage.prompt_tokens,
        completion_tokens=result.usage.completion_tokens,
        cost_usd=result.usage.cost_usd,
        index=at.index,
        total=at.total,
        cut=reply.cut,
        played=at.floor.reason == "played",
    )
