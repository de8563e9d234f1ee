"""The rules each scene setting follows, as plain functions, and a quick check built on them.

Invariant: `quick_settings` either returns exactly what the pydantic schema
(engine/folder/setting_schemas.py) would — the same keys, values and types, in its order — or
None, and then the schema decides (and words any refusal). It accepts only what it is sure of,
so reading an ordinary scene never loads pydantic; tests/engine/test_setting_rules.py holds both
to that on a table of cases.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from engine.folder.names import is_everyone

MAX_FILE_BYTES = 256 * 1024  # soul.md / context.md: a real soul is 2–5 KB
MAX_LIST = 32  # cast, on_stage
MAX_ALIASES = 16
MAX_SECRETS = 12  # `secrets:` in soul.md (engine/takes/secrets.py): a few short phrases each
MAX_SECRET_CHARS = 80
MAX_NAME_CHARS = 64
MAX_MODEL_CHARS = 200
MAX_URL_CHARS = 2000
REPLY_FORMATS = ("auto", "json", "tags")  # engine.door.structured.ReplyFormat
LINE_NOTES = ("everyone", "crew")  # who may note a line (context.md `line_notes:`)
VOICE_NAME = r"[A-Za-z0-9][A-Za-z0-9_.+:-]*"
LANGUAGE = r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8}){0,3}"


def no_controls(text: str) -> str:
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise ValueError("control characters")
    return text


def url_ok(text: str, schemes: tuple[str, ...]) -> bool:
    parts = urlsplit(text)
    return parts.scheme.lower() in schemes and bool(parts.hostname)


def one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def number_as_name(value: Any) -> Any:
    # `aliases: [47]` means the name "47", not a number.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def not_everyone(name: str) -> str:
    if is_everyone(name):
        raise ValueError("everyone word")
    return name


def model_name_refused(name: str) -> bool:
    """A model name that carries an address or hidden text rather than naming one model.

    `provider/*` on the allow-list must not let `huggingface/http://host/v1` through: a scheme
    or `//` points requests at a server of the sender's choosing (api_base is the operator's
    setting), and whitespace or control characters hide what is really sent.
    """
    return (
        "://" in name
        or "//" in name
        or any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in name)
    )


# ------------------------------------------------------------------ the quick check
class _Unsure(Exception):
    """The quick check cannot vouch for a value: the schema decides."""


def _text(value: Any, most: int) -> str:
    # A plain str the schema's strip would leave as it is (Python's whitespace covers the
    # schema's), of a length it accepts.
    if type(value) is not str or value != value.strip() or not 1 <= len(value) <= most:
        raise _Unsure
    return value


def _model(value: Any) -> str:
    text = _text(value, MAX_MODEL_CHARS)
    if model_name_refused(text):  # also every space: the schema's `^\S+$` holds
        raise _Unsure
    return text


def _name(value: Any, most: int = MAX_NAME_CHARS) -> str:
    text = _text(number_as_name(value), most)
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise _Unsure
    return text


def _alias(value: Any) -> str:
    name = _name(value)
    if is_everyone(name):
        raise _Unsure
    return name


def _listed(item: Callable[[Any], str], most: int, wrap: bool) -> Callable[[Any], list[str]]:
    def check(value: Any) -> list[str]:
        value = one_or_many(value) if wrap else value
        if type(value) is not list or len(value) > most:
            raise _Unsure
        return [item(v) for v in value]

    return check


def _url(schemes: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        text = _text(value, MAX_URL_CHARS)
        try:
            ok = url_ok(text, schemes)
        except ValueError:
            ok = False
        if not ok:
            raise _Unsure
        return text

    return check


def _number(low: float, high: float, *, above: bool = False) -> Callable[[Any], float]:
    def check(value: Any) -> float:
        if type(value) is not int and (type(value) is not float or not math.isfinite(value)):
            raise _Unsure
        if not ((value > low) if above else (value >= low)) or not value <= high:
            raise _Unsure
        return float(value)

    return check


def _whole(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if type(value) is not int or not low <= value <= high:
            raise _Unsure
        return value

    return check


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise _Unsure
    return value


def _pattern(pattern: str, most: int | None = None) -> Callable[[Any], str]:
    compiled = re.compile(pattern)

    def check(value: Any) -> str:
        text = _text(value, most) if most is not None else value
        if type(text) is not str or compiled.fullmatch(text) is None:
            raise _Unsure
        return text

    return check


def _one_of(words: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if type(value) is not str or value not in words:
            raise _Unsure
        return value

    return check


_reply_format = _one_of(REPLY_FORMATS)


_voice_name = _pattern(VOICE_NAME, MAX_NAME_CHARS)
_VOICE_PARTS: dict[str, Callable[[Any], Any]] = {
    "name": _voice_name,
    "pitch": _whole(0, 99),
    "rate": _whole(80, 450),
}


def _voice(value: Any) -> dict[str, Any]:
    if type(value) is str:
        return {"name": _voice_name(value)}
    if type(value) is not dict or "name" not in value or not set(value) <= set(_VOICE_PARTS):
        raise _Unsure
    return {k: check(value[k]) for k, check in _VOICE_PARTS.items() if value.get(k) is not None}


_MODEL, _URL = _model, _url(("http", "https"))
SOUL_RULES: dict[str, Callable[[Any], Any]] = {  # in the schema's order (SoulSettings)
    "model": _MODEL,
    "fallback_model": _MODEL,
    "temperature": _number(0, 2),
    "aliases": _listed(_alias, MAX_ALIASES, wrap=True),
    "avatar_url": _url(("https",)),
    "api_base": _URL,
    "reply_format": _reply_format,
    "voice": _voice,
    "secrets": _listed(lambda v: _name(v, MAX_SECRET_CHARS), MAX_SECRETS, wrap=True),
}
_NAMES = _listed(_name, MAX_LIST, wrap=False)
CONTEXT_RULES: dict[str, Callable[[Any], Any]] = {  # in the schema's order (ContextSettings)
    "language": _pattern(LANGUAGE),
    "neglect_turns": _whole(0, 1000),
    "cast": _NAMES,
    "on_stage": _NAMES,
    "opening": _flag,
    "model": _MODEL,
    "stage_manager_model": _MODEL,
    "api_base": _URL,
    "turn_timeout": _number(0, 3600, above=True),
    "budget_usd": _number(0, 1_000_000),
    "budget_tokens": _whole(0, 10_000_000_000),
    "reply_format": _reply_format,
    "narrator_voice": _voice,
    "thoughts_voice": _voice,
    "read_model": _MODEL,
    "spectators_read": _flag,
    "line_notes": _one_of(LINE_NOTES),
    "captains_cue": _flag,
}
SOUL_KEYS, CONTEXT_KEYS = tuple(SOUL_RULES), tuple(CONTEXT_RULES)


def quick_settings(
    rules: Mapping[str, Callable[[Any], Any]], raw: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The settings as the schema would validate and dump them (`as_dict`), or None when
    any key or value is one this check cannot vouch for."""
    if any(key not in rules for key in raw):
        return None
    try:
        return {k: check(raw[k]) for k, check in rules.items() if raw.get(k) is not None}
    except _Unsure:
        return None
