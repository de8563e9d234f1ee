"""A loopback fake of OpenAI's chat completions that caches repeated prompt prefixes by itself.

Like OpenAI: no breakpoints; a prompt of at least 1024 tokens is cached, and a later prompt that
starts with the same tokens reads the longest cached prefix in 128-token steps (1024, 1152, ...),
reported as `usage.prompt_tokens_details.cached_tokens`. Entries live five minutes on `clock`.
It answers in tags, or as the JSON object when `response_format` asks for one; `requests`
keeps every body exactly as litellm sent it.

    async with FakeOpenAI(cast) as base:  # litellm: model="openai/...", api_base=base
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web

from .improv import Improv, units
from .loopback import chat_completion, serve

MIN_CACHED = 1024
STEP = 128
TTL = 300.0


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


class FakeOpenAI:
    def __init__(
        self,
        cast: Sequence[str],
        *,
        clock: Callable[[], float] = time.monotonic,
        answer: Callable[[str, bool], str] | None = None,
    ) -> None:
        self.improv = Improv(cast)
        self.answer = answer or self.improv.answer
        self.clock = clock
        self.cache: dict[str, float] = {}  # digest of a STEP-aligned prefix -> expiry
        self.requests: list[dict[str, Any]] = []
        self.usages: list[dict[str, Any]] = []

    def cached_for(self, messages: Sequence[dict[str, Any]]) -> tuple[int, int]:
        """(prompt tokens, of them read from the cache); caches this prompt's prefixes."""
        tokens: list[str] = []
        for m in messages:
            tokens += ["\x00" + str(m.get("role"))] + units(_content(m))
        now = self.clock()
        digest = hashlib.sha256()
        cached = 0
        for end in range(STEP, len(tokens) + 1, STEP):
            digest.update("".join(tokens[end - STEP : end]).encode())
            key = digest.copy().hexdigest()
            if end >= MIN_CACHED:  # the digest covers the whole prefix: a hit is contiguous
                if self.cache.get(key, -1.0) > now:
                    cached = end
                self.cache[key] = now + TTL
        return len(tokens), cached

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        messages = body.get("messages") or []
        system = next((_content(m) for m in messages if m.get("role") == "system"), "")
        json_mode = (body.get("response_format") or {}).get("type") in (
            "json_schema",
            "json_object",
        )
        text = self.answer(system, json_mode)
        prompt, cached = self.cached_for(messages)
        completion = len(units(text))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        self.usages.append(usage)
        return web.json_response(
            chat_completion(body.get("model"), text, usage, len(self.requests))
        )

    async def __aenter__(self) -> str:
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/v1/chat/completions", self.handle)
        self.runner, base = await serve(app)
        return base + "/v1"

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()
