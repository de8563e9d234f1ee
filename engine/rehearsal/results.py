"""What a scene's command groups share: the one check of text a command is given, the small
frozen results commands return, and the scene's status.

Invariant: pure but for `status_of`, which only reads (the scene, its spend, the run's slot);
a text a command is given is refused whole (BadSceneFile) before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import BadSceneFile
from engine.folder.frontmatter import BOM
from engine.folder.sanitize import clean_text
from engine.folder.settings import MAX_FILE_BYTES, ORIGINS
from engine.rehearsal.run_slot import RunSlot
from engine.rehearsal.scene_access import SceneAccess
from engine.rehearsal.spending import Spending
from engine.spend import budget, call_log
from engine.spend.budget import Budget, Spend
from engine.takes.folders import take_numbers
from engine.vocabulary import Origin, StatusMode


def given_text(text: str, path: object, rel: str) -> str:
    """The text a command was given, cleaned of control characters and bidi overrides
    (engine.folder.sanitize), or BadSceneFile if it is not text or is too big."""
    if not isinstance(text, str):
        raise BadSceneFile(path, "error.file.not_text_given", rel=rel)
    text = text.removeprefix(BOM)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate (JSON can carry one): not text
        raise BadSceneFile(path, "error.file.not_text_given", rel=rel) from None
    if size > MAX_FILE_BYTES:
        raise BadSceneFile(path, "error.file.given_too_big", rel=rel, kb=MAX_FILE_BYTES // 1024)
    return clean_text(text)


def check_origin(origin: Origin) -> None:
    if origin not in ORIGINS:
        raise ValueError(f"origin must be one of {ORIGINS}, not {origin!r}")


@dataclass(frozen=True)
class Status:
    scene: str
    take: int
    turns: int
    cast: tuple[str, ...]
    mode: StatusMode  # running here, or in another process (held_by)
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
    captains: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (actor, the writers captaining them)
    # (actor, or "" for everyone; how many of its oldest whispers prompts leave out)
    notes_dropped: tuple[tuple[str, int], ...] = ()
    held_by: tuple[int, str] | None = None  # (pid, host) of another process running the scene

    @property
    def running(self) -> bool:
        """A run is going, in this process or another (held_by says which)."""
        return self.mode == "running"


@dataclass(frozen=True)
class ReplayResult:
    take: int  # the take the new attempt will be saved as
    from_take: int
    kept_turns: int
    autosaved: int | None  # the take the unsaved work was saved as first, if any


async def status_of(
    scene: SceneAccess, slot: RunSlot, spending: Spending, notes_dropped: dict[str, int]
) -> Status:
    """Where the scene stands: its take and turns, what it spent, who runs it."""
    state = await scene.state()
    spent = await spending.spend_rows()  # every call made, landed or not
    prompt, completion, calls, cost = _spent(spent)
    repairs, fallbacks = _mended(await spending.usage_rows())
    limits = spending.limits(state)
    scene_spend = call_log.total(spent) if limits else Spend()
    # Another process's run holds the scene's lock (the one that refuses a second run).
    held_by = None if slot.running else scene.store.lock_owner()
    return Status(
        scene=scene.name,
        take=await scene.current_take(),
        turns=len(state.turns),
        cast=tuple(state.cast),
        mode="running" if slot.running or held_by else "idle",
        progress=slot.progress,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=cost,
        model_calls=calls,
        saved_takes=tuple(await take_numbers(scene.store)),
        repairs=repairs,
        fallbacks=fallbacks,
        budgets=budget.budgets(limits, scene_spend, spending.day_spent()) if limits else (),
        on_stage=tuple(state.on_stage),
        players=tuple((a, p) for a, p in state.players.items() if a in state.souls),
        captains=tuple(state.captains.items()),
        notes_dropped=tuple(notes_dropped.items()),
        held_by=held_by,
    )


def _spent(rows: list[dict]) -> tuple[int, int, int, float | None]:
    """(prompt tokens, completion tokens, model calls, dollars) over the call record."""
    prompt = completion = calls = 0
    cost: float | None = None
    for row in rows:
        if "carried_from" in row:  # a replay's copy of a kept turn: counted where it was made
            continue
        prompt += int(row.get("prompt_tokens") or 0)
        completion += int(row.get("completion_tokens") or 0)
        calls += call_log.calls_of(row)
        if row.get("cost_usd") is not None:
            cost = (cost or 0.0) + float(row["cost_usd"])
    return prompt, completion, calls, cost


def _mended(rows: list[dict]) -> tuple[int, int]:
    """(repairs, fallbacks) over the landed turns' usage rows."""
    repairs = fallbacks = 0
    for row in rows:
        if "carried_from" in row:
            continue
        fallback = row.get("fallback") is True
        repairs += row.get("repaired") is True and not fallback
        fallbacks += fallback
    return repairs, fallbacks
