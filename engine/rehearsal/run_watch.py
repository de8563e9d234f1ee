"""What a run notices after each turn lands, for alerts: voices starting to converge (the take
report's own test, engine.harvest.report.converging_pairs, kept incrementally) and each
budget's share spent — and whether a run asked to stop at a condition (`run --until`) has met
it.

Invariants: each fact is announced once, as it first holds (a pair of voices once per take; a
budget share each time it moves), after the turn that made it true has landed; nothing here
writes to the scene.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from engine.events import BudgetUsed, Event, EventHub, TurnCompleted, UntilMet, VoicesConverged
from engine.folder.scene import SceneState
from engine.folder.turns import Turn
from engine.harvest.report import CONVERGE_MIN_GRAMS, CONVERGE_SHARE
from engine.harvest.textstats import ngrams, tokens
from engine.rehearsal.alert_commands import facts_of
from engine.rehearsal.alerts import Condition, Match, fired
from engine.rehearsal.spending import Spending

Pair = tuple[str, str]


class Voices:
    """Each actor's distinct 4-grams in the working take, and how many each pair shares, grown
    turn by turn: a turn costs what its own line adds, never a walk of the take (the answer is
    `converging_pairs`' over the whole take, kept equal by a test)."""

    def __init__(self) -> None:
        self.take = 0
        self.count = 0  # turns counted
        self.last: Turn | None = None  # the last turn counted: a record cut back is noticed
        self.grams: dict[str, set[tuple[str, ...]]] = {}
        self.common: dict[frozenset[str], int] = {}  # a pair of actors -> 4-grams both said
        self.pairs: set[Pair] = set()

    def _add(self, turn: Turn) -> None:
        self.count, self.last = self.count + 1, turn
        if not turn.dialogue.strip():
            return
        mine = self.grams.setdefault(turn.actor, set())
        fresh = set(ngrams(tokens(turn.dialogue), 4)) - mine
        mine |= fresh
        for other, theirs in self.grams.items():
            if other != turn.actor and fresh:
                key = frozenset((turn.actor, other))
                self.common[key] = self.common.get(key, 0) + len(fresh & theirs)

    def _pairs(self) -> dict[Pair, float]:
        """What `converging_pairs` says of the grams so far (the best direction per pair)."""
        best: dict[frozenset[str], tuple[str, str, float]] = {}
        for a, ga in self.grams.items():
            if len(ga) < CONVERGE_MIN_GRAMS:
                continue
            for b in self.grams:
                key = frozenset((a, b))
                share = self.common.get(key, 0) / len(ga)
                if a != b and share >= CONVERGE_SHARE and share > best.get(key, ("", "", 0.0))[2]:
                    best[key] = (a, b, share)
        return {(a, b): share for a, b, share in best.values()}

    def _restart(self, take: int, turns: Sequence[Turn]) -> None:
        self.take, self.count, self.last, self.grams, self.common = take, 0, None, {}, {}
        for turn in turns:
            self._add(turn)
        self.pairs = set(self._pairs())

    def follows(self, take: int, turns: Sequence[Turn]) -> bool:
        """Whether `turns` (just landed) carry on the take counted so far, number by number:
        then `extend` adds them without the record."""
        if not turns or take != self.take or self.last is None:
            return False
        numbers = [self.last.number, *(t.number for t in turns)]
        return all(b == a + 1 for a, b in zip(numbers, numbers[1:], strict=False))

    def new_pairs(self, take: int, turns: Sequence[Turn]) -> list[tuple[str, str, float]]:
        """The pairs that converge now but did not before the last of `turns`."""
        counted = self.count
        if (
            take != self.take
            or len(turns) < counted
            or (counted and turns[counted - 1] != self.last)
        ):
            self._restart(take, turns[:-1])  # another take, or a record rewritten
        for turn in turns[self.count :]:
            self._add(turn)
        return self._fresh()

    def extend(self, landed: Sequence[Turn]) -> list[tuple[str, str, float]]:
        """`new_pairs` for turns that `follows` the take counted so far."""
        for turn in landed:
            self._add(turn)
        return self._fresh()

    def _fresh(self) -> list[tuple[str, str, float]]:
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
        self.limited = False  # the scene has budgets (as the run started, or the last load)
        self.landed: list[tuple[int, Turn]] = []  # (take, turn) announced since the last turn
        events.listen(self._landed)

    async def begin(self, state: SceneState) -> None:
        """A run starts: the shares as they stand are the baseline (not news)."""
        self.shares = await self._shares(state)

    def _landed(self, event: Event) -> None:
        if isinstance(event, TurnCompleted):
            turn = Turn(event.turn, event.actor, event.action, event.dialogue, event.cue)
            self.landed.append((event.take, turn))

    async def after_turn(self, take: int, load: Callable[[], Awaitable[SceneState]]) -> None:
        """After a turn landed: its voices from the turns the run announced (the record is
        loaded only when they do not carry on what was counted — a take rewritten meanwhile),
        and the budgets' shares when the scene has budgets."""
        landed = [turn for at, turn in self.landed if at == take]
        self.landed.clear()
        state: SceneState | None = None
        if self.voices.follows(take, landed):
            pairs = self.voices.extend(landed)
            number = landed[-1].number
        else:
            state = await load()
            if not state.turns:
                return
            pairs = self.voices.new_pairs(take, state.turns)
            number = state.turns[-1].number
        for a, b, share in pairs:
            self.events.emit(VoicesConverged(self.name, take, number, a, b, share))
        if not self.limited:
            return
        state = state or await load()
        for (scope, unit), share in (await self._shares(state)).items():
            before = self.shares.get((scope, unit), 0.0)
            if share != before:
                self.events.emit(BudgetUsed(self.name, take, number, scope, unit, before, share))
            self.shares[(scope, unit)] = share

    async def _shares(self, state: SceneState) -> dict[tuple[str, str], float]:
        self.limited = bool(self.spending.limits(state))
        if not self.limited:
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
