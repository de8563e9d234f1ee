"""What every loopback fake provider shares: an aiohttp app served on 127.0.0.1 at a free port,
and the body of an OpenAI-style chat completion (the shape litellm's `openai/` provider reads)."""

from __future__ import annotations

from typing import Any

from aiohttp import web


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    """Start `app` on a free loopback port: (its runner, to clean up; http://127.0.0.1:PORT)."""
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


def chat_completion(model: Any, text: str, usage: dict[str, Any], n: int = 1) -> dict[str, Any]:
    """One OpenAI chat completion answering `text`, with `usage` reported as given."""
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": usage,
    }
