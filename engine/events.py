"""The small immutable events a rehearsal emits, and the hub frontends listen on.

Frontends render events; they never reach into the engine's state. A thought, a stage-manager
reason and a note are private text: each frontend sends the events that carry them to the
director only (the bot through its backstage DMs, the terminal only with --backstage).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from engine.catalog import say
from engine.vocabulary import BlockKind, FinishReason, RunMode, TurnReason


@dataclass(frozen=True)
class Event:
    scene: str


@dataclass(frozen=True)
class RunStarted(Event):
    take: int
    turns: int
    mode: RunMode


@dataclass(frozen=True)
class TurnStarted(Event):
    take: int
    turn: int
    actor: str
    reason: TurnReason
    index: int = 1  # position within the current run
    total: int = 1


@dataclass(frozen=True, kw_only=True)
class TurnCompleted(Event):
    """A turn landed. Built with keywords: fifteen fields are too many to read by position."""

    take: int
    turn: int
    actor: str
    action: str
    dialogue: str
    cue: str
    thought: str
    repaired: bool = False  # the model's first reply was malformed and it was asked again
    fallback: bool = False  # no usable reply: Circus made this turn (a silence), not the actor
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    index: int = 1
    total: int = 1
    cut: tuple[
        str, ...
    ] = ()  # fields cut at their cap (engine.reply.read.CAPS); "reply" = all of it
    played: bool = False  # a person wrote it (frontends only; never in any prompt)


@dataclass(frozen=True)
class StillWaiting(Event):
    """A turn's model call has been outstanding `seconds` (sent every CIRCUS_WAITING_SECONDS)."""

    take: int
    turn: int
    actor: str
    seconds: float


@dataclass(frozen=True)
class StageManagerDecided(Event):
    take: int
    turn: int
    actor: str
    reason: str
    fallback: bool = False


@dataclass(frozen=True)
class NoteAdded(Event):
    actor: str | None
    text: str


@dataclass(frozen=True)
class Cut(Event):
    take: int
    turn: int  # the last turn that landed


@dataclass(frozen=True)
class RunFinished(Event):
    """The run ended. Its spend is every model call it made — actors, repairs, the stage
    manager — as the scene's call record and the daily ledger keep them."""

    take: int
    turns_done: int
    reason: FinishReason
    tokens: int = 0
    cost_usd: float | None = None  # None: no call of the run had a known price
    unpriced: int = 0  # calls of the run whose price nobody knows


@dataclass(frozen=True)
class TakeSaved(Event):
    take: int
    turns: int


@dataclass(frozen=True)
class StageChanged(Event):
    """A public stage block landed: an opening, a stage event, an entrance or an exit."""

    take: int
    after: int  # the last turn before it
    seq: int
    kind: BlockKind
    actor: str = ""
    text: str = ""
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class VoicesConverged(Event):
    """Two actors began to sound alike at `turn`: the take report's warning (engine.harvest.
    report.converging_pairs), said as it first holds for the pair in this take."""

    take: int
    turn: int
    actor: str
    other: str
    share: float  # of `actor`'s distinct phrases (4-grams) also in `other`'s lines


@dataclass(frozen=True)
class BudgetUsed(Event):
    """After a turn, what share of a budget is spent (`before`: as the run last saw it)."""

    take: int
    turn: int
    scope: str  # scene | day
    unit: str  # usd | tokens
    before: float
    share: float


@dataclass(frozen=True)
class UntilMet(Event):
    """A run asked to stop at a condition (`run --until`) met it at `turn` and stops there:
    `code` and `fields` say why (public words only)."""

    take: int
    turn: int
    condition: str
    code: str
    fields: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class WaitingForPlayer(Event):
    """A run reached an actor a person plays and waits for their line."""

    take: int
    turn: int
    actor: str
    player: str  # who plays them: "console", "discord:<user id>", ...


@dataclass(frozen=True)
class PlayerAway(Event):
    """A run reached an actor a person plays, but that person cannot hand a line to this
    process (a console in another terminal, a Discord member while the terminal runs the
    scene): their model plays this turn, and the role stays theirs."""

    take: int
    turn: int
    actor: str
    player: str


@dataclass(frozen=True)
class ErrorEvent(Event):
    """Why a run stopped or skipped a turn: a catalog code and its fields, said by a frontend
    at its edge (`say(code, language, **fields)`). `language` is the one the engine itself says
    it in: the scene's for a budget stop, English otherwise (a provider's own words)."""

    code: str
    fields: Mapping[str, object] = field(default_factory=dict)
    turn: int | None = None
    actor: str | None = None
    language: str = "en"

    @property
    def message(self) -> str:
        """The sentence in the event's own language."""
        return say(self.code, self.language, **self.fields)


Listener = Callable[[Event], None]


class EventHub:
    """Fan-out of events to any number of listeners, called synchronously in emit order.

    A listener must not block: frontends queue the event and render it in their own task."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def emit(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` synchronously for every event; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None
