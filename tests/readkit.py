"""A scene to read aloud: six turns whose every action, line and thought is unique (so each
request to a speech server names one turn), and what a read wrote, decoded back."""

from __future__ import annotations

import re
from pathlib import Path

from engine.config import Config

THOUGHT = "PRIVATE-THOUGHT"  # in every thought: no speech request may carry it
CLOCK = re.compile(r"^(?:(\d+):)?(\d+):(\d\d\.\d) ")


def distinct(request) -> str:
    """A performer whose every turn says something new, and cues the next in the cast."""
    shape = request.shape
    cast = list(shape.cast)
    if shape.kind == "stage_manager":
        return f"NEXT: {cast[request.index % len(cast)]}\nREASON: scripted"
    if shape.kind != "actor":
        return "A scripted answer."
    me, n = shape.speaker, request.index + 1
    nxt = [a for a in cast if a != me][request.index % (len(cast) - 1)]
    return (
        f"<thought>{THOUGHT} {me} hides thing {n}.</thought>\n"
        f"<action>{me} moves a chair ({n}).</action>\n"
        f"<dialogue>Line number {n} from {me}.</dialogue>\n<cue>{nxt}</cue>"
    )


def speech_config(base: str, **more: str) -> Config:
    """The operator's Config for a read through the fake speech server at `base`."""
    env = {
        "CIRCUS_TTS_MODEL": "openai/tts-1",
        "CIRCUS_TTS_API_BASE": base,
        "CIRCUS_MODEL_RETRIES": "0",
        "CIRCUS_RETRY_BASE_SECONDS": "0.01",
        **more,
    }
    return Config.from_env(env)


def duration(path: Path) -> float:
    import soundfile

    info = soundfile.info(str(path))
    return info.frames / info.samplerate


def samples(path: Path):
    import soundfile

    data, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    return data.mean(axis=1), rate


def cue_times(text: str) -> list[float]:
    """The start of every row of a cue sheet, in seconds."""
    out = []
    for line in text.splitlines():
        if m := CLOCK.match(line):
            h, mnt, s = int(m.group(1) or 0), int(m.group(2)), float(m.group(3))
            out.append(h * 3600 + mnt * 60 + s)
    return out


def onsets(path: Path, quiet: float = 0.05) -> list[float]:
    """When each sound in the file starts (seconds): the first loud sample after at least
    `quiet` seconds of near silence — a line, in the fake speech server's tones."""
    import numpy as np

    heard, rate = samples(path)
    loud = np.flatnonzero(np.abs(heard) > 0.02)
    if len(loud) == 0:
        return []
    gaps = np.diff(loud) > quiet * rate
    firsts = [loud[0], *loud[1:][gaps]]
    return [float(i) / rate for i in firsts]
