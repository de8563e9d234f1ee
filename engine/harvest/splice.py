"""A take's rehearsed lines set back into the writer's own script (`export --into`).

Invariant: only what was rehearsed after the import goes in — turns after the imported K and
stage blocks after the last imported one — right after the scene's last imported line
(engine.script.splicing), and every other byte of the file stays as it was. Fountain gets a
forcing prefix only where the spec needs one: `@` on a cue that is not all capitals (Chinese
names, McCLANE), `!` on an action paragraph that would otherwise read as something else (a
heading, a transition, a cue, a section). What the actors said stays text: stars, notes and a
leading bracket are escaped as the plain export escapes them (engine.harvest.export). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.errors import BadScript
from engine.folder.stage import StageBlock
from engine.folder.turns import Turn
from engine.harvest.export import (
    ExportLine,
    _dialogue_line,
    _fountain_text,
    _split,
    is_parenthetical,
    stage_line,
)
from engine.script.elements import Element, Script
from engine.script.fdx import replace_fdx, splice_fdx
from engine.script.fountain import Para, classify
from engine.script.record import ScriptScene
from engine.script.replacing import check_range, line_count, parse_range, replace_lines
from engine.script.splicing import splice_lines


def fountain_cue(name: str) -> str:
    """The name as a cue: as it is when Fountain reads it as one, else forced with `@`."""
    plain = name.strip()
    if (
        plain
        and plain.split("(", 1)[0].isupper()
        and plain[0] not in "!@.#=~>["
        and "^" not in plain
    ):
        return plain
    return "@" + plain


def _reads_as_action(lines: list[str]) -> bool:
    """Our reader (screenplain's rules) takes the paragraph for action, in any place: after a
    heading too, where a `=` line would be a synopsis."""
    para = Para(list(enumerate(lines)))
    for before in ([], [Element("heading", "", 0, 0)]):
        out = list(before)
        classify(para, out)
        if [e.kind for e in out[len(before) :]] != ["action"]:
            return False
    return True


def action_paragraph(text: str) -> list[str]:
    lines = [_fountain_text(line.rstrip()) for line in _split(text.strip())]
    if _reads_as_action(lines) and not any(line.startswith("!") for line in lines):
        return lines
    return ["!" + line for line in lines]


def fountain_paragraphs(lines: Sequence[ExportLine]) -> list[list[str]]:
    """Each rehearsed line as Fountain paragraphs: its action (a short one beside a line is
    the line's parenthetical, as in the plain export), then its cue and speech."""
    out: list[list[str]] = []
    for line in lines:
        action, dialogue = line.action.strip(), line.dialogue.strip()
        parenthetical = is_parenthetical(line)
        if action and not parenthetical:
            out.append(action_paragraph(action))
        if dialogue:
            block = [fountain_cue(line.actor)]
            if parenthetical:
                block.append(f"({_fountain_text(action.strip('()（）'))})")
            block += [_dialogue_line(text) for text in _split(dialogue)]
            out.append(block)
    return out


def rehearsed(
    turns: Sequence[Turn], blocks: Sequence[StageBlock], anchor: Mapping[str, Any], language: str
) -> list[ExportLine]:
    """The take's lines after the import: turns after the K imported, stage blocks after the
    last imported one, in the order they happened."""
    imported, last_block = int(anchor.get("turns", 0)), tuple(anchor.get("block", (0, 0)))
    keyed = [((t.number, 0), ExportLine(t.number, t.actor, t.action, t.dialogue, t.cue))
             for t in turns if t.number > imported]  # fmt: skip
    keyed += [
        (b.key, line)
        for b in blocks
        if b.key > last_block and b.after >= imported and (line := stage_line(b, language))
    ]
    return [line for _, line in sorted(keyed, key=lambda pair: pair[0])]


def fdx_paragraphs(lines: Sequence[ExportLine]) -> list[tuple[str, str]]:
    """Each rehearsed line as Final Draft paragraphs (type, text), as the plain export has it."""
    out: list[tuple[str, str]] = []
    for line in lines:
        action, dialogue = line.action.strip(), line.dialogue.strip()
        parenthetical = is_parenthetical(line)
        if action and not parenthetical:
            out.append(("Action", action))
        if dialogue:
            out.append(("Character", line.actor))
            if parenthetical:
                out.append(("Parenthetical", f"({action.strip('()（）')})"))
            out.append(("Dialogue", dialogue))
    return out


def spliced(
    script: Script, data: bytes, last: int, lines: Sequence[ExportLine], revision: str
) -> str:
    """The writer's file with `lines` set in after its element at `last` (an FDX's marked
    with a new revision set called `revision`)."""
    if script.format == "fdx":
        return splice_fdx(data, script, last, fdx_paragraphs(lines), revision)
    text = data.decode("utf-8")
    return splice_lines(text, last, fountain_paragraphs(lines))


def replaced(
    script: Script,
    data: bytes,
    scene: ScriptScene,
    asked: str,
    lines: Sequence[ExportLine],
    revision: str,
) -> tuple[str, tuple[int, int]]:
    """The writer's file with `lines` in place of the range `asked` (FROM-TO) of `scene`,
    and that range; refused, writing nothing, when the range is no good or nothing was
    rehearsed to put there."""
    wanted = parse_range(asked)
    text = "" if script.format == "fdx" else data.decode("utf-8")
    size = len(script.spans) if script.format == "fdx" else line_count(text)
    places = check_range(script, scene, wanted, size, text)
    if not lines:
        raise BadScript("range_nothing", first=wanted[0], last=wanted[1])
    if script.format == "fdx":
        return replace_fdx(data, script, places, fdx_paragraphs(lines), revision), wanted
    return replace_lines(text, *places, fountain_paragraphs(lines)), wanted
