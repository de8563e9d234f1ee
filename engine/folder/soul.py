"""An actor's soul.md: settings in front matter, then bio, prior story and director's notes.

The body is shown to that actor alone. The three parts are `##` sections; the prior-story
section can be redrafted by `summarize_for` without touching the other two, and a story put
into it never opens a section of its own (its `#` and `##` headings are written as `###`). `settings` holds
the front matter as validated by engine.folder.settings (so the properties below can trust its types).
Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.catalog import CATALOGS, say
from engine.folder import frontmatter
from engine.folder.sections import Section, split
from engine.folder.settings import soul_settings_dict

PRIOR_STORY_HEADINGS = ("前期劇本", "前期剧本", "前情", "prior story", "backstory so far")
BIO_HEADINGS = ("角色小傳", "角色小传", "小傳", "小传", "bio", "character")
NOTES_HEADINGS = (
    "導戲筆記",
    "导戏笔记",
    "導演筆記",
    "导演笔记",
    "director's notes",
    "director notes",
)
# The three parts, in order (seed 000 §6), by the catalog key of the heading new souls get.
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("soul.bio", BIO_HEADINGS),
    ("soul.prior_story", PRIOR_STORY_HEADINGS),
    ("soul.notes", NOTES_HEADINGS),
)
GUIDES = {  # the one line of guidance under each heading of a new soul (catalog keys)
    "soul.bio": "soul.bio.guide",
    "soul.prior_story": "soul.prior_story.guide",
    "soul.notes": "soul.notes.guide",
}
_SECTION = re.compile(r"## (.+?)\s*$")  # soul.md is the writer's markdown: no escapes
_TOP_HEADING = re.compile(r"(?m)^ {0,3}#{1,2}(?=[ \t]|$)")  # a markdown heading of level 1 or 2


@dataclass(frozen=True)
class Soul:
    name: str
    body: str
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def model(self) -> str | None:
        return _opt_str(self.settings.get("model"))

    @property
    def fallback_model(self) -> str | None:
        return _opt_str(self.settings.get("fallback_model"))

    @property
    def api_base(self) -> str | None:
        return _opt_str(self.settings.get("api_base"))

    @property
    def avatar_url(self) -> str | None:
        return _opt_str(self.settings.get("avatar_url"))

    @property
    def temperature(self) -> float | None:
        value = self.settings.get("temperature")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def aliases(self) -> tuple[str, ...]:
        value = self.settings.get("aliases") or ()
        if isinstance(value, str):
            value = [value]
        return tuple(str(a).strip() for a in value if str(a).strip())


def _opt_str(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None


def parse_soul(name: str, text: str, path: object, rel: str | None = None) -> Soul:
    """A soul from its file's text; its settings checked by engine.folder.settings.SoulSettings."""
    settings, body = frontmatter.split(text, path, rel)
    return Soul(name, body.strip(), soul_settings_dict(settings, path, rel))


def inside_a_part(text: str) -> str:
    """`text` as it may stand inside one part of a soul: each heading of level 1 or 2 written
    as level 3 (`## Director's notes` → `### Director's notes`), every other line as it was,
    so a model's draft can never open, or double, a section of the soul."""
    return _TOP_HEADING.sub("###", text)


def replace_prior_story(body: str, story: str, language: str = "zh") -> str:
    """Return the soul body with its prior-story section replaced (or added) by `story`, its
    own top headings demoted (`inside_a_part`)."""
    return _replace_part(body, _prior_story(body), "soul.prior_story", story, language)


def replace_bio(body: str, bio: str, language: str = "zh") -> str:
    """Return the soul body with its bio section replaced (or added) by `bio`, its own top
    headings demoted (`inside_a_part`); the other parts as they were."""
    found = next(
        (
            s
            for s in split(body, _SECTION)
            if any(h in s.match.group(1).casefold() for h in BIO_HEADINGS)
        ),
        None,
    )
    return _replace_part(body, found, "soul.bio", bio, language)


def _replace_part(
    body: str, section: Section | None, heading_key: str, text: str, language: str
) -> str:
    story = inside_a_part(text)
    if section is not None:
        # The heading stays as written, then one blank line, the story, one blank line: the
        # same shape however many times it is redrafted (blank lines never pile up).
        tail = body[section.end_offset :]
        head = body[: section.offset] + section.line
        rest = "\n\n" + tail.lstrip("\n") if tail.strip() else "\n"
        return head + "\n\n" + story.strip() + rest
    heading = say(heading_key, language)
    return body.rstrip("\n") + f"\n\n## {heading}\n\n{story.strip()}\n"


def guidance_lines(keys: Iterable[str]) -> frozenset[str]:
    """Every line of the catalog sentences `keys`, in every language: a template's placeholder
    guidance, as a writer would find it still standing in their file."""
    return frozenset(
        line.strip()
        for key in keys
        for table in CATALOGS.values()
        for line in table[key].splitlines()
        if line.strip()
    )


_GUIDANCE = guidance_lines(GUIDES.values())


def is_guidance(text: str) -> bool:
    """True if `text` is nothing but a new soul's guidance line (in any language)."""
    return text.strip() in _GUIDANCE


def guided_parts(body: str) -> tuple[str, ...]:
    """The catalog keys (`PARTS`) of the parts still holding a new soul's guidance line."""
    found: list[str] = []
    for section in split(body, _SECTION):
        if not any(line.strip() in _GUIDANCE for line in section.lines):
            continue
        heading = section.match.group(1).casefold()
        found += [
            key for key, words in PARTS if key not in found and any(w in heading for w in words)
        ]
    return tuple(key for key, _ in PARTS if key in found)


def missing_parts(body: str) -> tuple[str, ...]:
    """The catalog keys (`PARTS`) of the parts a soul body has no `##` heading for."""
    headings = [section.match.group(1).casefold() for section in split(body, _SECTION)]
    return tuple(key for key, words in PARTS if not any(w in h for h in headings for w in words))


def blank_soul(language: str = "zh") -> str:
    """A new actor's soul.md: the three headed parts, each with one line of guidance."""
    parts = [f"## {say(key, language)}\n\n{say(GUIDES[key], language)}\n" for key, _ in PARTS]
    return "\n".join(parts)


def bio_part(body: str) -> str:
    """The soul without its prior story: what a summariser may know about the character."""
    section = _prior_story(body)
    if section is not None:
        return (body[: section.offset] + body[section.end_offset :]).strip()
    return body.strip()


def prior_story(body: str) -> str:
    """The text of the soul's prior story as written ("" if it has none)."""
    section = _prior_story(body)
    return "\n".join(section.lines).strip() if section is not None else ""


def _prior_story(body: str) -> Section | None:
    """The first section whose heading names the prior story, if any."""
    for section in split(body, _SECTION):
        if any(h in section.match.group(1).casefold() for h in PRIOR_STORY_HEADINGS):
            return section
    return None
