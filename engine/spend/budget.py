"""Spend budgets: a per-scene budget (context.md) and a per-account daily one (the environment).

Invariant: a budget is never crossed. Before every model call the run's `SpendGuard` estimates
the call from the prompt it is about to send plus its reply cap, priced from litellm's local
cost map, and refuses it (BudgetExceeded) if spent + estimate would pass any budget; when the
call returns it records it (engine.spend.call_log), landed or not, at what the provider reported. The decisions are pure functions of (limits, rows,
now); prices are looked up (litellm imported) only when a dollar budget applies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from engine.catalog import Phrase
from engine.clock import utcnow
from engine.config import Config
from engine.door.metering import is_count
from engine.errors import BudgetExceeded, CircusError
from engine.folder.role_models import reply_cap
from engine.spend.call_log import CallLog, Spend, day_spend, row_spend, utc_day
from engine.spend.ledger import Ledger
from engine.vocabulary import CallPurpose

if TYPE_CHECKING:  # hints only: a budget is read (`circus status`) without the model door
    from engine.door import llm

SCENE_SETTINGS = {"usd": "budget_usd", "tokens": "budget_tokens"}
DAILY_ENV = {"usd": "CIRCUS_DAILY_BUDGET_USD", "tokens": "CIRCUS_DAILY_BUDGET_TOKENS"}
MESSAGE_OVERHEAD = 8  # role markers and separators a chat template adds around each message


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


def daily_limits(config: Config) -> tuple[Limit, ...]:
    """CIRCUS_DAILY_BUDGET_USD / _TOKENS: per account (a Discord server) per UTC day."""
    out = []
    for unit, key in DAILY_ENV.items():
        raw = config.daily_budget_usd if unit == "usd" else config.daily_budget_tokens
        text = (raw or "").strip()
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


# ----------------------------------------------------------------------------- the gate
_reserved: dict[Path, Spend] = {}  # per ledger: calls in flight in this process
_reserved_lock = threading.Lock()


@dataclass(frozen=True)
class _Ticket:
    model: str
    kind: CallPurpose | Literal["free"]  # the call's purpose, else its reply shape
    role: str
    fallback: bool  # the call's fallback model, after its own model failed
    reserved: Spend  # what this call holds of a shared daily budget while it is in flight
    prompt_tokens: int  # its prompt, counted high (prompt_tokens)
    cap: int  # the longest reply it may get
    price: llm.Price | None  # looked up only for a dollar budget


class SpendGuard:
    """One run's spend gate (engine.door.llm.SpendGate): admits or refuses each call, records each.

    Every call that returns (or is cut, or times out: the provider may bill it) is recorded at
    once in the scene's call record and the account's daily ledger, landed or not. Scene spend
    = that record as read at the start of the turn + this turn's calls since. Day spend = the
    ledger + calls in flight in this process, so two scenes of one server cannot both take the
    last dollar.
    """

    def __init__(
        self,
        scene: str,
        ledger: Ledger | None,
        clock: Callable[[], datetime] = utcnow,
        *,
        price: Callable[[str], llm.Price | None] | None = None,
        config: Config,
        calls: CallLog | None = None,
    ) -> None:
        """`price` answers what a model costs (the run's model door); `config` gives the reply
        cap a call without its own max_tokens is estimated at; `calls` is the scene's record of
        every call (engine.spend.call_log). Without `price`, the door's list prices."""
        if price is None:
            from engine.door.llm import price as list_price

            price = list_price
        self.price = price
        self.scene = scene
        self.ledger = ledger
        self.clock = clock
        self.config = config
        self.calls = calls
        self.limits: tuple[Limit, ...] = ()
        self.recorded = Spend()  # the scene's call record at the start of this turn
        self.pending = Spend()  # this turn's calls so far
        self.take: int | None = None
        self.turn: int | None = None
        self.spent = Spend()  # every call this gate recorded: a run's whole spend, as billed
        self.priced = 0  # of those calls, how many had a known price
        self.unpriced = 0  # and how many had none
        self._day_seen: tuple[date | None, int, Spend] = (None, 0, Spend())

    def begin_turn(
        self,
        limits: tuple[Limit, ...],
        recorded: Spend,
        *,
        take: int | None = None,
        turn: int | None = None,
    ) -> None:
        """A new turn (or a lone call): the budgets that apply, the scene's spend as its call
        record says now (it holds every earlier call), and where the calls belong."""
        self.limits = limits
        self.recorded = recorded
        self.pending = Spend()
        self.take, self.turn = take, turn

    def day_spent(self, now: datetime) -> Spend:
        if self.ledger is None:
            return Spend()
        day = utc_day(now)
        rows = self.ledger.rows(day)
        # The ledger only grows: add up only the rows appended since the last look.
        last_day, seen, spent = self._day_seen
        if last_day != day or seen > len(rows):  # a new day, or a file replaced by hand
            seen, spent = 0, Spend()
        spent = spent + day_spend(rows[seen:], now)
        self._day_seen = (day, len(rows), spent)
        return spent

    def admit(self, call: llm.ModelCall, model: str) -> _Ticket:
        role = call.shape.speaker or call.shape.kind
        kind = call.purpose or call.shape.kind
        fallback = model != call.model
        cap = call.max_tokens or reply_cap(call.shape.kind, self.config)
        prompt = prompt_tokens(call.messages)
        if not self.limits:  # no budget: nothing to check, no price lookup
            return _Ticket(model, kind, role, fallback, Spend(), prompt, cap, None)
        wants_usd = any(lim.unit == "usd" for lim in self.limits)
        price = self.price(model) if wants_usd else None
        cost = estimate(call.messages, cap, price)
        now = self.clock()
        key = self.ledger.folder if self.ledger is not None else None
        with _reserved_lock:
            in_flight = _reserved.get(key, Spend()) if key is not None else Spend()
            seen = budgets(
                self.limits, self.recorded + self.pending, self.day_spent(now) + in_flight
            )
            refusal = check(seen, cost)
            if refusal is not None:
                raise refusal
            if key is not None:
                _reserved[key] = in_flight + cost
        return _Ticket(model, kind, role, fallback, cost, prompt, cap, price)

    def settle(self, ticket: _Ticket, reply: llm.ModelReply | None, unsure: bool) -> None:
        key = self.ledger.folder if self.ledger is not None else None
        if key is not None and ticket.reserved != Spend():
            with _reserved_lock:
                left = _reserved.get(key, Spend()) - ticket.reserved
                _reserved[key] = left if left.tokens > 0 else Spend()
        if reply is not None:
            # A door other than engine.door.llm's may hand back raw numbers: never a refund.
            prompt = int(_count(reply.prompt_tokens))
            completion = int(_count(reply.completion_tokens))
            cost = None if reply.cost_usd is None else float(_count(reply.cost_usd))
            row = self._row(ticket, prompt, completion, cost)
        elif unsure:  # cut, timed out or unreadable: billed for all we know, as much as it may
            row = self._row(ticket, ticket.prompt_tokens, ticket.cap, self._most_usd(ticket), True)
        else:  # the provider refused or failed: nothing billed
            return
        self.pending = self.pending + row_spend(row)
        self.spent = self.spent + row_spend(row)
        if row["cost_usd"] is None:
            self.unpriced += 1
        else:
            self.priced += 1
        if self.calls is not None:
            self.calls.append(row)
        if self.ledger is not None:
            self.ledger.append(utc_day(datetime.fromisoformat(row["at"])), row)

    def _most_usd(self, ticket: _Ticket) -> float | None:
        """The most an unsure call may cost in dollars (None: nobody knows its price)."""
        known = ticket.price or self.price(ticket.model)  # litellm is loaded: a call was made
        if known is None:
            return None
        return ticket.prompt_tokens * known.input + ticket.cap * known.output

    def _row(
        self,
        ticket: _Ticket,
        prompt: int,
        completion: int,
        cost: float | None,
        estimated: bool = False,
    ) -> dict[str, Any]:
        """One call as the call record and the daily ledger keep it."""
        row: dict[str, Any] = {
            "at": self.clock().isoformat(timespec="seconds"),
            "scene": self.scene,
            "take": self.take,
            "turn": self.turn,
            "kind": ticket.kind,
            "role": ticket.role,
            "model": ticket.model,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost_usd": cost,
        }
        if ticket.fallback:
            row["fallback"] = True
        if estimated:
            row["estimated"] = True
        return row


def _count(value: object) -> int | float:
    """A reported number as spend: itself if it is a finite number ≥ 0, else 0."""
    return value if is_count(value) else 0  # type: ignore[return-value]
