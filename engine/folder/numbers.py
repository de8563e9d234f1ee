"""A whole number a person (or a hand-edited file) wrote: the one bounded reader of them all.

Invariant: only ASCII digits, at most `digits` of them (and an optional sign where allowed), so
no input can reach int()'s own refusals ("Exceeds the limit (4300 digits)", "²", "1_000",
full-width digits): a text that is not such a number is None, and each caller says in one
line what it expected. Pure.
"""

from __future__ import annotations

import re

TURN_DIGITS = 9  # a take or a turn number: far beyond any scene, far below int()'s limit
_DIGITS = re.compile(r"[0-9]+")


def whole_number(text: object, digits: int = TURN_DIGITS, *, signed: bool = False) -> int | None:
    """`text` (spaces around it allowed) as an int, or None if it is not at most `digits`
    ASCII digits (with a leading + or - when `signed`)."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        return None
    value = str(text).strip()
    body = value[1:] if signed and value[:1] in ("+", "-") else value
    if not 0 < len(body) <= digits or not _DIGITS.fullmatch(body):
        return None
    return int(value)


def shown_number(text: str, width: int = 20) -> str:
    """What a person typed, quoted short enough for a one-line refusal."""
    text = str(text)
    return repr(text if len(text) <= width else text[:width] + "…")
