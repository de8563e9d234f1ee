"""A Fountain screenplay (https://fountain.io/syntax) read into elements that keep their lines.

Invariant: paragraphs are classified as screenplain classifies them (the same order of rules:
forced action, page break, synopsis, sections, one-line heading, centred, dialogue of two lines
or more under an all-capital or `@` cue, transition, action), so the two readers agree on the
cue/dialogue sequence (tests/engine/test_script_fountain.py holds them to it, and fountain-py
too). `[[notes]]` and boneyard `/* */` never reach an element's text: notes are kept apart with
their line, cut passages are counted. Line numbers count every line break of the file as it is
(`\\r\\n`, `\\n` or `\\r`), so a splice can land after an element's last line exactly. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.errors import BadScript
from engine.script.elements import MAX_BYTES, Element, Note, Script, plain

LINE_BREAK = re.compile(r"\r\n|\n|\r")
_BONEYARD = re.compile(r"/\*.*?\*/", re.DOTALL)
_NOTE = re.compile(r"\[\[.*?\]\]", re.DOTALL)
_HEADING = re.compile(r"^(INT|EXT|EST|INT\.?/EXT\.?|I/E)[ .]")
_FORCED_HEADING = re.compile(r"^\.(?=[^.])\s*(\S.*?)\s*$")
_SCENE_NUMBER = re.compile(r"(.*?)\s*#([\w\-.]+)#\s*$")
_SECTION = re.compile(r"^(#{1,6})\s*([^#].*)$")
_CENTERED = re.compile(r"\s*>\s*(.*?)\s*<\s*$")
_TRANSITION = re.compile(r"(>?)\s*(.+?)(TO:)?$")
_PAGE_BREAK = re.compile(r"^={3,}$")
_TITLE_KEY = re.compile(r"([^:]+):\s*(.*)")
_TITLE_VALUE = re.compile(r"(?:\s{3,}|\t)(.+)")
_EXTENSION = re.compile(r"\s*[(（]([^()（）]*)[)）]\s*$")
_DUAL = re.compile(r"^(.+?)\s*\^$")


@dataclass
class Para:
    lines: list[tuple[int, str]]  # (line index in the file, text with notes removed)

    @property
    def texts(self) -> list[str]:
        return [text for _, text in self.lines]


def split_lines(text: str) -> list[str]:
    return LINE_BREAK.split(text)


def decode(data: bytes) -> str:
    """The file's text, refused if it is binary or too big for a screenplay."""
    if len(data) > MAX_BYTES:
        raise BadScript("too_big", most=MAX_BYTES // (1024 * 1024))
    if b"\x00" in data[:8192]:
        raise BadScript("binary")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadScript("not_utf8") from None


def _blank_out(text: str, pattern: re.Pattern[str]) -> tuple[str, list[tuple[int, str]]]:
    """`text` with every match of `pattern` replaced by its own line breaks only (so every
    line keeps its number), and each match as (offset, text)."""
    found: list[tuple[int, str]] = []

    def keep_breaks(match: re.Match[str]) -> str:
        found.append((match.start(), match.group(0)))
        return "".join(LINE_BREAK.findall(match.group(0)))

    return pattern.sub(keep_breaks, text), found


def _title_page(lines: list[str]) -> tuple[dict[str, str], int]:
    """(title page, the index of the first body line); ({}, 0) when the file has none."""
    head: list[str] = []
    for line in lines:
        if line == "":
            break
        head.append(line)
    result: dict[str, list[str]] = {}
    key = ""
    for line in head:
        if key and (value := _TITLE_VALUE.match(line)):
            result[key].append(value.group(1))
            continue
        match = _TITLE_KEY.match(line)
        if not match:
            return {}, 0
        key = match.group(1).strip().capitalize()
        result.setdefault(key, [])
        if match.group(2):
            result[key].append(match.group(2))
    return {k: "\n".join(v) for k, v in result.items()}, len(head) + 1


def _paragraphs(lines: list[str], start: int) -> list[Para]:
    """Runs of lines that are not blank ('' or ' ', as screenplain has it), notes removed; a
    line that held only a note is left out of its paragraph, a paragraph of notes dropped."""
    out: list[Para] = []
    current: list[tuple[int, str]] = []
    for index in range(start, len(lines) + 1):
        line = lines[index].expandtabs(4) if index < len(lines) else ""
        if line in ("", " "):
            kept = [(i, t) for i, t in current if t != "\x00"]
            if kept and not all(t in ("", " ") for _, t in kept):
                out.append(Para(kept))
            current = []
        else:
            current.append((index, line))
    return out


def parse_fountain(text: str) -> Script:
    """The whole file as a Script (elements, title page, notes, cut passages)."""
    text = text.removeprefix("\ufeff")
    unboned, cuts = _blank_out(text, _BONEYARD)
    unnoted, notes = _blank_out(unboned, _NOTE)
    original = split_lines(unboned)
    lines = split_lines(unnoted)
    # a line that held only a note is no line at all (it neither ends nor splits a paragraph)
    lines = [
        "\x00" if line.strip() == "" and original[i].strip() != "" else line
        for i, line in enumerate(lines)
    ]
    title, body = _title_page(lines)
    elements: list[Element] = []
    for para in _paragraphs(lines, body):
        classify(para, elements)
    return Script(
        format="fountain",
        elements=tuple(elements),
        title=title,
        notes=tuple(_notes(unboned, notes)),
        cut=len(cuts),
        cut_lines=tuple(len(LINE_BREAK.findall(text, 0, offset)) + 1 for offset, _ in cuts),
    )


def _notes(text: str, notes: list[tuple[int, str]]) -> list[Note]:
    out = []
    for offset, raw in notes:
        line = len(LINE_BREAK.findall(text, 0, offset)) + 1
        body = " ".join(raw[2:-2].split())
        if body:
            out.append(Note(line, body))
    return out


def classify(para: Para, out: list[Element]) -> None:
    for rule in (_forced_action, _page_break, _sections, _heading, _centered, _speech):
        if rule(para, out):
            return
    if not _transition(para, out):
        _action(para, out, para.texts)


def _span(para: Para) -> tuple[int, int]:
    return para.lines[0][0], para.lines[-1][0]


def _forced_action(para: Para, out: list[Element]) -> bool:
    if not para.texts[0].startswith("!"):
        return False
    _action(para, out, para.texts)
    return True


def _action(para: Para, out: list[Element], texts: list[str]) -> None:
    body = "\n".join(plain(t[1:] if t.startswith("!") else t).rstrip() for t in texts)
    if all(t.startswith("~") for t in texts):  # a song, sung in the open: still a happening
        body = "\n".join(plain(t[1:]).strip() for t in texts)
        out.append(Element("lyric", body, *_span(para)))
        return
    out.append(Element("action", body, *_span(para)))


def _page_break(para: Para, out: list[Element]) -> bool:
    if len(para.lines) == 1 and _PAGE_BREAK.match(para.texts[0]):
        out.append(Element("page_break", "", *_span(para)))
        return True
    return False


def _sections(para: Para, out: list[Element]) -> bool:
    """Sections, and synopses (`= …`) after a heading or a section; anything else in the
    paragraph makes it something else."""
    found: list[Element] = []
    for index, line in para.lines:
        match = _SECTION.match(line)
        after = (found or out)[-1:] if (found or out) else []
        if match:
            found.append(Element("section", plain(match.group(2)), index, index))
        elif line.startswith("=") and after and after[0].kind in ("heading", "section"):
            found.append(Element("synopsis", plain(line[1:].lstrip()), index, index))
        else:
            return False
    out.extend(found)
    return True


def _heading(para: Para, out: list[Element]) -> bool:
    if len(para.lines) != 1:
        return False
    line = para.texts[0]
    forced = _FORCED_HEADING.match(line)
    if forced:
        text = forced.group(1)
    elif _HEADING.match(line.strip().upper()):
        text = line.strip()
    else:
        return False
    number = ""
    if match := _SCENE_NUMBER.match(text):
        text, number = match.group(1), match.group(2)
    out.append(Element("heading", plain(text), *_span(para), number=number))
    return True


def _centered(para: Para, out: list[Element]) -> bool:
    matches = [_CENTERED.match(line) for line in para.texts]
    if not all(matches):
        return False
    body = "\n".join(plain(m.group(1)) for m in matches if m)
    out.append(Element("centered", body, *_span(para)))
    return True


def _speech(para: Para, out: list[Element]) -> bool:
    if len(para.lines) < 2 or para.texts[0].endswith("  "):
        return False
    cue = para.texts[0]
    if cue.startswith("@") and len(cue) >= 2:
        cue = cue[1:]
    elif not cue.split("(", 1)[0].isupper():
        return False
    dual = False
    if out and out[-1].kind == "speech" and (match := _DUAL.match(cue)):
        cue, dual = match.group(1), True
    name, extensions = cue_parts(cue)
    parts = dialogue_parts(para.texts[1:])
    out.append(
        Element(
            "speech",
            "\n".join(text for _, text in parts),
            *_span(para),
            name=name,
            extensions=extensions,
            parts=parts,
            dual=dual,
        )
    )
    return True


def cue_parts(cue: str) -> tuple[str, tuple[str, ...]]:
    """A cue's name as spelled, and its extensions in order: `MARA (V.O.) (CONT'D)` →
    ("MARA", ("V.O.", "CONT'D"))."""
    cue = cue.strip()
    extensions: list[str] = []
    while match := _EXTENSION.search(cue):
        if not cue[: match.start()].strip():
            break
        extensions.insert(0, match.group(1).strip())
        cue = cue[: match.start()]
    return plain(cue.strip()), tuple(extensions)


def dialogue_parts(lines: list[str]) -> tuple[tuple[bool, str], ...]:
    """screenplain's reading: a line opening with `(` starts a parenthetical that runs to the
    line ending with `)`; every other line is speech (a lyric keeps its `~`). Chinese scripts
    write the full-width brackets （…）, which count the same."""
    parts: list[tuple[bool, str]] = []
    inside = False
    for raw in lines:
        line = raw.strip()
        if line.startswith(("(", "（")):
            inside = True
        parts.append((inside, plain(line)))
        if line.endswith((")", "）")):
            inside = False
    return tuple(parts)


def _transition(para: Para, out: list[Element]) -> bool:
    if len(para.lines) != 1:
        return False
    match = _TRANSITION.match(para.texts[0])
    if not match:
        return False
    arrow, text, to = match.groups()
    if arrow or (text.isupper() and to):
        body = text.upper() + (to or "") if arrow else text + to
        out.append(Element("transition", plain(body), *_span(para)))
        return True
    return False
