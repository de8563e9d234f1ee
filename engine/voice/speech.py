"""Hosted and local text-to-speech through litellm's speech API (`aspeech`): OpenAI's TTS
models, Azure, and any server that speaks OpenAI's `/v1/audio/speech`.

Invariant: a call goes where a chat call to the same model would (engine.door.gateway: through
the operator's gateway when one is set, with its key), is retried only when the provider says
try again, and fails as one ModelError whose text is redacted; the price is the model's list
price per character (litellm's cost map), so a read is billed before its lines are known.
"""

from __future__ import annotations

import asyncio
from typing import Any

from engine.config import Config
from engine.door import failures, gateway
from engine.door.boot import litellm_module
from engine.errors import ModelError, UnknownVoice
from engine.folder.voices import Voice
from engine.redact import redact
from engine.voice import audio

OPENAI_VOICES = (
    "alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse",
)  # fmt: skip
_OPENAI_MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts")
SPEECH_TIMEOUT = 120.0  # seconds for one line


def _retryable(exc: BaseException) -> bool:
    """The provider said try again (429, 5xx), or nothing answered in time."""
    found = failures.signs(exc)
    if found.status is not None:
        return found.status == 429 or found.status >= 500
    return any(c in failures.TIMEOUT_CLASSES for c in found.classes)


class SpeechModel:
    """A litellm speech model (engine.voice.table_read.Engine)."""

    billed = True

    def __init__(self, model: str, config: Config) -> None:
        self.name = model
        self.config = config
        self.sent = gateway.proxied(model, config)
        self.api_base = gateway.base_for(model, config.tts_api_base, config)

    def check(self, voices: list[Voice]) -> None:
        """UnknownVoice for a voice OpenAI's own TTS models do not have (another server's
        voices are its own: it answers for them)."""
        bare = self.name.removeprefix("openai/")
        if self.api_base or "/" in bare or not bare.startswith(_OPENAI_MODELS):
            return
        for voice in voices:
            if voice.name not in OPENAI_VOICES:
                raise UnknownVoice(voice.name, self.name)

    def price(self) -> float | None:
        """US dollars per character (None: litellm has no list price for this model)."""
        litellm = litellm_module()
        names = [self.name, self.name.partition("/")[2], gateway.priced_as(self.sent) or ""]
        for name in names:
            entry = litellm.model_cost.get(name) if name else None
            if isinstance(entry, dict) and entry.get("input_cost_per_character") is not None:
                return float(entry["input_cost_per_character"])
        return None

    def _kwargs(self, text: str, voice: Voice) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.sent,
            "input": text,
            "voice": voice.name,
            "response_format": "wav",
            "timeout": SPEECH_TIMEOUT,
            "max_retries": 0,
        }
        if voice.rate:
            kwargs["speed"] = round(voice.rate / 175, 2)  # eSpeak's words a minute → 1.0 = 175
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.sent != self.name:
            kwargs["api_key"] = self.config.gateway_key or gateway.NO_KEY
        elif self.config.tts_api_key:
            kwargs["api_key"] = self.config.tts_api_key
        elif self.api_base:
            kwargs["api_key"] = gateway.NO_KEY  # a local server asks for no key
        return kwargs

    async def say(self, text: str, voice: Voice) -> Any:
        """`text` in `voice`, as samples at audio.RATE (ModelError when the provider fails)."""
        litellm = litellm_module()
        kwargs = self._kwargs(text, voice)
        attempts = self.config.model_retries + 1
        for attempt in range(attempts):
            try:
                async with asyncio.timeout(SPEECH_TIMEOUT):
                    response = await litellm.aspeech(**kwargs)
            except Exception as exc:
                if attempt + 1 < attempts and _retryable(exc):
                    await asyncio.sleep(self.config.retry_base_seconds * 2**attempt)
                    continue
                why = redact(str(exc), self.config.secrets)[:300]
                kind = failures.kind_of(failures.signs(exc), via_gateway=self.sent != self.name)
                raise ModelError(self.name, why, kind=kind) from None
            try:
                return audio.decode(response.content)
            except ValueError as exc:  # an answer that is no audio libsndfile reads
                raise ModelError(self.name, redact(str(exc), self.config.secrets)[:300]) from None
        raise AssertionError("unreachable")  # the loop returns or raises
