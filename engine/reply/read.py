"""Reading an actor's reply into `thought`, `action`, `dialogue` and `cue`, in any common style.

Models drift from the taught tags, so the reader also takes tags with attributes, markdown
labels and headings, `Label:` lines, the speaker's name as a script prefix, and JSON (see
engine.reply.styles and engine.reply.json_form), in English and Chinese, and names each problem in
words a repair prompt can quote. Invariants: untagged prose is never published; whatever is
marked private, in any style, goes to the thought (engine.reply.private); a line written for
another cast member is cut off with all that follows and flagged (`wrote_for_others`). Every
string is sanitised (engine.folder.sanitize) and cut at a documented cap. Pure functions.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.folder.names import is_everyone
from engine.folder.sanitize import clean_text, clip
from engine.folder.turns import ANY
from engine.reply.cue import match_cue
from engine.reply.json_form import read_json
from engine.reply.private import is_private_tag, remove_markers, split_private
from engine.reply.styles import (
    DIRECTION,
    CastLines,
    Segment,
    cast_lines,
    label_of,
    name_key,
    read_labels,
    unquote,
)
from engine.vocabulary import ReplyField

__all__ = [
    "CAPS",
    "MAX_REPLY_CHARS",
    "Reply",
    "is_private_tag",
    "parse_reply",
    "says_nothing",
    "split_private",
]

# Caps on what one reply may put on the record (characters). A line longer than ~1500
# characters is a monologue no five-minute scene needs, and at Discord's 2000-character limit a
# whole turn still fits in two posts. The thought is private and may run longer. A cue is a name.
CAPS = {"thought": 4000, "action": 600, "dialogue": 1500, "cue": 64}
MAX_REPLY_CHARS = 40_000  # read no further into a runaway reply (a 5 MB answer is cut here)

_FIELDS: dict[str, ReplyField] = {
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
# A field's opening tag, in any case, with attributes (`<dialogue speaker="Alice">`) or closed
# on itself (`<cue/>`).
_OPEN = re.compile(rf"<\s*({_NAMES})(?![\w-])((?:\s[^<>]*?)?)\s*(/)?\s*>", re.I)
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
_SPEAKER_ATTR = re.compile(
    r"\b(?:speaker|name|character|actor|role|by|from|who)\s*=\s*[\"'“‘]?([^\"'”’<>]+)", re.I
)
_FENCE = re.compile(r"^[ \t]*```[\w-]*[ \t]*$", re.M)  # not \s: linear on 40k newlines
_BLANK = re.compile(r"\n[ \t]*\n")
_AT = re.compile(r"^[@＠][ \t]*")
# "*leans back* Well, …" acts, then speaks; "*Never* say that" (the sentence runs on) is emphasis.
_STAR_GESTURE = re.compile(r"\*([^*\n]+)\*[ \t]*(?=[^\sa-z])")
_CUE_SEPARATORS = " \t,，、.。:：;；()（）[]【】-–—"
# "(sighs) Fine." acts, then speaks, as a script line does; "\"Lovely tea.\" *smiles*" speaks,
# then acts; "(silence)" alone is all action (DIRECTION: what reads as a stage direction).
_PAREN_GESTURE = re.compile(rf"[（(]({DIRECTION})[)）][ \t]*(?=\S)")
_TRAILING_GESTURE = re.compile(rf"[ \t]+\*({DIRECTION})\*[ \t]*$")
_ONLY_GESTURE = re.compile(rf"\*({DIRECTION})\*|[（(]({DIRECTION})[)）]")
# What models write in a field they leave empty, exactly (no punctuation: "None." and "沒有。"
# are answers a character gives, and stay).
_NOTHING = re.compile(
    r"None|N/A|n/a|null|nil|\((?:none|no dialogue|silent)\)|no dialogue"
    r"|無|无|（無）|（无）|無台詞|无台词|（無台詞）|（无台词）"
)
_ONLY_MARKS = re.compile(r"[\"“”「」『』＂«»'‘’\s]*")
# A model stepping out of the play to refuse, in a field: asked again, never published. It
# speaks of itself as a model ("As an AI…", 作為AI), or says sorry for not going on with the
# role-play — a character's own "I'm sorry, I can't go on" stays. Searched part by part (one
# pass each), never with lookaheads retried at every position.
_AS_A_MODEL = re.compile(
    r"\bas an ai(?: language model| assistant| model)?\b(?![ \t]+[a-z])|\blanguage model\b"
    r"|\bai assistant\b|作為\s*(?:一個)?\s*AI|作为\s*(?:一个)?\s*AI|我是\s*(?:一個|一个)?\s*AI"
    r"|語言模型|语言模型|AI\s*助[手理]",
    re.I,
)
_SORRY = re.compile(r"\bsorry\b|\bapologi[sz]e|抱歉|對不起|对不起|很遺憾|很遗憾", re.I)
_ROLEPLAY = re.compile(r"\brole-?\s?play|角色扮演|this (?:character|role|scenario)\b", re.I)
_REFUSE = re.compile(
    r"\bcan(?:no|')t\b|\bunable\b|\bwon't\b|\bnot (?:able|comfortable)\b|無法|无法|不能|不便",
    re.I,
)


def _refuses(text: str) -> bool:
    """Whether a field's text is the model refusing, out of the scene."""
    if not _REFUSE.search(text):
        return False
    return bool(_AS_A_MODEL.search(text) or (_SORRY.search(text) and _ROLEPLAY.search(text)))


@dataclass(frozen=True)
class Reply:
    thought: str = ""
    action: str = ""
    dialogue: str = ""
    cue: str = ""
    has_cue: bool = False
    problems: tuple[str, ...] = ()
    cut: tuple[str, ...] = ()  # fields cut at their cap ("reply" when the whole reply was)
    wrote_for_others: bool = False  # a line for another cast member was cut off, unpublished

    @property
    def ok(self) -> bool:
        return not self.problems


def _clean(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().split("\n")]
    return "\n".join(lines).strip()


def _read_tags(text: str, lines: CastLines) -> tuple[list[Segment], list[tuple[int, int]]]:
    """The tagged fields in order, and the stretches of text outside every field."""
    segments: list[Segment] = []
    gaps: list[tuple[int, int]] = []
    # Each field's next closing tag, found once and reused while it lies ahead (no closing tag
    # at all is remembered too): thousands of openings cost one scan, not one each.
    closings: dict[str, re.Match[str] | None] = {}
    pos = 0
    while (opening := _OPEN.search(text, pos)) is not None:
        gaps.append((pos, opening.start()))
        field = _FIELDS[opening.group(1).lower()]
        attr = _SPEAKER_ATTR.search(opening.group(2) or "")
        others = attr is not None and lines.whose(attr.group(1).strip()) == "other"
        if opening.group(3):  # a self-closing tag such as <cue/> is an empty field
            segments.append(Segment(field, "", opening.start(), others))
            pos = opening.end()
            continue
        start = opening.end()
        ahead = closings.get(field)
        if field not in closings or (ahead is not None and ahead.start() < start):
            closings[field] = _CLOSE[field].search(text, start)
        closing = closings[field]
        reopened = _OPEN.search(text, start)
        same_reopened = None
        if closing is not None:
            # A closing tag after a new opening of the same field belongs to that one.
            for later in _OPEN.finditer(text, start, closing.start()):
                if _FIELDS[later.group(1).lower()] == field:
                    same_reopened = later
                    break
        closed = closing is not None and same_reopened is None
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
                    gaps.append((end, pos))
        value = text[start:end]
        if closing is None:
            value = (_ANY_CLOSE if field == "thought" else _PUBLIC_CLOSE).sub("", value)
        segments.append(Segment(field, _clean(value), opening.start(), others, closed))
    gaps.append((pos, len(text)))
    return segments, [(a, b) for a, b in gaps if b > a]


def _read(text: str, lines: CastLines) -> tuple[list[Segment], int | None]:
    """Every field the reply gives, in order, and where a line for someone else starts.

    Tags are read first; the text outside them may hold a JSON object (when no public field
    was tagged) or labelled lines. Private tags and comments there go to the thought.
    """
    segments, gaps = _read_tags(text, lines)
    tagged_public = any(s.field in ("action", "dialogue") for s in segments)
    stop: int | None = None
    for a, b in gaps:
        public, private = remove_markers(text[a:b])
        if private:
            segments.append(Segment("thought", "\n".join(private), a))
        if not tagged_public and (found := read_json(public, a, lines.whose)) is not None:
            segments.extend(found)
            tagged_public = True
            continue
        labelled, others = read_labels(public, lines, a)
        segments.extend(labelled)
        if others is not None:
            stop = others if stop is None else min(stop, others)
    segments.sort(key=lambda s: s.pos)
    return segments, stop


def _own_line(text: str, lines: CastLines) -> str:
    """A public field without the speaker's own name before its lines ("Alice: Hello.")."""
    return "\n".join(line[lines.own_prefix(line) :] for line in text.split("\n"))


def _assemble(
    segments: list[Segment], stop: int | None, lines: CastLines
) -> tuple[dict[str, list[str]], list[str], bool]:
    """The public values per field, the private text moved out of them, and whether the reply
    wrote for another cast member (that field, or all that follows, is cut off there)."""
    found: dict[str, list[str]] = {}
    moved: list[str] = []
    cued = wrote = False
    # lines_after[i]: an action or a line comes after segment i (one pass, not one per segment)
    lines_after = [False] * len(segments)
    for i in range(len(segments) - 2, -1, -1):
        lines_after[i] = lines_after[i + 1] or segments[i + 1].field in ("action", "dialogue")
    for i, seg in enumerate(segments):
        if seg.others or (stop is not None and seg.pos >= stop):
            return found, moved, True
        lines_later = lines_after[i]
        spoke = "action" in found or "dialogue" in found
        if (
            cued
            and spoke
            and (
                (seg.field in ("action", "dialogue") and seg.field in found)
                or (seg.field == "thought" and lines_later)
            )
        ):
            return found, moved, True  # a second reply block after the first one closed
        if seg.field == "thought":
            found.setdefault("thought", []).append(seg.text)
            continue
        text = seg.text
        if seg.field != "cue":  # "Alice (thinking): …" inside a field is her thought
            said = []
            for line in text.split("\n"):
                if at := lines.private_prefix(line):
                    moved.append(line[at:].strip())
                else:
                    said.append(line)
            text = "\n".join(said)
        public, private = split_private(text)
        moved.extend(private)
        cut = lines.others_line(public) if seg.field != "cue" else None
        if cut is not None:
            public = public[:cut]
        if seg.field != "cue":
            public = _own_line(public, lines)
        found.setdefault(seg.field, []).append(_clean(public))
        cued = cued or seg.field == "cue"
        wrote = wrote or cut is not None
        if cut is not None and not seg.closed:
            # The other's line ran on into whatever came next: nothing after it is this
            # speaker's. A field closed by its own tag ends that line; the next tag is theirs.
            return found, moved, True
    return found, moved, wrote or stop is not None


def _unopened_thought(text: str) -> tuple[str, str]:
    """(private head, rest): a closing </think> or </thought> that no opening precedes ends a
    thought whose opening tag was dropped (DeepSeek-R1 behind some hosts): all before it is
    private, drafted tags included ("Draft: <dialogue>…</dialogue> no.\n</think>")."""
    closing = _CLOSE["thought"].search(text)
    if closing is None:
        return "", text
    last = None
    for last in _OPEN.finditer(text, 0, closing.start()):
        if _FIELDS[last.group(1).lower()] == "thought":
            return "", text
    if _inside_open_field(text, last, closing.start()):
        return "", text  # split_private reads the stray closing there
    return _private_before(text, closing.start(), closing.end())


def _inside_open_field(text: str, opening: re.Match[str] | None, at: int) -> bool:
    """Whether `at` lies inside the field `opening` (the last opening tag before it) opened
    and did not close: a line of that field, not a mark between fields."""
    if opening is None or opening.group(3):
        return False
    return _CLOSE[_FIELDS[opening.group(1).lower()]].search(text, opening.end(), at) is None


def _private_before(text: str, start: int, end: int) -> tuple[str, str]:
    """(private head, rest): all before `start`, its tags dropped, is private; reading goes on
    at `end`."""
    return _clean(_ANY_CLOSE.sub("", _OPEN.sub("", text[:start]))), text[end:]


# gpt-oss's own channels, when a server passes them through unsplit: only `final` is the answer.
_CHANNEL = re.compile(
    r"<\|channel\|>[ \t]*(\w+)[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>(.*?)"
    r"(?=<\|(?:end|return|call|start|channel)\|>|$)",
    re.S,
)
# gpt-oss with its special tokens stripped: "analysis…assistantfinal…" (spaces between them
# from some tokenizers); "analysisWe…" glued to its text is reasoning whatever follows.
_STRIPPED = re.compile(
    r"\s*analysis(?:(?=[A-Z\u4e00-\u9fff])|[ \t]*\n|[ \t]+(?=.*assistant\s*final))", re.S
)
_GLUED = re.compile(r"\s*analysis(?=[A-Z\u4e00-\u9fff])")
_STRIPPED_FINAL = re.compile(r"assistant\s*(?:final|commentary)", re.I)
_FIELD_NEXT = re.compile(r"\s*(?:```[\w-]*\s*)?[<{]")
_SPECIAL = re.compile(r"<\|[a-z_]+\|>(?:assistant|user|system)?")
# A reply that drafts first and then says which answer counts ("Final answer:", "最終回覆："),
# the answer's own fields right after it (a tag, a JSON object, a label): any other "Final:"
# is a line of the scene ("Final answer: Paris.").
_FINAL = re.compile(
    r"^[ \t>#*_-]*(?:final(?:[ \t]+(?:answer|reply|response|version|turn|output))?"
    r"|最[終终](?:回[覆复答]|答案|版本|輸出|输出)?)[ \t]*[*_]*[ \t]*[:：][ \t]*[*_]*[ \t]*\n?"
    r"(?=[ \t]*(?:```[\w-]*\s*)?(?:<|\{|[*_#]*[ \t]*[\w\u4e00-\u9fff ]{1,20}[*_]*[ \t]*[:：]))",
    re.I | re.M,
)


def _final_part(text: str) -> tuple[str, str]:
    """(private head, rest): what a model reasoned or drafted before its final answer is
    private, however it marked the answer — gpt-oss's `final` channel (a reply that opens with
    its special tokens), or a "Final:" line outside every field, its answer's fields after it
    (the drafts before it must not be read as the reply)."""
    if _STRIPPED.match(text):  # the same channels, their special tokens stripped by a server
        marks = list(_STRIPPED_FINAL.finditer(text))
        if not marks:  # reasoning cut off before any answer: all of it private
            return (text.strip(), "") if _GLUED.match(text) else ("", text)
        # the answer is after the last "assistantfinal" that a field follows (else the last)
        fielded = [f for f in marks if _FIELD_NEXT.match(text, f.end())]
        final = (fielded or marks)[-1]
        head = _STRIPPED.sub("", text[: final.start()], count=1)
        return _STRIPPED_FINAL.sub("\n", head).strip(), text[final.end() :]
    if text.lstrip().startswith("<|") and (channels := _CHANNEL.findall(text)):
        finals = [body for name, body in channels if name.lower() == "final"]
        head = "\n".join(body.strip() for name, body in channels if name.lower() != "final")
        head += "".join("\n" + body.strip() for body in finals[:-1])  # a final before the last
        return _SPECIAL.sub("", head).strip(), _SPECIAL.sub("", finals[-1] if finals else "")
    last = deque(_FINAL.finditer(text), maxlen=1)  # one scan, however many a reply holds
    mark = last[0] if last else None
    if mark is None:
        return "", text
    opened = deque(_OPEN.finditer(text, 0, mark.start()), maxlen=1)
    if _inside_open_field(text, opened[0] if opened else None, mark.start()):
        return "", text
    return _private_before(text, mark.start(), mark.end())


def _bare_cue(cue: str, cast: Mapping[str, Sequence[str]] | None) -> tuple[str, str]:
    """The cue as the name it gives, and the rest of what the cue field said (private).

    A repeated label ("Next: Carol", "下一位：王警官") and an at-sign ("@Bob") are dropped; a name
    followed by more ("Bob (the detective)", "Bob, because he suspects the will") is published
    as the name alone and the rest is the model's note, so it goes to the thought: a reason for
    a cue often gives a secret away. A cue that names one member only inside other words
    publishes that member's name.
    """
    label = label_of(cue)
    if label is not None and label[0] == "cue" and label[1]:
        cue = label[1]
    cue = _AT.sub("", cue).strip()
    target = match_cue(cue, cast) if cast else None
    if not cast or target is None or (target == ANY and is_everyone(cue)):
        return cue, ""
    names = sorted({n for name, aliases in cast.items() for n in (name, *aliases)}, key=len)
    if any(name_key(cue) == name_key(n) for n in names):
        return cue, ""
    for name in reversed(names):  # the longest name first
        after = cue[len(name) : len(name) + 1]
        if name and cue[: len(name)].casefold() == name.casefold() and not after.isalnum():
            return cue[: len(name)], cue[len(name) :].strip(_CUE_SEPARATORS)
    return target, cue


def says_nothing(line: str) -> bool:
    """Whether a line's text is what models write for no line at all: a placeholder ("None",
    "N/A", "無") or only quote marks (`""`, 「」)."""
    return bool(_NOTHING.fullmatch(line.strip()) or _ONLY_MARKS.fullmatch(line))


def _gestures(values: dict[str, str]) -> None:
    """A direction written in the line's field, when no action was given, becomes the action,
    as a script line's does (engine.reply.styles): before the line (`*leans back* Well…`,
    `(sighs) "Fine."`), after a quoted one (`"Lovely tea." *smiles*`), or alone (`(silence)`).
    Private text was already moved out of the field, so no gesture holds any."""
    said = values["dialogue"].strip()
    if (alone := _ONLY_GESTURE.fullmatch(said)) is not None:
        values["action"] = values["action"] or (alone.group(1) or alone.group(2)).strip()
        values["dialogue"] = ""
        return
    if values["action"]:
        return
    before = _STAR_GESTURE.match(said) or _PAREN_GESTURE.match(said)
    if before is not None:
        values["action"] = (before.group(1)).strip()
        values["dialogue"] = said[before.end() :]
    elif (after := _TRAILING_GESTURE.search(said)) is not None and unquote(
        line := said[: after.start()]
    ) != line:
        values["action"] = after.group(1).strip()
        values["dialogue"] = line


def _problems(found: bool, values: Mapping[str, str]) -> list[str]:
    """What the model is told to fix in its reply (empty when it is usable)."""
    if not found:
        return ["the reply used none of the tags <thought>, <action>, <dialogue>, <cue>"]
    problems: list[str] = []
    if not values["thought"]:
        problems.append("<thought> is missing or empty (it is required)")
    if not values["action"] and not values["dialogue"]:
        problems.append(
            "both <action> and <dialogue> are missing or empty (give at least one;"
            " silence is an action)"
        )
    return problems


def parse_reply(
    text: str, *, speaker: str = "", cast: Mapping[str, Sequence[str]] | None = None
) -> Reply:
    """Parse one model reply into its four fields and a list of problems (empty when fine).

    `speaker` is who the reply is for and `cast` maps every cast member to their aliases: with
    them a line prefixed with the speaker's name is read as theirs, and one prefixed with
    another's is cut off there (`wrote_for_others`).
    """
    text = clean_text(text or "")
    cut: list[str] = []
    if len(text) > MAX_REPLY_CHARS:
        text, cut = text[:MAX_REPLY_CHARS], ["reply"]
    text = _FENCE.sub("", text)
    drafts, text = _final_part(text)
    head, text = _unopened_thought(text)
    head = "\n".join(h for h in (drafts, head) if h)
    lines = cast_lines(speaker, cast)
    segments, stop = _read(text, lines)
    found, moved, others = _assemble(segments, stop, lines)
    values: dict[str, str] = {f: "\n".join(v for v in found.get(f, []) if v) for f in _CLOSE}
    if head:
        values["thought"] = "\n".join([head, values["thought"]]).strip()
    if moved:
        values["thought"] = "\n".join([values["thought"], *moved]).strip()
    values["cue"], note = _bare_cue(values["cue"].split("\n")[0].strip(), cast)
    if note:
        values["thought"] = "\n".join([values["thought"], note]).strip()
    if cast and values["cue"] and match_cue(values["cue"], cast) is None:
        # A cue that names nobody ("Next: make him confess") is the model's note, not a name:
        # private, like any other text a label put in the wrong place.
        values["thought"] = "\n".join([values["thought"], values["cue"]]).strip()
        values["cue"] = ""
    _gestures(values)
    if says_nothing(values["dialogue"]):  # before unquoting: `"None"` is a word said
        values["dialogue"] = ""
    values["dialogue"] = unquote(values["dialogue"])
    for field, cap in CAPS.items():
        values[field], was_cut = clip(values[field], cap, "" if field == "cue" else "…")
        if was_cut:
            cut.append(field)
    problems = _problems(bool(found), values)
    if _refuses(values["dialogue"]) or _refuses(values["action"]):
        problems.append("the reply stepped out of the scene to refuse: answer as the character")
    return Reply(
        thought=values["thought"],
        action=values["action"],
        dialogue=values["dialogue"],
        cue=values["cue"],
        has_cue="cue" in found,
        problems=tuple(problems),
        cut=tuple(cut),
        wrote_for_others=others,
    )
