"""What kind of failure a provider's (or the LiteLLM proxy's) exception is: a pure function.

Read from what the exception *is* — its HTTP status, the error body's `type`, its class (litellm
names its exceptions as OpenAI's SDK does) — never from words in its message, which a server
may word as it likes and which may be in any language. A proxy's own refusals of Circus's key
(`no_db_connection`, `token_not_found_in_db`, 401/403) are the gateway key's problem, not a
provider's; an unknown model behind the proxy is decided by the proxy's own model list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.vocabulary import FailureKind

# The proxy's error types that mean "this key is not one of mine" (litellm ProxyErrorTypes):
# with a master key and no database, any other key gets 400 no_db_connection, not a 401.
GATEWAY_KEY_TYPES = frozenset({"no_db_connection", "token_not_found_in_db", "auth_error"})
# Class names, as litellm and the OpenAI SDK spell them, for errors that carry no status.
UNREACHABLE_CLASSES = frozenset(
    {"APIConnectionError", "ConnectError", "ClientConnectorError", "ConnectionError", "gaierror"}
)
TIMEOUT_CLASSES = frozenset({"Timeout", "APITimeoutError", "TimeoutError", "ReadTimeout"})
CHAIN_DEPTH = 8


@dataclass(frozen=True)
class Signs:
    """What an exception says about itself: its status, body type and class names."""

    status: int | None  # the HTTP status the server answered with; None: no answer
    type: str | None  # the error body's `type` (OpenAI-style), when it has one
    classes: tuple[str, ...]  # the names of its class and its bases


def signs(exc: BaseException) -> Signs:
    """Read `exc` without importing litellm: the attributes litellm and openai both set, and
    the classes of every exception it was raised from."""
    classes = tuple(dict.fromkeys(c.__name__ for e in _chain(exc) for c in type(e).__mro__))
    status = _status(exc)
    if any(c in UNREACHABLE_CLASSES or c in TIMEOUT_CLASSES for c in classes):
        # litellm re-raises the OpenAI SDK's connection error as a 500 it made up (an empty
        # response): the status is litellm's, nothing answered.
        status = None
    return Signs(status, _body_type(exc), classes)


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what it was raised from (`__cause__`, else `__context__`), a few deep."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < CHAIN_DEPTH and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        return None
    return status


def _body_type(exc: BaseException) -> str | None:
    body: Any = getattr(exc, "body", None)
    value = body.get("type") if isinstance(body, dict) else None
    if value is None:
        value = getattr(exc, "type", None)
    return value[:60] if isinstance(value, str) and value else None


def kind_of(found: Signs, *, via_gateway: bool) -> FailureKind:
    """The kind of failure `found` describes; `via_gateway`: the call went to the LiteLLM proxy.

    Whether a 400 from the proxy means a model it does not serve is for its model list to say
    (`not_served`, asked by the door), not for this function or the error's words.
    """
    classes, status, kind = found.classes, found.status, found.type
    if status is None:
        if any(c in TIMEOUT_CLASSES for c in classes):
            return "timeout"
        if any(c in UNREACHABLE_CLASSES for c in classes):
            return "unreachable"
        return "error"
    if via_gateway and (kind in GATEWAY_KEY_TYPES or status in (401, 403)):
        return "gateway_key"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 429:
        return "rate_limited"
    if status in (408, 504):
        return "timeout"
    return "error"


def not_served(model: str, served: Sequence[str]) -> bool:
    """Whether the proxy's model list (`served`, from its /v1/models) lacks `model` — the name
    as Circus configured it, without litellm's `litellm_proxy/` prefix."""
    return bool(served) and model not in served
