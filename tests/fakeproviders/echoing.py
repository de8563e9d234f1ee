"""A loopback OpenAI-compatible server that refuses every call and echoes the credentials it
was sent in its error body — as Ollama-compatible servers, self-hosted gateways and proxies in
between may do (`Invalid API key passed in: Bearer sk-…`). The attack the redactor answers.

    async with EchoingServer() as base:  # litellm: model="openai/...", api_base=base
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .loopback import serve

# The operator's keys the attack tries to get back out: a provider key, the gateway's (no
# credential shape: only its value gives it away) and the bot's token.
OPENAI_KEY = "sk-proj-OPERATORS0PENAIkey0000000000000000"
GATEWAY_KEY = "circus-gw-Secret-0f3c9a77"
DISCORD_TOKEN = "MTE0ODk.discord-token.NOT-FOR-MEMBERS"


class EchoingServer:
    def __init__(self, status: int = 401) -> None:
        self.status = status
        self.seen: list[str] = []  # every Authorization header it was sent
        self._runner: web.AppRunner | None = None

    async def handle(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        self.seen.append(auth)
        key = auth.removeprefix("Bearer ")
        message = f"Invalid API key passed in: {auth}. api_key={key} (sent to {request.path})"
        error: dict[str, Any] = {"message": message, "type": "invalid_request_error", "code": key}
        return web.json_response({"error": error}, status=self.status)

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner, base = await serve(app)
        return base

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
