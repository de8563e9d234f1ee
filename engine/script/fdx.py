"""Final Draft XML (.fdx) read by a small hardened reader of our own, and spliced back.

Invariant: the reader is expat with no DTD, no entity of any kind and a 10 MB cap: a file
that declares one is refused, never expanded. Every text run of a paragraph counts (Final Draft
splits a paragraph's text at every style change); `<ScriptNote>` text is the writer's note,
never an element's; a `<DualDialogue>` — bare in `<Content>` or wrapped in a `<Paragraph>` —
gives two speeches, the second marked dual; `<SmartType><Characters>` names who may never
speak; the active revision set is kept. Each element's place is its paragraphs' ordinals, and
`spans` holds where each top-level paragraph (or dual block) ends in the bytes, so a splice
inserts right after it and keeps every other byte; spliced paragraphs carry a new revision,
registered in `<Revisions>`. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat
from xml.sax.saxutils import escape, quoteattr

from engine.errors import BadScript
from engine.script.elements import MAX_BYTES, Element, Note, Script
from engine.script.fountain import cue_parts

_SPEECH_PARTS = ("Parenthetical", "Dialogue")
_KINDS: dict[str, Any] = {
    "Scene Heading": "heading",
    "Action": "action",
    "General": "action",
    "Shot": "action",
    "Transition": "transition",
    "Lyrics": "lyric",
}


@dataclass
class _Paragraph:
    type: str
    number: str
    ordinal: int
    outer_end: int = 0  # the byte after its top-level container: a splice lands there
    outer_start: int = 0  # the byte its top-level container starts at: a replace starts there
    runs: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    dual: int = 0  # which dual block it is in (0: none)

    @property
    def text(self) -> str:
        return "".join(self.runs).strip()


@dataclass
class _Reader:
    """expat's callbacks, building paragraphs, notes and the kept metadata."""

    data: bytes
    parser: Any = None
    stack: list[str] = field(default_factory=list)
    paragraphs: list[_Paragraph] = field(default_factory=list)
    open: list[_Paragraph | None] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    note: list[str] | None = None
    characters: list[str] = field(default_factory=list)
    revisions: dict[str, str] = field(default_factory=dict)
    active: str = ""
    title: list[str] = field(default_factory=list)
    duals: int = 0
    dual_open: int = 0
    top: list[_Paragraph] = field(default_factory=list)  # paragraphs of the open container
    top_start: int = 0

    def start(self, name: str, attrs: dict[str, str]) -> None:
        parent = self.stack[-1] if self.stack else ""
        self.stack.append(name)
        if self.stack[1:] == ["Content", name] and name in ("Paragraph", "DualDialogue"):
            self.top_start = self.parser.CurrentByteIndex
        if name == "ScriptNote":
            self.note = []
        elif name == "DualDialogue":
            self.duals += 1
            self.dual_open = self.duals
        elif name == "Revisions":
            self.active = attrs.get("ActiveSet", "")
        elif name == "Revision":
            self.revisions[attrs.get("ID", "")] = attrs.get("Name", "")
        elif name == "Paragraph":
            self._paragraph(parent, attrs)

    def _paragraph(self, parent: str, attrs: dict[str, str]) -> None:
        if "TitlePage" in self.stack:
            self.title.append("\n")  # one line of the title page per paragraph
        in_content = parent in ("Content", "DualDialogue") and "TitlePage" not in self.stack
        in_content = in_content or (parent == "Paragraph" and "DualDialogue" in self.stack)
        if not in_content or self.note is not None or "SceneProperties" in self.stack:
            self.open.append(None)
            return
        para = _Paragraph(attrs.get("Type", ""), attrs.get("Number", ""), len(self.paragraphs))
        para.dual = self.dual_open if "DualDialogue" in self.stack else 0
        self.paragraphs.append(para)
        self.open.append(para)
        self.top.append(para)

    def end(self, name: str) -> None:
        self.stack.pop()
        if name == "ScriptNote" and self.note is not None:
            text = " ".join("".join(self.note).split())
            where = next((p.ordinal + 1 for p in reversed(self.open) if p), 0)
            if text:
                self.notes.append(Note(where, text))
            self.note = None
        elif name == "DualDialogue":
            self.dual_open = 0
        elif name == "Paragraph":
            self.open.pop()
        if (
            len(self.stack) == 2
            and self.stack[-1] == "Content"
            and name in ("Paragraph", "DualDialogue")
        ):
            end = self.data.index(b">", self.parser.CurrentByteIndex) + 1
            for para in self.top:
                para.outer_end, para.outer_start = end, self.top_start
            self.top = []

    def text(self, data: str) -> None:
        if self.note is not None:
            self.note.append(data)
        elif self.stack[-1:] == ["Character"] and "SmartType" in self.stack:
            self.characters.append(data)
        elif self.stack[-1:] == ["Text"]:
            self._run(data)

    def _run(self, data: str) -> None:
        para = next((p for p in reversed(self.open) if p), None)
        if "TitlePage" in self.stack:
            self.title.append(data)
        elif "SceneProperties" in self.stack and self.paragraphs:
            self.paragraphs[-1].summary.append(data)
        elif para is not None:
            para.runs.append(data)


def _refuse(*_: object) -> int:
    raise BadScript("hostile_xml")


def _read(data: bytes) -> _Reader:
    if len(data) > MAX_BYTES:
        raise BadScript("too_big", most=MAX_BYTES // (1024 * 1024))
    parser = expat.ParserCreate()
    reader = _Reader(data, parser)
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    parser.buffer_text = True
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise BadScript("bad_xml", why=expat.errors.messages.get(exc.code, str(exc))) from None
    return reader


def parse_fdx(data: bytes) -> Script:
    """The whole file as a Script: elements by paragraph ordinal, notes, SmartType
    characters, the title page's first line as its title, the active revision set."""
    if b"<FinalDraft" not in data[:4096]:
        raise BadScript("not_fdx")
    reader = _read(data)
    lines = [" ".join(line.split()) for line in "".join(reader.title).split("\n")]
    title = next((line for line in lines if line), "")
    revision = reader.revisions.get(reader.active, reader.active)
    return Script(
        format="fdx",
        elements=tuple(_elements(reader.paragraphs)),
        title={"Title": title} if title else {},
        notes=tuple(reader.notes),
        characters=tuple(dict.fromkeys(c.strip() for c in reader.characters if c.strip())),
        revision=revision,
        spans=tuple(p.outer_end for p in reader.paragraphs),
        starts=tuple(p.outer_start for p in reader.paragraphs),
    )


def _elements(paragraphs: Sequence[_Paragraph]) -> list[Element]:
    out: list[Element] = []
    speech: list[_Paragraph] = []
    seen_duals: set[int] = set()

    def close() -> None:
        if speech:
            first = speech[0]
            name, extensions = cue_parts(first.text)
            parts = tuple((p.type == "Parenthetical", p.text) for p in speech[1:])
            dual = bool(first.dual) and first.dual in seen_duals
            seen_duals.add(first.dual)
            text = "\n".join(t for _, t in parts)
            out.append(Element("speech", text, first.ordinal, speech[-1].ordinal, name=name,
                               extensions=extensions, parts=parts, dual=dual))  # fmt: skip
            speech.clear()

    for para in paragraphs:
        if para.type in _SPEECH_PARTS and speech:
            speech.append(para)
            continue
        close()
        if para.type == "Character":
            speech.append(para)
        elif para.text or para.summary:
            kind = _KINDS.get(para.type, "action")
            out.append(Element(kind, para.text, para.ordinal, para.ordinal, number=para.number))
            if kind == "heading" and "".join(para.summary).strip():
                summary = " ".join("".join(para.summary).split())
                out.append(Element("synopsis", summary, para.ordinal, para.ordinal))
    close()
    return out


# ---------------------------------------------------------------------------- splice
_REVISION_ID = re.compile(rb'<Revision\b[^>]*\bID="(\d+)"')
_REVISIONS_END = re.compile(rb"</Revisions\s*>")
_REVISIONS_EMPTY = re.compile(rb"<Revisions\b([^>]*)/>")
_DOCUMENT_END = re.compile(rb"</FinalDraft\s*>")
COLOUR = "#00000000FFFF"  # Final Draft's 48-bit blue


def _next_revision(data: bytes) -> str:
    return str(max((int(m.group(1)) for m in _REVISION_ID.finditer(data)), default=0) + 1)


def _register(data: bytes, number: str, name: str) -> bytes:
    """The file with revision set `number` registered in `<Revisions>` (made if missing)."""
    entry = (
        f'<Revision Color="{COLOUR}" FullRevision="No" ID="{number}" Mark="*" '
        f'Name={quoteattr(name)} Style=""/>'
    ).encode()
    if match := _REVISIONS_END.search(data):
        return data[: match.start()] + entry + data[match.start() :]
    if match := _REVISIONS_EMPTY.search(data):
        whole = b"<Revisions" + match.group(1) + b">" + entry + b"</Revisions>"
        return data[: match.start()] + whole + data[match.end() :]
    block = f'<Revisions ActiveSet="{number}">'.encode() + entry + b"</Revisions>\n"
    end = _DOCUMENT_END.search(data)
    at = end.start() if end else len(data)
    return data[:at] + block + data[at:]


def fdx_paragraph(kind: str, text: str, revision: str) -> str:
    return (
        f'<Paragraph Type="{kind}"><Text RevisionID="{revision}">{escape(text)}</Text></Paragraph>'
    )


def _indent(data: bytes, at: int) -> str:
    line_start = data.rfind(b"\n", 0, at) + 1
    indent = re.match(rb"[ \t]*", data[line_start:at])
    return indent.group(0).decode() if indent else ""


def replace_fdx(
    data: bytes,
    script: Script,
    places: tuple[int, int],
    paragraphs: Sequence[tuple[str, str]],
    name: str,
) -> str:
    """The file with the top-level paragraphs from ordinal `places[0]` to `places[1]` swapped
    for `paragraphs`, each on its own line with the first one's indentation, marked with a new
    revision set called `name`; every byte outside them kept."""
    start, end = script.starts[places[0]], script.spans[places[1]]
    pad, revision = _indent(data, start), _next_revision(data)
    nl = "\r\n" if b"\r\n" in data[:end] else "\n"
    body = (nl + pad).join(fdx_paragraph(k, t, revision) for k, t in paragraphs).encode()
    return _register(data[:start] + body + data[end:], revision, name).decode("utf-8")


def splice_fdx(
    data: bytes, script: Script, last: int, paragraphs: Sequence[tuple[str, str]], name: str
) -> str:
    """The file with `paragraphs` ((type, text)) after the element at ordinal `last`, each on
    its own line with the indentation of the line it follows, marked with a new revision set
    called `name`."""
    if not paragraphs:
        return data.decode("utf-8")
    end = script.spans[last]
    pad = _indent(data, end)
    revision = _next_revision(data)
    nl = "\r\n" if b"\r\n" in data[:end] else "\n"  # the file's own line ending
    body = "".join(nl + pad + fdx_paragraph(k, t, revision) for k, t in paragraphs)
    return _register(data[:end] + body.encode() + data[end:], revision, name).decode("utf-8")
