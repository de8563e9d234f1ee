"""Rendering engine events on a terminal: frontstage lines on stdout, progress on stderr.

Frontstage (action, line, cue) goes to stdout as each turn lands, so `circus run … > take.txt`
keeps a clean record. Thoughts appear only when the director asks for the backstage, each
marked `[backstage]`. A turn Circus had to repair, play as a fallback silence or cut at a cap
carries a `[circus]` line, so it is never taken for the actor's own choice. Progress (turn i/N,
elapsed time, tokens, cost, a model still being waited for) goes to stderr: a live status line
on a terminal, one line per turn otherwise.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from engine import (
    CAPS,
    CONSOLE,
    Cut,
    ErrorEvent,
    RunFinished,
    RunStarted,
    StageChanged,
    StageManagerDecided,
    StillWaiting,
    TurnCompleted,
    TurnStarted,
    WaitingForPlayer,
    say,
)

BACKSTAGE = "[backstage]"
STAGE_MANAGER = "[stage manager]"
MARK = "[circus]"


def _indent(text: str, prefix: str) -> str:
    lines = text.strip().split("\n")
    pad = " " * len(prefix)
    return "\n".join([prefix + lines[0]] + [pad + line for line in lines[1:]])


def turn_marks(repaired: bool, fallback: bool, cut: Sequence[str] = ()) -> list[str]:
    """What the director must know about how a turn was made (empty for an ordinary turn)."""
    marks = []
    if fallback:
        marks.append(
            "fallback: the model gave no usable reply, even when asked again — Circus played"
            " this turn (a silence unless something parsed); the actor did not choose it"
        )
    elif repaired:
        marks.append("repaired: the model's first reply was malformed; it was asked again")
    fields = [f"{f} at {CAPS[f]} characters" for f in cut if f in CAPS]
    if "reply" in cut:
        fields.insert(0, "the reply was too long and read only in part")
    if fields:
        marks.append("cut: " + "; ".join(fields))
    return marks


def format_turn(
    turn: int,
    actor: str,
    action: str,
    dialogue: str,
    cue: str,
    thought: str | None = None,
    marks: Sequence[str] = (),
) -> str:
    """One landed turn as the terminal shows it (no trailing newline)."""
    out = [f"[{turn}] {actor}"]
    if action:
        out.append(_indent(action, "    (") + ")")
    if dialogue:
        out.append(_indent(dialogue, "    "))
    if cue:
        out.append(f"    → {cue}")
    if thought:
        out.append(_indent(thought, f"    {BACKSTAGE} "))
    out.extend(f"    {MARK} {mark}" for mark in marks)
    return "\n".join(out)


def format_block(block, language: str = "zh") -> str:  # block: engine.stage.StageBlock
    """A stage block (entrance, exit, event, opening) as the terminal shows it."""
    at = f"[{block.after}.{block.seq}]"
    if block.kind == "enter":
        return say("console.enters", language, at=at, actor=block.actor)
    if block.kind == "exit":
        return say("console.exits", language, at=at, actor=block.actor)
    if block.kind == "present":
        return say("console.present", language, at=at, names=tuple(block.names))
    return _indent(block.text, f"{at} 〔{say(f'console.{block.kind}', language)}〕 ")


def format_tokens(n: int) -> str:
    return f"{n:,} tokens"


def format_cost(cost: float | None, known: bool = True) -> str:
    if cost is None:
        return "cost unknown"
    return f"${cost:.4f}" + ("" if known else "+ (some prices unknown)")


def format_budget(scope: str, unit: str, setting: str, limit: float, spent: float) -> str:
    """One budget for `circus status`: which one, what is spent and what is left."""
    amount = (lambda v: f"${v:.4f}") if unit == "usd" else (lambda v: format_tokens(int(v)))
    left = max(0.0, limit - spent)
    which = "scene" if scope == "scene" else "today (UTC)"
    return f"{which}, {setting}: {amount(spent)} of {amount(limit)} spent · {amount(left)} left"


class Renderer:
    """An EventHub listener that prints a run as it happens."""

    def __init__(
        self,
        backstage: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
        live: bool | None = None,
    ) -> None:
        self.backstage = backstage
        self.language = "en"  # for stage blocks; the console sets the scene's
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.live = self.err.isatty() if live is None else live
        self._status = ""
        self._ticker: asyncio.Task[None] | None = None
        self.reset()

    def reset(self) -> None:
        self.started = time.monotonic()
        self.index = 0
        self.total = 0
        self.landed = 0
        self.actor = ""
        self.tokens = 0
        self.cost: float | None = None
        self.cost_known = True
        self.errors: list[str] = []
        self.finished: object | None = None

    # ----------------------------------------------------------------- output helpers
    def _clear_status(self) -> None:
        if self.live and self._status:
            self.err.write("\r\x1b[2K")
            self.err.flush()

    def _draw_status(self) -> None:
        if self.live and self._status:
            self.err.write("\r\x1b[2K" + self._status)
            self.err.flush()

    def say(self, text: str) -> None:
        """Print frontstage text to stdout without tearing the status line."""
        self._clear_status()
        print(text, file=self.out, flush=True)
        self._draw_status()

    def info(self, text: str) -> None:
        """Print a message for the director on stderr."""
        self._clear_status()
        print(text, file=self.err, flush=True)
        self._draw_status()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def progress_text(self) -> str:
        parts = [f"turn {self.index}/{self.total}"]
        if self.actor:
            parts.append(self.actor)
        parts.append(f"{self.elapsed():.1f}s")
        parts.append(format_tokens(self.tokens))
        if self.cost is not None or not self.cost_known:
            parts.append(format_cost(self.cost, self.cost_known))
        return "[" + " · ".join(parts) + "]"

    def _set_status(self, text: str) -> None:
        if self.live:
            self._status = text
            self._draw_status()
        else:
            print(text, file=self.err, flush=True)

    def _stop_status(self) -> None:
        self._clear_status()
        self._status = ""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            if self._status:
                self._status = self.progress_text()
                self._draw_status()

    # ----------------------------------------------------------------- events
    def __call__(self, event: object) -> None:
        if isinstance(event, RunStarted):
            self.reset()
            self.total = event.turns
            if self.live and self._ticker is None:
                try:
                    self._ticker = asyncio.get_running_loop().create_task(self._tick())
                except RuntimeError:
                    self._ticker = None
        elif isinstance(event, TurnStarted):
            self.index, self.total, self.actor = event.index, event.total, event.actor
            self._set_status(self.progress_text())
        elif isinstance(event, StageManagerDecided):
            if self.backstage:
                why = " ".join(event.reason.split())
                self.say(f"    {STAGE_MANAGER} → {event.actor}" + (f": {why}" if why else ""))
        elif isinstance(event, TurnCompleted):
            self.landed += 1
            self.tokens += event.prompt_tokens + event.completion_tokens
            if event.cost_usd is None:
                self.cost_known = False
            else:
                self.cost = (self.cost or 0.0) + event.cost_usd
            thought = event.thought if self.backstage else None
            marks = turn_marks(event.repaired, event.fallback, event.cut)
            self.say(
                format_turn(
                    event.turn, event.actor, event.action, event.dialogue, event.cue, thought, marks
                )
                + "\n"
            )
        elif isinstance(event, StageChanged):
            self.say(format_block(event, self.language) + "\n")
        elif isinstance(event, WaitingForPlayer):
            self.info(
                f"waiting for {event.actor} ({event.player}) — their line, please"
                + (" (type it, or CUT / CUE someone else)" if event.player == CONSOLE else "")
            )
        elif isinstance(event, StillWaiting):
            self.info(
                f"… turn {event.turn}: still waiting for {event.actor}'s model"
                f" ({event.seconds:.0f} s so far)"
            )
        elif isinstance(event, ErrorEvent):
            where = " ".join(
                x
                for x in (
                    f"turn {event.turn}" if event.turn else "",
                    f"({event.actor})" if event.actor else "",
                )
                if x
            )
            message = say(event.code, event.language, **event.fields)
            self.errors.append(message)
            self.info(f"circus: {where + ': ' if where else ''}{message}")
        elif isinstance(event, Cut):
            self._stop_status()
            self.info(
                f"cut — turn {event.turn} is the last on record; the turn in flight was "
                "dropped, nothing half-made was written."
            )
        elif isinstance(event, RunFinished):
            self._stop_status()
            self.finished = event
            self.info(self.summary(self.landed))

    def summary(self, turns_done: int) -> str:
        word = "turn" if turns_done == 1 else "turns"
        cost = format_cost(self.cost, self.cost_known)
        return (
            f"{turns_done} {word} in {self.elapsed():.1f}s · {format_tokens(self.tokens)} · {cost}"
        )
