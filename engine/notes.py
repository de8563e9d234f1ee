"""director_notes.md: live whispers, one section for everyone and one per actor.

A section headed with one of `engine.names.EVERYONE_WORDS` (`## 全體` / `## Everyone`) is read
by every actor and the stage manager; a section headed with an actor's name is read by that actor
alone. Unknown headings reach nobody (a typo must never leak a private whisper). Pure functions
over the file's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.catalog import say
from engine.names import EVERYONE_WORDS, is_everyone
from engine.sections import split

EVERYONE_HEADINGS = EVERYONE_WORDS  # the one list (engine/names.py)
_SECTION = re.compile(r"## (.+?)\s*$")  # a heading with a name (a bare `## ` is body text)


@dataclass(frozen=True)
class Whispers:
    everyone: str = ""
    per_actor: dict[str, str] = field(default_factory=dict)
    unknown_sections: tuple[str, ...] = ()

    def for_actor(self, actor: str) -> str:
        return self.per_actor.get(actor, "")


def parse_notes(text: str, cast: Iterable[str]) -> Whispers:
    """Split director_notes.md into whispers for everyone and for each cast member."""
    cast_set = set(cast)
    everyone: list[str] = []
    per_actor: dict[str, list[str]] = {}
    unknown: list[str] = []
    for section in split(text, _SECTION):  # whispers are the director's markdown: no escapes
        heading, body = section.match.group(1), "\n".join(section.lines).strip()
        if is_everyone(heading):
            everyone.append(body)
        elif heading in cast_set:
            per_actor.setdefault(heading, []).append(body)
        else:
            unknown.append(heading)
    return Whispers(
        everyone="\n".join(b for b in everyone if b).strip(),
        per_actor={k: "\n".join(b for b in v if b).strip() for k, v in per_actor.items()},
        unknown_sections=tuple(unknown),
    )


def empty_notes(cast: Iterable[str], language: str = "zh") -> str:
    everyone = say("notes.everyone", language)
    parts = [say("notes.title", language), "", f"## {everyone}", ""]
    for actor in cast:
        parts += [f"## {actor}", ""]
    return "\n".join(parts)


def add_note(text: str, note: str, actor: str | None, language: str = "zh") -> str:
    """Return the file's text with `note` appended as a bullet under the right section."""
    bullet = "- " + note.strip().replace("\n", "\n  ")
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    target = next(
        (
            s
            for s in split("\n".join(lines), _SECTION)
            if (is_everyone(s.match.group(1)) if actor is None else s.match.group(1) == actor)
        ),
        None,
    )
    if target is None:
        heading = actor or say("notes.everyone", language)
        lines += ["", f"## {heading}", bullet]
        return "\n".join(lines).lstrip("\n") + "\n"
    end = target.end
    while end > target.start + 1 and not lines[end - 1].strip():
        end -= 1
    lines.insert(end, bullet)
    return "\n".join(lines) + "\n"


def rename_section(text: str, old: str, new: str) -> str:
    """director_notes.md with the whispers headed `## old` now headed `## new` (a renamed
    actor keeps their whispers; nobody else's section changes)."""
    out = []
    for line in text.split("\n"):
        match = _SECTION.fullmatch(line)
        out.append(f"## {new}" if match and match.group(1) == old else line)
    return "\n".join(out)


def with_section(text: str, actor: str) -> str:
    """director_notes.md with an empty section for `actor` added if it has none."""
    if any(s.match.group(1) == actor for s in split(text, _SECTION)):
        return text
    return text.rstrip("\n") + f"\n\n## {actor}\n"
