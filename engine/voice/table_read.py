"""Rendering a script: each line from the cache or its engine, in order, billed as it is made,
then put together with its pauses into one file (or numbered parts) and a cue sheet — Ogg Opus
joined from each line encoded once (engine.voice.ogg), any other format encoded whole.

Invariant: every line is checked (its voices known to the engine) before any is synthesised;
each line synthesised (and each piece encoded) is cached the moment it exists, so a provider
error mid-render loses nothing already paid for and the next read resumes there; nothing is
returned half-made — the caller writes the files only once every line is in hand.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.config import Config
from engine.errors import BadRequest, NoVoiceEngine
from engine.folder.voices import OFFLINE, Voice
from engine.voice import audio, espeak, ogg
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


LEAD = 0.06  # seconds of silence before each line: a piece encoded on its own starts clean


@dataclass
class Rendered:
    """A rendered script: its pieces (each line with a little silence before it and its pause
    after), their cache names, and what it took: lines made by the engine, lines from the
    cache, characters billed."""

    pieces: list[Any] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    made: int = 0
    cached: int = 0
    characters: int = 0


Progress = Callable[[int, int], Awaitable[None]]


async def _line(
    line: Line, engine: Engine, cache: LineCache | None, meter: Meter | None, price: float | None
) -> tuple[Any, bool]:
    """(the line's samples, whether they came from the cache)."""
    key = line_key(engine.name, line.voice, line.text)
    if cache is not None and (samples := await cache.get(key)) is not None:
        return samples, True
    if meter is not None and engine.billed:
        meter.admit(len(line.text), price)
    samples = await engine.say(line.text, line.voice)
    if engine.billed and meter is not None:
        meter.settle(engine.name, line.speaker or "narrator", len(line.text), price)
    if cache is not None:
        await cache.put(key, samples)
    return samples, False


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
    for n, line in enumerate(lines, 1):
        key = line_key(engine.name, line.voice, line.text)
        if key not in made:
            made[key], cached = await _line(line, engine, cache, meter, price)
            out.cached += cached
            out.made += not cached
            out.characters += 0 if cached or not engine.billed else len(line.text)
        gap = max(0.0, line.pause - LEAD)
        out.pieces.append(audio.mix([audio.silence(LEAD), made[key], audio.silence(gap)]))
        out.names.append(f"{key}-{round(line.pause * 1000)}")
        if progress is not None:
            await progress(n, len(lines))
    return out


async def encoded(rendered: Rendered, fmt: str, cache: LineCache | None) -> list[ogg.Piece]:
    """Each piece as Ogg Opus (`fmt` ogg; otherwise none: the mix is encoded whole), from the
    cache or encoded now and cached."""
    if fmt != "ogg":
        return []
    out = []
    level = audio.LEVELS[fmt]
    for name, samples in zip(rendered.names, rendered.pieces, strict=True):
        file = f"{name}-{level}.opus"
        data = await cache.get_bytes(file) if cache is not None else None
        piece = _piece(data) if data is not None else None
        if piece is None:
            data = await asyncio.to_thread(audio.encode, samples, fmt)
            piece = ogg.piece_of(data)
            if cache is not None:
                await cache.put_bytes(file, data)
        out.append(piece)
    return out


def _piece(data: bytes) -> ogg.Piece | None:
    try:
        return ogg.piece_of(data)
    except ValueError:  # a cached file no longer whole: encoded again
        return None


@dataclass(frozen=True)
class Files:
    """A rendered read as files to write: the audio (one, or numbered parts), its cues and its
    length in seconds."""

    audio: tuple[bytes, ...]
    cues: str
    seconds: float


def _opus_parts(pieces: Sequence[ogg.Piece], sizes: Sequence[int], limit: int | None) -> list[int]:
    """The index of each part's first piece: as many pieces as fit `limit` bytes each."""
    firsts, weight = [0], 0
    for i, size in enumerate(sizes):
        if limit is not None and weight and weight + size > limit:
            firsts.append(i)
            weight = 0
        weight += size
    return firsts


def files_of(
    rendered: Rendered,
    lines: Sequence[Line],
    title: str,
    fmt: str,
    limit: int | None,
    language: str,
    opus: Sequence[ogg.Piece] = (),
) -> Files:
    """The files of a read: Ogg Opus joined from its encoded pieces (`opus`), any other format
    encoded whole; in parts of at most `limit` bytes, each with its cue times from 0:00."""
    if opus:
        sizes = [sum(map(len, p.audio)) + 32 * (1 + len(p.audio) // 50) for p in opus]
        firsts = _opus_parts(opus, sizes, limit and int(limit * 0.97))
        bounds = [*firsts, len(opus)]
        joined = [ogg.join(opus[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
        starts = [s + LEAD for j in joined for s in j.starts]
        cues = cue_sheet(title, lines, starts, firsts, language)
        return Files(tuple(j.data for j in joined), cues, sum(j.seconds for j in joined))
    parts = audio.encode_within(rendered.pieces, fmt, limit)
    firsts = [first for _, first in parts]
    starts, at = [], 0.0
    for i, piece in enumerate(rendered.pieces):
        at = 0.0 if i in firsts else at
        starts.append(at + LEAD)
        at += audio.seconds(piece)
    seconds = sum(audio.seconds(p) for p in rendered.pieces)
    cues = cue_sheet(title, lines, starts, firsts, language)
    return Files(tuple(data for data, _ in parts), cues, seconds)
