"""Whether a run goes on a scene, what it is doing, and the played actor it waits for.

A run waits only for a player who can hand it a line here (`players_here`, said by the
frontend when it opens the scene): a one-shot `circus run` has nobody to type one, so a person's
role is played by its model for that run rather than waited for forever.

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


def can_answer(player: str, here: frozenset[str] | None) -> bool:
    """Whether `player` can hand a line to a run in a process whose frontend reads lines from
    `here` (None: it never said, so anyone — the bot, which hears its members). Pure."""
    return here is None or player in here


class RunSlot:
    """The one run a scene may have in this process, as the command groups see it."""

    def __init__(self, name: str, players_here: frozenset[str] | None = None) -> None:
        self.name = name
        # Who can hand this process a played line (None: anyone; set once, by the frontend).
        self.players_here = players_here
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

    def answers(self, player: str) -> bool:
        """Whether a run here may wait for `player`'s line: only a player who can hand it one."""
        return can_answer(player, self.players_here)

    @property
    def waiting_for(self) -> str | None:
        """The played actor a run is waiting for right now, if any."""
        waiting = self.waiting
        return waiting[0] if waiting is not None and not waiting[1].done() else None
