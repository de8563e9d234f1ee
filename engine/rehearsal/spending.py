"""What a scene has spent and may still spend: its call record, its budgets, the spend gate of
its calls.

Invariant: every model call a rehearsal makes (a run's, a summary's) goes through a gate built
here, so it is recorded in the scene's calls.jsonl and the account's daily ledger as it
returns; a budget that is used up refuses before a call is made, never after.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.clock import utcnow
from engine.config import Config
from engine.folder.scene import CONTEXT, USAGE_LOG, SceneState
from engine.rehearsal.scene_access import SceneAccess
from engine.spend import budget, call_log
from engine.spend.budget import Budget, Limit, Spend, SpendGuard
from engine.spend.ledger import Ledger

if TYPE_CHECKING:
    from engine.door.llm import Models


class Spending:
    """A scene's spend and budgets (and, with `ledger`, its account's day)."""

    def __init__(
        self,
        scene: SceneAccess,
        door: Callable[[], Models],
        config: Config,
        ledger: Ledger | None,
    ) -> None:
        """`door` gives the model door (whose prices a gate asks), first asked for when a call
        is gated: reading what a scene spent never builds it."""
        self.scene, self.door, self.config, self.ledger = scene, door, config, ledger

    async def usage_rows(self) -> list[dict[str, Any]]:
        """The scene's usage rows (one per role per landed turn); unreadable lines and rows
        whose spend is not numbers ≥ 0 skipped (engine.spend.call_log)."""
        store = self.scene.store
        text = await store.read(USAGE_LOG) or ""
        return call_log.read_rows(text, store.path(USAGE_LOG))

    async def spend_rows(self) -> list[dict[str, Any]]:
        """Every call the scene paid for, landed or not (its calls.jsonl); for a scene from
        before that record, its usage rows."""
        rows = await call_log.read_call_rows(self.scene.store)
        return rows if rows is not None else await self.usage_rows()

    async def guard(self) -> SpendGuard:
        """A spend gate for this scene's calls: each is recorded in the scene's calls.jsonl and
        the account's daily ledger as it returns."""
        calls = await call_log.CallLog.open(self.scene.store, utcnow())
        return SpendGuard(
            self.scene.name, self.ledger, price=self.door().price, config=self.config, calls=calls
        )

    def limits(self, state: SceneState) -> tuple[Limit, ...]:
        """The budgets that apply: the scene's own, and the account's daily ones if any."""
        scene = budget.scene_limits(state.settings, self.scene.root / CONTEXT)
        return scene + (budget.daily_limits(self.config) if self.ledger is not None else ())

    async def scene_spent(self, state: SceneState) -> Spend:
        if not budget.scene_limits(state.settings, self.scene.root / CONTEXT):
            return Spend()  # nothing to compare it with: skip reading the call record
        return call_log.total(await self.spend_rows())

    def day_spent(self) -> Spend:
        if self.ledger is None:
            return Spend()
        now = utcnow()
        return call_log.day_spend(self.ledger.rows(call_log.utc_day(now)), now)

    async def budgets(self, state: SceneState | None = None) -> tuple[Budget, ...]:
        """Each budget that applies to this scene now, with what is spent against it."""
        state = state or await self.scene.state()
        limits = self.limits(state)
        if not limits:
            return ()
        return budget.budgets(limits, await self.scene_spent(state), self.day_spent())

    async def refuse_if_spent(self, state: SceneState) -> None:
        """BudgetExceeded now if a budget is used up: a run that cannot make one call never
        starts (and never takes the lock)."""
        refusal = budget.check(await self.budgets(state))
        if refusal is not None:
            raise refusal

    async def begin_turn(self, guard: SpendGuard, state: SceneState, take: int) -> None:
        """Tell `guard` the budgets, the scene's spend so far (its call record: every call
        made, landed or not) and the turn its calls are for."""
        guard.begin_turn(
            self.limits(state), await self.scene_spent(state), take=take, turn=state.last_turn + 1
        )
