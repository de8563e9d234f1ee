"""What a run notices after each turn lands, for alerts: voices starting to converge (the take
report's own test, engine.harvest.report.converging_pairs) and each budget's share spent — and
whether a run asked to stop at a condition (`run --until`) has met it.

Invariants: each fact is announced once, as it first holds (a pair of voices once per take; a
budget share each time it moves), after the turn that made it true has landed; nothing here
writes to the scene.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.events import BudgetUsed, Event, EventHub, UntilMet, VoicesConverged
from engine.folder.scene import SceneState
from engine.folder.turns import Turn
from engine.harvest.report import converging_pairs
from engine.harvest.textstats import ngrams, tokens
from engine.rehearsal.alert_commands import facts_of
from engine.rehearsal.alerts import Condition, Match, fired
from engine.rehearsal.spending import Spending

Pair = tuple[str, str]


class Voices:
    """Each actor's distinct 4-grams in the working take, grown turn by turn."""

    def __init__(self) -> None:
        self.take = 0
        self.seen: list[Turn] = []  # the turns counted, in order
        self.grams: dict[str, set[tuple[str, ...]]] = {}
        self.pairs: set[Pair] = set()

    def _add(self, turn: Turn) -> None:
        if turn.dialogue.strip():
            mine = self.grams.setdefault(turn.actor, set())
            mine.update(ngrams(tokens(turn.dialogue), 4))
        self.seen.append(turn)

    def _pairs(self) -> dict[Pair, float]:
        return {(a, b): share for a, b, share in converging_pairs({}, self.grams)}

    def _restart(self, take: int, turns: Sequence[Turn]) -> None:
        self.take, self.seen, self.grams = take, [], {}
        for turn in turns:
            self._add(turn)
        self.pairs = set(self._pairs())

    def new_pairs(self, take: int, turns: Sequence[Turn]) -> list[tuple[str, str, float]]:
        """The pairs that converge now but did not before the last of `turns`."""
        if take != self.take or list(turns[: len(self.seen)]) != self.seen:
            self._restart(take, turns[:-1])  # another take, or a record rewritten
        for turn in turns[len(self.seen) :]:
            self._add(turn)
        now = self._pairs()
        fresh = [(a, b, share) for (a, b), share in now.items() if (a, b) not in self.pairs]
        self.pairs |= set(now)
        return fresh


class RunWatch:
    """After each landed turn: VoicesConverged for a newly converging pair, BudgetUsed for a
    budget whose spent share moved."""

    def __init__(self, events: EventHub, name: str, spending: Spending) -> None:
        self.events, self.name, self.spending = events, name, spending
        self.voices = Voices()
        self.shares: dict[tuple[str, str], float] = {}

    async def begin(self, state: SceneState) -> None:
        """A run starts: the shares as they stand are the baseline (not news)."""
        self.shares = await self._shares(state)

    async def after_turn(self, state: SceneState, take: int) -> None:
        if not state.turns:
            return
        number = state.turns[-1].number
        for a, b, share in self.voices.new_pairs(take, state.turns):
            self.events.emit(VoicesConverged(self.name, take, number, a, b, share))
        for (scope, unit), share in (await self._shares(state)).items():
            before = self.shares.get((scope, unit), 0.0)
            if share != before:
                self.events.emit(BudgetUsed(self.name, take, number, scope, unit, before, share))
            self.shares[(scope, unit)] = share

    async def _shares(self, state: SceneState) -> dict[tuple[str, str], float]:
        if not self.spending.limits(state):
            return {}
        return {
            (b.scope, b.unit): (b.spent / b.limit if b.limit > 0 else 1.0)
            for b in await self.spending.budgets(state)
        }


class Until:
    """A run's stop conditions: the events of each turn are kept, and `met` says whether one of
    them met a condition (announced as UntilMet)."""

    def __init__(self, events: EventHub, name: str, conditions: Sequence[Condition]) -> None:
        self.events, self.name, self.conditions = events, name, tuple(conditions)
        self.seen: list[Event] = []
        self._unlisten: Callable[[], None] = (
            events.listen(self.seen.append) if conditions else lambda: None
        )

    async def met(self, state: SceneState) -> Match | None:
        """The first condition met by the events since the last call (then UntilMet)."""
        seen, self.seen[:] = list(self.seen), []
        if not self.conditions:
            return None
        facts = facts_of(state)
        for event in seen:
            for match in fired(self.conditions, event, facts):
                condition = self.conditions[match.index].text
                self.events.emit(
                    UntilMet(self.name, match.take, match.turn, condition, match.code, match.fields)
                )
                return match
        return None

    def close(self) -> None:
        self._unlisten()
