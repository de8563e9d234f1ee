"""The bill of a table read: each line a speech model synthesises is priced per character,
checked against the budgets before it is asked for and recorded the moment it returns.

Invariant: as for model calls (engine.spend.budget), a budget is never crossed — a line whose
list price would pass the scene's or the day's dollar budget is refused before it is sent —
and every line made is a row in the scene's calls.jsonl and the account's daily ledger
(`kind: speech`, its `characters`), so a read spends from the same budgets as a run.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from engine.clock import utcnow
from engine.spend.budget import Limit, budgets, check
from engine.spend.call_log import CallLog, Spend, day_spend, row_spend, utc_day
from engine.spend.ledger import Ledger


class SpeechMeter:
    """One read's spend gate: `admit` before a line is synthesised, `settle` after."""

    def __init__(
        self,
        scene: str,
        take: int | None,
        limits: tuple[Limit, ...],
        recorded: Spend,
        *,
        ledger: Ledger | None,
        calls: CallLog | None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """`limits` are the budgets that apply, `recorded` what the scene had spent before."""
        self.scene, self.take, self.limits = scene, take, limits
        self.recorded, self.ledger, self.calls, self.clock = recorded, ledger, calls, clock
        self.spent = Spend()  # this read's lines so far
        self.unpriced = 0  # lines made by a model without a list price

    def _day(self, now: datetime) -> Spend:
        if self.ledger is None:
            return Spend()
        return day_spend(self.ledger.rows(utc_day(now)), now)

    def admit(self, characters: int, price: float | None) -> None:
        """BudgetExceeded if the line, at its list price, would cross a budget."""
        if not self.limits:
            return
        cost = Spend(characters * price if price is not None else 0.0, 0)
        now = self.clock()
        refusal = check(budgets(self.limits, self.recorded + self.spent, self._day(now)), cost)
        if refusal is not None:
            raise refusal

    def settle(self, model: str, role: str, characters: int, price: float | None) -> None:
        """Record one line made: in the scene's call record and the account's ledger."""
        row: dict[str, Any] = {
            "at": self.clock().isoformat(timespec="seconds"),
            "scene": self.scene,
            "take": self.take,
            "turn": None,
            "kind": "speech",
            "role": role,
            "model": model,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "characters": characters,
            "cost_usd": characters * price if price is not None else None,
        }
        if price is None:
            self.unpriced += 1
        self.spent = self.spent + row_spend(row)
        if self.calls is not None:
            self.calls.append(row)
        if self.ledger is not None:
            self.ledger.append(utc_day(datetime.fromisoformat(row["at"])), row)
