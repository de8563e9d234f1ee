"""The one narrow door to language models: every model call goes through a `Models` door.

The engine is handed a door (`Rehearsal(root, models=...)`); `LiteLLMModels` is the default and
engine.providers.scripted's `ScriptedModels` the test double (it registers itself with a door like any
in-process provider: this module never imports it). litellm is imported through
engine.door.boot, lazily and offline-safe, so `circus --help` stays instant and an offline
machine never stalls. Retries, timeouts and the
per-actor fallback model live here; callers get a `ModelReply` or a `ModelError`, never a
provider exception. The spend gate and the reply shape travel with each call, explicitly.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from engine.config import DEFAULT_RETRIES, DEFAULT_TURN_TIMEOUT, Config
from engine.door import caching, failures, gateway, prices, wire
from engine.door.boot import (
    LOCAL_PROVIDERS,
    litellm_module,
    load_soon,
    local_call,
    settle_imports,
)
from engine.door.caching import Pieces
from engine.door.metering import priced, reply_usage
from engine.door.served import served_models
from engine.door.values import EMBEDDED_MODEL, Price, ReplyShape
from engine.errors import CircusError, ModelError
from engine.redact import redact
from engine.vocabulary import CallPurpose, Transport

log = logging.getLogger("circus.engine")


@dataclass(frozen=True)
class ModelCall:
    model: str
    messages: tuple[dict[str, str], ...]
    temperature: float | None = None
    api_base: str | None = None
    timeout: float = DEFAULT_TURN_TIMEOUT
    fallback_model: str | None = None
    shape: ReplyShape = field(default_factory=lambda: ReplyShape("free"))
    max_tokens: int | None = None
    retries: int = DEFAULT_RETRIES
    extra: dict[str, Any] = field(default_factory=dict)
    # The messages cut where they stay identical call to call (engine.door.caching): models whose
    # prompt cache needs breakpoints get them as marked content blocks; others read the text.
    pieces: tuple[Pieces | None, ...] = ()
    # The fallback model's own provider options (its Ollama num_ctx, its JSON schema or none):
    # the primary's `extra` may be refused by another provider. None: the fallback uses `extra`.
    fallback_extra: dict[str, Any] | None = None
    purpose: CallPurpose | None = None  # what the spend record calls it (None: its shape)


@dataclass(frozen=True)
class ModelReply:
    text: str
    model: str
    prompt_tokens: int = 0  # all of them, read from the provider's cache or not
    completion_tokens: int = 0
    cost_usd: float | None = None  # at the provider's cache read and write rates
    cached_tokens: int = 0  # prompt tokens read from the provider's cache
    cache_write_tokens: int = 0  # prompt tokens written to it (Anthropic bills them extra)
    cache_saved_usd: float = 0.0  # what the call would have cost uncached, minus cost_usd


class SpendGate(Protocol):
    """Asked before each attempt (it may refuse by raising a CircusError); told after how it
    went: the reply, or None (`unsure` when the call was cut, timed out or answered with a
    reply litellm cannot read, so it may be billed)."""

    def admit(self, call: ModelCall, model: str) -> Any: ...

    def settle(self, ticket: Any, reply: ModelReply | None, unsure: bool) -> None: ...


class Models(Protocol):
    """The model door the engine is handed (`Rehearsal(root, models=...)`)."""

    async def complete(self, call: ModelCall, *, gate: SpendGate | None = None) -> ModelReply:
        """Ask `call.model` (then its fallback); ModelError when all fail. `gate` admits each
        attempt first; its refusal (a CircusError) propagates and the call is never made."""
        ...

    def price(self, model: str) -> Price | None:
        """US dollars per token of `model`; None when unknown (imports litellm)."""
        ...

    def warm(self) -> None:
        """Load what the first call would otherwise wait for (blocking: run it in a thread)."""
        ...


# litellm's and OpenAI's names for failures worth another try (engine.door.wire names its own
# the same way), read from the class names so that no litellm import is needed to tell.
RETRYABLE = frozenset(
    {
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "APIConnectionError",
        "Timeout",
    }
)


def _is_retryable(exc: BaseException) -> bool:
    if any(c.__name__ in RETRYABLE for c in type(exc).__mro__):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def _backoff(attempt: int, exc: BaseException, base: float) -> float:
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(retry_after, (int, float)) and 0 < retry_after < 30:
        return float(retry_after)
    return base * (2**attempt) * (0.5 + random.random() / 2)


def transport(model: str, extra: dict[str, Any], config: Config) -> Transport:
    """How a call to `model` leaves the door: an in-process provider called directly, the
    OpenAI-compatible wire spoken by engine.door.wire, or litellm for every other provider."""
    if model.split("/", 1)[0] in LOCAL_PROVIDERS:
        return "in_process"
    if config.direct_http and wire.serves(model, extra):
        return "wire"
    return "litellm"


@dataclass(frozen=True)
class _Said:
    """A model's answer, whichever way it came: its text, its usage as reported (an object or
    a mapping), and how to price it (blocking; litellm, when needed, is loaded by then)."""

    text: str
    usage: Any
    cost: Callable[[], float | None]
    litellm: Any = None  # loaded: the full-rate price of the cached tokens may be asked


def _request_params(call: ModelCall) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if call.temperature is not None:
        params["temperature"] = call.temperature
    if call.max_tokens:
        params["max_tokens"] = call.max_tokens
    return params


async def _in_process(call: ModelCall, model: str, local: dict[str, Any]) -> _Said:
    """Ask a provider that lives in this process (engine.providers): no litellm at all."""
    params = {**_request_params(call), **call.extra, **local}
    complete = local_call(model.split("/", 1)[0])
    try:
        body = await complete(model, [dict(m) for m in call.messages], params)
    except CircusError as exc:  # the model cannot take this call (a prompt too long for it)
        raise wire.BadRequestError(str(exc), 400) from exc  # a failure of the call: not retried
    usage = body.get("usage")
    text = body["choices"][0]["message"].get("content") or ""

    def cost() -> float | None:
        # In-process models are free unless the operator (or a test) registered a price;
        # reply_usage asks only when both counts are usable.
        known = prices.registered(model) or Price(0.0, 0.0)
        return priced(known, usage["prompt_tokens"], usage["completion_tokens"])

    return _Said(text, usage, cost)


async def _over_wire(call: ModelCall, model: str, config: Config) -> _Said:
    """Send the call ourselves (engine.door.wire); price the reply as litellm would."""
    messages = caching.request_messages(call.messages, call.pieces, model)
    req = wire.request(
        model,
        messages,
        api_base=call.api_base,
        temperature=call.temperature,
        max_tokens=call.max_tokens,
        extra=call.extra,
    )
    provider = wire.provider_of(model)
    # litellm will price the reply (a proxy bills its own): it loads while the model thinks,
    # from the moment the request is out, not once the answer is in
    sent = load_soon if provider != "litellm_proxy" else None
    status, text, headers = await wire.send(req, call.timeout, on_sent=sent)
    if not 200 <= status < 300:
        raise wire.refusal(provider, status, text, headers)
    answer = wire.read(provider, text, headers)
    billed = gateway.billed_cost(answer.header_cost)
    counted = answer.usage is not None and caching.cache_tokens(answer.usage) == (0, 0)
    if billed is not None and counted:
        return _Said(answer.text, answer.usage, lambda: billed)  # the proxy's word: no litellm
    # Priced as litellm prices it: loaded now, after the answer, never before a request.
    settle_imports()  # before the thread: an import race would fail this thread or another
    litellm = await asyncio.to_thread(litellm_module)
    response = _as_response(litellm, answer, model)
    return _Said(answer.text, response.usage, lambda: _cost(litellm, response, model), litellm)


def _as_response(litellm: Any, answer: wire.Answer, model: str) -> Any:
    """The reply as the litellm response it would have made of it, for litellm to price."""
    response = litellm.ModelResponse(
        model=model,
        choices=[
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": answer.text},
            }
        ],
        usage=dict(answer.usage) if answer.usage is not None else None,
    )
    if answer.usage is None:  # litellm fills a usage in (zeros) where none was given
        response.usage = None
    if answer.header_cost is not None:
        response._hidden_params["additional_headers"] = {gateway.COST_HEADER: answer.header_cost}
    return response


async def _through_litellm(
    litellm: Any, call: ModelCall, model: str, local: dict[str, Any]
) -> _Said:
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": caching.request_messages(call.messages, call.pieces, model),
        "timeout": call.timeout,
        "num_retries": 0,
        **_request_params(call),
    }
    if call.api_base:
        kwargs["api_base"] = call.api_base
    kwargs.update(call.extra)
    kwargs.update(local)  # litellm hands unknown keywords to a CustomLLM in optional_params
    response = await litellm.acompletion(**kwargs)
    text = response.choices[0].message.content or ""
    usage = getattr(response, "usage", None)
    return _Said(text, usage, lambda: _cost(litellm, response, model), litellm)


def _reply(call: ModelCall, model: str, said: _Said) -> ModelReply:
    """The ModelReply of what a model said: its usage read as data (engine.door.metering)."""
    prompt_tokens, completion_tokens, cost = reply_usage(  # a provider's numbers are data
        said.usage, call.messages, said.text, model, cost=said.cost, price=price
    )
    reply = ModelReply(
        text=said.text,
        model=model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost,
    )
    return _with_cache(said.litellm, reply, said.usage)


def _with_cache(litellm: Any, reply: ModelReply, usage: Any) -> ModelReply:
    """The reply with what the provider's prompt cache did (engine.door.caching reads the usage) and
    what that saved: the call's price with every prompt token at the full input rate, minus
    what it cost (a cache write alone makes it negative)."""
    read, wrote = caching.cache_tokens(usage)
    if not (read or wrote):
        return reply
    saved = 0.0
    if reply.cost_usd is not None and litellm is not None:
        try:
            full = litellm.cost_per_token(
                model=reply.model,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
            )
            saved = float(sum(full)) - reply.cost_usd
        except Exception:  # no price for the model: nothing known to have been saved
            saved = 0.0
    return replace(reply, cached_tokens=read, cache_write_tokens=wrote, cache_saved_usd=saved)


def _cost(litellm: Any, response: Any, model: str) -> float | None:
    """Price of one response: what a LiteLLM proxy said it cost (engine.door.gateway), else where
    litellm knows the model's price; None where it does not."""
    billed = gateway.header_cost(response)
    if billed is not None:
        return billed
    try:
        return float(litellm.completion_cost(completion_response=response, model=model))
    except Exception:  # unknown price is normal for local and custom models
        return None


def price(model: str) -> Price | None:
    """What `model` costs per token: the operator's price, else litellm's local cost map; None
    when unknown. In-process models cost nothing unless a price was registered.
    Imports litellm for any other model: call it only when a budget needs a price.
    """
    known = prices.registered(model)
    if known is not None:
        return known
    if model.split("/", 1)[0] in LOCAL_PROVIDERS:
        return Price(0.0, 0.0)
    litellm = litellm_module()
    entry = litellm.model_cost.get(model)
    if isinstance(entry, dict):
        try:
            return Price(
                float(entry["input_cost_per_token"]), float(entry["output_cost_per_token"])
            )
        except (KeyError, TypeError, ValueError):
            pass
    listed = gateway.priced_as(model)  # a gateway's model: its list price, as an estimate
    if listed is not None:
        return price(listed)
    try:
        info = litellm.get_model_info(model)
        return Price(float(info["input_cost_per_token"]), float(info["output_cost_per_token"]))
    except Exception:  # unknown model, or an entry without per-token prices
        return None


class LiteLLMModels:
    """The default door: every model through litellm (hosted, Ollama, and the in-process
    `scripted/` and `circus-local/` providers), configured by the operator's Config."""

    def __init__(self, config: Config | None = None) -> None:
        self.config = config or Config.from_env(os.environ)  # a library caller's: read once
        # What an in-process provider keeps for this door, under its prefix (engine.providers.scripted
        # keeps the scripts that answer `scripted/...` here): a provider registers itself.
        self.local: dict[str, Any] = {}
        # A door that will send over the wire or through litellm loads litellm in a thread
        # sooner or later (to price a reply, to route, to count): settle what both reach now.
        defaults = [self.config.model or EMBEDDED_MODEL, self.config.stage_manager_model]
        if any(transport(m, {}, self.config) != "in_process" for m in defaults if m):
            settle_imports()

    def _litellm(self) -> Any:
        prices.load_file(self.config.model_prices)
        return litellm_module()

    def warm(self) -> None:
        """Load litellm ahead of the first call (blocking) — when the operator's default models
        are sent through it; the door's own wire and in-process models never need it."""
        defaults = [self.config.model or EMBEDDED_MODEL, self.config.stage_manager_model]
        if any(
            transport(gateway.proxied(m, self.config), {}, self.config) == "litellm"
            for m in defaults
            if m
        ):
            self._litellm()

    def price(self, model: str) -> Price | None:
        prices.load_file(self.config.model_prices)
        return price(model)

    def _local(self, call: ModelCall, model: str) -> dict[str, Any]:
        """What an in-process provider needs besides the messages: the reply shape (the
        embedded model's grammar, the scripts' cast), and the door asking (whose scripts
        answer)."""
        provider = model.split("/", 1)[0]
        if provider == "scripted":
            return {"circus_shape": call.shape, "circus_door": self}
        if provider == "circus-local":
            return {
                "circus_shape": call.shape,
                "circus_threads": self.config.embedded_threads,
                "circus_cache_bytes": self.config.embedded_cache_mb << 20,
            }
        return {}

    async def complete(self, call: ModelCall, *, gate: SpendGate | None = None) -> ModelReply:
        """Ask one model (then its fallback) with retries; raise ModelError when all fail.

        litellm's own retries are off (num_retries=0): this loop is kept because it asks the
        spend gate before every attempt (fallback included), never retries a cut, and moves
        on to the actor's fallback model — none of which litellm's retry does.
        """
        prices.load_file(self.config.model_prices)
        call = gateway.routed(call, self.config)  # through the LiteLLM proxy, when there is one
        models = [call.model] + ([call.fallback_model] if call.fallback_model else [])
        last: BaseException | None = None
        for model in models:
            local = self._local(call, model)
            asked = call
            if model != call.model and call.fallback_extra is not None:
                asked = replace(call, extra=call.fallback_extra)
            for attempt in range(call.retries + 1):
                try:
                    return await self._gated_call(asked, model, local, gate)
                except (asyncio.CancelledError, CircusError):
                    raise  # a cut, or a spend gate's refusal: never retried
                except TimeoutError as exc:
                    last = exc
                    if attempt < call.retries:
                        continue
                except Exception as exc:  # provider errors arrive as many litellm types
                    last = exc
                    if attempt < call.retries and _is_retryable(exc) and not _answered(exc):
                        await asyncio.sleep(_backoff(attempt, exc, self.config.retry_base_seconds))
                        continue
                    break
        raise await self._failed(call.model, last)

    async def _call_once(self, call: ModelCall, model: str, local: dict[str, Any]) -> ModelReply:
        way = transport(model, call.extra, self.config)
        # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cut (a cancellation)
        # that arrives just as the model answers.
        async with asyncio.timeout(call.timeout):
            if way == "in_process":
                said = await _in_process(call, model, local)
            elif way == "wire":
                said = await _over_wire(call, model, self.config)
            else:
                settle_imports()
                litellm = await asyncio.to_thread(self._litellm)  # seconds, the first time
                said = await _through_litellm(litellm, call, model, local)
        return _reply(call, model, said)

    async def _gated_call(
        self, call: ModelCall, model: str, local: dict[str, Any], gate: SpendGate | None
    ) -> ModelReply:
        if gate is None:
            return await self._call_once(call, model, local)
        ticket = gate.admit(call, model)
        reply: ModelReply | None = None
        unsure = False  # the provider may have charged for a call we got no usable reply from
        try:
            reply = await self._call_once(call, model, local)
            return reply
        except (asyncio.CancelledError, TimeoutError):
            unsure = True
            raise
        except Exception as exc:
            unsure = _answered(exc)
            if unsure:
                log.warning("%s answered with a reply it cannot read: counted at its most", model)
            raise
        finally:
            gate.settle(ticket, reply, unsure)

    async def _failed(self, model: str, last: BaseException | None) -> ModelError:
        """The error people see for `last`: its kind from its status and type (never its words),
        a model the proxy turned down checked against the proxy's own list, and the provider's
        words redacted (engine.redact) — a server may echo a key in them."""
        why = _describe(last, self.config.secrets)
        if last is None:
            return ModelError(model, why)
        via = gateway.priced_as(model) is not None  # the call went to the LiteLLM proxy
        found = failures.signs(last)
        kind = failures.kind_of(found, via_gateway=via)
        if via and kind == "error" and found.status == 400:
            name = gateway.priced_as(model) or model
            served = await served_models(self.config)
            if failures.not_served(name, served):
                return ModelError(name, why, kind="not_served", served=served)
        return ModelError(model, why, kind=kind)


def _answered(exc: BaseException) -> bool:
    """The provider answered (and billed) but litellm could not read the reply — e.g. usage
    that is not numbers (NaN, text) fails its response model. Never retried: asking again is
    billed again for the same unreadable answer."""
    return "Invalid response object" in str(exc)


def _describe(exc: BaseException | None, secrets: tuple[str, ...] = ()) -> str:
    """One line a person may read: redacted whole before it is cut, so a key that straddles
    the cut is masked too (engine.redact)."""
    if exc is None:
        return "no reply"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "the model did not answer in time"
    text = redact(str(exc), secrets).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]
