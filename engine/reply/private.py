"""Finding private text inside a public field of a reply, in every style models write it.

Invariant: whatever a model marks as private — a nested `<thought>`/`<think>`/`<analysis>` tag,
an HTML comment, a bracketed aside such as `(thinking: …)` or 「（內心：…）」, or a label such as
`Thought:`/`内心OS：` (which makes the rest of the field private) — is returned as private and
never as public. When in doubt the text is private: losing a line costs less than leaking a
secret. Pure functions.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Words a model uses for private text: bracketed (`(reasoning: …)`, 【內心】) or as a label.
_EN_WORDS = (
    r"inner (?:thoughts?|voice|monologue)|internal(?: monologue| thoughts?)?"
    r"|private(?: notes?| thoughts?)?|notes? to self|note-to-self|thinking|thoughts?"
    r"|reasoning|analysis|scratch ?pad|monologue|reflection|internally|privately|thinks"
)
# Words that are also everyday speech ("我有個想法：", "我的分析："): a label only where a
# label stands (a line's or a sentence's start, in bold, in brackets), never mid-sentence —
# unless whose or how secret they are comes first (她盤算：, 暗自分析：).
_ZH_WEAK = r"想法|思考|盤算|盘算|推理|分析|獨白|独白"
_ZH_STRONG = (
    r"內心\s*OS|内心\s*OS|內心獨白|内心独白|內心|内心|心聲|心声|心想|心裡話|心里话"
    r"|心[裡裏里中]?暗?想|暗想|暗忖|潛台詞|潜台词"
    rf"|(?:暗自|心中|心裡|心里|暗中|偷偷|私下|[他她我])(?:{_ZH_WEAK})"
)
_ZH_WORDS = rf"{_ZH_STRONG}|{_ZH_WEAK}"
# Notes to the reader ("(Note: she is lying)") are out of character and often give the secret
# away: private when bracketed.
_NOTE_WORDS = (
    r"(?:notes?|OOC)(?![A-Za-z])|(?:註|注|備註|备注|旁註|旁注)(?=\s*[:：])"
    r"|(?:subtext|motivations?|motives?|intentions?|emotions?)(?=\s*[:：])"
    r"|(?:動機|动机|意圖|意图|情緒|情绪|目的)(?=\s*[:：])"
)

_OPEN_BRACKET = r"[（(【\[〔]"
# A word anywhere inside a bracket that makes all of it private: "(to Bob, thinking he lies)",
# "(secretly hoping…)", （暗自盤算：…）. A bracket reaches at most 60 characters for it.
_SECRETLY = (
    r"secret(?:ly)?|privately|inwardly|silently|mentally|to (?:her|him|my|them|your)sel(?:f|ves)"
)
_IN_BRACKET = (
    rf"(?<![A-Za-z])(?:thinking|thinks|thought|unspoken|hidden|{_SECRETLY})(?![A-Za-z])"
    r"|暗自|心中|心裡|心里|暗中|偷偷|私下|內心|内心|心想|暗想"
)
# Where a thought between asterisks may stand: a line's start, or after a sentence's end, a
# comma, a colon or a closing quote — never mid-sentence, where stars are emphasis
# ("Everyone *thinks* you're wrong").
_AFTER = r"[。！？!?.,，、：:;；」』”\"…—>\-]"  # what may come before an aside (then 0–2 spaces)
_AT_ASIDE = (
    rf"(?:^|(?<=\n)|(?<={_AFTER})|(?<={_AFTER}[ \t])|(?<={_AFTER}[ \t]{{2}})"
    r"|(?<=\n[ \t])|(?<=[\u4e00-\u9fff][ \t]))"
)
# A thought between asterisks, where roleplay writes one (`*thinks of the ledger*`, `*心想…*`,
# `*(inner: …)*`, `*She thinks: …*`): what a bracket would make private, and a wondering.
_STARRED = (
    rf"(?:{_EN_WORDS}|wonders|wondering|inner(?=\s*[:：])|{_SECRETLY})(?![A-Za-z])"
    r"|(?-i:she|he|they|[A-Z][\w'’]*)\s+(?:thinks|wonders)(?![A-Za-z])"
    rf"|{_ZH_STRONG}|想著|想着"
)
_MARKER = re.compile(
    r"<!--"
    r"|<\s*(/)?\s*([A-Za-z][\w|-]*)([^<>]*)>"
    rf"|{_OPEN_BRACKET}\s*(?:(?:{_EN_WORDS}|inner(?=\s*[:：]))(?![A-Za-z])|{_NOTE_WORDS}|{_ZH_WORDS}"
    r"|OS(?=\s*[:：)）\]】])"
    r"|(?:[A-Za-z.'’]+\s+){1,3}(?:thinks|thinking|wonders)(?![A-Za-z]))"
    rf"|{_OPEN_BRACKET}(?=[^()（）\[\]【】〔〕\n]{{0,60}}?(?:{_IN_BRACKET}))"
    rf"|{_AT_ASIDE}(?<![*_])(?P<star>\*\*\*|\*\*|___|__|\*(?!\*)|_(?!_))"
    rf"(?=[*_]{{0,3}}[ \t]*{_OPEN_BRACKET}?[ \t]*(?:{_STARRED}|{_NOTE_WORDS}))",
    re.I,
)
_BRACKET_CLOSE = re.compile(r"[）)】\]〕]")
# A bracket holding only the word (`[Thought]`, 【內心】, `(thinking)`) is a label, not an aside:
# what follows it is private too.
_BRACKET_LABEL = re.compile(
    rf"{_OPEN_BRACKET}\s*(?:{_EN_WORDS}|{_ZH_WORDS}|OS)\s*[:：]?\s*[）)】\]〕]", re.I
)
# A label inside a public field: `Thought:`, `**Thinking:**`, `内心OS：`, `OS：`. Chinese words
# count anywhere (Chinese has no spaces); English strong words after a space or a sentence's
# end; weaker ones (analysis, reasoning) only at the start of a line or in bold, where a
# character is unlikely to be saying them.
_EMPH = r"[*_]{0,3}"
# Where a label may stand: a line's start, or after a sentence's end, a comma, a closing quote,
# emphasis or a bracket (with a space or not) — not after a word ("Here's a thought: …" is
# speech, and cutting there would publish "Here's a").
_AT_LABEL = (
    r"(?:^|(?<=\n)|(?<=[。！？!?.,，、」』”\"*_（(])|(?<=[。！？!?.,，、」』”\"*_（(][ \t]))"
)
_LIST = r"(?:[-+>][ \t]*)?"  # a list's or a quote's mark before a label at a line's start
_LABEL = re.compile(
    rf"{_EMPH}(?:{_ZH_STRONG})\s*{_EMPH}\s*[:：]"
    rf"|{_AT_LABEL}[ \t]*{_LIST}{_EMPH}(?:{_ZH_WEAK})\s*{_EMPH}\s*[:：]"
    rf"|{_AT_LABEL}[ \t]*{_LIST}"
    rf"{_EMPH}(?:(?i:thoughts?|thinking|thinks|inner (?:thoughts?|voice|monologue)"
    rf"|internal (?:monologue|thoughts?)|private (?:notes?|thoughts?)|notes? to self)|OS"
    # whose: "She thinks:", "Alice's thoughts:", "Her inner thoughts:" (not "I'm thinking:")
    r"|(?:she|he|they|her|his|their|[A-Z][\w'’]*)[ \t]+(?i:thinks|wonders|thoughts"
    rf"|inner thoughts?|internal thoughts?|private (?:notes?|thoughts?)))\s*{_EMPH}\s*[:：]"
    rf"|(?:^|(?<=\n))[ \t>*_#-]*(?i:reasoning|analysis|scratch ?pad|monologue)\s*{_EMPH}\s*[:：]"
    rf"|(?:^|(?<=\s))\*\*\s*(?i:reasoning|analysis|scratch ?pad)\s*[:：]?\s*\*\*\s*[:：]?",
)
# A label word alone between asterisks, bracketed or with a colon or not.
_STARRED_LABEL = re.compile(
    rf"[ \t]*{_OPEN_BRACKET}?[ \t]*(?:{_EN_WORDS}|{_ZH_WORDS}|OS|notes?|OOC|inner)[ \t]*"
    r"[）)】\]〕]?[ \t]*[:：]?[ \t]*",
    re.I,
)
_GAP = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")
_PRIVATE_WORDS = {
    "think", "thinking", "thought", "thoughts", "innerthought", "innerthoughts", "inner",
    "innermonologue", "innervoice", "monologue", "reasoning", "reflection", "scratchpad",
    "internal", "private", "backstage", "os", "secret", "analysis", "privatenote",
    "privatenotes", "privatethought", "privatethoughts", "note", "notes", "notetoself",
    "notestoself", "aside", "internalmonologue",
}  # fmt: skip


# A tag name holding one of these is private too, whatever surrounds it.
_PRIVATE_PARTS = ("think", "thought", "monolog", "private", "secret", "internal", "reasoning",
                  "scratchpad", "analysis", "reflection", "subtext", "motivation")  # fmt: skip


def _distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


@lru_cache(maxsize=4096)
def is_private_tag(name: str) -> bool:
    """A tag name a model uses for private text, in any case and with near-miss spellings."""
    key = re.sub(r"[^a-z]", "", name.lower())
    if key in _PRIVATE_WORDS:
        return True
    if any(part in key for part in _PRIVATE_PARTS):  # <internal_thought>, <inner-reasoning>
        return True
    # Within two edits of "thinking" a name has at most 10 letters: longer ones are not checked.
    return 5 <= len(key) <= 10 and any(
        _distance(key, word) <= (1 if len(word) <= 5 else 2)
        for word in ("thought", "think", "thinking")
    )


_CLOSING = {
    "*": re.compile(r"(?<!\*)\*(?!\*)"),
    "**": re.compile(r"(?<!\*)\*\*(?!\*)"),
    "***": re.compile(r"\*\*\*"),
    "_": re.compile(r"(?<!_)_(?![\w])"),  # not inside snake_case
    "__": re.compile(r"(?<!_)__(?![\w])"),
    "___": re.compile(r"___(?![\w])"),
}
# A label between the marks: it ends in a colon or a trailing mark (`*Thought:*`, `**Subtext:**`,
# `*Thinking...*`), or is a label word alone (`*[Thought]*`, `*內心*`).
_LABEL_END = re.compile(r"(?:[:：]|\.\.\.|…|—|-)[ \t]*$")
# After a word alone between marks, the sentence going on: emphasis ("**Thinking** about it
# won't help", "_Secretly_, I knew", "**內心**很亂"), not a label or an aside.
_COLON_NEXT = re.compile(r"[ \t]*[:：]")
_GOES_ON = re.compile(r"[ \t]*(?:[a-z,;，、]|[\u4e00-\u9fff])")


def _starred(value: str, m: re.Match[str], pos: int, public: list[str], private: list[str]) -> int:
    """A thought between marks (`*…*`, `**…**`, `_…_`) to its closing mark on the same line, or
    to the line's end when never closed (private). A label between them (`*Thought:*`,
    `**She thinks:**`, `*【內心】*`) makes the rest of the field private, as it would bare; a
    word alone that the sentence goes on after is emphasis. Returns where reading goes on."""
    mark = m.group("star")
    line_end = value.find("\n", m.end())
    line_end = len(value) if line_end < 0 else line_end
    closing = _CLOSING[mark].search(value, m.end(), line_end)
    end = closing.start() if closing is not None else line_end
    after = end + len(mark) if closing is not None else end
    content, rest = value[m.end() : end], value[after:]
    word = content.strip(" \t*_")
    alone = bool(
        (_STARRED_LABEL.fullmatch(word) or re.fullmatch(r"[A-Za-z'’-]+", word))
        and not _LABEL_END.search(content)
    )  # one Latin word, or a label word alone (內心): never a thought written out
    colon_next = _COLON_NEXT.match(rest)
    if alone and _GOES_ON.match(rest) and not colon_next:
        public.append(value[pos:after])  # emphasis of one word, mid-sentence
        return after
    public.append(value[pos : m.start()])
    if _LABEL_END.search(content) or colon_next or _STARRED_LABEL.fullmatch(word):
        private.append(rest.lstrip(" \t:：*_"))
        return len(value)
    private.append(content)
    return after


def _markers(value: str, brackets: bool = True) -> tuple[list[str], list[str], bool]:
    """Public pieces, private pieces, and whether a label made the rest of the field private."""
    public: list[str] = []
    private: list[str] = []
    pos = 0
    while (m := _MARKER.search(value, pos)) is not None:
        if not brackets and m.group(0) != "<!--" and m.group(2) is None:
            public.append(value[pos : m.end()])
            pos = m.end()
        elif m.group("star"):
            pos = _starred(value, m, pos, public, private)
        elif m.group(0) == "<!--":
            end = value.find("-->", m.end())
            public.append(value[pos : m.start()])
            private.append(value[m.end() : len(value) if end < 0 else end])
            pos = len(value) if end < 0 else end + 3
        elif m.group(2) is not None:
            if not is_private_tag(m.group(2)):
                public.append(value[pos : m.end()])
                pos = m.end()
                continue
            public.append(value[pos : m.start()])
            attrs = m.group(3).strip()
            if m.group(1):  # a stray closing tag: what came before it was private
                private.append("".join(public))
                public = []
                pos = m.end()
                continue
            if attrs.endswith("/"):  # <thought/> holds nothing
                pos = m.end()
                continue
            if attrs[:1] in (":", "："):  # <thinking: …> is a bracketed aside
                private.append(attrs[1:])
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
            label = _BRACKET_LABEL.match(value, m.start())
            if label is not None:  # 【內心】… : the rest of the field is private
                private.append(value[label.end() :])
                return public, private, True
            close = _BRACKET_CLOSE.search(value, m.end())
            end = close.end() if close is not None else len(value)
            private.append(value[m.start() : end])
            pos = end
    public.append(value[pos:])
    return public, private, False


def split_private(value: str) -> tuple[str, list[str]]:
    """A public field's text without its private parts, and those parts in order.

    An opened private tag runs to its closing tag or, unclosed, to the end of the field; a stray
    closing private tag makes everything before it private (the model forgot to open it); a
    private label (`Thought:`, `[內心]`) makes everything after it private.
    """
    public, private, _ = _markers(value)
    said = "".join(public)
    label = _LABEL.search(said)
    if label is not None:
        private.append(said[label.end() :])
        said = said[: label.start()]
    if len(said) != len(value):  # "Hi. (thinking: …) ok" reads "Hi. ok", not "Hi.  ok"
        said = _GAP.sub(" ", said)
    return said, [p.strip() for p in private if p.strip()]


def remove_markers(text: str) -> tuple[str, list[str]]:
    """Text outside every field without its private tags and comments (those are returned).

    Brackets and labels stay: there they are the reply's own labels (`【內心】…`, `Thought:`),
    which engine.reply.styles reads as fields.
    """
    public, private, _ = _markers(text, brackets=False)
    return "".join(public), [p.strip() for p in private if p.strip()]


def has_private(text: str) -> bool:
    """Whether `text` holds a private marker or label of any kind (even an empty one)."""
    public, private, labelled = _markers(text)
    return bool(private) or labelled or "".join(public) != text or bool(_LABEL.search(text))
