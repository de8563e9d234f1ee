"""What a provider says a call used, read as data: token counts and a cost we may count.

Invariant: every number handed on is a finite count ≥ 0 (a cost may be unknown). A reported
number that is not one — negative, NaN, infinite, text — is replaced by our own count of the
prompt and the reply (engine.door.tokens) and priced from it, with a warning to the operator, so a
reply can never refund a budget. Pure but for that warning and the counts.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from engine.door import tokens
from engine.door.values import Price

log = logging.getLogger("circus.engine")

_unreported: set[str] = set()  # models whose replies carry no usage at all (warned once)


def is_count(value: object) -> bool:
    """A finite number ≥ 0 (not a bool, not text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value >= 0


def usage_numbers(
    reported: tuple[object, object], own_prompt: Callable[[], int], own_reply: Callable[[], int]
) -> tuple[int, int, bool]:
    """(prompt, completion) tokens from a provider's reported usage, and whether we counted.

    A number that is not a count ≥ 0 is replaced by our own count; no usage at all (both
    missing) is a provider that does not report it: counted ourselves too.
    """
    prompt, completion = reported
    ok = (is_count(prompt), is_count(completion))
    return (
        int(prompt) if ok[0] else own_prompt(),  # type: ignore[call-overload]
        int(completion) if ok[1] else own_reply(),  # type: ignore[call-overload]
        not all(ok),
    )


def own_count(messages: Iterable[Mapping[str, str]], model: str) -> int:
    return sum(tokens.count(str(m.get("content", "")), model) for m in messages)


def reply_usage(
    usage: Any,
    messages: Iterable[Mapping[str, str]],
    text: str,
    model: str,
    cost: Callable[[], float | None],
    price: Callable[[str], Price | None],
) -> tuple[int, int, float | None]:
    """(prompt tokens, reply tokens, cost) of one reply: what the provider reported where it
    is usable (`cost` asks litellm for the reported usage's price), our own count and price
    (`price`) where it is not."""
    reported = (_field(usage, "prompt_tokens"), _field(usage, "completion_tokens"))
    prompt, completion, counted = usage_numbers(
        reported, lambda: own_count(messages, model), lambda: tokens.count(text, model)
    )
    if counted:
        if reported != (None, None) or model not in _unreported:  # a silent one: say it once
            _unreported.add(model)
            why = "%s reported usage %r, not token counts: counted %d prompt and %d reply tokens"
            log.warning(why, model, reported, prompt, completion)
        return prompt, completion, priced(price(model), prompt, completion)
    reported_cost = cost()
    if reported_cost is not None and not is_count(reported_cost):
        log.warning("%s came with a cost of %r: priced from its token counts", model, reported_cost)
        return prompt, completion, priced(price(model), prompt, completion)
    return prompt, completion, reported_cost


def _field(usage: Any, name: str) -> Any:
    """A usage field, from litellm's Usage object or a plain mapping (an in-process model's)."""
    return usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)


def priced(known: Price | None, prompt: int, completion: int) -> float | None:
    return None if known is None else prompt * known.input + completion * known.output
