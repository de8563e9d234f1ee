"""A second reader of the imported scene: fountain-py (MIT, no dependencies, keeps line
numbers) must read the same cue/dialogue sequence in it as ours, or the import is refused
naming the line where the two part — a writer's pages are never half-understood in silence.

Invariant: only the imported scene's lines are compared (a quirk elsewhere in the file does
not block a scene), speech by speech: the cue's line, the name (extensions apart), and what is
said, parentheticals included. Pure.
"""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

from fountain import FountainParser
from fountain.elements import ElementType

from engine.errors import BadScript
from engine.script.fountain import LINE_BREAK, cue_parts
from engine.script.record import ScriptScene

Speech = tuple[int, str, str]  # (the cue's line from 1, the name, the speech's lines joined)
_SAID = (ElementType.DIALOGUE, ElementType.PARENTHETICAL, ElementType.LYRICS)


def _cue(element: Any, said: str) -> Speech:
    name, _ = cue_parts(element.text)
    return element.line_number, name, said


def their_speeches(text: str) -> list[Speech]:
    """fountain-py's reading of every speech in `text` (its lines counted as ours are: every
    line break, `\r\n`, `\n` or `\r`, is one; a BOM is no text)."""
    text = LINE_BREAK.sub("\n", text.removeprefix("\ufeff"))
    out: list[Speech] = []
    open_speech: list[str] | None = None
    for element in FountainParser().parse(text).elements:
        if element.type == ElementType.DUAL_DIALOGUE:
            sides: Any = element.metadata
            for side in ("left", "right"):
                lines = [e.text for e in sides[f"{side}_dialogue"]]
                out.append(_cue(sides[f"{side}_character"], "\n".join(lines)))
            open_speech = None
        elif element.type == ElementType.CHARACTER:
            out.append(_cue(element, ""))
            open_speech = []
        elif element.type in _SAID and open_speech is not None:
            sung = element.type == ElementType.LYRICS and not element.text.startswith("~")
            open_speech.append("~" + element.text if sung else element.text)
            line, name, _ = out[-1]
            out[-1] = (line, name, "\n".join(open_speech))
        elif element.type != ElementType.NOTE:
            open_speech = None
    return out


def cross_check(text: str, scene: ScriptScene, last: int) -> None:
    """Refuse unless fountain-py reads the scene's speeches up to line `last` (from 0) as ours."""
    start = scene.heading.start if scene.heading else 0
    ours = [
        (e.start + 1, e.name, e.text)
        for e in scene.elements
        if e.kind == "speech" and e.end <= last
    ]
    # only the scene's own lines are read again: a second reading costs what the scene does
    lines = LINE_BREAK.split(text.removeprefix("\ufeff"))[start : last + 1]
    theirs = [(line + start, name, said) for line, name, said in their_speeches("\n".join(lines))]
    for mine, other in zip_longest(ours, theirs):
        if mine is None or other is None or mine[1:] != other[1:]:
            line = min(s[0] for s in (mine, other) if s is not None)
            raise BadScript("readers_differ", line=line)
