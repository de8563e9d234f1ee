"""Who reads with which voice: a soul's `voice:`, the narrator's and the thoughts' in context.md,
and the defaults when none is set.

Invariant: the voices a read uses are a pure function of (cast, settings, engine, language, the
souls' bios): no two actors of a scene share a default voice while the engine has distinct ones
left, a voice a writer chose is never handed to another actor as a default, and the narrator
and the thoughts keep voices of their own. An offline default matches the character's bio: a
woman's or a man's timbre when the bio calls the character "she" or "he" (她/他) far more. `OFFLINE` (eSpeak NG, bundled by the `voice` extra) speaks the voice
names of its own; any other engine is a litellm speech model, whose voices are the provider's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engine.catalog import is_zh
from engine.config import Config

OFFLINE = "espeak"  # the offline engine's name where a speech model's name would stand
# eSpeak NG's voice variants (voices/!v): six men's and six women's timbres.
_VARIANTS = ("m3", "f3", "m1", "f4", "m7", "f2", "m4", "f1", "m5", "f5", "m6", "m2")
_PITCHES = (50, 35, 65, 25, 75)  # after every variant is taken: the same timbres, pitched apart
# OpenAI's voices (the `/v1/audio/speech` servers that copy its API use the same names).
PROVIDER_ACTORS = ("alloy", "echo", "nova", "onyx", "shimmer", "coral", "sage", "ash", "verse")
PROVIDER_NARRATOR = "fable"
PROVIDER_THOUGHTS = "ballad"


@dataclass(frozen=True)
class Voice:
    """One voice: a name the engine knows; pitch (0–99) and rate (words a minute, 80–450) are
    the offline engine's (a speech model reads `rate` as its speed, 175 = 1.0)."""

    name: str
    pitch: int | None = None
    rate: int | None = None

    @property
    def key(self) -> str:
        """The voice as one string, for the line cache and the cue sheet."""
        extra = "".join(f";{k}={v}" for k, v in (("pitch", self.pitch), ("rate", self.rate)) if v)
        return self.name + extra


def voice_of(setting: Any) -> Voice | None:
    """A validated `voice:` setting (engine.folder.settings: a name or {name, pitch, rate})."""
    if isinstance(setting, str):
        return Voice(setting)
    if isinstance(setting, Mapping) and isinstance(setting.get("name"), str):
        return Voice(setting["name"], setting.get("pitch"), setting.get("rate"))
    return None


def offline_base(language: str) -> str:
    """The eSpeak NG language voice the scene's language reads in (Mandarin for Chinese)."""
    return "cmn" if is_zh(language) else "en-us"


_SPEEDS = (155, 195)  # words a minute (a speech model's speed 0.89, 1.11): the same voices apart


def _defaults(engine: str, language: str) -> list[Voice]:
    if engine != OFFLINE:
        out = [Voice(name) for name in PROVIDER_ACTORS]
        return out + [Voice(name, rate=rate) for rate in _SPEEDS for name in PROVIDER_ACTORS]
    base = offline_base(language)
    out = [Voice(f"{base}+{variant}") for variant in _VARIANTS]
    out += [Voice(f"{base}+{variant}", pitch) for pitch in _PITCHES for variant in _VARIANTS]
    return out


def narrator_default(engine: str, language: str) -> Voice:
    if engine != OFFLINE:
        return Voice(PROVIDER_NARRATOR)
    return Voice(offline_base(language), rate=165)  # the language's own plain voice, unhurried


def thoughts_default(engine: str, language: str) -> Voice:
    if engine != OFFLINE:
        return Voice(PROVIDER_THOUGHTS)
    return Voice(f"{offline_base(language)}+whisper")


Leaning = Literal["f", "m"] | None
_SHE = re.compile(r"\b(?:she|her|hers|herself)\b|她", re.I)
_HE = re.compile(r"\b(?:he|him|his|himself)\b|他(?![們们])", re.I)


def leaning(bio: str) -> Leaning:
    """ "f" or "m" when a bio says "she" (她) or "he" (他) at least twice and twice as often as
    the other — who the character is, as the writer wrote them — else None."""
    she, he = len(_SHE.findall(bio)), len(_HE.findall(bio))
    if she >= 2 and she >= 2 * he:
        return "f"
    if he >= 2 and he >= 2 * she:
        return "m"
    return None


def _timbre(voice: Voice) -> Leaning:
    """An offline voice's timbre: eSpeak NG's `+f3` is a woman's, `+m3` a man's."""
    variant = voice.name.rpartition("+")[2]
    return "f" if variant.startswith("f") else "m" if variant.startswith("m") else None


@dataclass(frozen=True)
class Casting:
    """The voices of one read: each actor's, the narrator's, the thoughts'."""

    actors: Mapping[str, Voice]
    narrator: Voice
    thoughts: Voice


def cast_voices(
    cast: Iterable[str],
    chosen: Mapping[str, Voice | None],
    engine: str,
    language: str,
    narrator: Voice | None = None,
    thoughts: Voice | None = None,
    leanings: Mapping[str, Leaning] | None = None,
) -> Casting:
    """Each actor's voice: its own `voice:`, else the next default voice nobody chose, in cast
    order (cycling only when the engine has run out of distinct ones) — offline, the next of
    the timbre its bio leans to (`leaning`), when one is left."""
    narrator = narrator or narrator_default(engine, language)
    thoughts = thoughts or thoughts_default(engine, language)
    taken = {v.key for v in chosen.values() if v is not None} | {narrator.key, thoughts.key}
    free = [v for v in _defaults(engine, language) if v.key not in taken]
    free = free or _defaults(engine, language)
    out: dict[str, Voice] = {}
    used: set[str] = set()
    n = 0  # defaults handed out: when none is left, they go round again in order
    for actor in cast:
        mine = chosen.get(actor)
        if mine is None:
            want = (leanings or {}).get(actor) if engine == OFFLINE else None
            left = [v for v in free if v.key not in used]
            fits = [v for v in left if want and _timbre(v) == want]
            mine, n = (fits or left or [free[n % len(free)]])[0], n + 1
            used.add(mine.key)
        out[actor] = mine
    return Casting(out, narrator, thoughts)


def allowed_voices(config: Config) -> tuple[str, ...]:
    """Voice names a soul or context.md sent through Discord may set: `CIRCUS_VOICES`
    (comma-separated), else the default voices of both engines in both languages."""
    raw = (config.voices or "").strip()
    if raw:
        return tuple(dict.fromkeys(v.strip() for v in raw.split(",") if v.strip()))
    names: list[str] = []
    for engine in (OFFLINE, "speech"):
        for language in ("en", "zh"):
            names += [v.name for v in _defaults(engine, language)]
            names += [narrator_default(engine, language).name]
            names += [thoughts_default(engine, language).name]
    return tuple(dict.fromkeys(names))
