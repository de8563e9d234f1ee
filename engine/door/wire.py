"""The OpenAI-compatible wire, spoken by the door itself: no litellm import before a request.

Invariant: for a model of a provider in WIRE_PROVIDERS, `request` builds the very URL, key and
body litellm would send, and `read` turns the server's answer into the text, usage and failure
that litellm would have handed the door (tests/engine/test_wire.py holds both to litellm's own,
on the same loopback fakes); a call this module cannot promise that for (`serves` is False)
goes through litellm. Pure functions, and one `send` that does the HTTP.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# litellm's providers that speak OpenAI's chat completions (or, for ollama_chat, Ollama's
# /api/chat) and that the door sends itself.
log = logging.getLogger(__name__)

OPENAI_LIKE = ("openai", "litellm_proxy", "hosted_vllm", "lm_studio")
WIRE_PROVIDERS = frozenset((*OPENAI_LIKE, "ollama_chat"))
# The call keywords this module knows how to send; a call with any other goes through litellm.
KNOWN_EXTRA = frozenset({"response_format", "num_ctx", "api_key"})
OPENAI_BASE = "https://api.openai.com/v1"
OLLAMA_BASE = "http://localhost:11434"
# What litellm says of a reply it cannot read (engine.door.llm: answered, maybe billed).
UNREADABLE = "Invalid response object"
MAX_ERROR_TEXT = 2000  # characters of an error body kept for the message
COST_HEADER = "x-litellm-response-cost"  # what a LiteLLM proxy says a call cost
# A reasoning model's thinking before its answer, as litellm strips it from Ollama's replies.
_REASONING = re.compile(
    r"<(?:think|thinking|budget:thinking)>(.*?)</(?:think|thinking|budget:thinking)>(.*)",
    re.DOTALL,
)


def provider_of(model: str) -> str:
    head, slash, _ = model.partition("/")
    return head if slash else ""


def serves(model: str, extra: Mapping[str, Any]) -> bool:
    """Whether the door sends this call itself: a wire provider, and only keywords it knows."""
    return provider_of(model) in WIRE_PROVIDERS and set(extra) <= KNOWN_EXTRA


@dataclass(frozen=True)
class Request:
    url: str
    headers: dict[str, str]
    body: dict[str, Any]


def _env_base(provider: str, env: Mapping[str, str]) -> str | None:
    names = {
        "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
        "litellm_proxy": ("LITELLM_PROXY_API_BASE",),
        "hosted_vllm": ("HOSTED_VLLM_API_BASE",),
        "lm_studio": ("LM_STUDIO_API_BASE",),
        "ollama_chat": ("OLLAMA_API_BASE",),
    }[provider]
    return next((env[n] for n in names if env.get(n)), None)


_KEY_NAMES = {
    "openai": "OPENAI_API_KEY",
    "litellm_proxy": "LITELLM_PROXY_API_KEY",
    "hosted_vllm": "HOSTED_VLLM_API_KEY",
    "lm_studio": "LM_STUDIO_API_KEY",
    "ollama_chat": "OLLAMA_API_KEY",
}
NEEDS_KEY = ("openai", "litellm_proxy")  # the others send a placeholder, or none at all


def _env_key(provider: str, env: Mapping[str, str]) -> str | None:
    return env.get(_KEY_NAMES[provider]) or None


def request(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    api_base: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    extra: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Request:
    """What litellm sends for this call: where, with which key, and the JSON body."""
    env = os.environ if env is None else env
    extra = dict(extra or {})
    provider = provider_of(model)
    name = model.split("/", 1)[1]
    key = extra.pop("api_key", None) or _env_key(provider, env)
    base = api_base or _env_base(provider, env)
    headers = {"Content-Type": "application/json"}
    if provider == "ollama_chat":
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return Request(
            _route(base or OLLAMA_BASE, "api/chat"),
            headers,
            _ollama_body(name, messages, temperature, max_tokens, extra),
        )
    if not key and provider in NEEDS_KEY:
        # OpenAI's client, under litellm, refuses to send without one: a 500 of its own.
        raise InternalServerError(
            f"InternalServerError: {provider} - Missing credentials. Please pass an `api_key`"
            f" or set the `{_KEY_NAMES[provider]}` environment variable.",
            500,
            {"type": "internal_server_error"},
        )
    if provider == "openai":
        base = base or OPENAI_BASE
    elif provider in ("hosted_vllm", "lm_studio"):
        key = key or "fake-api-key"
    if base is None:
        base = OPENAI_BASE
    headers["Authorization"] = f"Bearer {key}"
    body: dict[str, Any] = {"model": name, "messages": [dict(m) for m in messages]}
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens:
        body["max_tokens"] = max_tokens
    if "response_format" in extra:
        body["response_format"] = extra["response_format"]
    return Request(base.rstrip("/") + "/chat/completions", headers, body)


def _route(base: str, route: str) -> str:
    """`base` ending in `route` once (litellm's ensure_api_route)."""
    base = base.rstrip("/")
    return base if base.endswith("/" + route) else f"{base}/{route}"


def _ollama_body(
    name: str,
    messages: Sequence[Mapping[str, Any]],
    temperature: float | None,
    max_tokens: int | None,
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if max_tokens:
        options["num_predict"] = max_tokens
    if temperature is not None:
        options["temperature"] = temperature
    if "num_ctx" in extra:
        options["num_ctx"] = extra["num_ctx"]
    body: dict[str, Any] = {
        "model": name,
        "messages": [{"role": m.get("role"), "content": _text(m), "images": []} for m in messages],
        "options": options,
        "stream": False,
    }
    schema = _ollama_format(extra.get("response_format"))
    if schema is not None:
        body["format"] = schema
    return body


def _ollama_format(response_format: Any) -> Any:
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_object":
        return "json"
    if response_format.get("type") == "json_schema":
        inner = response_format.get("json_schema") or {}
        return inner.get("schema") if isinstance(inner, dict) else None
    return None


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


# Failures, named as litellm and OpenAI's SDK name theirs, so engine.door.failures reads them
# the same whichever way the call went.


class WireError(Exception):
    """A server's refusal (status_code, its error body) or no answer at all (status None)."""

    status_code: int | None = None

    def __init__(
        self,
        message: str,
        status_code: int | None = None,
        body: Any = None,
        retry_after: Any = None,
    ) -> None:
        super().__init__(message)
        if status_code is not None:
            self.status_code = status_code
        self.body = body
        self.retry_after = retry_after


class BadRequestError(WireError):
    status_code = 400


class AuthenticationError(WireError):
    status_code = 401


class PermissionDeniedError(WireError):
    status_code = 403


class NotFoundError(WireError):
    status_code = 404


class UnprocessableEntityError(WireError):
    status_code = 422


class RateLimitError(WireError):
    status_code = 429


class InternalServerError(WireError):
    status_code = 500


class ServiceUnavailableError(InternalServerError):
    status_code = 503


class APIConnectionError(WireError):
    """Nothing answered: refused, reset, or a name that does not resolve."""


class Timeout(WireError):  # noqa: N818 (litellm's name, read by engine.door.failures)
    """The server took longer than the call's timeout."""


_BY_STATUS: dict[int, type[WireError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    422: UnprocessableEntityError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def refusal(provider: str, status: int, text: str, headers: Mapping[str, str]) -> WireError:
    """The error for an HTTP answer that is not a 2xx: its class by status, its body as data."""
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = None
    inner = parsed.get("error") if isinstance(parsed, dict) else None
    body = inner if isinstance(inner, dict) else parsed if isinstance(parsed, dict) else None
    said = body.get("message") if isinstance(body, dict) else None
    if not isinstance(said, str):
        said = (inner if isinstance(inner, str) else None) or text
    cls = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else WireError)
    message = f"{cls.__name__}: {provider} answered HTTP {status} - {said[:MAX_ERROR_TEXT]}"
    return cls(message, status, body, _retry_after(headers))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) else None


@dataclass(frozen=True)
class Answer:
    """A server's reply as the door reads it: the text, the usage it reported (as sent), the
    cost a LiteLLM proxy put in its header, and the body itself (for litellm to price)."""

    text: str
    usage: Mapping[str, Any] | None
    header_cost: str | None = None
    body: Mapping[str, Any] = field(default_factory=dict)


def _is_int(value: Any) -> bool:
    """What litellm's Usage accepts as a token count (pydantic's lax int)."""
    if value is None or isinstance(value, bool):
        return value is None
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer()
    if isinstance(value, str):
        return value.strip().lstrip("+-").isdigit()
    return False


def read(provider: str, text: str, headers: Mapping[str, str]) -> Answer:
    """The reply in a 2xx answer; an error that says "Invalid response object" (as litellm's)
    when it cannot be read into a reply — the call was answered and may be billed."""
    try:
        body = json.loads(text)
    except ValueError as exc:  # litellm: a 500 of its own making, worth another try
        raise InternalServerError(
            f"InternalServerError: {provider} answered with no JSON - {exc}",
            500,
            {"type": "internal_server_error"},
        ) from None
    if not isinstance(body, dict):
        raise WireError(f"{UNREADABLE}: not a JSON object")
    if provider == "ollama_chat":
        return _read_ollama(body, headers)
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise WireError(f"{UNREADABLE}: no choices[0].message")
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else None
    if usage is not None and not all(
        _is_int(usage.get(k)) for k in ("prompt_tokens", "completion_tokens")
    ):
        raise WireError(f"{UNREADABLE}: usage {usage!r}")
    content = message.get("content")
    return Answer(
        content if isinstance(content, str) else "",
        usage,
        headers.get(COST_HEADER),
        body,
    )


def _read_ollama(body: Mapping[str, Any], headers: Mapping[str, str]) -> Answer:
    message = body.get("message")
    if not isinstance(message, dict):
        raise WireError(f"{UNREADABLE}: no message")
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if "thinking" not in message and text:
        found = _REASONING.match(text)
        if found:
            text = found.group(2)
    usage = {
        "prompt_tokens": body.get("prompt_eval_count"),
        "completion_tokens": body.get("eval_count"),
    }
    if not all(_is_int(v) for v in usage.values()):
        raise WireError(f"{UNREADABLE}: usage {usage!r}")
    reported = {k: v for k, v in usage.items() if v is not None} or None
    return Answer(text, reported, headers.get(COST_HEADER), body)


# One HTTP client per event loop (a client belongs to the loop it first ran on): its
# connections are kept, so a hosted model's second call skips the TCP and TLS handshakes.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def _client() -> Any:
    import httpx  # litellm's own HTTP client, installed beside it: ~0.1 s, not litellm's 3

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = httpx.AsyncClient()
    return client


async def send(
    req: Request, timeout: float, on_sent: Callable[[], None] | None = None
) -> tuple[int, str, dict[str, str]]:
    """POST `req`; (status, body text, headers with lower-case names). Nothing answering is an
    APIConnectionError, a slow answer a Timeout. `on_sent` is called once the request's body
    has gone out, while the answer is awaited (httpcore's trace of the exchange says when)."""
    import httpx

    async def trace(event: str, info: Mapping[str, Any]) -> None:
        if on_sent is not None and event.endswith(".send_request_body.complete"):
            try:
                on_sent()
            except Exception:  # the request is out, maybe billed: its answer must not be lost
                log.debug("on_sent failed", exc_info=True)

    try:
        response = await _client().post(
            req.url,
            headers=req.headers,
            json=req.body,
            timeout=timeout,
            extensions={"trace": trace} if on_sent is not None else None,
        )
    except httpx.TimeoutException as exc:
        raise Timeout(f"Timeout: no answer from {_where(req.url)} in {timeout:g} s") from exc
    except httpx.HTTPError as exc:
        message = f"APIConnectionError: {_where(req.url)} did not answer ({type(exc).__name__})"
        raise APIConnectionError(message) from exc
    return (
        response.status_code,
        response.text,
        {k.lower(): v for k, v in response.headers.items()},
    )


def _where(url: str) -> str:
    """The server's address without its path or query (never a key in a URL)."""
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme}://{host}"
