"""Scene, actor and take names are user input that become folder and file names.

`check_name` is the only gate: it accepts Unicode names (林小姐) and refuses anything that could
escape the scene folder, collide with another name once normalised, or mean "everyone"
(`EVERYONE_WORDS`, the one list the notes, cue matching and the console share). Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.errors import BadName

_FORBIDDEN = set('/\\:*?"<>|')

# The words that mean "everyone" / "anyone" wherever a name is expected: a `## 全體` heading in
# director_notes.md (a whisper for all), a cue of `大家` or `ANY` (the stage manager decides),
# `NOTE all: …` in the console. One list so the three can never disagree; none of them may be
# an actor's name (an actor called "All" would turn private whispers to it into all-hands ones).
# Matched after NFKC, casefold and dropping spaces/punctuation, so `ＡＬＬ`, `All-hands` and
# `all hands` are the same word.
EVERYONE_WORDS: tuple[str, ...] = (
    "全體", "全体", "全場", "全场", "大家", "所有人", "各位", "任何人", "任何", "誰都可以",
    "谁都可以", "All", "Everyone", "Everybody", "ANY", "Anyone", "Anybody", "all-hands",
)  # fmt: skip

_PUNCT = re.compile(r"[\W_]+")


def _word_key(word: str) -> str:
    return _PUNCT.sub("", unicodedata.normalize("NFKC", word).casefold())


_EVERYONE_KEYS = frozenset(_word_key(w) for w in EVERYONE_WORDS)


def is_everyone(word: str) -> bool:
    """True if `word` (a heading, a cue, a console target) means everyone / anyone."""
    return isinstance(word, str) and _word_key(word) in _EVERYONE_KEYS


def name_key(name: str) -> str:
    """The form two names share when they would collide (case, width, composition)."""
    return unicodedata.normalize("NFKC", name).casefold().strip()


# Names the frontends post or speak under themselves: the bot's own persona ("Circus", its
# status lines as "🎭 Stage"), the stage manager, and Discord's mass mentions. An actor so named
# would post under the bot's own voice or read as a ping to the whole server.
PERSONA_WORDS: tuple[str, ...] = (
    "Circus", "馬戲團", "马戏团", "Stage", "Stage manager", "舞台監督", "舞台监督", "舞監",
    "here", "everyone", "Clyde",
)  # fmt: skip
_PERSONA_KEYS = frozenset(_word_key(w) for w in PERSONA_WORDS)


def is_persona(name: str) -> bool:
    """True if `name` is one of the frontends' own personas or a mass mention, in any case,
    width or spacing (`ＣＩＲＣＵＳ`, `@here`, `stage-manager`)."""
    return _word_key(name) in _PERSONA_KEYS


# Folder names the scene uses (and Windows device names, for scenes synced to Windows).
_RESERVED = {"con", "prn", "aux", "nul", "takes", "backstage", "actors", "templates"}


def check_name(name: str, what: str = "Actor") -> str:
    """Return the NFC form of a valid name, or raise BadName saying why it is refused."""
    if not isinstance(name, str):
        raise BadName(what, str(name), "not_text")
    norm = unicodedata.normalize("NFC", name).strip()
    if not norm:
        raise BadName(what, name, "empty")
    if norm in {".", ".."} or norm.startswith("."):
        raise BadName(what, name, "dot")
    if any(ch in _FORBIDDEN for ch in norm):
        raise BadName(what, name, "forbidden")
    if any(unicodedata.category(ch).startswith("C") for ch in norm):
        raise BadName(what, name, "control")
    if len(norm) > 64:
        raise BadName(what, name, "too_long")
    if name_key(norm) in _RESERVED:
        raise BadName(what, name, "reserved")
    if is_everyone(norm):
        raise BadName(what, name, "everyone")
    if what == "Actor" and (is_persona(norm) or norm[0] in "@＠"):
        raise BadName(what, name, "persona")
    return norm


def check_unique(names: Iterable[str], what: str = "Actor") -> None:
    """Refuse a set of names in which two collide after normalisation."""
    seen: dict[str, str] = {}
    for name in names:
        key = name_key(name)
        if key in seen and seen[key] != name:
            raise BadName(what, name, "collides", other=seen[key])
        seen[key] = name


MAX_CAST = 12  # a five-minute scene has 2–6 characters; 12 is already a crowd
_CAST_SEPARATORS = re.compile(r"[,，、;；\n]")


def split_cast(text: str) -> tuple[str, ...]:
    """The names in a cast as typed: "林小姐, Eddie、Rose" → ("林小姐", "Eddie", "Rose")."""
    return tuple(part.strip() for part in _CAST_SEPARATORS.split(text or "") if part.strip())


def check_cast(names: Iterable[str], what: str = "Actor") -> tuple[str, ...]:
    """A whole cast: every name valid (`check_name`), none twice once normalised, at most
    MAX_CAST. Returns the NFC names; raises BadName or CastTooBig."""
    from engine.errors import CastTooBig

    checked = tuple(check_name(n, what) for n in names)
    if len(checked) > MAX_CAST:
        raise CastTooBig(len(checked), MAX_CAST)
    seen: dict[str, str] = {}
    for name in checked:
        key = name_key(name)
        if key in seen:
            raise BadName(what, name, "collides", other=seen[key])
        seen[key] = name
    return checked


def alias_clash(cast: Mapping[str, Iterable[str]]) -> tuple[str, str, str] | None:
    """(actor, alias, other) for the first alias that is another actor's name, else None:
    such an alias would send whispers for `other` to `actor`."""
    keys = {name_key(name): name for name in cast}
    for actor, aliases in cast.items():
        for alias in aliases:
            other = keys.get(name_key(alias))
            if other is not None and other != actor:
                return actor, alias, other
    return None


@dataclass(frozen=True)
class Actor:
    """A cast member's name as resolved by `Rehearsal.resolve_actor`: commands that take one
    never match names again."""

    name: str

    def __str__(self) -> str:
        return self.name
