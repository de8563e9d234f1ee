"""Reading an actor's reply: `<thought>`, `<action>`, `<dialogue>`, `<cue>`, tolerantly.

Models break formats, so the parser accepts missing closing tags, code fences, stray prose,
upper case and near-miss tag names, and reports each problem in words a repair prompt can
quote. A field ends at its own closing tag when there is one; untagged prose is never
published. Private markers inside a public field (a nested `<thought>`, `<think>`, an HTML
comment, a bracketed inner voice such as 「（內心：…）」) are moved to the thought, never published.
Every string is sanitised (engine.sanitize) and cut at a documented cap. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.sanitize import clean_text, clip

# Caps on what one reply may put on the record (characters). A line longer than ~1500
# characters is a monologue no five-minute scene needs, and at Discord's 2000-character limit a
# whole turn still fits in two posts. The thought is private and may run longer. A cue is a name.
CAPS = {"thought": 4000, "action": 600, "dialogue": 1500, "cue": 64}
MAX_REPLY_CHARS = 40_000  # read no further into a runaway reply (a 5 MB answer is cut here)

_FIELDS = {
    "thought": "thought",
    "thoughts": "thought",
    "think": "thought",
    "thinking": "thought",
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
# In an unclosed public field only public closing tags are dropped: a stray </thought> there
# marks what came before it as private (split_private), so it must survive until then.
_PUBLIC_CLOSE = re.compile(
    rf"<\s*/\s*(?:{'|'.join(k for k, v in _FIELDS.items() if v != 'thought')})\s*>", re.I
)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.M)
_BLANK = re.compile(r"\n[ \t]*\n")

# Where private text may start inside a public field: an HTML comment, any tag (checked by
# name below), or a bracketed inner voice as Chinese scripts write it.
_MARKER = re.compile(
    r"<!--"
    r"|<\s*(/)?\s*([A-Za-z][\w|-]*)([^<>]*)>"
    r"|[（(【\[]\s*(?:內心|内心|心聲|心声|心想|心裡話|心里话|OS\s*[:：]|inner (?:thought|voice|monologue)s?)",
    re.I,
)
_BRACKET_CLOSE = re.compile(r"[）)】\]]")
_PRIVATE_WORDS = {
    "think", "thinking", "thought", "thoughts", "innerthought", "innerthoughts", "inner",
    "innermonologue", "innervoice", "monologue", "reasoning", "reflection", "scratchpad",
    "internal", "private", "backstage", "os", "secret",
}  # fmt: skip


def _distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def is_private_tag(name: str) -> bool:
    """A tag name a model uses for private text, in any case and with near-miss spellings."""
    key = re.sub(r"[^a-z]", "", name.lower())
    if key in _PRIVATE_WORDS:
        return True
    return len(key) >= 5 and any(
        _distance(key, word) <= (1 if len(word) <= 5 else 2)
        for word in ("thought", "think", "thinking")
    )


def split_private(value: str) -> tuple[str, list[str]]:
    """A public field's text without its private parts, and those parts in order.

    An opened private tag runs to its closing tag or, unclosed, to the end of the field; a stray
    closing private tag makes everything before it private (the model forgot to open it).
    """
    public: list[str] = []
    private: list[str] = []
    pos = 0
    while (m := _MARKER.search(value, pos)) is not None:
        if m.group(0) == "<!--":
            end = value.find("-->", m.end())
            stop = len(value) if end < 0 else end + 3
            public.append(value[pos : m.start()])
            private.append(value[m.end() : len(value) if end < 0 else end])
            pos = stop
        elif m.group(2) is not None:
            if not is_private_tag(m.group(2)):
                public.append(value[pos : m.end()])
                pos = m.end()
                continue
            public.append(value[pos : m.start()])
            if m.group(1):  # a stray closing tag: what came before it was private
                private.append("".join(public))
                public = []
                pos = m.end()
                continue
            if m.group(3).strip().endswith("/"):  # <thought/> holds nothing
                pos = m.end()
                continue
            close = _MARKER.search(value, m.end())
            while close is not None and not (
                close.group(1) and close.group(2) and is_private_tag(close.group(2))
            ):
                close = _MARKER.search(value, close.end())
            end = close.start() if close is not None else len(value)
            private.append(value[m.end() : end])
            pos = close.end() if close is not None else len(value)
        else:
            public.append(value[pos : m.start()])
            close = _BRACKET_CLOSE.search(value, m.end())
            end = close.end() if close is not None else len(value)
            private.append(value[m.start() : end])
            pos = end
    public.append(value[pos:])
    return "".join(public), [p.strip() for p in private if p.strip()]


@dataclass(frozen=True)
class Reply:
    thought: str = ""
    action: str = ""
    dialogue: str = ""
    cue: str = ""
    has_cue: bool = False
    problems: tuple[str, ...] = ()
    cut: tuple[str, ...] = ()  # fields cut at their cap ("reply" when the whole reply was)

    @property
    def ok(self) -> bool:
        return not self.problems


def _clean(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().split("\n")]
    return "\n".join(lines).strip()


def parse_reply(text: str) -> Reply:
    """Parse one model reply into its four fields and a list of problems (empty when fine)."""
    text = clean_text(text or "")
    cut: list[str] = []
    if len(text) > MAX_REPLY_CHARS:
        text, cut = text[:MAX_REPLY_CHARS], ["reply"]
    text = _FENCE.sub("", text)
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
        value = text[start:end]
        if closing is None:
            value = (_ANY_CLOSE if field == "thought" else _PUBLIC_CLOSE).sub("", value)
        found.setdefault(field, []).append(_clean(value))

    moved: list[str] = []
    for field in ("action", "dialogue", "cue"):
        kept = []
        for value in found.get(field, []):
            public, private = split_private(value)
            kept.append(_clean(public))
            moved.extend(private)
        if field in found:
            found[field] = kept
    values = {f: "\n".join(v for v in found.get(f, []) if v) for f in _CLOSE}
    if moved:
        values["thought"] = "\n".join([values["thought"], *moved]).strip()
    values["cue"] = values["cue"].split("\n")[0].strip() if values["cue"] else ""
    for field, cap in CAPS.items():
        values[field], was_cut = clip(values[field], cap, "" if field == "cue" else "…")
        if was_cut:
            cut.append(field)
    cue = values["cue"]
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
        cut=tuple(cut),
    )
