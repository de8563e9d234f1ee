"""Reading the reply styles models drift into besides tags: labels, headings and script lines.

A label line (`**Thought:** …`, `*Dialogue*: …`, `Dialogue: …`, `### Dialogue`, `【台詞】…`,
`想法：…`) opens a field that runs to the next label; a public field also ends at a blank line,
and prose outside every field is never published. The speaker's own name as a line prefix
(`Alice: Hello.`, `林小姐：你好。`) is their line; another cast member's name (`Bob: …`, `[9] 律師：…`)
starts a line written for someone else, where reading stops. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from engine.reply_private import has_private

# Label words (any case) and the field each opens.
LABELS: dict[str, str] = {
    **dict.fromkeys(
        ("thought", "thoughts", "thinking", "think", "inner thought", "inner thoughts",
         "inner monologue", "internal monologue", "inner voice", "private thought",
         "private thoughts", "想法", "內心", "内心", "思考", "內心獨白", "内心独白", "心聲", "心声",
         "內心戲", "内心戏", "心理", "內心OS", "内心OS"),
        "thought",
    ),
    **dict.fromkeys(
        ("action", "actions", "stage direction", "stage directions", "visible action",
         "physical action", "動作", "动作", "行動", "行动", "舉動", "举动"),
        "action",
    ),
    **dict.fromkeys(
        ("dialogue", "dialog", "line", "lines", "speech", "spoken line", "says", "台詞", "台词",
         "對白", "对白", "對話", "对话", "說", "说"),
        "dialogue",
    ),
    **dict.fromkeys(
        ("cue", "next", "next speaker", "pass to", "throw to", "丟球", "丢球", "下一位",
         "下一個", "下一个", "接球", "傳球", "传球"),
        "cue",
    ),
}  # fmt: skip

_WORDS = "|".join(
    re.escape(w).replace(r"\ ", r"\s+") for w in sorted(LABELS, key=len, reverse=True)
)
# Line start: a list bullet or number, a quote mark, a turn number as the record shows it.
_LEAD = r"[ \t]*(?:\[\d+\][ \t]*)?(?:(?:[-*+>]|\d+[.)])[ \t]+)?"
_EMPH = r"[*_]{0,3}"
_PAREN = r"(?:[（(][^()（）\n]{0,40}[)）][ \t]*)?"  # "Alice (quietly):", "Dialogue (spoken):"
_LABEL = re.compile(
    rf"{_LEAD}(?P<hash>#{{1,6}}[ \t]*)?(?P<em1>{_EMPH})[ \t]*(?P<br>[\[【][ \t]*)?"
    rf"(?P<word>{_WORDS})[ \t]*(?(br)[\]】][ \t]*){_PAREN}(?P<em2>{_EMPH})[ \t]*"
    rf"(?P<colon>[:：])?[ \t]*{_EMPH}[ \t]*(?P<rest>.*)",
    re.I,
)
_BLANK = re.compile(r"[ \t]*")
_GESTURE = re.compile(r"\*([^*\n]+)\*[ \t]*|[（(]([^()（）\n]+)[)）][ \t]*(?=\S)")


def label_of(line: str) -> tuple[str, str] | None:
    """(field, text after the label) when `line` opens a field, else None."""
    m = _LABEL.fullmatch(line)
    if m is None:
        return None
    rest = m.group("rest").strip()
    if m.group("colon") or m.group("br"):
        pass
    elif m.group("hash") or (m.group("em1") and m.group("em2") and not rest):
        pass  # "### Dialogue" or "**Dialogue**" alone on its line
    else:
        return None
    word = re.sub(r"\s+", " ", m.group("word")).lower()
    field = next(v for k, v in LABELS.items() if k.lower() == word)
    return field, rest


def unwrap(text: str) -> str:
    """The text without a markdown emphasis pair wrapping all of it (`*She smiles.*`)."""
    m = re.fullmatch(r"(\*{1,3}|_{1,3})(?!\s)(.+?)(?<!\s)\1", text.strip(), re.S)
    return m.group(2) if m and "\n" not in m.group(2) and m.group(1) not in m.group(2) else text


def name_key(name: str) -> str:
    """A name as compared: no spaces, marks or emphasis, full-width folded, any case."""
    return re.sub(r"[\s@＠*_\"'“”‘’「」]+", "", unicodedata.normalize("NFKC", name)).casefold()


@dataclass(frozen=True)
class CastLines:
    """Line prefixes naming the speaker (`own`) and anyone else in the cast (`other`)."""

    own: re.Pattern[str] | None
    other: re.Pattern[str] | None
    mine: frozenset[str] = frozenset()
    theirs: frozenset[str] = frozenset()

    def whose(self, name: str) -> str:
        """ "own" for the speaker's name or alias, "other" for another cast member's, else ""."""
        key = name_key(name)
        return "own" if key in self.mine else "other" if key in self.theirs else ""

    def own_prefix(self, line: str) -> int:
        """Where the speaker's own line starts after their name ("Alice: Hi" → 7), else 0."""
        m = self.own.match(line) if self.own is not None else None
        return m.end() if m is not None else 0

    def others_line(self, text: str) -> int | None:
        """Where the first line written for another cast member starts in `text`, if any."""
        m = self.other.search(text) if self.other is not None else None
        return m.start() if m is not None else None


def _names(names: Sequence[str]) -> str:
    ordered = sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True)
    return "|".join(re.escape(n) for n in ordered)


@lru_cache(maxsize=256)
def _cast_lines(speaker: str, cast: tuple[tuple[str, tuple[str, ...]], ...]) -> CastLines:
    mine = [speaker, *dict(cast).get(speaker, ())] if speaker else []
    others = [n for name, aliases in cast if name != speaker for n in (name, *aliases)]
    others = [n for n in others if n.strip() and n.strip() not in {m.strip() for m in mine}]
    said = rf"{_EMPH}[ \t]*{_PAREN}{_EMPH}[ \t]*[:：][ \t]*{_EMPH}[ \t]*"
    own = (
        re.compile(rf"{_LEAD}{_EMPH}[ \t]*(?:{_names(mine)}){said}", re.I) if _names(mine) else None
    )
    # Another's line: their name and a colon, or their name alone as a heading or in bold.
    other = (
        re.compile(
            rf"^{_LEAD}(?:{_EMPH}[ \t]*(?:{_names(others)}){said}"
            rf"|(?:#{{1,6}}[ \t]*{_EMPH}|[*_]{{1,3}})[ \t]*(?:{_names(others)})[ \t]*{_EMPH}[ \t]*$)",
            re.I | re.M,
        )
        if _names(others)
        else None
    )
    return CastLines(own, other, frozenset(map(name_key, mine)), frozenset(map(name_key, others)))


def cast_lines(speaker: str, cast: Mapping[str, Sequence[str]] | None) -> CastLines:
    """The prefixes for `speaker` among `cast` (name → aliases); none known, none matched."""
    items = tuple((name, tuple(aliases)) for name, aliases in (cast or {}).items())
    return _cast_lines(speaker or "", items)


@dataclass(frozen=True)
class Segment:
    field: str  # thought | action | dialogue | cue
    text: str
    pos: int  # where it starts in the reply, to keep the reply's order
    others: bool = False  # this segment was written for another cast member
    closed: bool = True  # ended by its own closing tag (or a JSON string), not by what followed


def read_labels(text: str, lines: CastLines, offset: int = 0) -> tuple[list[Segment], int | None]:
    """The fields `text` opens with labels or the speaker's name, and where a line written for
    another cast member starts (reading stops there), as an offset into the whole reply."""
    out: list[Segment] = []
    field: str | None = None
    body: list[str] = []
    start = 0

    def close() -> None:
        if field is not None:
            out.append(Segment(field, unwrap("\n".join(body).strip()), start))

    pos = 0
    for line in text.split("\n"):
        at, pos = pos, pos + len(line) + 1
        if field != "thought" and lines.others_line(line) == 0:
            close()
            return out, offset + at
        label = label_of(line)
        own = lines.own_prefix(line) if label is None else 0
        if label is not None or own:
            close()
            field, first = label if label is not None else ("dialogue", line[own:].strip())
            gesture = _GESTURE.match(first) if label is None else None
            if gesture is not None and not has_private(gesture.group(0)):
                # A script line: "Alice: *leans in* I know." acts, then speaks.
                out.append(Segment("action", gesture.group(1) or gesture.group(2), offset + at))
                first = first[gesture.end() :]
            body, start = [first], offset + at
        elif field is None:
            continue  # prose outside every field is never published
        elif _BLANK.fullmatch(line) and field != "thought" and any(b.strip() for b in body):
            close()  # a public field ends at a blank line; what follows is stray prose
            field = None
        else:
            body.append(line)
    close()
    return out, None
