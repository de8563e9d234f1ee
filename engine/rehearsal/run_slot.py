"""Whether a run goes on a scene, what it is doing, and the played actor it waits for.

Invariant: the run loop (engine.rehearsal.run_loop) alone writes a slot; the command groups only read it
(to refuse a change beside a run) and hand a waiting run a person's line through its future.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from engine.errors import SceneBusy


@dataclass(frozen=True)
class PlayedLine:
    """What a person typed for the actor they play."""

    action: str = ""
    dialogue: str = ""
    cue: str = ""
    thought: str = ""


class RunSlot:
    """The one run a scene may have in this process, as the command groups see it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.task: asyncio.Task[Any] | None = None  # the run, while one goes
        self.progress = ""  # what the run is doing, for status
        # The played actor a run waits for, and the future their line (or None: given back) fills.
        self.waiting: tuple[str, asyncio.Future[PlayedLine | None]] | None = None

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def refuse_if_running(self) -> None:
        if self.running:
            raise SceneBusy(self.name)

    @property
    def waiting_for(self) -> str | None:
        """The played actor a run is waiting for right now, if any."""
        waiting = self.waiting
        return waiting[0] if waiting is not None and not waiting[1].done() else None
