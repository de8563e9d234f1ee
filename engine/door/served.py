"""The LiteLLM proxy's own list of the models it serves (GET /v1/models), asked only after it
turned a model down, so the error can say which names it does serve.

The proxy's answer is data: at most MAX_NAMES names, each a short printable string; anything
else (no answer, not JSON, a refusal) is an empty list, and the error says what it said.
"""

from __future__ import annotations

from typing import Any

from engine.config import Config

MAX_NAMES = 50
MAX_NAME = 100
TIMEOUT = 5.0  # seconds: the list is a courtesy to the error message, never worth a long wait


def model_names(body: Any) -> tuple[str, ...]:
    """The model ids of an OpenAI-style model list (`{"data": [{"id": …}, …]}`), bounded."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return ()
    names = []
    for entry in data[: MAX_NAMES * 2]:
        name = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(name, str) and 0 < len(name) <= MAX_NAME and name.isprintable():
            names.append(name)
    return tuple(dict.fromkeys(names))[:MAX_NAMES]


async def served_models(config: Config) -> tuple[str, ...]:
    """The names the gateway (CIRCUS_GATEWAY_URL) serves Circus's key; () when it will not say."""
    if not config.gateway_url:
        return ()
    import httpx  # litellm's own HTTP client: always installed beside it

    base = config.gateway_url.rstrip("/")
    url = base + ("/models" if base.endswith("/v1") else "/v1/models")
    headers = {"Authorization": f"Bearer {config.gateway_key}"} if config.gateway_key else {}
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            response = await client.get(url, headers=headers)
        if response.status_code != 200:
            return ()
        return model_names(response.json())
    except (TimeoutError, httpx.HTTPError, ValueError):
        return ()
