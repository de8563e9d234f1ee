"""The prompt audit of a take: each turn's prompt rebuilt from the take's files, and whether it
holds another actor's secret where nothing its actor may see does (a wall broke).

Invariant: `audit` finds exactly what engine.takes.secrets.prompt_breaches finds over
engine.takes.reading.rebuilt_prompts — what an actor may see only grows from one of its turns
to the next (its witnessed record, its own thoughts), so whether it may have seen a secret is
kept per actor and secret as the take is walked once, never searched again per prompt.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from typing import Generic, TypeVar

from engine.folder.scene import SceneState
from engine.folder.stage import StageBlock, merge, walk
from engine.folder.turns import Turn
from engine.takes.secrets import Breach, mentions
from engine.turn.prompts import ActorBrief, actor_messages
from engine.turn.record_lines import block_line, public_line

Secrets = Mapping[str, Sequence[str]]  # owner → the secrets marked in its soul
T = TypeVar("T")


def scaffolding(actor: str, language: str) -> str:
    """Circus's own words around an actor's prompt (rules, headings, labels): never private,
    so a secret that is an everyday word in them ("silence") is not a breach there."""
    brief = ActorBrief(
        name=actor, soul="", context="", cast=(actor,), turns=(), own_thoughts={},
        whisper_all="-", whisper_private="-", direction="-", neglected=True, language=language,
    )  # fmt: skip
    return "\n".join(m["content"] for m in actor_messages(brief))


def prompt_texts(state: SceneState) -> Iterator[tuple[Turn, str]]:
    """Each turn and the prompt its actor was built from this take's files: the record, the
    stage and the actor's thoughts before that turn, and who was on stage then (the end of
    the take's one walk up to it, as on_stage would walk it again)."""
    start = state.cast if state.start is None else state.start
    walked = list(walk(state.cast, merge(state.turns, state.blocks)))
    keys = [_key(item) for item, _, _ in walked]
    record = _Numbered(state.turns, [t.number for t in state.turns])
    stage = _Numbered(state.blocks, [b.after for b in state.blocks])
    thoughts = {
        actor: _Numbered(list(own.items()), list(own)) for actor, own in state.thoughts.items()
    }
    no_thoughts: _Numbered[tuple[int, str]] = _Numbered([], [])
    for turn in state.turns:
        if turn.actor not in state.souls:
            continue  # an actor removed since: no soul to rebuild from
        n = turn.number
        turns, blocks = record.before(n), stage.before(n)
        seen = bisect_left(keys, (n, 0))  # the walked items before this turn
        present = set(walked[seen - 1][2]) if seen else set(start)
        brief = ActorBrief(
            name=turn.actor,
            soul=state.souls[turn.actor].body,
            context=state.context,
            cast=tuple(state.cast),
            turns=turns,
            own_thoughts=dict(thoughts.get(turn.actor, no_thoughts).before(n)),
            whisper_all=state.whispers.everyone,
            whisper_private=state.whispers.for_actor(turn.actor),
            language=state.language,
            stage=blocks,
            on_stage=tuple(a for a in state.cast if a in present),
        )
        yield turn, "\n".join(m["content"] for m in actor_messages(brief))


class _Numbered(Generic[T]):
    """Items and their numbers, asked for those numbered below n, in their order: a slice
    when the numbers never go down (a take's record does not), else picked one by one."""

    def __init__(self, items: Sequence[T], numbers: Sequence[int]) -> None:
        self.items, self.numbers = items, numbers
        self.in_order = all(a <= b for a, b in pairwise(numbers))

    def before(self, n: int) -> tuple[T, ...]:
        if self.in_order:
            return tuple(self.items[: bisect_left(self.numbers, n)])
        return tuple(x for x, k in zip(self.items, self.numbers, strict=True) if k < n)


class _Sight:
    """What one actor may see up to one of its turns (reading.allowed_for's texts), kept as
    which other actors' secrets those texts mention."""

    def __init__(self, state: SceneState, actor: str, secrets: Secrets) -> None:
        self.actor, self.language = actor, state.language
        self.pending = {(o, s) for o, mine in secrets.items() if o != actor for s in mine}
        self.thoughts = sorted(state.thoughts.get(actor, {}).items())
        self.read = 0  # of self.thoughts
        self.walked = 0  # of the take's walked items
        self.at = -1  # the turn it was brought up to
        fixed = (state.souls[actor].body, state.context, state.whispers.everyone)
        for text in (scaffolding(actor, state.language), *fixed):
            self.see(text)
        self.see(state.whispers.for_actor(actor))

    def see(self, text: str) -> None:
        if text and self.pending:
            self.pending -= {(o, s) for o, s in self.pending if mentions(text, s)}

    def up_to(self, turn: int, walked: Sequence[tuple[object, frozenset, frozenset]]) -> None:
        """Everything seen before `turn`: own earlier thoughts, the record witnessed."""
        while self.read < len(self.thoughts) and self.thoughts[self.read][0] < turn:
            self.see(self.thoughts[self.read][1])
            self.read += 1
        while self.walked < len(walked) and _key(walked[self.walked][0]) < (turn, 0):
            item, before, after = walked[self.walked]
            if self.actor in before or self.actor in after:
                if isinstance(item, Turn):
                    for text in (item.action, item.dialogue, public_line(item, self.language)):
                        self.see(text)
                elif isinstance(item, StageBlock):
                    self.see(item.text)
                    self.see(block_line(item, self.language))
            self.walked += 1
        self.at = turn


def _key(item: object) -> tuple[int, int]:
    return (item.number, 0) if isinstance(item, Turn) else item.key  # type: ignore[attr-defined]


def audit(
    state: SceneState, secrets: Secrets
) -> tuple[dict[tuple[str, str], tuple[Breach, ...]], int]:
    """(owner, secret) → each rebuilt prompt of another actor holding it where nothing that
    actor may see does, and how many prompts were rebuilt and checked."""
    walked = list(walk(state.cast, merge(state.turns, state.blocks)))
    sights: dict[str, _Sight] = {}
    found: dict[tuple[str, str], list[Breach]] = {}
    checked = 0
    for turn, text in prompt_texts(state):
        checked += 1
        sight = sights.get(turn.actor)
        if sight is None or turn.number < sight.at:  # a record out of order: start again
            sight = sights[turn.actor] = _Sight(state, turn.actor, secrets)
        sight.up_to(turn.number, walked)
        for owner, mine in secrets.items():
            if owner == turn.actor:
                continue
            for secret in mine:
                if (owner, secret) in sight.pending and mentions(text, secret):
                    found.setdefault((owner, secret), []).append(
                        Breach(turn.number, turn.actor, "prompt")
                    )
    return {key: tuple(value) for key, value in found.items()}, checked
