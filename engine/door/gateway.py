"""One model gateway: with CIRCUS_GATEWAY_URL set, every hosted model call goes to a LiteLLM proxy.

Invariant: when the gateway is on, no call to a hosted model leaves this process except to the
gateway (a soul's or scene's own api_base included); only the in-process models (scripted/,
circus-local/) stay here. The proxy's model names travel as litellm's `litellm_proxy/<name>`,
and what the proxy says a call cost (its `x-litellm-response-cost` header) is read as data.
Pure functions of a model name, a Config and a response.
"""

from __future__ import annotations

import math
from dataclasses import Field, replace
from typing import Any, ClassVar, Protocol, TypeVar

from engine.config import Config

PROXY = "litellm_proxy"  # litellm's provider for a LiteLLM proxy (OpenAI-compatible)
IN_PROCESS = ("scripted/", "circus-local/")  # engine.door.llm.LOCAL_PROVIDERS: never sent anywhere
# A proxy started without a master key accepts any key, but litellm sends none without one.
NO_KEY = "no-key"
COST_HEADER = "llm_provider-x-litellm-response-cost"  # how litellm hands the proxy's header on


def is_on(config: Config) -> bool:
    return bool(config.gateway_url)


def proxied(model: str, config: Config) -> str:
    """The name litellm is asked for: `litellm_proxy/<model>` through the gateway (a name that
    already says so is kept), the model itself when the gateway is off or the model is ours."""
    model = model.strip()
    if not is_on(config) or model.startswith(IN_PROCESS) or model.startswith(f"{PROXY}/"):
        return model
    return f"{PROXY}/{model}"


def base_for(model: str, api_base: str | None, config: Config) -> str | None:
    """Where a call to `model` goes: the gateway for every model sent through it."""
    return config.gateway_url if proxied(model, config).startswith(f"{PROXY}/") else api_base


class Routable(Protocol):
    """What routing reads of a call (engine.door.llm.ModelCall, a frozen dataclass): named here so
    this module need not import the door that imports it."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # a dataclass: `replace` works

    @property
    def model(self) -> str: ...
    @property
    def fallback_model(self) -> str | None: ...
    @property
    def extra(self) -> dict[str, Any]: ...
    @property
    def fallback_extra(self) -> dict[str, Any] | None: ...


Call = TypeVar("Call", bound=Routable)


def routed(call: Call, config: Config) -> Call:
    """`call` as it is sent: its model and fallback through the gateway, with the gateway's
    address and key. The same call when the gateway is off."""
    if not is_on(config):
        return call
    model = proxied(call.model, config)
    fallback = proxied(call.fallback_model, config) if call.fallback_model else None
    if not any(m and m.startswith(f"{PROXY}/") for m in (model, fallback)):
        return call
    key = {"api_key": config.gateway_key or NO_KEY}
    fallback_extra = call.fallback_extra
    if fallback_extra is not None:
        fallback_extra = {**fallback_extra, **key}
    return replace(
        call,
        model=model,
        fallback_model=fallback,
        api_base=config.gateway_url,
        extra={**call.extra, **key},
        fallback_extra=fallback_extra,
    )


def allowed_forms(model: str, config: Config) -> tuple[str, ...]:
    """The names an allow-list may know `model` by: as written, and as sent to the gateway
    (so `CIRCUS_ALLOWED_MODELS=litellm_proxy/*` allows every model the proxy serves)."""
    return tuple(dict.fromkeys((model, proxied(model, config))))


def priced_as(model: str) -> str | None:
    """The model whose list price estimates a gateway model's cost before the call (the proxy's
    name without `litellm_proxy/`: `litellm_proxy/gpt-4o` is priced as gpt-4o), None for others.
    The cost counted afterwards is the proxy's own (header_cost)."""
    head, slash, name = model.partition("/")
    return name if head == PROXY and slash and name else None


def header_cost(response: Any) -> float | None:
    """The cost the proxy reported for `response` in US dollars, or None when it sent none or
    sent something that is not a finite number ≥ 0 (then the call is priced from its tokens)."""
    hidden = getattr(response, "_hidden_params", None)
    headers = hidden.get("additional_headers") if isinstance(hidden, dict) else None
    return billed_cost(headers.get(COST_HEADER) if isinstance(headers, dict) else None)


def billed_cost(value: object) -> float | None:
    """The proxy's cost header's value as a cost: a finite number ≥ 0, else None."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return None
    try:
        cost = float(value)
    except ValueError:
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None
