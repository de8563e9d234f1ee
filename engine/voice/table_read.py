"""Rendering a script: each line from the cache or its engine, in order, billed as it is made,
then mixed with its pauses into one file (or numbered parts) and a cue sheet.

Invariant: every line is checked (its voices known to the engine) before any is synthesised;
each line synthesised is cached the moment it exists, so a provider error mid-render loses
nothing already paid for and the next read resumes there; nothing is returned half-mixed — the
caller writes the files only once every line is in hand.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.config import Config
from engine.errors import BadRequest, NoVoiceEngine
from engine.folder.voices import OFFLINE, Voice
from engine.voice import audio, espeak
from engine.voice.cache import LineCache, line_key
from engine.voice.script import Line, cue_sheet
from engine.voice.speech import SpeechModel


class Engine(Protocol):
    """A voice engine: its name (part of each cached line's key), whether it is billed, its
    price per character, a check of the voices it will be asked for, and one line spoken."""

    name: str
    billed: bool

    def check(self, voices: list[Voice]) -> None: ...

    def price(self) -> float | None: ...

    async def say(self, text: str, voice: Voice) -> Any: ...


def engine_for(model: str | None, config: Config) -> Engine:
    """The scene's `read_model`, else CIRCUS_TTS_MODEL, else the offline voices; NoVoiceEngine
    (saying what to install or set) when the one chosen cannot run here."""
    name = model or config.tts_model or OFFLINE
    if name == OFFLINE:
        if not espeak.installed():
            raise NoVoiceEngine("error.voice.no_engine")
        return espeak.Espeak()
    audio.libraries()  # a speech model's answers are decoded and mixed here
    return SpeechModel(name, config)


class Meter(Protocol):
    """What bills a line (engine.spend.speech_meter.SpeechMeter): asked before, told after."""

    def admit(self, characters: int, price: float | None) -> None: ...

    def settle(self, model: str, role: str, characters: int, price: float | None) -> None: ...


@dataclass
class Rendered:
    """A rendered script: its pieces (each line, then its pause), when each line starts, and
    what it took: lines made by the engine, lines from the cache, characters billed."""

    pieces: list[Any] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)
    made: int = 0
    cached: int = 0
    characters: int = 0

    @property
    def seconds(self) -> float:
        return sum(audio.seconds(p) for p in self.pieces)


Progress = Callable[[int, int], Awaitable[None]]


async def render(
    lines: Sequence[Line],
    engine: Engine,
    cache: LineCache | None,
    meter: Meter | None,
    progress: Progress | None = None,
) -> Rendered:
    """Every line of `lines`, in order (the same line twice is made once)."""
    if not lines:
        raise BadRequest("error.read.nothing")
    engine.check(list(dict.fromkeys(line.voice for line in lines)))
    price = engine.price() if engine.billed else None
    out = Rendered()
    made: dict[str, Any] = {}
    at = 0.0
    for n, line in enumerate(lines, 1):
        key = line_key(engine.name, line.voice, line.text)
        samples = made.get(key)
        if samples is None and cache is not None:
            samples = await cache.get(key)
            out.cached += samples is not None
        if samples is None:
            if meter is not None and engine.billed:
                meter.admit(len(line.text), price)
            samples = await engine.say(line.text, line.voice)
            out.made += 1
            if engine.billed:
                out.characters += len(line.text)
                if meter is not None:
                    meter.settle(engine.name, line.speaker or "narrator", len(line.text), price)
            if cache is not None:
                await cache.put(key, samples)
        made[key] = samples
        out.starts.append(at)
        out.pieces.append(audio.mix([samples, audio.silence(line.pause)]))
        at += audio.seconds(out.pieces[-1])
        if progress is not None:
            await progress(n, len(lines))
    return out


@dataclass(frozen=True)
class Files:
    """A rendered read as files to write: the audio (one, or numbered parts) and its cues."""

    audio: tuple[bytes, ...]
    cues: str


def files_of(
    rendered: Rendered,
    lines: Sequence[Line],
    title: str,
    fmt: str,
    limit: int | None,
    language: str,
) -> Files:
    parts = audio.encode_within(rendered.pieces, fmt, limit)
    firsts = [first for _, first in parts]
    cues = cue_sheet(title, lines, rendered.starts, firsts, language)
    return Files(tuple(data for data, _ in parts), cues)
