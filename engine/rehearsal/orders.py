"""What a director asks of a run, as small frozen orders: run N turns, cue one actor, resume, or
play on a replayed take. A run or resume may carry `until`: conditions after whose first match it
stops (engine.rehearsal.alerts). `Rehearsal.start_run(order)` takes one; the run loop reads its turns,
first actor, private direction and mode from it, so no caller passes a mode string or a flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from engine.config import DEFAULT_TURNS
from engine.folder.names import Actor
from engine.vocabulary import Author, RunMode

if TYPE_CHECKING:  # a type only: `take list` and `pick` read orders without the alerts
    from engine.rehearsal.alerts import Condition


@dataclass(frozen=True)
class Run:
    """RUN mode: the scene goes `turns` turns by itself, from `start` if given."""

    turns: int = DEFAULT_TURNS
    start: Actor | None = None
    until: tuple[Condition, ...] = ()  # stop after the first turn that meets one
    mode: ClassVar[RunMode] = "run"
    direction: ClassVar[str] = ""
    by: ClassVar[None] = None


@dataclass(frozen=True)
class Cue:
    """CUE mode: one turn by `actor`; `direction` is private to them for that turn. `by`: who
    cued (kept in directions.md; None: the scene's director, unnamed)."""

    actor: Actor
    direction: str = ""
    by: Author | None = None
    mode: ClassVar[RunMode] = "cue"
    turns: ClassVar[int] = 1
    until: ClassVar[tuple[Condition, ...]] = ()

    @property
    def start(self) -> Actor:
        return self.actor


@dataclass(frozen=True)
class Resume:
    """Back to RUN mode from where the scene stopped."""

    turns: int = DEFAULT_TURNS
    until: tuple[Condition, ...] = ()  # stop after the first turn that meets one
    mode: ClassVar[RunMode] = "resume"
    start: ClassVar[None] = None
    direction: ClassVar[str] = ""
    by: ClassVar[None] = None


@dataclass(frozen=True)
class Replay:
    """RUN mode on a take just replayed (`takes.replay`): its turns after the kept ones."""

    turns: int = DEFAULT_TURNS
    mode: ClassVar[RunMode] = "replay"
    start: ClassVar[None] = None
    until: ClassVar[tuple[Condition, ...]] = ()
    direction: ClassVar[str] = ""
    by: ClassVar[None] = None


Order = Run | Cue | Resume | Replay
