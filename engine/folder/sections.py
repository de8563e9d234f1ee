"""Markdown split at `## ` headings: the one reader under every scene file's format.

Invariant: a line is a heading only if it starts with `## ` (and, where a format says so, also
matches that format's own heading pattern); a value line a person or a model wrote that could
be read as structure is stored with a backslash in front (`escape`), so it never splits a file,
and `unescape` gives it back exactly. Text before the first heading is a free preamble. Pure.
"""

from __future__ import annotations

import re
from typing import NamedTuple

ANY_HEADING = re.compile(r"## ")  # matched at the start of a line
# line starts that would read as structure: a heading, a label, an escape, and the start of the
# room's own record of a note in a backstage log (engine.folder.attribution.NOTE_LINE)
ESCAPED = ("## ", "**", "\\", "<!-- note ")


class Section(NamedTuple):
    """One heading and the lines under it, up to the next heading (a tuple: cheap to build)."""

    match: re.Match[str]  # the heading line, as the format's pattern matched it
    start: int  # the heading's line number in the text (from 0)
    offset: int  # where the heading line begins in the text
    end_offset: int  # where the next heading begins (or the text ends)
    lines: tuple[str, ...]  # the lines under the heading, as written (still escaped)

    @property
    def line(self) -> str:
        """The whole heading line."""
        return self.match.string

    @property
    def end(self) -> int:
        """The line number just past the section."""
        return self.start + 1 + len(self.lines)

    def body(self) -> str:
        """The lines under the heading, unescaped and stripped of blank edges."""
        return "\n".join(unescape(line) for line in self.lines).strip()


def split(text: str, heading: re.Pattern[str] = ANY_HEADING) -> list[Section]:
    """The sections of `text`, in order, at every line `heading` matches from its start.

    A format that knows only its own headings passes its pattern: any other `## ` line then
    stays a line of the section above it. Lines are separated by "\\n" alone."""
    lines = text.split("\n")
    found: list[tuple[int, int, re.Match[str]]] = []  # (line number, offset, match)
    offset = 0
    for number, line in enumerate(lines):
        if line.startswith("## ") and (match := heading.match(line)) is not None:
            found.append((number, offset, match))
        offset += len(line) + 1
    sections: list[Section] = []
    for i, (number, at, match) in enumerate(found):
        last, end = (found[i + 1][0], found[i + 1][1]) if i + 1 < len(found) else (None, len(text))
        sections.append(Section(match, number, at, end, tuple(lines[number + 1 : last])))
    return sections


def escape(line: str, also: tuple[str, ...] = ()) -> str:
    """A value line as stored: with a backslash in front if it could be read as structure
    (`also`: a format's own structural line starts, e.g. a vote line)."""
    if line.startswith(ESCAPED + also):
        return "\\" + line
    return line


def unescape(line: str) -> str:
    return line[1:] if line.startswith("\\") else line
