"""What kind of failure a model call's exception is, read from its status, its body's type and
its class — the exceptions litellm really raises, built as litellm builds them — never from the
words of its message (a server may say anything, in any language, a key included)."""

from __future__ import annotations

import httpx
import pytest

from engine.door.boot import litellm_module
from engine.door.failures import kind_of, not_served, signs
from engine.door.served import model_names

litellm = litellm_module()
REQUEST = httpx.Request("POST", "http://127.0.0.1:4000/v1/chat/completions")


def answered(status: int) -> httpx.Response:
    return httpx.Response(status, request=REQUEST)


def proxy_body(type_: str, code: str) -> dict[str, object]:
    return {"message": "whatever it says", "type": type_, "param": None, "code": code}


ARGS = {"message": "Ошибка: 秘密 sk-not-a-hint", "llm_provider": "litellm_proxy", "model": "x"}
# What the real LiteLLM proxy 1.110.2 answered (tried against it): a wrong key with a master
# key and no database is a 400 no_db_connection; with a database, a 401 token_not_found_in_db.
NO_DB = litellm.BadRequestError(
    **ARGS, response=answered(400), body=proxy_body("no_db_connection", "400")
)
NOT_IN_DB = litellm.AuthenticationError(
    **ARGS, response=answered(401), body=proxy_body("token_not_found_in_db", "401")
)
BAD_MODEL = litellm.BadRequestError(
    **ARGS, response=answered(400), body=proxy_body("invalid_request_error", "400")
)
UPSTREAM = litellm.InternalServerError(**ARGS, response=answered(500))


def raised_from(outer: BaseException, *inner: BaseException) -> BaseException:
    """`outer` as litellm raises it: from the exceptions below it (innermost last)."""
    current = outer
    for below in inner:
        current.__cause__ = below
        current = below
    return outer


# Nothing listening: the OpenAI SDK's connection error, which litellm re-raises as a 500 it made
# up (an empty response) — as the real litellm does for openai/ and litellm_proxy/ models.
REFUSED = raised_from(
    litellm.InternalServerError(**ARGS, response=answered(500)),
    httpx.ConnectError("All connection attempts failed"),
    ConnectionRefusedError(111, "Connect call failed"),
)


@pytest.mark.parametrize(
    "exc, via_gateway, kind",
    [
        (NO_DB, True, "gateway_key"),
        (NOT_IN_DB, True, "gateway_key"),
        (litellm.AuthenticationError(**ARGS, response=answered(401)), True, "gateway_key"),
        (litellm.PermissionDeniedError(**ARGS, response=answered(403)), True, "gateway_key"),
        (litellm.AuthenticationError(**ARGS, response=answered(401)), False, "auth"),
        (litellm.PermissionDeniedError(**ARGS, response=answered(403)), False, "auth"),
        (NO_DB, False, "error"),  # a provider's 400 is not Circus's gateway key
        (BAD_MODEL, True, "error"),  # the proxy's model list decides (not_served)
        (litellm.NotFoundError(**ARGS, response=answered(404)), False, "not_found"),
        (litellm.RateLimitError(**ARGS, response=answered(429)), True, "rate_limited"),
        (litellm.Timeout(**ARGS), False, "timeout"),
        (TimeoutError(), False, "timeout"),
        (litellm.APIConnectionError(**ARGS, request=REQUEST), True, "unreachable"),
        (litellm.APIConnectionError(**ARGS, request=REQUEST), False, "unreachable"),
        (ConnectionRefusedError(111, "Connection refused"), False, "unreachable"),
        (REFUSED, True, "unreachable"),
        (REFUSED, False, "unreachable"),
        (raised_from(litellm.InternalServerError(**ARGS), httpx.ReadTimeout("")), False, "timeout"),
        (UPSTREAM, True, "error"),  # the proxy answered; what is behind it failed
        (litellm.ServiceUnavailableError(**ARGS, response=answered(503)), False, "error"),
        (ValueError("Connection refused, 401, api key, not found"), False, "error"),  # words: no
    ],
)
def test_a_failure_is_known_by_its_status_type_and_class(exc, via_gateway, kind):
    assert kind_of(signs(exc), via_gateway=via_gateway) == kind


@pytest.mark.parametrize(
    "status", [True, -1, 0, 99, 600, "401", None, 4.01]
)  # what a third-party exception might hold
def test_a_status_that_is_not_an_http_status_is_no_status(status):
    exc = ValueError("x")
    exc.status_code = status  # type: ignore[attr-defined]
    assert signs(exc).status is None


@pytest.mark.parametrize(
    "body, names",
    [
        ({"data": [{"id": "writers-room"}, {"id": "claude"}]}, ("writers-room", "claude")),
        ({"data": [{"id": "a"}, {"id": "a"}, {"id": ""}, {"id": 7}, "b"]}, ("a",)),
        ({"data": [{"id": "bad\x1b[2Jname"}, {"id": "x" * 101}]}, ()),
        ({"data": [{"id": f"m{i}"} for i in range(500)]}, tuple(f"m{i}" for i in range(50))),
        ({"error": "nope"}, ()),
        (["writers-room"], ()),
        (None, ()),
    ],
)
def test_the_proxys_model_list_is_read_as_bounded_data(body, names):
    assert model_names(body) == names


@pytest.mark.parametrize(
    "model, served, lacking",
    [
        ("writers-room", ("writers-room", "claude"), False),
        ("writers-rom", ("writers-room", "claude"), True),
        ("writers-room", (), False),  # no list: nothing is claimed about the name
    ],
)
def test_a_model_is_not_served_only_when_the_list_lacks_it(model, served, lacking):
    assert not_served(model, served) is lacking
