"""A loopback fake of a LiteLLM proxy: OpenAI-style chat completions under the proxy's own
model names, answered with a usage block and the headers the proxy sends with each reply
(`x-litellm-response-cost` in US dollars, `x-litellm-model-id`, `x-litellm-call-id`).

It knows only the model names of its `model_list` (like the proxy's config.yaml): another name
is a 400, as the proxy answers. `requests` keeps every body and `keys` every bearer key sent.

    async with FakeLiteLLMProxy(cast, {"writers-room": 2e-6}) as base:  # CIRCUS_GATEWAY_URL
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from aiohttp import web

from .improv import Improv, units
from .loopback import chat_completion, serve


class FakeLiteLLMProxy:
    def __init__(
        self,
        cast: Sequence[str],
        model_list: Mapping[str, float],
        *,
        cost_header: str | None = None,
        latency: float = 0.0,
    ) -> None:
        """`model_list`: the proxy's model names, each with its price per token (prompt and
        reply alike). `cost_header`: send this text as the cost instead (a broken proxy).
        `latency`: seconds each reply takes (the model behind the proxy thinking)."""
        self.improv = Improv(cast)
        self.latency = latency
        self.model_list = dict(model_list)
        self.cost_header = cost_header
        self.requests: list[dict[str, Any]] = []
        self.keys: list[str] = []
        self.costs: list[float] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.keys.append(request.headers.get("Authorization", "").removeprefix("Bearer "))
        model = body.get("model")
        if model not in self.model_list:
            error = {"message": f"Invalid model name passed in model={model}", "code": "400"}
            return web.json_response({"error": error}, status=400)
        if self.latency:
            await asyncio.sleep(self.latency)
        messages = body.get("messages") or []
        system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), "")
        json_mode = (body.get("response_format") or {}).get("type") in (
            "json_schema",
            "json_object",
        )
        text = self.improv.answer(system, json_mode)
        prompt = sum(len(units(json.dumps(m, ensure_ascii=False))) for m in messages)
        completion = len(units(text))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        cost = (prompt + completion) * self.model_list[model]
        self.costs.append(cost)
        n = len(self.requests)
        headers = {
            "x-litellm-response-cost": self.cost_header or repr(cost),
            "x-litellm-model-id": f"deployment-{model}",
            "x-litellm-call-id": f"call-{n}",
        }
        return web.json_response(chat_completion(model, text, usage, n), headers=headers)

    async def __aenter__(self) -> str:
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/chat/completions", self.handle)
        app.router.add_post("/v1/chat/completions", self.handle)
        self.runner, base = await serve(app)
        return base

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()
