"""A screenplay as its readers hand it over: elements in file order, each with its place in the
file, and what is kept beside them (title page, the writer's notes, how many cut passages).

Invariant: a note or a cut passage is never inside an element's text — the writer's private
notes travel only in `Script.notes`. `start` and `end` locate an element in its file (Fountain:
the first and last line, from 0; FDX: the byte offsets of its paragraph), so a splice can land
right after it and leave every other byte alone. Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.vocabulary import ScriptKind

MAX_BYTES = 10 * 1024 * 1024  # a 400-page script is well under 1 MB; anything larger is refused
# A cue's extension that means the voice is heard, the speaker not on stage (V.O., 畫外音).
HEARD = frozenset(
    {"V.O.", "VO", "V/O", "V.O", "VOICEOVER", "VOICE OVER", "畫外音", "画外音", "旁白"}
)


@dataclass(frozen=True)
class Element:
    kind: ScriptKind
    text: str  # as a reader shows it (emphasis marks gone); a speech: its lines joined
    start: int
    end: int
    name: str = ""  # a speech: the cue's name as the writer spelled it
    extensions: tuple[str, ...] = ()  # a speech: (V.O.), (CONT'D), … without the brackets
    parts: tuple[tuple[bool, str], ...] = ()  # a speech: (is a parenthetical, text) in order
    dual: bool = False  # the second speech of a dual dialogue (said at the same time)
    number: str = ""  # a heading's scene number (#12# in Fountain, Number= in FDX)

    @property
    def heard_only(self) -> bool:
        """A voice over: heard, the speaker not on stage."""
        return any(norm_extension(e) in HEARD for e in self.extensions)


def norm_extension(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).upper().split())


@dataclass(frozen=True)
class Note:
    line: int  # where it starts (1-based line; FDX: the paragraph's number)
    text: str


@dataclass(frozen=True)
class Script:
    format: str  # "fountain" or "fdx"
    elements: tuple[Element, ...]
    title: Mapping[str, str] = field(default_factory=dict)  # title page: key → value
    notes: tuple[Note, ...] = ()
    cut: int = 0  # boneyard passages dropped
    cut_lines: tuple[int, ...] = ()  # the line each of them starts on (Fountain)
    characters: tuple[str, ...] = ()  # FDX SmartType characters (who may never speak)
    revision: str = ""  # FDX: the active revision set
    spans: tuple[int, ...] = ()  # FDX: where each paragraph's top-level container ends (bytes)
    starts: tuple[int, ...] = ()  # FDX: where it starts (bytes)


_EMPHASIS = re.compile(r"(?<!\\)(\*{1,3}|_)(?=\S)(.+?)(?<=\S)(?<!\\)\1")


def plain(text: str) -> str:
    """Fountain text as a reader shows it: emphasis marks gone, escaped stars kept as stars."""
    previous = None
    while previous != text:
        previous, text = text, _EMPHASIS.sub(r"\2", text)
    return text.replace("\\*", "*").replace("\\_", "_")
