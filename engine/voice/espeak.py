"""The offline engine: eSpeak NG, from the `voice` extra's espeakng-loader wheel (the library
and its voice data bundled, no compiler), called through ctypes.

Invariant: eSpeak NG keeps one global voice and one callback, so every synthesis runs under one
lock, in a worker thread (an event loop never waits on it); a voice eSpeak does not have is
refused by `check` before any line is read. English reads in `en-us`, Chinese in `cmn`.
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import threading
from pathlib import Path
from typing import Any

from engine.errors import NoVoiceEngine, UnknownVoice
from engine.folder.voices import OFFLINE, Voice
from engine.voice import audio

_SYNCHRONOUS = 2  # AUDIO_OUTPUT_SYNCHRONOUS: samples come back through the callback
_UTF8 = 1  # espeakCHARS_UTF8
_CHARACTER = 1  # POS_CHARACTER
_RATE, _PITCH = 1, 3  # espeak_PARAMETER
DEFAULT_RATE, DEFAULT_PITCH = 175, 50
_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)

_lock = threading.Lock()
_state: dict[str, Any] = {}  # the loaded library, its sample rate, the callback and its chunks


def installed() -> bool:
    """True when the `voice` extra's offline voices are installed."""
    return all(importlib.util.find_spec(m) for m in ("espeakng_loader", "numpy", "soundfile"))


def _library() -> dict[str, Any]:
    """eSpeak NG, initialised once (call under _lock)."""
    if _state:
        return _state
    try:
        import espeakng_loader

        lib = ctypes.CDLL(espeakng_loader.get_library_path())
        data = espeakng_loader.get_data_path().encode()
    except (ImportError, OSError, RuntimeError):
        raise NoVoiceEngine("error.voice.no_engine") from None
    rate = lib.espeak_Initialize(_SYNCHRONOUS, 0, data, 0)
    if rate <= 0:
        raise NoVoiceEngine("error.voice.no_engine")
    chunks: list[Any] = []

    def collect(wav: Any, n: int, _events: Any) -> int:
        if n > 0:
            chunks.append(bytes(ctypes.string_at(wav, n * 2)))
        return 0

    callback = _CALLBACK(collect)
    lib.espeak_SetSynthCallback(callback)
    variants = Path(data.decode()) / "voices" / "!v"
    _state.update(lib=lib, rate=rate, chunks=chunks, callback=callback, variants=variants)
    return _state


def _set_voice(state: dict[str, Any], voice: Voice) -> bool:
    """Make `voice` eSpeak's; False when it has no such language voice or variant (eSpeak
    itself would read an unknown variant in the plain voice, silently)."""
    lib = state["lib"]
    _, plus, variant = voice.name.partition("+")
    if plus and not (state["variants"] / variant).is_file():
        return False
    if lib.espeak_SetVoiceByName(voice.name.encode()) != 0:
        return False
    lib.espeak_SetParameter(_RATE, voice.rate or DEFAULT_RATE, 0)
    lib.espeak_SetParameter(_PITCH, DEFAULT_PITCH if voice.pitch is None else voice.pitch, 0)
    return True


def _synth(text: str, voice: Voice) -> tuple[bytes, int]:
    with _lock:
        state = _library()
        if not _set_voice(state, voice):
            raise UnknownVoice(voice.name, OFFLINE)
        state["chunks"].clear()
        data = text.encode("utf-8")
        state["lib"].espeak_Synth(data, len(data) + 1, 0, _CHARACTER, 0, _UTF8, None, None)
        state["lib"].espeak_Synchronize()
        return b"".join(state["chunks"]), state["rate"]


class Espeak:
    """The offline engine (engine.voice.table_read.Engine)."""

    name = OFFLINE
    billed = False

    def check(self, voices: list[Voice]) -> None:
        """UnknownVoice for the first voice eSpeak NG does not have."""
        with _lock:
            state = _library()
            for voice in voices:
                if not _set_voice(state, voice):
                    raise UnknownVoice(voice.name, OFFLINE)

    async def say(self, text: str, voice: Voice) -> Any:
        """`text` in `voice`, as samples at audio.RATE."""
        np, _ = audio.libraries()
        pcm, rate = await asyncio.to_thread(_synth, text, voice)
        return audio.from_pcm16(np.frombuffer(pcm, dtype="<i2"), rate)

    def price(self) -> float | None:
        return 0.0
