"""Audio as numbers: decoding what an engine returns, the pauses, one mix, and the files.

Invariant: every line is mono float32 at `RATE` before it is mixed, so the mix's length is the
sum of its lines and pauses exactly (a cue sheet's times are that sum, never a guess); a file
that must fit a size is split only between lines, each part a whole file of its own. numpy
and soundfile (libsndfile, which writes Opus in Ogg, MP3 and WAV) load on the first read.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from engine.errors import NoVoiceEngine

RATE = 24_000  # Hz: OpenAI's speech rate, and one Opus accepts
# `--format`: (libsndfile's format, subtype, file suffix). Ogg/Opus is the default: a phone
# plays it inline in Discord.
FORMATS: dict[str, tuple[str, str, str]] = {
    "ogg": ("OGG", "OPUS", ".ogg"),
    "mp3": ("MP3", "MPEG_LAYER_III", ".mp3"),
    "wav": ("WAV", "PCM_16", ".wav"),
}
# libsndfile's compression level (0 best … 1 smallest) per format. Opus at 0.8 is about 57 kb/s
# (0.43 MB a minute): there the encoder works in its CELT mode, three times faster than at its
# default ~37 kb/s (SILK/hybrid: about 17× real time on one core, which made encoding most of
# a re-read). MP3 at 0.9 is about 37 kb/s. bench/bench_read.py measures both.
LEVELS: dict[str, float] = {"ogg": 0.8, "mp3": 0.9}
CACHE_FORMAT = ("FLAC", "PCM_16")  # a cached line: lossless, about half of a WAV


def libraries() -> tuple[Any, Any]:
    """(numpy, soundfile), or NoVoiceEngine saying what to install."""
    try:
        import numpy
        import soundfile
    except (ImportError, OSError):
        raise NoVoiceEngine("error.voice.no_audio") from None
    return numpy, soundfile


def resample(samples: Any, rate: int) -> Any:
    """`samples` at `rate` as samples at RATE (linear: speech, not music)."""
    np, _ = libraries()
    if rate == RATE or len(samples) == 0:
        return samples.astype(np.float32)
    n = max(1, round(len(samples) * RATE / rate))
    where = np.linspace(0, len(samples) - 1, n)
    return np.interp(where, np.arange(len(samples)), samples).astype(np.float32)


def decode(data: bytes) -> Any:
    """An audio file's bytes (WAV, FLAC, Ogg, MP3) as mono float32 at RATE; ValueError if it is
    no audio libsndfile reads."""
    np, sf = libraries()
    try:
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (RuntimeError, sf.LibsndfileError, TypeError) as exc:
        raise ValueError(str(exc)) from None
    return resample(samples.mean(axis=1), int(rate))


def from_pcm16(samples: Any, rate: int) -> Any:
    np, _ = libraries()
    return resample(np.asarray(samples, dtype=np.float32) / 32768.0, rate)


def silence(seconds: float) -> Any:
    np, _ = libraries()
    return np.zeros(round(seconds * RATE), dtype=np.float32)


def encode(samples: Any, fmt: str) -> bytes:
    """`samples` (at RATE) as one file of `fmt` (FORMATS)."""
    np, sf = libraries()
    major, subtype, _ = FORMATS[fmt]
    out = io.BytesIO()
    options = {"compression_level": LEVELS[fmt]} if fmt in LEVELS else {}
    sf.write(out, np.clip(samples, -1.0, 1.0), RATE, format=major, subtype=subtype, **options)
    return out.getvalue()


def cache_bytes(samples: Any) -> bytes:
    np, sf = libraries()
    out = io.BytesIO()
    sf.write(
        out, np.clip(samples, -1.0, 1.0), RATE, format=CACHE_FORMAT[0], subtype=CACHE_FORMAT[1]
    )
    return out.getvalue()


def seconds(samples: Any) -> float:
    return len(samples) / RATE


def mix(pieces: Sequence[Any]) -> Any:
    np, _ = libraries()
    return np.concatenate(list(pieces)) if pieces else np.zeros(0, dtype=np.float32)


def split_points(lengths: Sequence[int], parts: int) -> list[int]:
    """Where to cut a mix of pieces `lengths` (samples) into `parts` of about equal length:
    indices of the pieces that start a new part (never inside a piece). Pure."""
    total = sum(lengths)
    cuts, at, n = [], 0, 1
    for i, length in enumerate(lengths):
        if n < parts and i > 0 and at >= total * n / parts:
            cuts.append(i)
            n += 1
        at += length
    return cuts


def encode_within(pieces: Sequence[Any], fmt: str, limit: int | None) -> list[tuple[bytes, int]]:
    """The mix of `pieces` as one file, or as the fewest parts (cut between pieces) that each
    fit `limit` bytes: (file, index of its first piece) each. One piece too big for the limit
    alone stays one part: the caller says so."""
    whole = encode(mix(pieces), fmt)
    if limit is None or len(whole) <= limit or len(pieces) < 2:
        return [(whole, 0)]
    lengths = [len(p) for p in pieces]
    parts = max(2, -(-len(whole) // limit))
    while parts <= len(pieces):
        bounds = [0, *split_points(lengths, parts), len(pieces)]
        files = [
            (encode(mix(pieces[a:b]), fmt), a) for a, b in zip(bounds, bounds[1:], strict=False)
        ]
        if all(len(f) <= limit for f, _ in files):
            return files
        parts += 1
    return [(encode(mix([p]), fmt), i) for i, p in enumerate(pieces)]
