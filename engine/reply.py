"""Reading an actor's reply: `<thought>`, `<action>`, `<dialogue>`, `<cue>`, tolerantly.

Models break formats, so the parser accepts missing closing tags, code fences, stray prose,
upper case and near-miss tag names, and reports each problem in words a repair prompt can
quote. A field ends at its own closing tag when there is one, so tag-like text an actor *says*
stays in the dialogue; untagged prose is never published. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FIELDS = {
    "thought": "thought",
    "thoughts": "thought",
    "think": "thought",
    "action": "action",
    "actions": "action",
    "dialogue": "dialogue",
    "dialog": "dialogue",
    "line": "dialogue",
    "cue": "cue",
}
_NAMES = "|".join(sorted(_FIELDS, key=len, reverse=True))
_OPEN = re.compile(rf"<\s*({_NAMES})\s*(/)?\s*>", re.I)
_CLOSE = {
    field: re.compile(
        rf"<\s*/\s*(?:{'|'.join(k for k, v in _FIELDS.items() if v == field)})\s*>", re.I
    )
    for field in set(_FIELDS.values())
}
_ANY_CLOSE = re.compile(rf"<\s*/\s*(?:{_NAMES})\s*>", re.I)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.M)
_BLANK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Reply:
    thought: str = ""
    action: str = ""
    dialogue: str = ""
    cue: str = ""
    has_cue: bool = False
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def _clean(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().split("\n")]
    return "\n".join(lines).strip()


def parse_reply(text: str) -> Reply:
    """Parse one model reply into its four fields and a list of problems (empty when fine)."""
    text = _FENCE.sub("", text or "")
    found: dict[str, list[str]] = {}
    pos = 0
    while True:
        opening = _OPEN.search(text, pos)
        if opening is None:
            break
        field = _FIELDS[opening.group(1).lower()]
        if opening.group(2):  # a self-closing tag such as <cue/> is an empty field
            found.setdefault(field, []).append("")
            pos = opening.end()
            continue
        start = opening.end()
        closing = _CLOSE[field].search(text, start)
        reopened = _OPEN.search(text, start)
        same_reopened = None
        if closing is not None:
            # A closing tag after a new opening of the same field belongs to that one.
            for later in _OPEN.finditer(text, start, closing.start()):
                if _FIELDS[later.group(1).lower()] == field:
                    same_reopened = later
                    break
        if closing is not None and same_reopened is None:
            end, pos = closing.start(), closing.end()
        else:
            end = pos = reopened.start() if reopened is not None else len(text)
            if field != "thought":
                # An unclosed public field stops at a blank line: what follows is stray prose
                # (often the model's notes to itself) and must never be published.
                body = start + len(text[start:end]) - len(text[start:end].lstrip())
                gap = _BLANK.search(text, body, end)
                if gap is not None:
                    end = gap.start()
        value = _ANY_CLOSE.sub("", text[start:end]) if closing is None else text[start:end]
        found.setdefault(field, []).append(_clean(value))

    values = {f: "\n".join(v for v in found.get(f, []) if v) for f in _CLOSE}
    cue = values["cue"].split("\n")[0].strip() if values["cue"] else ""
    problems: list[str] = []
    if not found:
        problems.append("the reply used none of the tags <thought>, <action>, <dialogue>, <cue>")
    else:
        if not values["thought"]:
            problems.append("<thought> is missing or empty (it is required)")
        if not values["action"] and not values["dialogue"]:
            problems.append(
                "both <action> and <dialogue> are missing or empty (give at least one;"
                " silence is an action)"
            )
    return Reply(
        thought=values["thought"],
        action=values["action"],
        dialogue=values["dialogue"],
        cue=cue,
        has_cue="cue" in found,
        problems=tuple(problems),
    )
