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

from engine.reply.private import has_private
from engine.vocabulary import ReplyField

# Label words (any case) and the field each opens.
LABELS: dict[str, ReplyField] = {
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
    rf"{_LEAD}(?P<hash>#{{1,6}}[ \t]*)?(?P<em1>[*_]{{1,3}})?[ \t]*(?P<br>[\[【][ \t]*)?"
    rf"(?:(?P<owner>[^\s:：*_\[\]【】]{{1,24}}?)(?:['’]s[ \t]+|[ \t]*的))?(?P<word>{_WORDS})[ \t]*(?(br)[\]】][ \t]*)(?P<paren>{_PAREN})(?P<em2>[*_]{{1,3}})?[ \t]*"
    rf"(?P<colon>[:：])?[ \t]*(?P<em3>[*_]{{1,3}})?(?P<rest>.*)",
    re.I,
)
_BRACKETED = re.compile(r"[ \t]*[\[(（【][ \t]*(.+?)[ \t]*[\])）】][ \t]*")
_COLON = re.compile(r"[:：]")
_BY_WORD: dict[str, ReplyField] = {word.lower(): field for word, field in LABELS.items()}
_QUOTE = re.compile(r"^[ \t]*>[ \t]?")  # a markdown blockquote around a line
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
# Words of the sections models add besides the four fields (notes, subtext, motivation, …).
_SECTION_WORDS = (
    r"notes?|subtext|motivations?|motives?|intentions?|intent|emotions?|mood|feelings?"
    r"|objectives?|goals?|strategy|reasons?|explanation|secrets?|backstory|context|ooc"
    r"|備註|备注|註|注|潛台詞|潜台词|動機|动机|意圖|意图|情緒|情绪|心情|感受|目的|目標|目标"
    r"|策略|說明|说明|秘密|理由|原因"
)
# A section label line inside a public field read from labels: any bold label (`**Emotion:**`,
# `**Subtext**:`) or one of those words with a colon at the line's start.
_SECTION = re.compile(
    r"[ \t]*(?:[-*+>][ \t]+)?(?:"
    r"(?:\*\*|__)[^*_\n:：]{1,30}?(?:[:：][ \t]*(?:\*\*|__)|(?:\*\*|__)[ \t]*[:：])"
    rf"|[*_]{{0,2}}(?:{_SECTION_WORDS})[*_]{{0,2}}[ \t]*[:：][*_]{{0,2}})[ \t]*",
    re.I,
)
# A direction reads as one: it starts in lower case or in Chinese and is no sentence of its own
# ("(sighs)", "(to Bob)", （嘆氣）); "(1) the knife", "(Sorry.) I didn't mean it." are speech.
# One rule for a script line and a line's field (engine.reply.read) alike.
DIRECTION = r"(?:[a-z]|[\u4e00-\u9fff])[^()（）*\n]*?(?<![.!?。！？])"
_GESTURE = re.compile(rf"\*([^*\n]+)\*[ \t]*|[（(]({DIRECTION})[)）][ \t]*(?=\S)")


def label_of(line: str) -> tuple[ReplyField, str, str] | None:
    """(field, text after the label, whose label it is) when `line` opens a field, else None.

    The owner is a name before the label ("Alice's thought:", "律師的台詞：", else ""); a line
    wholly in brackets ("(Thinking: …)", "[Alice's thought: …]") is read without them.
    """
    found = _label(line)
    if found is None and (inner := _BRACKETED.fullmatch(line)) is not None:
        found = _label(inner.group(1)) if _COLON.search(inner.group(1)) else None
    return found


def _label(line: str) -> tuple[ReplyField, str, str] | None:
    m = _LABEL.fullmatch(line)
    if m is None:
        return None
    em1, em3, rest = m.group("em1") or "", m.group("em3") or "", m.group("rest")
    inside = em1 and not m.group("em2")  # "**Thought:** …": the colon is inside the bold
    if em3 and not inside:
        rest = em3 + rest  # "Action: *smiles*": the emphasis is the value's own
    elif inside and not em3 and rest.rstrip().endswith(em1):
        rest = rest.rstrip()[: -len(em1)]  # "*Thought: he lies*"
    rest = rest.strip()
    if m.group("colon") or m.group("br"):
        pass
    elif m.group("hash") or (m.group("em1") and m.group("em2") and not rest):
        pass  # "### Dialogue" or "**Dialogue**" alone on its line
    else:
        return None
    field = _BY_WORD[" ".join(m.group("word").split()).lower()]
    if m.group("paren") and has_private(m.group("paren")):
        field = "thought"  # "**Dialogue (internal):** …" is a thought, whatever the label
    return field, rest, m.group("owner") or ""


def unwrap(text: str) -> str:
    """The text without a markdown emphasis pair wrapping all of it (`*She smiles.*`)."""
    m = re.fullmatch(r"(\*{1,3}|_{1,3})(?!\s)(.+?)(?<!\s)\1", text.strip(), re.S)
    return m.group(2) if m and "\n" not in m.group(2) and m.group(1) not in m.group(2) else text


# Quote marks a model wraps a spoken line in, each opening with its closing: markup around the
# line, as the label is. Not single quotes (an apostrophe, "I won't", cannot be told from one),
# nor 「」 and 『』: Chinese dialogue is written in them, and every style keeps them as the line's.
_QUOTE_PAIRS = {'"': '"', "“": "”", "＂": "＂", "«": "»"}


def _quoted(line: str) -> str | None:
    """The text inside one pair of quote marks wrapping all of `line`, or None: a line with the
    same marks inside ("Go," she said, "now.") is more than one quote, and keeps them."""
    text = line.strip()
    closing = _QUOTE_PAIRS.get(text[:1])
    if closing is None or len(text) < 2 or text[-1] != closing:
        return None
    inner = text[1:-1]
    if text[0] in inner or closing in inner or not inner.strip():
        return None
    return inner.strip()


def unquote(text: str) -> str:
    """A spoken line without the quote marks wrapping it, whatever the reply's style: a tag, a
    label, a heading, a script line or JSON gives the line itself, as the record keeps it. The
    whole text in one quote, or every line of it in its own, loses them; anything else (quotes
    inside the line, a line only partly quoted) is left as written."""
    whole = _quoted(text)
    if whole is not None:
        return whole
    lines = text.strip().split("\n")
    inside = [_quoted(line) if line.strip() else "" for line in lines]
    if len(lines) > 1 and all(q is not None for q in inside):
        return "\n".join(q or "" for q in inside)
    return text


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

    def private_prefix(self, line: str) -> int:
        """Where the text starts after the speaker's name marked private ("Alice (thinking): …",
        "林小姐（心想）：…"): that line is their thought, not their line ("thinking aloud" is
        spoken). Else 0."""
        own = self.own_prefix(line)
        said_aloud = _ALOUD.search(line[:own])
        return own if own and has_private(line[:own]) and not said_aloud else 0

    def others_line(self, text: str) -> int | None:
        """Where the first line written for another cast member starts in `text`, if any."""
        m = self.other.search(text) if self.other is not None else None
        return m.start() if m is not None else None


_ALOUD = re.compile(r"aloud|out loud|大聲|大声|說出|说出", re.I)
_TITLE = r"(?:mr|mrs|ms|miss|dr|sir|madam)\.?"
_ZH_TITLE = r"先生|小姐|女士|太太|老師|老师"


def _capitals(names: Sequence[str]) -> str:
    """A screenplay's character cue: a Latin name in capitals alone on its line (`BOB`)."""
    upper = [n.strip().upper() for n in names if re.search(r"[A-Za-z]", n) and len(n.strip()) > 1]
    # after a blank line and before the line it cues, as a screenplay sets it (not a shout)
    return rf"|(?<=\n\n)[ \t]*(?-i:{_names(upper)})[ \t]*$(?=\n[ \t]*\S)" if upper else ""


def _names(names: Sequence[str]) -> str:
    ordered = sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True)
    return "|".join(re.escape(n) for n in ordered)


@lru_cache(maxsize=256)
def _cast_lines(speaker: str, cast: tuple[tuple[str, tuple[str, ...]], ...]) -> CastLines:
    mine = [speaker, *dict(cast).get(speaker, ())] if speaker else []
    others = [n for name, aliases in cast if name != speaker for n in (name, *aliases)]
    others = [n for n in others if n.strip() and n.strip() not in {m.strip() for m in mine}]
    said = rf"{_EMPH}[ \t]*{_PAREN}{_EMPH}[ \t]*[:：][ \t]*{_EMPH}[ \t]*"
    # How scripts set a name before a line besides plain: bracketed (`[Bob]:`, 【王警官】：), after
    # a dash (`— Bob:`), with a title (`Mr. Bob:`, 王警官先生：); a screenplay's capitals alone.
    dash = r"(?:(?:[—–]+|--)[ \t]*)?"

    def named(names: str) -> str:
        return (
            rf"{dash}(?:{_TITLE}[ \t]+)?(?P<b>[\[【(（][ \t]*)?(?:{names})"
            rf"(?:{_ZH_TITLE})?(?(b)[ \t]*[\]】)）])"
        )

    # After the colon, emphasis is the name's own closing (`**Alice:**`) when the name opened
    # it, else the line's (`Alice: *smiles*`), which stays.
    own = (
        re.compile(
            rf"{_LEAD}(?P<o1>[*_]{{1,3}})?[ \t]*{named(_names(mine))}"
            rf"(?P<o2>[*_]{{1,3}})?[ \t]*"
            rf"{_PAREN}{_EMPH}[ \t]*[:：][ \t]*(?(o1)(?(o2)(?:[*_]{{1,3}}(?=\s|$))?|[*_]{{0,3}})"
            rf"|(?:[*_]{{1,3}}(?=\s|$))?)[ \t]*",
            re.I,
        )
        if _names(mine)
        else None
    )
    # Another's line: their name and a colon, or their name alone as a heading or in bold.
    other = (
        re.compile(
            rf"^{_LEAD}(?:{_EMPH}[ \t]*{named(_names(others))}{said}"
            rf"|(?:#{{1,6}}[ \t]*{_EMPH}|[*_]{{1,3}})[ \t]*(?:{_names(others)})[ \t]*{_EMPH}[ \t]*$"
            rf"{_capitals(others)})",
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
    field: ReplyField
    text: str
    pos: int  # where it starts in the reply, to keep the reply's order
    others: bool = False  # this segment was written for another cast member
    closed: bool = True  # ended by its own closing tag (or a JSON string), not by what followed


_OPENS, _CLOSES = '"“「『', '"”」』'


def _runs_on(body: Sequence[str], rows: Sequence[str], start: int, lines: CastLines) -> bool:
    """Whether a public field's line goes on past a blank line into the next paragraph (read
    only up to the blank line after it, so a reply costs one pass): its quote is still open and
    that paragraph closes it as its very last character (`"I loved him once.⏎⏎But that was
    before the war."`), or its paragraph closed a quote and that one is wholly one quote, no
    label, name or heading. Anything else after a blank line is stray prose, never published."""
    paragraph: list[str] = []
    for k in range(start, len(rows)):  # to a blank line, or a label, name or heading
        row = rows[k]
        if not row.strip():
            if paragraph:
                break
            continue
        if _starts_field(row.strip(), lines):
            break
        paragraph.append(row)
    if not paragraph:
        return False
    said, text = "\n".join(body).rstrip(), "\n".join(paragraph).strip()
    for o, c in zip(_OPENS, _CLOSES, strict=True):
        still_open = said.count(o) % 2 if o == c else said.count(o) > said.count(c)
        if still_open:  # the paragraph must close it, at its end, and hold no other quote
            return text.endswith(c) and text.count(c) == 1 and o not in text[:-1]
    return said[-1:] in _CLOSES and _quoted(text) is not None


def _starts_field(row: str, lines: CastLines) -> bool:
    return (
        label_of(row) is not None
        or bool(lines.own_prefix(row))
        or lines.others_line(row) == 0
        or _HEADING.match(row) is not None
    )


def _opened(
    line: str, label: tuple[ReplyField, str, str] | None, own: int, lines: CastLines
) -> tuple[ReplyField, str, str]:
    """(field, its first text, the action it opens with or "") of a line that opens a field:
    a label's, or the speaker's name's — their thought when marked private ("Alice
    (thinking): …"), else their line, which may act first ("Alice: *leans in* I know.")."""
    if label is not None:
        return label[0], label[1], ""
    first = line[own:].strip()
    if lines.private_prefix(line):
        return "thought", first, ""
    gesture = _GESTURE.match(first)
    if gesture is not None and not has_private(gesture.group(0)):
        return "dialogue", first[gesture.end() :], gesture.group(1) or gesture.group(2)
    return "dialogue", first, ""


def read_labels(text: str, lines: CastLines, offset: int = 0) -> tuple[list[Segment], int | None]:
    """The fields `text` opens with labels or the speaker's name, and where a line written for
    another cast member starts (reading stops there), as an offset into the whole reply."""
    out: list[Segment] = []
    field: ReplyField | None = None
    body: list[str] = []
    start = 0

    def close() -> None:
        if field is not None:
            kept = body if field == "thought" else [_QUOTE.sub("", line) for line in body]
            out.append(Segment(field, unwrap("\n".join(kept).strip()), start))

    pos = 0
    spoken = False  # the open public field has text (a blank line after it ends it)
    rows = text.split("\n")
    for k, line in enumerate(rows):
        at, pos = pos, pos + len(line) + 1
        if not line.strip():
            if field is not None and field != "thought" and spoken and body[-1].strip():
                if not _runs_on(body, rows, k + 1, lines):  # once per run of blank lines
                    close()  # a public field ends at a blank line; what follows is stray prose
                    field = None
                    continue
            if field is not None:
                body.append(line)
            continue
        if field != "thought" and lines.others_line(line) == 0:
            close()
            return out, offset + at
        label = label_of(line)
        owner = lines.whose(label[2]) if label is not None and label[2] else "own"
        if owner == "other":
            close()  # "Bob's line:" is Bob's
            return out, offset + at
        if not owner:
            label = None  # "his line: …" inside a thought is the thought's text, not a label
        own = lines.own_prefix(line) if label is None else 0
        if label is not None or own:
            close()
            field, first, acted = _opened(line, label, own, lines)
            if acted:
                out.append(Segment("action", acted, offset + at))
            body, start, spoken = [first], offset + at, bool(first.strip())
        elif field is None:
            continue  # prose outside every field is never published
        elif field != "thought" and _HEADING.match(line):
            close()  # another section ("# Director's note") is not this field's text
            field = None
        elif field != "thought" and (section := _SECTION.match(line)) is not None:
            # Another labelled section ("**Subtext:** …", "Notes: …", "動機：…") is the model's
            # note about the scene, which often gives a secret away: private, to the next label.
            close()
            field, body, start, spoken = "thought", [line[section.end() :]], offset + at, True
        else:
            body.append(line)
            spoken = True
    close()
    return out, None
