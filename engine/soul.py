"""An actor's soul.md: settings in front matter, then bio, prior story and director's notes.

The body is shown to that actor alone. The three parts are `##` sections; the prior-story
section can be redrafted by `summarize_for` without touching the other two. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engine.errors import BadSceneFile

SETTINGS = ("model", "temperature", "avatar_url", "aliases", "api_base", "fallback_model")
PRIOR_STORY_HEADINGS = ("前期劇本", "前期剧本", "前情", "prior story", "backstory so far")
_SECTION = re.compile(r"^## (.+?)\s*$", re.M)


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


def check_settings(settings: dict[str, Any], path: object) -> None:
    """Refuse settings of the wrong type, naming the file and the key."""
    temp = settings.get("temperature")
    if temp is not None and not isinstance(temp, (int, float)):
        raise BadSceneFile(
            path,
            f"temperature must be a number, not {temp!r}",
            f"temperature 必須是數字，不是 {temp!r}",
        )
    aliases = settings.get("aliases")
    if aliases is not None and not isinstance(aliases, (list, str)):
        raise BadSceneFile(
            path,
            "aliases must be a list of names, e.g. aliases: [林, 林小姐]",
            "aliases 必須是名字清單，例如 aliases: [林, 林小姐]",
        )
    for key in ("model", "api_base", "avatar_url", "fallback_model"):
        value = settings.get(key)
        if value is not None and not isinstance(value, str):
            raise BadSceneFile(
                path, f"{key} must be text, not {value!r}", f"{key} 必須是文字，不是 {value!r}"
            )


def replace_prior_story(body: str, story: str, language: str = "zh") -> str:
    """Return the soul body with its prior-story section replaced (or added) by `story`."""
    matches = list(_SECTION.finditer(body))
    for i, match in enumerate(matches):
        if any(h in match.group(1).casefold() for h in PRIOR_STORY_HEADINGS):
            start = match.end()
            end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
            tail = body[end:]
            return body[:start] + "\n\n" + story.strip() + "\n\n" + tail.lstrip("\n")
    heading = "前期劇本" if language.lower().startswith("zh") else "Prior story"
    return body.rstrip("\n") + f"\n\n## {heading}\n\n{story.strip()}\n"


def bio_part(body: str) -> str:
    """The soul without its prior story: what a summariser may know about the character."""
    matches = list(_SECTION.finditer(body))
    for i, match in enumerate(matches):
        if any(h in match.group(1).casefold() for h in PRIOR_STORY_HEADINGS):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
            return (body[: match.start()] + body[end:]).strip()
    return body.strip()
