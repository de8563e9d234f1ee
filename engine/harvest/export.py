"""Exports a screenwriter opens: Fountain, Final Draft XML, seed 001's screenplay.md and
storyboard.csv. Pure functions from a take's lines to file texts (the caller writes them).

Fountain output parses back (screenplain is the judge) into exactly the take's sequence: every
action is forced (`!`), every cue that is not all-Latin is forced (`@`), stars are escaped,
and every `[[`, `]]` and `*/` and each parenthetical the actors did not mean is broken by an
invisible joiner (readers that take a note for a comment then lose nothing), blank lines
inside a line are kept with two spaces, and thoughts, take references and the room's notes on
a line (`[[note — author]]`, after it; Final Draft: a `<ScriptNote>` inside the line's
paragraph) are notes of their own, which parsers drop. Fountain has no escape for `_`: a pair of underscores reads as
underlining. Every storyboard cell that a spreadsheet could run as a formula starts with `'`.
The storyboard's shot sizes and durations come from plain rules (no model): see `shot_size`
and `duration`.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.catalog import CATALOGS, lang_of, say
from engine.folder.stage import ENTER, EVENT, EXIT, StageBlock
from engine.folder.turns import ANY
from engine.harvest.textstats import cjk_chars, count_words
from engine.reply.cue import match_cue

FORMATS = ("fountain", "fdx", "md", "csv")
FILE_NAMES = {
    "fountain": "screenplay.fountain",
    "fdx": "screenplay.fdx",
    "md": "screenplay.md",
    "csv": "storyboard.csv",
}
PARENTHETICAL_MAX = 40  # a one-line action this short, with a line, becomes a parenthetical

# Reading speed for the storyboard's suggested duration: Chinese is spoken at about 4
# characters a second, English at about 2.5 words a second (150 a minute); visible business
# adds ACTION_SECONDS; no shot is shorter than MIN_SECONDS.
CJK_PER_SECOND = 4.0
WORDS_PER_SECOND = 2.5
ACTION_SECONDS = 2.0
MIN_SECONDS = 2.0


TITLE_MAX = 120  # characters of a scene's own heading used as its title
_TITLE = re.compile(r"^#[ \t]+(\S.*)$")


def scene_title(body: str, folder: str) -> tuple[str, str]:
    """(title, opening) of a scene: its context.md body's first `# ` heading (one line, at most
    TITLE_MAX characters) and the body without that line; the folder name and the whole body
    when the body has no such heading."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if match := _TITLE.match(line.rstrip()):
            title = " ".join(match.group(1).split())[:TITLE_MAX].strip()
            return title, "\n".join(lines[:i] + lines[i + 1 :]).strip()
    return folder, body.strip()


@dataclass(frozen=True)
class ExportLine:
    """One turn as exported (take is set when exporting picks from several takes)."""

    turn: int
    actor: str
    action: str
    dialogue: str
    cue: str = ""
    thought: str = ""
    take: int | None = None
    notes: tuple[tuple[str, str], ...] = ()  # the room's notes on the line: (text, author)


@dataclass(frozen=True)
class ScriptMeta:
    scene: str
    take: str  # a take number, or "picks"
    date: str  # ISO date
    context: str
    language: str
    aliases: Mapping[str, Sequence[str]]


def stage_line(block: StageBlock, language: str) -> ExportLine | None:
    """An entrance, exit or stage event as a stage direction of the play: an action without
    an actor, numbered by the turn it follows. Who is on stage when a take begins and the
    opening context are not part of the play (screenplay.md shows the opening anyway)."""
    if block.kind == EVENT and block.text.strip():
        return ExportLine(block.after, "", block.text, "")
    if block.kind in (ENTER, EXIT):
        key = "export.enters" if block.kind == ENTER else "export.exits"
        return ExportLine(block.after, "", say(key, language, actor=block.actor), "")
    return None


def _t(meta: ScriptMeta, key: str, **values: object) -> str:
    return say(f"export.{key}", meta.language, **values)


def _take_label(meta: ScriptMeta) -> str:
    if meta.take == "picks":
        return _t(meta, "picked_lines")
    return _t(meta, "take", take=meta.take)


def _ref(meta: ScriptMeta, line: ExportLine) -> str:
    if line.take is None:
        return ""
    return _t(meta, "ref", take=line.take, turn=line.turn)


def addressee(meta: ScriptMeta, line: ExportLine) -> str:
    """The cast member the line is thrown to; empty for ANY, an empty cue, or nobody known."""
    name = match_cue(line.cue, meta.aliases)
    return "" if name is None or name == ANY else name


def is_parenthetical(line: ExportLine) -> bool:
    action = line.action.strip()
    return (
        bool(line.dialogue.strip()) and "\n" not in action and 0 < len(action) <= PARENTHETICAL_MAX
    )


# ---------------------------------------------------------------------------- Fountain
_LATIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9 .'\-]*")


def character_cue(name: str) -> str:
    """RUTH for an all-Latin name (as screenwriters write it); @林小姐 for any other name."""
    if _LATIN_NAME.fullmatch(name) and not name.endswith("  "):
        return name.upper()
    return "@" + _fountain_text(name)


# An invisible WORD JOINER (U+2060) is the one escape Fountain lacks: before a dialogue line
# that starts with "(" (else it is read as a parenthetical), and inside every "[[", "]]" and
# "*/" (a star is already "\*", so no "/*" is left). A note is a comment to some readers
# (afterwriting reads "[[" as "/*" and "]]" as "*/"): a stray close there drops the rest of the
# script, a stray open hides it. Parsers keep the joiner as text, and nobody sees it.
JOINER = "\u2060"
_LINE_BREAK = re.compile(r"\r\n|\n|\r")  # what Fountain parsers split lines on
_OPEN_NOTE = re.compile(r"\[(?=\[)")
_CLOSE_NOTE = re.compile(r"\](?=\])")
_CLOSE_COMMENT = re.compile(r"\*(?=/)")


def _split(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def _no_comments(text: str) -> str:
    # An escaped star is never emphasis, nor half of a boneyard /* */ that would swallow
    # everything up to a later */ (even in another turn).
    return _CLOSE_COMMENT.sub("*" + JOINER, text.replace("*", "\\*"))


def _fountain_text(line: str) -> str:
    """Text that no reader takes for emphasis, a note or a comment, shown as written."""
    text = _OPEN_NOTE.sub("[" + JOINER, _no_comments(line))
    return _CLOSE_NOTE.sub("]" + JOINER, text)


def _dialogue_line(line: str) -> str:
    text = _fountain_text(line.strip())
    if text.startswith("("):
        return JOINER + text
    return text or "  "  # two spaces: a blank line that stays inside the speech


def _note(text: str) -> str:
    flat = " ".join(text.split())
    flat = _no_comments(_CLOSE_NOTE.sub("] ", _OPEN_NOTE.sub("[ ", flat)))
    if flat.endswith(("]", "/")):  # it would close the note early, or open a comment
        flat += " "
    return f"[[{flat}]]" if flat else ""


def to_fountain(meta: ScriptMeta, lines: Sequence[ExportLine], thoughts: bool = False) -> str:
    """The take as Fountain. Every action paragraph is forced (`!` on each line), so no line of
    it can be read as a heading, transition, cue, section, synopsis, page break or centred
    text; speech sits under its cue, where only parentheticals, notes and emphasis could
    change it, and those are escaped. Thoughts and take references are note paragraphs of
    their own, which parsers skip."""
    title = _fountain_text(meta.scene)
    out = [
        f"Title: {title}",
        f"Credit: {_t(meta, 'credit')}",
        f"Source: {_take_label(meta)}",
        f"Draft date: {meta.date}",
        "",
        f".{title}",
        "",
    ]
    for line in lines:
        paragraphs: list[list[str]] = []
        action = line.action.strip()
        dialogue = line.dialogue.strip()
        parenthetical = is_parenthetical(line)
        if action and not parenthetical:
            paragraphs.append(["!" + _fountain_text(a.rstrip()) for a in _split(action)])
        if dialogue:
            block = [character_cue(line.actor)]
            if parenthetical:
                block.append(f"({_fountain_text(action)})")
            block += [_dialogue_line(text) for text in _split(dialogue)]
            paragraphs.append(block)
        notes = _note(_ref(meta, line)) + (_note(line.thought) if thoughts else "")
        for paragraph in paragraphs:
            out.extend(paragraph)
            out.append("")
        if notes:
            out += [notes, ""]
        for text, author in line.notes:  # the room's notes, after the line they are on
            out += [_note(f"{text} — {author}"), ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------- Final Draft
# What XML 1.0 cannot hold: the complement of its Char production (#x9 | #xA | #xD |
# [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]), written as the few small ranges it is,
# since the negated class with its large ranges costs milliseconds to compile.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    from xml.sax.saxutils import escape

    return escape(_NOT_XML.sub("", text))


def _paragraph(kind: str, text: str, notes: Sequence[str] = ()) -> str:
    inside = "".join(f"\n      {note}" for note in notes)
    return (
        f'    <Paragraph Type="{kind}">\n      <Text>{_xml(text)}</Text>{inside}\n    </Paragraph>'
    )


def _script_notes(line: ExportLine, first_id: int) -> list[str]:
    """The room's notes on a line as Final Draft's `<ScriptNote>`s (numbered from `first_id`),
    each holding its text in a paragraph of its own and its author in `Author`."""
    from xml.sax.saxutils import quoteattr

    return [
        f'<ScriptNote ID="{first_id + i}" Author={quoteattr(_NOT_XML.sub("", author))}>'
        f"<Paragraph><Text>{_xml(text)}</Text></Paragraph></ScriptNote>"
        for i, (text, author) in enumerate(line.notes)
    ]


def to_fdx(meta: ScriptMeta, lines: Sequence[ExportLine]) -> str:
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no" ?>',
        '<FinalDraft DocumentType="Script" Template="No" Version="5">',
        "  <Content>",
        _paragraph("Scene Heading", meta.scene),
    ]
    noted = 0
    for line in lines:
        ref = _ref(meta, line)
        if ref:
            out.append(f"    <!-- {_xml(ref).replace('--', '—')} -->")
        action, dialogue = line.action.strip(), line.dialogue.strip()
        parenthetical = is_parenthetical(line)
        notes = _script_notes(line, noted + 1)  # inside the line's own paragraph
        noted += len(notes)
        if action and not parenthetical:
            out.append(_paragraph("Action", action, () if dialogue else notes))
        if dialogue:
            out.append(_paragraph("Character", line.actor))
            if parenthetical:
                out.append(_paragraph("Parenthetical", f"({action})"))
            out.append(_paragraph("Dialogue", dialogue, notes))
    out += [
        "  </Content>",
        "  <TitlePage>",
        "    <Content>",
        _paragraph("Action", meta.scene).replace("<Paragraph", '<Paragraph Alignment="Center"'),
        _paragraph("Action", f"{_take_label(meta)} · {meta.date}").replace(
            "<Paragraph", '<Paragraph Alignment="Center"'
        ),
        "    </Content>",
        "  </TitlePage>",
        "</FinalDraft>",
        "",
    ]
    return "\n".join(out)


# ---------------------------------------------------------------------------- screenplay.md
def to_markdown(meta: ScriptMeta, lines: Sequence[ExportLine], thoughts: bool = False) -> str:
    """Seed 001's readable script: the scene heading, the opening (public context), the play."""
    out = [f"# {meta.scene}", "", f"{_take_label(meta)} · {meta.date}", ""]
    out += [f"## {_t(meta, 'scene')}", "", meta.scene, ""]
    if meta.context:
        out += [f"## {_t(meta, 'opening')}", "", meta.context, ""]
    out += [f"## {_t(meta, 'play')}", ""]
    for line in lines:
        ref = _ref(meta, line)
        if ref:
            out += [f"<small>{ref}</small>", ""]
        if line.action.strip():
            out += [
                f"*{_t(meta, 'action', action=a.strip())}*" if a.strip() else ""
                for a in line.action.strip().split("\n")
            ]
            out.append("")
        if line.dialogue.strip():
            first, *rest = line.dialogue.strip().split("\n")
            out += [_t(meta, "speaker", actor=line.actor, line=first)] + rest + [""]
        if thoughts and line.thought.strip():
            label = _t(meta, "thought")
            out += [f"> *{label}: {t}*" if t.strip() else ">" for t in line.thought.split("\n")]
            out.append("")
        for text, author in line.notes:  # the room's notes, after the line they are on; a
            # note is one line and "📌 " opens it, so it can never start a heading or a list
            out += [f"> 📌 {' '.join(text.split())} — {' '.join(author.split())}", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------- storyboard.csv
# OWASP's CSV-injection rule: a spreadsheet runs a cell that starts with one of these as a
# formula (or DDE command). Spreadsheets skip leading spaces before deciding, and some read the
# full-width forms a Chinese or Japanese input method types as the ASCII ones, so both count.
FORMULA_STARTS = frozenset("=+-@\t\r＝＋－＠")


def safe_cell(text: str) -> str:
    """A cell a spreadsheet shows as text: a leading `'` when it could start a formula.

    The apostrophe is the only change, so the text still reads as written (and `cell[1:]` is
    the original)."""
    if text[:1] in FORMULA_STARTS or text.lstrip()[:1] in FORMULA_STARTS:
        return "'" + text
    return text


def csv_text(rows: Sequence[Sequence[str]]) -> str:
    """Every CSV Circus writes goes through here: UTF-8 with a BOM (spreadsheet programs then
    read Chinese correctly), every cell neutralised by `safe_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([safe_cell(cell) for cell in row])
    return "\ufeff" + buffer.getvalue()


_COLUMNS = ("shot", "scene", "speaker", "addressee", "action", "line", "shot_size", "duration")
HEADERS = {lang: [text[f"export.header.{c}"] for c in _COLUMNS] for lang, text in CATALOGS.items()}
SHOT_SIZES = {
    lang: tuple(text[f"export.shot.{s}"] for s in ("wide", "medium", "close"))
    for lang, text in CATALOGS.items()
}


def shot_size(meta: ScriptMeta, index: int, line: ExportLine) -> str:
    """The first shot is wide; a line thrown to someone else is a close-up; the rest medium."""
    wide, medium, close = SHOT_SIZES[lang_of(meta.language)]
    if index == 0:
        return wide
    to = addressee(meta, line)
    if line.dialogue.strip() and to and to != line.actor:
        return close
    return medium


def duration(line: ExportLine) -> float:
    """Seconds: the line at reading speed, plus a beat for visible business; at least 2 s."""
    text = line.dialogue
    cjk = cjk_chars(text)
    words = count_words(text) - cjk
    seconds = cjk / CJK_PER_SECOND + words / WORDS_PER_SECOND
    if line.action.strip():
        seconds += ACTION_SECONDS
    return round(max(MIN_SECONDS, seconds), 1)


def to_storyboard(meta: ScriptMeta, lines: Sequence[ExportLine], thoughts: bool = False) -> str:
    """One row per turn, written by `csv_text` (no cell can run as a formula)."""
    headers = list(HEADERS[lang_of(meta.language)])
    picks = any(line.take is not None for line in lines)
    if picks:
        headers += [_t(meta, "header.take"), _t(meta, "header.turn")]
    if thoughts:
        headers.append(_t(meta, "header.thought"))
    rows = [headers]
    for i, line in enumerate(lines):
        row = [
            f"S{i + 1:03d}",
            meta.scene,
            line.actor,
            addressee(meta, line),
            line.action.strip(),
            line.dialogue.strip(),
            shot_size(meta, i, line),
            f"{duration(line):.1f}",
        ]
        if picks:
            row += [str(line.take or ""), str(line.turn)]
        if thoughts:
            row.append(line.thought.strip())
        rows.append(row)
    return csv_text(rows)


def render_exports(
    meta: ScriptMeta, lines: Sequence[ExportLine], formats: Sequence[str], thoughts: bool = False
) -> dict[str, str]:
    """File name → text for each wanted format (all rendered before anything is written)."""
    renderers = {
        "fountain": lambda: to_fountain(meta, lines, thoughts),
        "fdx": lambda: to_fdx(meta, lines),
        "md": lambda: to_markdown(meta, lines, thoughts),
        "csv": lambda: to_storyboard(meta, lines, thoughts),
    }
    return {FILE_NAMES[f]: renderers[f]() for f in formats}
