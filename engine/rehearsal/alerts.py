""" "Page me when…": the conditions a person arms on a scene (or a `run --until` stops at), their
text forms, and the one pure decision `fired(conditions, event, facts)` — which of them an engine
event meets. A secret surfaces exactly when the secrets ledger says it did (engine.takes.secrets:
the first public line or action of the take that mentions it), so an alert and the ledger never
disagree. No I/O here: the scene's facts come in as `Facts`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import get_args

from engine.errors import BadRequest
from engine.events import (
    BudgetUsed,
    Event,
    RunFinished,
    StageChanged,
    TurnCompleted,
    VoicesConverged,
)
from engine.folder.turns import Turn
from engine.takes.secrets import entry
from engine.vocabulary import AlertKind

KINDS: tuple[AlertKind, ...] = get_args(AlertKind)
WITH_ACTOR: frozenset[str] = frozenset({"secret", "enter", "exit"})  # `kind[:ACTOR]`
CONDITION_MOST_CHARS = 80
FORMS = "secret[:ACTOR], enter[:ACTOR], exit[:ACTOR], turn:N, converge, budget:80%, stop"
_SHARE = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*%|(0?\.\d+|1(?:\.0+)?)")


@dataclass(frozen=True)
class Condition:
    """One thing to wait for: a kind, and for some kinds whose (`actor`), which turn, what
    share of a budget."""

    kind: AlertKind
    actor: str = ""  # secret / enter / exit: one actor's only ("" = anyone's)
    turn: int = 0  # turn:N
    share: float = 0.0  # budget:SHARE, 0 < share ≤ 1

    @property
    def text(self) -> str:
        """Its text form, as `parse_condition` reads it back."""
        if self.kind == "turn":
            return f"turn:{self.turn}"
        if self.kind == "budget":
            return f"budget:{_pct(self.share)}"
        return f"{self.kind}:{self.actor}" if self.actor else self.kind


def _pct(share: float) -> str:
    return f"{share * 100:.4g}%"


def parse_condition(text: str) -> Condition:
    """`secret`, `secret:林小姐`, `enter[:ACTOR]`, `exit[:ACTOR]`, `turn:N`, `converge`,
    `budget:80%` (or 0.8), `stop`; BadRequest naming the forms otherwise. An actor is kept as
    typed: the caller resolves it against the cast."""
    raw = " ".join((text or "").split())[:CONDITION_MOST_CHARS]
    head, _, rest = raw.partition(":")
    kind, rest = head.strip().casefold(), rest.strip()
    if kind not in KINDS:
        raise BadRequest("error.alert.condition", text=raw, forms=FORMS)
    known = kind
    if known in WITH_ACTOR:
        return Condition(known, actor=rest)
    if known == "turn":
        if not rest.isdigit() or not 1 <= int(rest) <= 10_000:
            raise BadRequest("error.alert.condition", text=raw, forms=FORMS)
        return Condition(known, turn=int(rest))
    if known == "budget":
        found = _SHARE.fullmatch(rest)
        share = (float(found[1]) / 100 if found[1] else float(found[2])) if found else 0.0
        if not 0 < share <= 1:
            raise BadRequest("error.alert.condition", text=raw, forms=FORMS)
        return Condition(known, share=share)
    if rest:
        raise BadRequest("error.alert.condition", text=raw, forms=FORMS)
    return Condition(known)


def parse_conditions(texts: Sequence[str]) -> tuple[Condition, ...]:
    """Several conditions: each text may itself be a comma list (`secret,exit:律師`)."""
    return tuple(
        parse_condition(part) for text in texts for part in text.split(",") if part.strip()
    )


@dataclass(frozen=True)
class Facts:
    """What an event alone does not say: each actor's marked secrets (`secrets:` in the souls)
    and the take's turns up to the event (later ones are ignored)."""

    secrets: Mapping[str, Sequence[str]] = field(default_factory=dict)
    turns: Sequence[Turn] = ()


@dataclass(frozen=True)
class Match:
    """Condition `index` (of those asked about) met at `turn` of `take`. `code` and `fields`
    say why in public words; `secret` is the secret's own text — private to those who may
    read `actor`'s soul."""

    index: int
    take: int
    turn: int
    code: str
    fields: Mapping[str, object]
    actor: str = ""  # whose line, entrance or secret it is
    secret: str = ""
    block: int = 0  # a stage block's seq (an entrance or exit): the line it fired on


def fired(conditions: Sequence[Condition], event: Event, facts: Facts) -> tuple[Match, ...]:
    """Which of `conditions` `event` meets, at most one match per condition, in their order."""
    out = []
    for index, condition in enumerate(conditions):
        found = _meets(condition, event, facts)
        if found is not None:
            out.append(replace(found, index=index))
    return tuple(out)


def _meets(c: Condition, event: Event, facts: Facts) -> Match | None:
    if isinstance(event, TurnCompleted):
        return _on_turn(c, event, facts)
    if isinstance(event, StageChanged) and c.kind == event.kind:
        if c.actor and c.actor != event.actor:
            return None
        fields = {"actor": event.actor, "turn": event.after}
        code = f"alert.trigger.{c.kind}"
        return Match(0, event.take, event.after, code, fields, event.actor, block=event.seq)
    if isinstance(event, VoicesConverged) and c.kind == "converge":
        fields = {"actor": event.actor, "other": event.other, "share": _pct(event.share)}
        fields["turn"] = event.turn
        return Match(0, event.take, event.turn, "alert.trigger.converge", fields)
    if isinstance(event, BudgetUsed) and c.kind == "budget":
        if not event.before < c.share <= event.share:
            return None
        fields = {"share": _pct(c.share), "turn": event.turn}
        return Match(0, event.take, event.turn, f"alert.trigger.budget_{event.scope}", fields)
    if isinstance(event, RunFinished) and c.kind == "stop" and event.reason in ("error", "budget"):
        last = max((t.number for t in facts.turns), default=0)
        return Match(0, event.take, last, f"alert.trigger.stop_{event.reason}", {"turn": last})
    return None


def _on_turn(c: Condition, event: TurnCompleted, facts: Facts) -> Match | None:
    here: dict[str, object] = {"turn": event.turn, "actor": event.actor}
    take, number = event.take, event.turn
    if c.kind == "turn" and number == c.turn:
        return Match(0, take, number, "alert.trigger.turn", here, event.actor)
    if c.kind == "stop" and event.fallback:
        return Match(0, take, number, "alert.trigger.stop_fallback", here, event.actor)
    if c.kind != "secret":
        return None
    line = Turn(number, event.actor, event.action, event.dialogue, event.cue)
    turns = [t for t in facts.turns if t.number < number] + [line]
    for owner, marked in facts.secrets.items():
        if c.actor and owner != c.actor:
            continue
        for secret in marked:
            surfaced = entry(owner, secret, turns, {}).surfaced
            if surfaced is not None and surfaced.number == number:
                fields = here | {"owner": owner}
                return Match(0, take, number, "alert.trigger.secret", fields, owner, secret)
    return None
