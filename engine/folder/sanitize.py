"""Cleaning text a model returned before anything stores, shows or re-sends it.

Invariant: `clean_text` returns text whose only line break is "\\n", with no control characters
but "\\n" and "\\t", no lone surrogates and no bidi overrides or isolates — so it can always be
written as UTF-8, posted to Discord and quoted in another prompt without changing how the text
around it reads. `clip` cuts a field at a cap and says whether it did. Pure functions.
"""

from __future__ import annotations

import re

# Every character Python's str.splitlines() (and most viewers) treat as a line break.
_NEWLINES = re.compile("\r\n|[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# C0/C1 controls except \n and \t (those line breaks above were already turned into \n).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Bidi embeddings, overrides and isolates: they can make a line read backwards or hide text.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile("[\ud800-\udfff]")
_NONCHARS = re.compile("[\ufffe\uffff]")

ELLIPSIS = "…"


def clean_text(text: str) -> str:
    """The same text with line breaks normalised and invisible or unencodable characters gone."""
    if not text:
        return ""
    text = _NEWLINES.sub("\n", text)
    text = _CONTROLS.sub("", text)
    text = _BIDI.sub("", text)
    text = _NONCHARS.sub("", text)
    return _SURROGATES.sub("\ufffd", text)  # a lone surrogate cannot be written as UTF-8


def clip(text: str, cap: int, mark: str = ELLIPSIS) -> tuple[str, bool]:
    """`text` cut to at most `cap` characters (ending in `mark`), and whether it was cut."""
    if len(text) <= cap:
        return text, False
    return text[: max(cap - len(mark), 0)].rstrip() + mark, True
