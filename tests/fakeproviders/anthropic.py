"""A loopback fake of Anthropic's Messages API that caches prompts by Anthropic's documented rules.

- A `cache_control` breakpoint caches the prompt's prefix up to the end of its block (tools, then
  system, then messages, in that order); more than four breakpoints is a 400.
- A prefix shorter than the model's minimum (1024 tokens; 2048 for Haiku) is never cached.
- A cached prefix lives five minutes (refreshed by each hit), on the `clock` it is given.
- At each breakpoint the cache is looked up at that block boundary and up to 20 boundaries
  before it; the longest hit is read. Only block boundaries count: a prefix that ends inside a
  block (a record grown inside one text block) is never found.
- usage is what Anthropic returns: input_tokens (uncached, after the cached part),
  cache_creation_input_tokens, cache_read_input_tokens, output_tokens.

    async with FakeAnthropic(cast) as base:  # litellm: model="anthropic/...", api_base=base
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .improv import Improv, count
from .loopback import serve

MAX_BREAKPOINTS = 4
LOOKBACK = 20
TTL = 300.0


def min_cacheable(model: str) -> int:
    return 2048 if "haiku" in model.lower() else 1024


@dataclass(frozen=True)
class Block:
    """One content block of the flattened prompt: the digest and size of the prefix it ends."""

    digest: str
    tokens: int  # of the whole prefix up to and including this block
    breakpoint: bool
    text: str


def flatten(body: dict[str, Any]) -> list[Block]:
    """tools, system, messages: every content block in the order Anthropic caches them."""
    raw: list[tuple[str, str, bool]] = []
    for tool in body.get("tools") or []:
        raw.append(("tool", json.dumps(tool, sort_keys=True), "cache_control" in tool))
    system = body.get("system")
    if isinstance(system, str):
        raw.append(("system", system, False))
    for block in system if isinstance(system, list) else []:
        raw.append(("system", str(block.get("text", "")), "cache_control" in block))
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            raw.append((message["role"], content, False))
            continue
        for block in content or []:
            text = block.get("text") if block.get("type") == "text" else json.dumps(block)
            raw.append((message["role"], str(text), "cache_control" in block))
    out: list[Block] = []
    digest = hashlib.sha256()
    tokens = 0
    for role, text, mark in raw:
        digest.update(f"\x00{role}\x00{text}".encode())
        tokens += count(text)
        out.append(Block(digest.copy().hexdigest(), tokens, mark, text))
    return out


class FakeAnthropic:
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
        self.cache: dict[str, float] = {}  # prefix digest -> when it expires
        self.requests: list[dict[str, Any]] = []
        self.usages: list[dict[str, int]] = []
        self.paths: list[str] = []

    def usage_for(self, body: dict[str, Any], output_tokens: int) -> dict[str, int] | str:
        """The usage of one request by the caching rules, or the error message of a 400."""
        blocks = flatten(body)
        marks = [i for i, b in enumerate(blocks) if b.breakpoint]
        if len(marks) > MAX_BREAKPOINTS:
            return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(marks)}."
        for i in marks:
            if not blocks[i].text:
                return "cache_control cannot be set for empty text blocks"
        now = self.clock()
        least = min_cacheable(str(body.get("model", "")))
        read = 0
        for m in marks:
            for j in range(m, max(-1, m - LOOKBACK), -1):
                digest = blocks[j].digest
                if self.cache.get(digest, -1.0) > now:
                    self.cache[digest] = now + TTL  # a hit refreshes its lifetime
                    read = max(read, blocks[j].tokens)
                    break
        written = 0
        if marks and blocks[marks[-1]].tokens >= least:
            for m in marks:
                if blocks[m].tokens >= least:
                    self.cache[blocks[m].digest] = now + TTL
            written = max(0, blocks[marks[-1]].tokens - read)
        total = blocks[-1].tokens if blocks else 0
        return {
            "input_tokens": total - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "output_tokens": output_tokens,
        }

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.paths.append(request.path)
        self.requests.append(body)
        system = body.get("system")
        if isinstance(system, list):
            system = "".join(str(b.get("text", "")) for b in system)
        forced = body.get("tool_choice") or {}
        tool = forced.get("name") if forced.get("type") == "tool" else None
        json_mode = bool(tool or body.get("output_format") or body.get("output_config"))
        text = self.answer(str(system or ""), json_mode)
        usage = self.usage_for(body, count(text))
        if isinstance(usage, str):
            error = {"type": "invalid_request_error", "message": usage}
            return web.json_response({"type": "error", "error": error}, status=400)
        self.usages.append(usage)
        if tool:
            content = [
                {"type": "tool_use", "id": "toolu_1", "name": tool, "input": json.loads(text)}
            ]
        else:
            content = [{"type": "text", "text": text}]
        return web.json_response(
            {
                "id": f"msg_{len(self.requests)}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model"),
                "content": content,
                "stop_reason": "tool_use" if tool else "end_turn",
                "stop_sequence": None,
                "usage": usage,
            }
        )

    async def __aenter__(self) -> str:
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/{tail:.*}", self.handle)
        self.runner, base = await serve(app)
        return base

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()
