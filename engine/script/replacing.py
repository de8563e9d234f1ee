"""A range of the writer's file that a take's lines go in place of (`export --into --replace`).

Invariant: the range is whole lines of the file (Fountain: 1-based lines as an editor numbers
them; FDX: 1-based paragraphs, as the import counts them) and lies inside the imported scene,
after its heading and before the next one; it never cuts an element, a dual dialogue, a note or
a cut passage in half. Anything else is refused before a byte is written; inside a good range
the lines go in, outside it every byte stays as it was, line endings and BOM included. Pure.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from engine.errors import BadScript
from engine.script.elements import Element, Script
from engine.script.fountain import LINE_BREAK
from engine.script.record import ScriptScene

_RANGE = re.compile(r"\s*(\d{1,7})\s*[-–—~〜～－]\s*(\d{1,7})\s*")
_SPANS = re.compile(r"/\*.*?\*/|\[\[.*?\]\]", re.DOTALL)  # a cut passage, a note


def parse_range(text: str) -> tuple[int, int]:
    """`FROM-TO` as two 1-based numbers, in order; refused otherwise."""
    match = _RANGE.fullmatch(text)
    if not match:
        raise BadScript("bad_range", asked=text)
    first, last = int(match.group(1)), int(match.group(2))
    if first < 1 or last < first:
        raise BadScript("range_inverted", first=first, last=last)
    return first, last


def line_count(text: str) -> int:
    """The lines an editor shows (a final line break starts no line of its own)."""
    breaks = list(LINE_BREAK.finditer(text))
    return len(breaks) + (1 if not breaks or breaks[-1].end() < len(text) else 0)


def check_range(
    script: Script, scene: ScriptScene, wanted: tuple[int, int], size: int, text: str = ""
) -> tuple[int, int]:
    """`wanted` (1-based) as places from 0, refused unless it lies in `scene` after its heading
    and before the next heading, within the file's `size` lines (FDX: paragraphs), and cuts
    nothing in half. `text`: a Fountain file's text, for its notes and cut passages."""
    first, last = wanted[0] - 1, wanted[1] - 1
    if scene.heading:
        low = scene.heading.end + 1
    else:  # no heading: from the first element on, never over a title page
        low = scene.elements[0].start if scene.elements else 0
    later = [e.start for e in script.elements if e.kind == "heading" and e.start >= low]
    high = min(later, default=size) - 1
    if first < low or last > high:
        raise BadScript("range_outside", first=wanted[0], last=wanted[1],
                        heading=scene.label or "—", low=low + 1, high=high + 1)  # fmt: skip
    blocks = _blocks(script.elements, text)
    starts, ends = script.starts, script.spans  # FDX: a container (a dual block) stays whole
    blocks += [(i, i + 1) for i in range(len(starts) - 1) if starts[i] == starts[i + 1]]
    blocks += [(i, i + 1) for i in range(len(ends) - 1) if ends[i] == ends[i + 1]]
    for start, end in blocks:
        if (start < first <= end) or (start <= last < end):
            raise BadScript("range_cuts", first=wanted[0], last=wanted[1], line=start + 1)
    return first, last


def _blocks(elements: Sequence[Element], text: str) -> list[tuple[int, int]]:
    """What must be kept whole, as (first, last) places: each element, a dual dialogue with
    the speech before it, each note and cut passage of a Fountain file."""
    out = [(e.start, e.end) for e in elements]
    out += [(a.start, b.end) for a, b in zip(elements, elements[1:], strict=False) if b.dual]
    breaks = [m.start() for m in LINE_BREAK.finditer(text)]
    for match in _SPANS.finditer(text):
        start, end = bisect_right(breaks, match.start()), bisect_right(breaks, match.end() - 1)
        out.append((start, end))
    return out


def replace_lines(text: str, first: int, last: int, paragraphs: Sequence[Sequence[str]]) -> str:
    """`text` with lines `first`..`last` (from 0) swapped for the paragraphs, a blank line
    between two, and one against a line of text left just above or below; the file's own line
    ending; nothing outside the range changes."""
    breaks = list(LINE_BREAK.finditer(text))
    nl = breaks[0].group(0) if breaks else "\n"
    lines = LINE_BREAK.split(text)
    start = breaks[first - 1].end() if first else 0
    end = breaks[last].end() if last < len(breaks) else len(text)
    body = (nl + nl).join(nl.join(p) for p in paragraphs)
    if first and lines[first - 1].strip():
        body = nl + body
    if last < len(breaks):
        body += nl
        if last + 1 < len(lines) and lines[last + 1].strip():
            body += nl
    return text[:start] + body + text[end:]
