"""Spend budgets: a per-scene budget (context.md) and a per-account daily one (the environment).

Invariant: a budget is never crossed. Before every model call the run's `SpendGuard` estimates
the call from the prompt it is about to send plus its reply cap, priced from litellm's local
cost map, and refuses it (BudgetExceeded) if spent + estimate would pass any budget; after the
call it counts what the provider reported. The decisions are pure functions of (limits, rows,
now); prices are looked up (litellm imported) only when a dollar budget applies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from engine import llm
from engine.catalog import Phrase
from engine.errors import BudgetExceeded, CircusError
from engine.ledger import Ledger
from engine.models import reply_cap

SCENE_SETTINGS = {"usd": "budget_usd", "tokens": "budget_tokens"}
DAILY_ENV = {"usd": "CIRCUS_DAILY_BUDGET_USD", "tokens": "CIRCUS_DAILY_BUDGET_TOKENS"}
MESSAGE_OVERHEAD = 8  # role markers and separators a chat template adds around each message


@dataclass(frozen=True)
class Spend:
    usd: float = 0.0
    tokens: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.usd + other.usd, self.tokens + other.tokens)

    def __sub__(self, other: Spend) -> Spend:
        return Spend(self.usd - other.usd, self.tokens - other.tokens)

    def of(self, unit: str) -> float:
        return self.usd if unit == "usd" else self.tokens


@dataclass(frozen=True)
class Limit:
    scope: str  # scene | day
    unit: str  # usd | tokens
    amount: float


@dataclass(frozen=True)
class Budget:
    """One limit and what is spent against it (today, for a daily one)."""

    scope: str  # scene | day
    unit: str  # usd | tokens
    limit: float
    spent: float

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.spent)

    @property
    def setting(self) -> str:
        return (SCENE_SETTINGS if self.scope == "scene" else DAILY_ENV)[self.unit]


# ----------------------------------------------------------------------------- limits
def scene_limits(settings: Mapping[str, Any], path: object = "context.md") -> tuple[Limit, ...]:
    """`budget_usd:` / `budget_tokens:` from context.md's front matter (absent: no limit)."""
    from engine.errors import BadSceneFile

    out = []
    for unit, key in SCENE_SETTINGS.items():
        value = settings.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            kind = "error.budget.kind_usd" if unit == "usd" else "error.budget.kind_tokens"
            raise BadSceneFile(
                path, "error.budget.setting", key=key, kind=Phrase(kind), value=value
            )
        out.append(Limit("scene", unit, float(value)))
    return tuple(out)


def daily_limits(env: Mapping[str, str]) -> tuple[Limit, ...]:
    """CIRCUS_DAILY_BUDGET_USD / _TOKENS: per account (a Discord server) per UTC day."""
    out = []
    for unit, key in DAILY_ENV.items():
        text = (env.get(key) or "").strip()
        if not text:
            continue
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if value < 0 or value != value:  # a typo must not silently lift the budget
            raise CircusError("error.budget.env", key=key, text=text)
        out.append(Limit("day", unit, value))
    return tuple(out)


def budgets(limits: Iterable[Limit], scene: Spend, day: Spend) -> tuple[Budget, ...]:
    return tuple(
        Budget(
            lim.scope, lim.unit, lim.amount, (scene if lim.scope == "scene" else day).of(lim.unit)
        )
        for lim in limits
    )


# ----------------------------------------------------------------------------- estimates
def estimate_tokens(text: str) -> int:
    """A deliberately high token count for `text`, without a tokenizer.

    One token per 3 ASCII characters (tokenizers average about 4) and 1.5 per other character
    (CJK takes 1–2 tokens a character, rarer ones more), rounded up: a budget check would
    rather stop one call early than cross.
    """
    narrow = len(text.encode("ascii", "ignore"))  # counted in C: prompts run to 100 KB
    wide = len(text) - narrow
    return (narrow + 2) // 3 + (3 * wide + 1) // 2


def prompt_tokens(messages: Iterable[Mapping[str, str]]) -> int:
    return MESSAGE_OVERHEAD + sum(
        estimate_tokens(str(m.get("content", ""))) + MESSAGE_OVERHEAD for m in messages
    )


def estimate(messages: Iterable[Mapping[str, str]], cap: int, price: llm.Price | None) -> Spend:
    """The most a call may cost: its prompt plus a full reply of `cap` tokens.

    A model without a known price counts in tokens only ($0), so the token budget is the one
    that bounds it.
    """
    prompt = prompt_tokens(messages)
    usd = prompt * price.input + cap * price.output if price is not None else 0.0
    return Spend(usd, prompt + cap)


def check(current: Iterable[Budget], cost: Spend | None = None) -> BudgetExceeded | None:
    """The refusal for the first budget that `cost` would cross (or that is used up)."""
    for b in current:
        if cost is None:
            if b.spent >= b.limit:
                return BudgetExceeded(b.scope, b.unit, b.limit, b.spent, None, b.setting)
        elif b.spent + cost.of(b.unit) > b.limit:
            return BudgetExceeded(b.scope, b.unit, b.limit, b.spent, cost.of(b.unit), b.setting)
    return None


# ----------------------------------------------------------------------------- spend
def row_spend(row: Mapping[str, Any]) -> Spend:
    """What one usage or ledger row spent; an unknown cost counts $0 (its tokens still count)."""
    try:
        usd = float(row.get("cost_usd") or 0.0)
        tokens = int(row.get("prompt_tokens") or 0) + int(row.get("completion_tokens") or 0)
    except (TypeError, ValueError):
        return Spend()
    return Spend(usd, tokens)


def total(rows: Iterable[Mapping[str, Any]]) -> Spend:
    out = Spend()
    for row in rows:
        out = out + row_spend(row)
    return out


def utc_day(now: datetime) -> date:
    return now.astimezone(UTC).date()


def day_spend(rows: Iterable[Mapping[str, Any]], now: datetime) -> Spend:
    """What the rows spent on `now`'s UTC day (a row without a readable time counts: caution)."""
    today = utc_day(now)
    out = Spend()
    for row in rows:
        try:
            at = datetime.fromisoformat(str(row["at"]))
            day = utc_day(at if at.tzinfo else at.replace(tzinfo=UTC))
        except (KeyError, ValueError):
            day = today
        if day == today:
            out = out + row_spend(row)
    return out


def utcnow() -> datetime:
    return datetime.now(UTC)


# ----------------------------------------------------------------------------- the gate
_reserved: dict[Path, Spend] = {}  # per ledger: calls in flight in this process
_reserved_lock = threading.Lock()


@dataclass(frozen=True)
class _Ticket:
    model: str
    role: str
    reserved: Spend
    prompt_usd: float
    prompt_tokens: int


class SpendGuard:
    """One run's spend gate (engine.llm.SpendGate): admits or refuses each call, counts each.

    Scene spend = the landed turns' usage rows (re-read each turn) + calls made since that did
    not land yet. Day spend = the account's ledger + calls in flight in this process, so two
    scenes of one server cannot both take the last dollar.
    """

    def __init__(
        self, scene: str, ledger: Ledger | None, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.scene = scene
        self.ledger = ledger
        self.clock = clock
        self.limits: tuple[Limit, ...] = ()
        self.landed = Spend()  # the scene's usage rows at the start of this turn
        self.pending = Spend()  # this turn's calls so far
        self.lost = Spend()  # calls of this run's turns that never landed (cut, failed)
        self._day_seen: tuple[date | None, int, Spend] = (None, 0, Spend())

    def begin_turn(self, limits: tuple[Limit, ...], landed: Spend) -> None:
        self.limits = limits
        self.landed = landed
        self.lost, self.pending = self.lost + self.pending, Spend()

    def turn_landed(self) -> None:
        """The turn's usage rows are on disk now: they count as landed from the next turn."""
        self.pending = Spend()

    @property
    def unlanded(self) -> Spend:
        return self.lost + self.pending

    def day_spent(self, now: datetime) -> Spend:
        if self.ledger is None:
            return Spend()
        day = utc_day(now)
        rows = self.ledger.rows(day)
        # The ledger only grows: add up only the rows appended since the last look.
        last_day, seen, spent = self._day_seen
        if last_day != day or seen > len(rows):  # a new day, or a file replaced by hand
            seen, spent = 0, Spend()
            seen, spent = 0, Spend()
        spent = spent + day_spend(rows[seen:], now)
        self._day_seen = (day, len(rows), spent)
        return spent

    def admit(self, call: llm.ModelCall, model: str) -> _Ticket:
        role = call.shape.speaker or call.shape.kind
        prompt = prompt_tokens(call.messages)
        if not self.limits:  # no budget: nothing to check, no price lookup
            return _Ticket(model, role, Spend(), 0.0, prompt)
        wants_usd = any(lim.unit == "usd" for lim in self.limits)
        price = llm.price(model) if wants_usd else None
        cost = estimate(call.messages, call.max_tokens or reply_cap(call.shape.kind), price)
        prompt_usd = prompt * price.input if price is not None else 0.0
        now = self.clock()
        key = self.ledger.folder if self.ledger is not None else None
        with _reserved_lock:
            in_flight = _reserved.get(key, Spend()) if key is not None else Spend()
            seen = budgets(
                self.limits, self.landed + self.unlanded, self.day_spent(now) + in_flight
            )
            refusal = check(seen, cost)
            if refusal is not None:
                raise refusal
            if key is not None:
                _reserved[key] = in_flight + cost
        return _Ticket(model, role, cost, prompt_usd, prompt)

    def settle(self, ticket: _Ticket, reply: llm.ModelReply | None, unsure: bool) -> None:
        key = self.ledger.folder if self.ledger is not None else None
        if key is not None and ticket.reserved != Spend():
            with _reserved_lock:
                left = _reserved.get(key, Spend()) - ticket.reserved
                _reserved[key] = left if left.tokens > 0 else Spend()
        if reply is not None:
            spent = Spend(reply.cost_usd or 0.0, reply.prompt_tokens + reply.completion_tokens)
            row = _row(ticket, reply.prompt_tokens, reply.completion_tokens, reply.cost_usd)
        elif unsure:  # cut or timed out: the provider may bill the prompt it was sent
            spent = Spend(ticket.prompt_usd, ticket.prompt_tokens)
            row = _row(ticket, ticket.prompt_tokens, 0, ticket.prompt_usd, estimated=True)
        else:  # the provider refused or failed: nothing billed
            return
        self.pending = self.pending + spent
        if self.ledger is not None:
            now = self.clock()
            row = {"at": now.isoformat(timespec="seconds"), "scene": self.scene, **row}
            self.ledger.append(utc_day(now), row)


def _row(
    ticket: _Ticket, prompt: int, completion: int, cost: float | None, estimated: bool = False
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "role": ticket.role,
        "model": ticket.model,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost_usd": cost,
    }
    if estimated:
        row["estimated"] = True
    return row
