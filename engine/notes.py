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

EVERYONE_HEADINGS = EVERYONE_WORDS  # the one list (engine/names.py)
_SECTION = re.compile(r"^## (.+?)\s*$")


@dataclass(frozen=True)
class Whispers:
    everyone: str = ""
    per_actor: dict[str, str] = field(default_factory=dict)
    unknown_sections: tuple[str, ...] = ()

    def for_actor(self, actor: str) -> str:
        return self.per_actor.get(actor, "")


def _sections(text: str) -> list[tuple[str, str]]:
    sections: list[tuple[str, str]] = []
    heading: str | None = None
    lines: list[str] = []
    for line in text.split("\n"):
        match = _SECTION.match(line)
        if match:
            if heading is not None:
                sections.append((heading, "\n".join(lines).strip()))
            heading, lines = match.group(1), []
        elif heading is not None:
            lines.append(line)
    if heading is not None:
        sections.append((heading, "\n".join(lines).strip()))
    return sections


def parse_notes(text: str, cast: Iterable[str]) -> Whispers:
    """Split director_notes.md into whispers for everyone and for each cast member."""
    cast_set = set(cast)
    everyone: list[str] = []
    per_actor: dict[str, list[str]] = {}
    unknown: list[str] = []
    for heading, body in _sections(text):
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
    target = None
    for i, line in enumerate(lines):
        match = _SECTION.match(line)
        if match and (is_everyone(match.group(1)) if actor is None else match.group(1) == actor):
            target = i
            break
    if target is None:
        heading = actor or say("notes.everyone", language)
        lines += ["", f"## {heading}", bullet]
        return "\n".join(lines).lstrip("\n") + "\n"
    end = target + 1
    while end < len(lines) and not _SECTION.match(lines[end]):
        end += 1
    while end > target + 1 and not lines[end - 1].strip():
        end -= 1
    lines.insert(end, bullet)
    return "\n".join(lines) + "\n"
