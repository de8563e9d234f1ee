"""How the console reads what a director types: names at the start of a line, small numbers,
take references and a played character's line. Pure functions; a line that makes no sense
raises ConsoleError with the one sentence the console prints (never a traceback).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from circus.words import t
from engine import MAX_TURNS, shown_number, whole_number

_CUE_MARK = re.compile(r"\s*(?:→|->|=>)\s*([^→]+?)\s*$")
_ACTION = re.compile(r"^\s*[(（]([^()（）]*)[)）]\s*")


_SEPARATORS = " \t\u3000:：,，、"


def _key(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def parse_number(token: str, what: str) -> int:
    """A small whole number in ASCII digits, or a ConsoleError naming `what` (never a traceback):
    engine.whole_number is the one bounded reader ("²".isdigit() is True; int() refuses 5,000
    digits with a ValueError)."""
    value = whole_number(token, 6, signed=True)
    if value is None:
        raise ConsoleError(t("cli.not_whole", what=what, shown=shown_number(token)))
    return value


def split_actor(text: str, forms: Mapping[str, Sequence[str]]) -> tuple[str, str] | None:
    """(actor, rest) when `text` starts with an actor's name or alias, else None.

    The longest name or alias wins ("林小姐" over the alias "林"); a name ending in a Latin
    letter or digit must end a word ("Al" does not start "Alice"); Chinese needs no space
    ("林小姐拍桌子" → 林小姐, "拍桌子"). The rest loses the separators after the name.
    """
    text = text.strip().lstrip("@＠")
    keys = {_key(name).strip(): actor for actor, names in forms.items() for name in names}
    keys.pop("", None)
    best: tuple[int, str] | None = None
    # Compare normalised prefixes of the line itself, so the direction after the name is kept
    # exactly as typed (NFKC would turn its "動作：" into "動作:").
    for end in range(1, min(len(text), 80) + 1):
        actor = keys.get(_key(text[:end]))
        if actor is None:
            continue
        last, after = text[end - 1], text[end : end + 1]
        if last.isascii() and last.isalnum() and after.isascii() and after.isalnum():
            continue
        best = (end, actor)
    if best is None:
        return None
    return best[1], text[best[0] :].lstrip(_SEPARATORS).strip()


class ConsoleError(Exception):
    """A line the console cannot read; reported and the console goes on."""


def parse_count(token: str) -> int:
    value = parse_number(token, t("cli.what.turns"))
    if not 1 <= value <= MAX_TURNS:
        raise ConsoleError(t("cli.turns_range", most=MAX_TURNS, value=value))
    return value


def looks_like_number(token: str) -> bool:
    return token.lstrip("+-").isdigit()  # "²" too: parse_count then refuses it in one line


def split_name(text: str) -> tuple[str, str, bool]:
    """`name: rest` / `name：rest` → (name, rest, True); otherwise (first word, rest, False)."""
    text = text.strip().lstrip("@＠")
    for sep in (":", "："):
        head, found, tail = text.partition(sep)
        if found and head.strip() and len(head.strip()) <= 64 and "\n" not in head:
            # Only a short head counts as a name ("律師: 慢一點"), not a sentence with a colon.
            if len(head.split()) <= 3:
                return head.strip(), tail.strip(), True
    first, _, rest = text.partition(" ")
    return first.strip(), rest.strip(), False


def parse_played_line(text: str) -> tuple[str, str, str]:
    """A line typed while playing → (action, dialogue, cue): `(看向窗外) 我沒有。 → 刑警`."""
    text = text.strip()
    cue = ""
    mark = _CUE_MARK.search(text)
    if mark:
        cue, text = mark.group(1).strip(), text[: mark.start()].strip()
    action = ""
    lead = _ACTION.match(text)
    if lead:
        action, text = lead.group(1).strip(), text[lead.end() :].strip()
    return action, text, cue


def take_ref(word: str) -> str:
    """`2`, `take_2` or `take2`, in ASCII digits; anything else is refused in one line."""
    digits = word.strip().lower().removeprefix("take").lstrip("_ ")
    parse_number(digits, t("cli.what.take"))
    return word
