"""Reading a reply written as a JSON object, however loosely the model wrote it.

Accepts a ```json fence or a bare object among prose, curly quotes, single quotes, unquoted
keys, trailing or missing commas, a reply cut off mid-string, keys in English or Chinese and a
field given as a list of strings. Only strings are read: a public field of another type is
dropped (the reply may then need its repair), a private field's strings all stay private, and
an unknown key is never published. Never raises: bad JSON is just not JSON. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from engine.folder.sanitize import clean_text
from engine.reply.private import is_private_tag
from engine.reply.styles import Segment
from engine.vocabulary import ReplyField

MAX_DEPTH = 32  # deeper than any reply needs; a nesting bomb stops here, not in a RecursionError
MAX_TRIES = 50  # `{` positions tried before giving up on finding an object in prose

_KEYS: dict[str, ReplyField] = {
    **dict.fromkeys(
        ("thought", "thoughts", "think", "thinking", "innerthought", "innerthoughts",
         "innermonologue", "internalmonologue", "innervoice", "privatethought", "想法", "內心",
         "内心", "思考", "內心獨白", "内心独白", "心聲", "心声", "內心os", "内心os"),
        "thought",
    ),
    **dict.fromkeys(
        ("action", "actions", "stagedirection", "stagedirections", "動作", "动作", "行動", "行动"),
        "action",
    ),
    **dict.fromkeys(
        ("dialogue", "dialog", "line", "lines", "speech", "say", "says", "spoken", "台詞", "台词",
         "對白", "对白", "對話", "对话"),
        "dialogue",
    ),
    **dict.fromkeys(
        ("cue", "next", "nextspeaker", "丟球", "丢球", "下一位", "下一個", "下一个"), "cue"
    ),
}  # fmt: skip
_SPEAKER_KEYS = {"speaker", "character", "name", "actor", "role", "角色", "說話者", "说话者"}
_CUE_NAMES = {
    "name",
    "speaker",
    "character",
    "actor",
    "who",
    "next",
    "target",
    "to",
    "名字",
    "角色",
}
_WRAPPERS = {"reply", "response", "turn", "output", "answer", "result", "json", "data",
             "final", "finalanswer", "finalreply", "finalresponse"}  # fmt: skip
_CLOSING = {'"': '"', "“": '”"', "'": "'", "‘": "’'", "＂": "＂"}
_PLAIN = {
    opening: re.compile(rf"[^{re.escape(close)}\\\\]*") for opening, close in _CLOSING.items()
}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\n", "b": "", "f": "", "/": "/", "\\": "\\", '"': '"'}
_SPACE = re.compile(r"[\s,]*")


def _run(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str]:
    """The run of `pattern` at `pos`: a `…*` pattern, so it always matches (maybe empty)."""
    found = pattern.match(text, pos)
    assert found is not None, pattern.pattern
    return found


_BARE_KEY = re.compile(r"[^\s:：,{}\[\]\"'“”‘’]+")
_LITERAL = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|none|True|False|None")


class _Bad(Exception):
    """Not JSON at this position (internal: parse() turns it into None)."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text

    def skip(self, pos: int) -> int:
        return _run(_SPACE, self.text, pos).end()

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise _Bad
        pos = self.skip(pos)
        if pos >= len(self.text):
            return None, pos  # cut off before the value
        ch = self.text[pos]
        if ch == "{":
            return self.mapping(pos + 1, depth)
        if ch == "[":
            return self.array(pos + 1, depth)
        if ch in _CLOSING:
            return self.string(pos)
        m = _LITERAL.match(self.text, pos)
        if m is None:
            raise _Bad
        word = m.group(0)
        return {"true": True, "false": False}.get(
            word.lower(), None if word.isalpha() else 0
        ), m.end()

    def string(self, pos: int) -> tuple[str, int]:
        closing = _CLOSING[self.text[pos]]
        plain = _PLAIN[self.text[pos]]
        out: list[str] = []
        i = pos + 1
        while i < len(self.text):
            run = _run(plain, self.text, i)  # the characters that need no look, in one step
            if run.end() > i:
                out.append(run.group(0))
                i = run.end()
                continue
            ch = self.text[i]
            if ch in closing and (closing == '"' or self.ends(i + 1)):
                return "".join(out), i + 1
            if ch == "\\" and i + 1 < len(self.text):
                nxt = self.text[i + 1]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.text[i + 2 : i + 6]):
                    out.append(chr(int(self.text[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                out.append(_ESCAPES.get(nxt, nxt))
                i += 2
                continue
            out.append(ch)
            i += 1
        return "".join(out), i  # cut off mid-string: what arrived is read

    def ends(self, pos: int) -> bool:
        """Whether a quote mark before `pos` can close a loosely quoted string: curly and single
        quotes also occur inside words ("I'm", “no”), so only one followed by structure does."""
        while pos < len(self.text) and self.text[pos] in " \t":
            pos += 1
        return pos >= len(self.text) or self.text[pos] in ",:}]\n"

    def key(self, pos: int) -> tuple[str, int]:
        if self.text[pos] in _CLOSING:
            return self.string(pos)
        m = _BARE_KEY.match(self.text, pos)
        if m is None:
            raise _Bad
        return m.group(0), m.end()

    def mapping(self, pos: int, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        while True:
            pos = self.skip(pos)
            if pos >= len(self.text):
                return out, pos
            if self.text[pos] == "}":
                return out, pos + 1
            key, pos = self.key(pos)
            pos = self.skip(pos) if pos < len(self.text) else pos
            if pos < len(self.text) and self.text[pos] in ":：":
                pos += 1
            elif pos < len(self.text):
                raise _Bad
            value, pos = self.value(pos, depth + 1)
            out.setdefault(key, value)  # a repeated key: the first one counts

    def array(self, pos: int, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        while True:
            pos = self.skip(pos)
            if pos >= len(self.text):
                return out, pos
            if self.text[pos] == "]":
                return out, pos + 1
            value, pos = self.value(pos, depth + 1)
            out.append(value)


def parse(text: str, pos: int = 0) -> tuple[Any, int] | None:
    """The loose-JSON value starting at `pos` and where it ends, or None when it is not one."""
    try:
        return _Reader(text).value(pos, 0)
    except (_Bad, RecursionError):
        return None


def _key(name: object) -> str:
    return re.sub(r"[\W_]+", "", str(name)).casefold()


def _strings(value: Any, deep: bool) -> list[str]:
    """The text a value holds: a string, or a list of strings (any depth when private)."""
    if isinstance(value, str):
        return [clean_text(value)]
    if isinstance(value, list | dict) and deep:
        items = value.values() if isinstance(value, dict) else value
        return [s for item in items for s in _strings(item, deep)]
    if isinstance(value, list):
        return [clean_text(v) for v in value if isinstance(v, str)]
    return []


def _is_reply(obj: object) -> bool:
    return isinstance(obj, dict) and any(_key(k) in _KEYS for k in obj)


def _segments(obj: dict[str, Any], pos: int, whose: Callable[[str], str]) -> list[Segment]:
    """The fields of one reply object, in the object's order."""
    for key, value in obj.items():
        if _key(key) in _SPEAKER_KEYS and isinstance(value, str) and whose(value) == "other":
            return [Segment("dialogue", "", pos, others=True)]
    out = []
    for i, (key, value) in enumerate(obj.items()):
        field: ReplyField | None = _KEYS.get(_key(key)) or (
            "thought" if is_private_tag(_key(key)) else None
        )
        if field is None:
            continue  # an unknown key is never published
        if field == "cue" and value is None:
            out.append(Segment("cue", "", pos + i))
            continue
        if field == "cue" and isinstance(value, dict):  # {"name": "Bob", "reason": "…"}
            named = [v for k, v in value.items() if _key(k) in _CUE_NAMES and isinstance(v, str)]
            why = [
                s for k, v in value.items() if _key(k) not in _CUE_NAMES for s in _strings(v, True)
            ]
            out.append(Segment("cue", clean_text(named[0]) if named else "", pos + i))
            if why:  # the reason for a cue often gives a secret away: private
                out.append(Segment("thought", "\n".join(why), pos + i))
            continue
        texts = _strings(value, deep=field == "thought")
        if texts or isinstance(value, str | list):
            text = texts[0] if field == "cue" and texts else "\n".join(t.strip() for t in texts)
            out.append(Segment(field, text, pos + i))
    return out


def _replies(value: Any, pos: int, whose: Callable[[str], str]) -> list[Segment] | None:
    """Segments of the replies in a parsed value: an object, an object under a wrapper key or
    a character's name, or a list of them. A second reply is marked as written for others."""
    if _is_reply(value):
        return _segments(value, pos, whose)
    items: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = [("", v) for v in value]
    mine: list[Segment] = []
    others = False
    for key, inner in items:
        if not _is_reply(inner):
            continue
        owner = whose(key) if key else "own"
        if owner == "other" or mine:  # another's reply, or a second one: never published
            others = True
        elif owner == "own" or _key(key) in _WRAPPERS:
            mine = _segments(inner, pos, whose)  # the speaker's, wherever it stands
    if others:
        mine.append(Segment("dialogue", "", pos + 100 + len(items), others=True))
    return mine or None


def read_json(text: str, offset: int, whose: Callable[[str], str]) -> list[Segment] | None:
    """The reply objects in `text` (a stretch of the reply starting at `offset`), or None.

    `whose(name)` says whether a name is the speaker's ("own"), another cast member's ("other")
    or nobody's (""). An object that follows the first reply object is a second reply block.
    """
    pos = text.find("{")
    tries = 0
    found: list[Segment] = []
    while pos >= 0 and tries < MAX_TRIES:
        tries += 1
        before = text[:pos].rstrip()
        start = len(before) - 1 if before.endswith("[") else pos  # a list of reply objects
        parsed = parse(text, start)
        segments = _replies(parsed[0], offset + start, whose) if parsed else None
        if parsed is None or segments is None:
            pos = text.find("{", pos + 1)
            continue
        if found and any(s.field in ("action", "dialogue") or s.others for s in segments):
            return found + [Segment("dialogue", "", offset + start, others=True)]
        if not found:  # a later object without a line (a thought, a cue) adds nothing
            found = segments
        pos = text.find("{", max(parsed[1], pos + 1))
    return found or None
