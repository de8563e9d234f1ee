"""Scene, actor and take names are user input that become folder and file names.

`check_name` is the only gate: it accepts Unicode names (林小姐) and refuses anything that could
escape the scene folder or collide with another name once normalised. Pure functions.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from engine.errors import BadName
from engine.notes import EVERYONE_HEADINGS

_FORBIDDEN = set('/\\:*?"<>|')


def name_key(name: str) -> str:
    """The form two names share when they would collide (case, width, composition)."""
    return unicodedata.normalize("NFKC", name).casefold().strip()


# Folder names the scene uses, and the headings director_notes.md reads as "everyone": an
# actor called "All" would turn every private whisper to them into an all-hands one.
_RESERVED = {"con", "prn", "aux", "nul", "takes", "backstage", "actors", "templates"} | {
    name_key(h) for h in EVERYONE_HEADINGS
}


def check_name(name: str, what: str = "Actor") -> str:
    """Return the NFC form of a valid name, or raise BadName saying why it is refused."""
    if not isinstance(name, str):
        raise BadName(what, str(name), "it must be text", "名稱必須是文字")
    norm = unicodedata.normalize("NFC", name).strip()
    if not norm:
        raise BadName(what, name, "it is empty", "名稱是空的")
    if norm in {".", ".."} or norm.startswith("."):
        raise BadName(what, name, "it may not start with a dot", "不能以點開頭")
    if any(ch in _FORBIDDEN for ch in norm):
        raise BadName(
            what, name, 'it may not contain / \\ : * ? " < > |', '不能包含 / \\ : * ? " < > |'
        )
    if any(unicodedata.category(ch).startswith("C") for ch in norm):
        raise BadName(what, name, "it may not contain control characters", "不能包含控制字元")
    if len(norm) > 64:
        raise BadName(what, name, "it is longer than 64 characters", "超過 64 個字")
    if name_key(norm) in _RESERVED:
        raise BadName(what, name, "it is a reserved word", "這是保留字")
    if name_key(norm).upper() == "ANY":
        raise BadName(what, name, "ANY means 'anyone' in a cue", "ANY 在 cue 裡代表「任何人」")
    return norm


def check_unique(names: Iterable[str], what: str = "Actor") -> None:
    """Refuse a set of names in which two collide after normalisation."""
    seen: dict[str, str] = {}
    for name in names:
        key = name_key(name)
        if key in seen and seen[key] != name:
            raise BadName(what, name, f"it collides with {seen[key]!r}", f"和「{seen[key]}」衝突")
        seen[key] = name
