"""director_notes.md: live whispers, one section for everyone and one per actor.

A section headed with one of `engine.folder.names.EVERYONE_WORDS` (`## 全體` / `## Everyone`) is read
by every actor and the stage manager; a section headed with an actor's name is read by that actor
alone. Unknown headings reach nobody (a typo must never leak a private whisper). HTML comments
— a writer's own, and the author of each note (engine.folder.attribution) — reach no prompt.
Pure functions over the file's text.

Whispers are bounded where they meet a model: one note (or cue direction) is at most
NOTE_MOST_CHARS, and each section a prompt shows — everyone's, the actor's own — takes at most
`whisper_budget` of the reader's context, keeping the newest notes and dropping the oldest
first (`fit_whisper`); the director is told how many no longer fit (`dropped_notes`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from engine.catalog import say
from engine.door.tokens import conservative
from engine.folder.attribution import Mark, note_marks, strip_comments
from engine.folder.names import is_everyone
from engine.folder.sanitize import ELLIPSIS
from engine.folder.sections import split

Counter = Callable[[str], int]  # tokens of the model that reads the text (engine.door.tokens)

_SECTION = re.compile(r"## (.+?)\s*$")  # a heading with a name (a bare `## ` is body text)


@dataclass(frozen=True)
class Whispers:
    everyone: str = ""
    per_actor: dict[str, str] = field(default_factory=dict)
    unknown_sections: tuple[str, ...] = ()
    marks: tuple[Mark, ...] = ()  # who wrote each attributed note, and when (for the room)

    def for_actor(self, actor: str) -> str:
        return self.per_actor.get(actor, "")


def parse_notes(text: str, cast: Iterable[str]) -> Whispers:
    """Split director_notes.md into whispers for everyone and for each cast member, without
    its comments (who wrote a note is for the room, not the actors)."""
    marks = tuple(note_marks(text, cast)) if "<!--" in text else ()
    text = strip_comments(text)
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
        marks=marks,
    )


def empty_notes(cast: Iterable[str], language: str = "zh") -> str:
    everyone = say("notes.everyone", language)
    parts = [say("notes.title", language), "", f"## {everyone}", ""]
    for actor in cast:
        parts += [f"## {actor}", ""]
    return "\n".join(parts)


def add_note(text: str, note: str, actor: str | None, language: str = "zh", mark: str = "") -> str:
    """Return the file's text with `note` appended as a bullet under the right section, ended
    by `mark` (its author's comment, engine.folder.attribution.note_mark) when given."""
    bullet = "- " + note.strip().replace("\n", "\n  ") + (f" {mark}" if mark else "")
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


_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)


def without_section(text: str, actor: str) -> tuple[str, int]:
    """(director_notes.md without the whispers headed `## actor`, how many notes they held):
    a removed actor's whispers go with them, rather than sit in a section nobody reads."""
    lines = text.split("\n")
    # Sections as the prompts read them: a heading inside an HTML comment is none, so the
    # removed range never ends inside a comment and leaves its rest live.
    blanked = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    gone = [s for s in split(blanked, _SECTION) if s.match.group(1) == actor]
    notes = sum(len(note_items(strip_comments("\n".join(s.lines)))) for s in gone)
    for section in reversed(gone):
        del lines[section.start : section.end]
    return "\n".join(lines), notes


def with_section(text: str, actor: str) -> str:
    """director_notes.md with an empty section for `actor` added if it has none."""
    if any(s.match.group(1) == actor for s in split(text, _SECTION)):
        return text
    return text.rstrip("\n") + f"\n\n## {actor}\n"


# --- loose: how much of a prompt whispers may take
NOTE_MOST_CHARS = 2000  # one note or one cue direction: a few sentences; more is refused
# Everyone's whispers and an actor's own together: at most a quarter of the reader's context
# (each section half of it: 1,024 tokens of an 8k model, ~40 short notes), and never more than
# NOTES_MOST_TOKENS however large the context; a cue's direction gets one section's share too.
NOTES_SHARE = 4
NOTES_MOST_TOKENS = 4096
_LINE_TOKENS = 1  # the newline between two notes


SMALL_CONTEXT = 2048  # Ollama's own default: the smallest context a reader plausibly has


def may_fit_anywhere(text: str) -> bool:
    """True when `text` fits its share of even a SMALL_CONTEXT model by an estimate that
    over-counts every tokenizer (engine.door.tokens.conservative): then nothing is dropped, and no
    tokenizer needs loading to say so."""
    return conservative(text) <= whisper_budget(SMALL_CONTEXT)


def whisper_budget(context_tokens: int) -> int:
    """Tokens one whisper section (everyone's, or an actor's own) may take in a prompt for a
    model with `context_tokens` of context: half of the notes' share."""
    return min(NOTES_MOST_TOKENS, max(0, context_tokens) // NOTES_SHARE) // 2


def note_items(text: str) -> list[str]:
    """The notes of one section, oldest first: a line that does not start with a space begins
    a note (`- …` bullets and their indented continuation lines, as add_note writes them)."""
    items: list[str] = []
    for line in text.split("\n"):
        if items and (not line or line[:1].isspace()):
            items[-1] += "\n" + line
        elif line.strip():
            items.append(line)
    return [item.rstrip() for item in items]


def fit_whisper(text: str, budget: int, count: Counter) -> tuple[str, int]:
    """(what of `text` a prompt shows, how many older notes were dropped): the newest notes
    whose tokens fit `budget`, in their order. A newest note that alone is too long (a
    hand-edited file) is cut to fit and marked, so a whisper never outgrows its share."""
    if count(text) <= budget:
        return text, 0
    items = note_items(text)
    kept: list[str] = []
    used = 0
    for item in reversed(items):
        cost = count(item) + _LINE_TOKENS
        if used + cost > budget:
            break
        kept.append(item)
        used += cost
    if not kept and items:
        return _clip(items[-1], budget, count), len(items) - 1
    return "\n".join(reversed(kept)), len(items) - len(kept)


def _clip(text: str, budget: int, count: Counter) -> str:
    """The longest prefix of `text` that fits `budget` tokens with its mark (binary search:
    counts are monotone in the prefix for every tokenizer we use, closely enough)."""
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if count(text[:mid] + ELLIPSIS) <= budget:
            low = mid
        else:
            high = mid - 1
    return text[:low].rstrip() + ELLIPSIS if low else ""


def dropped_warning(section: str, count: int, language: str) -> str:
    """The warning a director reads when `count` of `section`'s oldest whispers ("" for
    everyone's) no longer fit in a prompt."""
    who = section or say("note.dropped.everyone", language)
    return say("note.dropped", language, who=who, count=count)


def dropped_notes(
    whispers: Whispers,
    readers: Mapping[str, tuple[int, Counter]],
    everyone_readers: Iterable[tuple[int, Counter]] = (),
) -> dict[str, int]:
    """How many of the oldest notes each section loses in prompts: actor -> count, and "" for
    everyone's (the most any of its readers — each actor, the stage manager — loses). `readers`
    maps each cast member to its model's (context tokens, counter). Sections losing none are
    left out."""
    out: dict[str, int] = {}
    for actor, (context, count) in readers.items():
        lost = fit_whisper(whispers.for_actor(actor), whisper_budget(context), count)[1]
        if lost:
            out[actor] = lost
    if whispers.everyone:
        every = [*readers.values(), *everyone_readers]
        lost = max(
            (fit_whisper(whispers.everyone, whisper_budget(c), n)[1] for c, n in every), default=0
        )
        if lost:
            out[""] = lost
    return out
