"""Reading a cue as written — by a model, a director or a typed line — as a cast member's name.

Pure: a cue maps to one name, ANY, nobody or several (ambiguous), by the same rules everywhere
a cue is read (a reply, the stage manager's answer, a director's /cue, a take's report), so a
name that matches in one place matches in all of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from engine.folder.names import is_everyone
from engine.folder.turns import ANY

_HONORIFICS = (
    "mr.", "mrs.", "ms.", "miss", "dr.", "mr", "mrs", "ms", "dr", "sir", "madam",
    "先生", "女士", "小姐", "太太", "老師", "大人", "警官", "律師", "同學", "san", "さん",
)  # fmt: skip
_STRIP = re.compile(r"[\s@＠「」『』\"'“”‘’()（）\[\]【】<>《》.,，。:：;；!！?？~`*_-]+")


def _norm(text: str) -> str:
    return _STRIP.sub("", unicodedata.normalize("NFKC", text)).casefold()


def _is_latin(ch: str) -> bool:
    """A letter or digit of an alphabetic script: such names match only as whole words."""
    return ch.isalnum() and ord(ch) < 0x2E80  # CJK, kana and hangul start at U+2E80


def _spaced(text: str) -> str:
    """NFKC, casefold, and every run of separators as one space (word edges kept)."""
    return " " + _STRIP.sub(" ", unicodedata.normalize("NFKC", text)).casefold().strip() + " "


def _in_words(form: str, text: str) -> bool:
    """True if `form` (spaced) occurs in `text` (spaced) without a Latin letter or digit
    touching either end: "Lin" is not in "Linda", "Rose" not in "Primrose", but "林" is in
    "林太太" (a CJK name needs no spaces around it)."""
    needle = form.strip()
    if not needle:
        return False
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        before, after = text[start - 1 : start], text[end : end + 1]
        if not (
            (_is_latin(needle[0]) and before and _is_latin(before))
            or (_is_latin(needle[-1]) and after and _is_latin(after))
        ):
            return True
        start = text.find(needle, start + 1)
    return False


def cue_candidates(raw: str, cast: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Every cast name a cue as written may mean, best rule first: (ANY,) for an everyone
    word, () for nobody, one name when it is clear, several when it is ambiguous.

    `cast` maps each actor's name to its aliases. Tolerates `@`, brackets, punctuation, case,
    full-width forms and honorifics ("張律師" → 律師 when 律師 is the only match). A name or
    alias in Latin letters is found inside a longer cue only as a whole word.
    """
    text = (raw or "").strip()
    if not text:
        return ()
    key = _norm(text)
    if not key:
        return ()
    if is_everyone(text):  # engine.folder.names.EVERYONE_WORDS: the stage manager decides
        return (ANY,)
    names = {name: (name, *aliases) for name, aliases in cast.items()}
    forms = {name: {_norm(n) for n in ns} - {""} for name, ns in names.items()}
    exact = [name for name, keys in forms.items() if key in keys]
    if exact:
        return tuple(exact)
    stripped = key
    for honorific in _HONORIFICS:
        h = _norm(honorific)
        if stripped.startswith(h) and len(stripped) > len(h):
            stripped = stripped[len(h) :]
        if stripped.endswith(h) and len(stripped) > len(h):
            stripped = stripped[: -len(h)]
    exact = [name for name, keys in forms.items() if stripped in keys]
    if exact:
        return tuple(exact)
    spaced = _spaced(text)
    return tuple(
        name for name, ns in names.items() if any(_in_words(_spaced(n), spaced) for n in ns)
    )


def match_cue(raw: str, cast: Mapping[str, Sequence[str]]) -> str | None:
    """Map a cue as written to a cast name, ANY, or None (empty, nobody, or ambiguous: a
    model's unclear cue goes to the stage manager; a director is asked, see
    `cue_candidates`)."""
    found = cue_candidates(raw, cast)
    return found[0] if len(found) == 1 else None
