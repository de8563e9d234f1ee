"""A loopback fake of OpenAI's `/v1/audio/speech`: each answer is a WAV tone whose length
encodes the text it was asked to read, so a test can check a mix's duration line by line.

`seconds_for(text)` is the tone's length (`BASE` + `PER_CHAR` per character, in whole samples),
its pitch is the voice's (each voice a tone of its own); `requests` keeps every body as litellm
sent it. `fail_at` makes the n-th request (1-based) answer 500: a provider failing mid-render.

    async with FakeSpeech() as base:  # CIRCUS_TTS_MODEL=openai/tts-1, CIRCUS_TTS_API_BASE=base
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import math
import struct
import wave
from typing import Any

from aiohttp import web

from .loopback import serve

RATE = 24_000
BASE = 0.2  # seconds of every tone
PER_CHAR = 0.01  # and per character read


def samples_for(text: str) -> int:
    return round((BASE + PER_CHAR * len(text)) * RATE)


def seconds_for(text: str) -> float:
    return samples_for(text) / RATE


def tone(text: str, voice: str) -> bytes:
    """A WAV (16-bit mono, RATE) of a sine whose pitch is the voice's and length the text's."""
    pitch = 200 + int(hashlib.sha256(voice.encode()).hexdigest(), 16) % 600
    n = samples_for(text)
    frames = b"".join(
        struct.pack("<h", int(12000 * math.sin(2 * math.pi * pitch * i / RATE))) for i in range(n)
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(frames)
    return out.getvalue()


class FakeSpeech:
    def __init__(self, *, fail_at: int | None = None, delay: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_at = fail_at
        self.delay = delay
        self.auth: list[str] = []

    def said(self) -> list[tuple[str, str]]:
        """(voice, text) of every request, in order."""
        return [(r["voice"], r["input"]) for r in self.requests]

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.auth.append(request.headers.get("Authorization", ""))
        if self.fail_at is not None and len(self.requests) + 1 == self.fail_at:
            self.fail_at = None  # once: the next read finds the provider well again
            return web.json_response(
                {"error": {"message": "the speech server fell over", "type": "server_error"}},
                status=500,
            )
        self.requests.append(body)
        if self.delay:
            await asyncio.sleep(self.delay)
        return web.Response(body=tone(body["input"], body["voice"]), content_type="audio/wav")

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/audio/speech", self.handle)
        self.runner, base = await serve(app)
        return base + "/v1"

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()
