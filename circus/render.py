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

from circus.figures import format_cost, format_tokens
from circus.words import LANGUAGE, t
from engine import (
    CONSOLE,
    Cut,
    ErrorEvent,
    PlayerAway,
    RunFinished,
    RunStarted,
    StageChanged,
    StageManagerDecided,
    StillWaiting,
    TurnCompleted,
    TurnStarted,
    UntilMet,
    WaitingForPlayer,
    say,
)
from engine import (
    turn_marks as engine_marks,
)


def _indent(text: str, prefix: str) -> str:
    lines = text.strip().split("\n")
    pad = " " * len(prefix)
    return "\n".join([prefix + lines[0]] + [pad + line for line in lines[1:]])


def turn_marks(repaired: bool, fallback: bool, cut: Sequence[str] = ()) -> list[str]:
    """What the director must know about how a turn was made (empty for an ordinary turn)."""
    marks = engine_marks(repaired, fallback, cut)
    made = {"fallback": "cli.mark.fallback", "repaired": "cli.mark.repaired"}
    said = [t(made[marks.made])] if marks.made else []
    fields = [t("cli.mark.field_cut", field=f, cap=cap) for f, cap in marks.fields_cut]
    if marks.reply_cut:
        fields.insert(0, t("cli.mark.reply_cut"))
    if fields:
        said.append(t("cli.mark.cut", fields="; ".join(fields)))
    return said


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
        out.append(_indent(thought, f"    {t('cli.backstage_mark')} "))
    out.extend(f"    {t('cli.circus_mark')} {mark}" for mark in marks)
    return "\n".join(out)


def format_block(block, language: str = "zh") -> str:  # block: engine.folder.stage.StageBlock
    """A stage block (entrance, exit, event, opening) as the terminal shows it."""
    at = f"[{block.after}.{block.seq}]"
    if block.kind == "enter":
        return say("console.enters", language, at=at, actor=block.actor)
    if block.kind == "exit":
        return say("console.exits", language, at=at, actor=block.actor)
    if block.kind == "present":
        return say("console.present", language, at=at, names=tuple(block.names))
    return _indent(block.text, f"{at} 〔{say(f'console.{block.kind}', language)}〕 ")


def until_line(event: UntilMet, language: str) -> str:
    """Why a run asked to stop at a condition stopped, in the scene's language."""
    why = say(event.code, language, **event.fields)
    return say("cli.until_met", language, turn=event.turn, condition=event.condition, why=why)


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
        self.language = LANGUAGE  # for stage blocks; the console sets the scene's
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
        self.away: set[str] = set()  # actors whose absent player this run has named

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
        parts = [t("cli.progress.turn", index=self.index, total=self.total)]
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
    def _player(self, event: PlayerAway | WaitingForPlayer) -> None:
        """A played actor's turn: waited for (and how to answer), or played by the model."""
        if isinstance(event, WaitingForPlayer):
            here = t("cli.waiting.here") if event.player == CONSOLE else ""
            self.info(t("cli.waiting", actor=event.actor, player=event.player) + here)
        elif event.actor not in self.away:  # once a run: the way out does not change
            self.away.add(event.actor)
            key = "cli.player_away" if event.player == CONSOLE else "cli.player_away.discord"
            self.info(t(key, actor=event.actor, player=event.player))

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
                picked = "    " + t("cli.stage_manager_picks", actor=event.actor)
                self.say(picked + (f": {why}" if why else ""))
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
        elif isinstance(event, (PlayerAway, WaitingForPlayer)):
            self._player(event)
        elif isinstance(event, StillWaiting):
            self.info(
                t("cli.still_waiting", turn=event.turn, actor=event.actor, seconds=event.seconds)
            )
        elif isinstance(event, ErrorEvent):
            where = " ".join(
                x
                for x in (
                    t("cli.error.turn", turn=event.turn) if event.turn else "",
                    f"({event.actor})" if event.actor else "",
                )
                if x
            )
            message = say(event.code, event.language, **event.fields)
            self.errors.append(message)
            self.info(f"circus: {where + ': ' if where else ''}{message}")
        elif isinstance(event, Cut):
            self._stop_status()
            self.info(t("cli.cut", turn=event.turn))
        elif isinstance(event, UntilMet):
            self.info(until_line(event, self.language))
        elif isinstance(event, RunFinished):
            self._finished(event)

    def _finished(self, event: RunFinished) -> None:
        self._stop_status()
        # The run's whole spend, the stage manager's calls and those of dropped turns too:
        # what the landed turns carry is only part of it.
        self.tokens, self.cost = event.tokens, event.cost_usd
        self.cost_known = not event.unpriced
        self.info(self.summary(self.landed))

    def summary(self, turns_done: int) -> str:
        key = "cli.summary_one" if turns_done == 1 else "cli.summary"
        cost = format_cost(self.cost, self.cost_known)
        return t(
            key,
            turns=turns_done,
            seconds=self.elapsed(),
            tokens=format_tokens(self.tokens),
            cost=cost,
        )
