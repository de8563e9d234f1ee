"""Counting words in mixed Chinese and Latin text, the same way everywhere in the harvest.

A token is one CJK character or one Latin/other-script word (casefolded); punctuation is not a
token. So "words" of a Chinese line are its characters, and n-grams are character n-grams for
Chinese and word n-grams for English, as the take report promises. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Kana, CJK ideographs (with extension A and the compatibility block) and Hangul syllables.
_CJK_RANGES = (
    ("\u3040", "\u30ff"),
    ("\u3400", "\u4dbf"),
    ("\u4e00", "\u9fff"),
    ("\uf900", "\ufaff"),
    ("\uac00", "\ud7af"),
)
_CJK = "".join(f"{lo}-{hi}" for lo, hi in _CJK_RANGES)
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)*")


def tokens(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(text or "")]


def count_words(text: str) -> int:
    """Words of a line: each CJK character counts one, each other word counts one."""
    return len(_TOKEN.findall(text or ""))


def cjk_chars(text: str) -> int:
    """CJK characters of a line: each is a token of its own (and no other token holds one),
    so they are counted from the tokens, with no second large class to compile."""
    return sum(
        1
        for t in _TOKEN.findall(text or "")
        if len(t) == 1 and any(lo <= t <= hi for lo, hi in _CJK_RANGES)
    )


def ngrams(seq: Sequence[str], n: int) -> list[tuple[str, ...]]:
    # zip over n shifted views: the same tuples as slicing each one out, built in C
    if n < 1:
        return [tuple(seq[i : i + n]) for i in range(len(seq) - n + 1)]
    return list(zip(*(seq[i:] for i in range(n)), strict=False))
