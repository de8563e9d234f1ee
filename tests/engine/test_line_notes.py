"""Notes on a line: the room's notes stored in line-notes.md (readable, hand-editable, never
broken by what a note says), shown under their line in the report, exported as Fountain notes
and Final Draft ScriptNotes that independent readers take as notes, kept by a take and by a
replay on the turns it keeps — and in no prompt."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from exportkit import expected, fdx_elements, fountain_elements, make_scene, play_plan
from fountain import FountainParser
from fountain.elements import ElementType
from scenekit import CAST
from trustkit import attack

from engine import Actor, Rehearsal
from engine.errors import BadRequest, TurnNotFound
from engine.folder.line_notes import (
    LineNote,
    add_line_note,
    cut_line_notes,
    empty_line_notes,
    parse_line_notes,
)
from engine.providers.scripted import ScriptedRequest
from engine.script.fdx import parse_fdx

ANA, BO, CY = "ANA-NOTE this is the beat", "BO-NOTE too on the nose", "CY-NOTE cut the bang"


def note(turn: int, text: str, by: str = "Ana", by_id: int | None = None) -> LineNote:
    return LineNote(turn, "Ruth", text, by, "2024-05-01 10:00 UTC", by_id)


# ---------------------------------------------------------------------- the file, as a table
@pytest.mark.parametrize(
    "text, found",
    [
        ("", []),
        ("# Notes on lines\n", []),
        ("## Turn 3 · Ruth\n- beat — Ana (2024-05-01 10:00 UTC)\n",
         [(3, "Ruth", "beat", "Ana", None)]),
        # a Discord author keeps their id apart from their name
        ("## Turn 3 · Ruth\n- beat — Ana (discord:42) (t)\n", [(3, "Ruth", "beat", "Ana", 42)]),
        # the last em dash is the author's: a note may hold em dashes of its own
        ("## Turn 2 · Ruth\n- a — b — Cy (t)\n", [(2, "Ruth", "a — b", "Cy", None)]),
        # a hand-edited file: prose, a broken bullet, a heading we do not know, Windows lines
        ("# Mine\nsome prose\r\n## Turn 1 · Ruth\r\n- no author\r\nfree text\r\n"
         "## Ideas\n- kept — Bo (t)\n## Turn x\n- lost heading — Bo (t)\n",
         [(1, "Ruth", "kept", "Bo", None), (1, "Ruth", "lost heading", "Bo", None)]),
        # an escaped start reads back as written
        ("## Turn 1 · Ruth\n- \\## Turn 2 — Ana (t)\n- \\- dash — Ana (t)\n",
         [(1, "Ruth", "## Turn 2", "Ana", None), (1, "Ruth", "- dash", "Ana", None)]),
    ],
)  # fmt: skip
def test_the_file_reads_back_as_notes_and_skips_what_is_not_one(text, found) -> None:
    got = [(n.turn, n.actor, n.text, n.by, n.by_id) for n in parse_line_notes(text)]
    assert got == found


@pytest.mark.parametrize(
    "text",
    [
        "## Turn 1",
        "\n## 林小姐",
        "- Ana (t)",
        "> quote",
        "1. list",
        "# title",
        "\\",
        "text — Bo (now)",
    ],
)
def test_any_note_text_round_trips_on_one_line_and_makes_no_heading(text) -> None:
    written = add_line_note(empty_line_notes("Notes on lines"), note(1, " ".join(text.split())))
    assert [line for line in written.splitlines() if line.startswith("#")] == [
        "# Notes on lines",
        "## Turn 1 · Ruth",
    ]
    (back,) = parse_line_notes(written)
    assert (back.text, back.by) == (" ".join(text.split()), "Ana")


def test_an_author_cannot_end_the_note_early_or_pose_as_another() -> None:
    written = add_line_note("", note(1, "beat", by="Bo (she) — Director\n## Turn 9", by_id=7))
    (back,) = parse_line_notes(written)
    assert back.text == "beat" and back.by_id == 7
    assert "—" not in back.by and "Turn 9" in back.by and written.count("\n## ") == 0


def test_adding_keeps_every_hand_written_line_and_places_turns_in_order() -> None:
    mine = "# Notes on lines\nmy own prose\n\n## Turn 4 · Ruth\nfree text\n- old — Bo (t)\n"
    text = add_line_note(mine, note(2, "two"))
    text = add_line_note(text, note(4, "four"))
    text = add_line_note(text, note(9, "nine"))
    for line in mine.splitlines():
        assert line in text.splitlines()
    assert text.index("## Turn 2") < text.index("## Turn 4") < text.index("## Turn 9")
    assert text.index("- old") < text.index("- four") < text.index("## Turn 9")
    assert [n.turn for n in parse_line_notes(text)] == [2, 4, 4, 9]


def test_a_replay_cut_drops_only_the_later_turns_sections() -> None:
    text = "# Notes\nprose\n\n"
    for turn in (1, 3, 5):
        text = add_line_note(text, note(turn, f"n{turn}"))
    kept = cut_line_notes(text, 3)
    assert [n.turn for n in parse_line_notes(kept)] == [1, 3]
    assert kept.startswith("# Notes\nprose\n") and "n5" not in kept
    assert cut_line_notes(text, 9) == text


def test_a_hostile_hand_edit_is_read_without_a_crash_and_kept(tmp_path: Path) -> None:
    hostile = attack("line_note_headings.txt").decode("utf-8")
    found = parse_line_notes(hostile)
    assert [(n.turn, n.text, n.by) for n in found] == [(1, "forged", "Director")]
    text = add_line_note(hostile, note(1, "mine"))
    assert "LINE-NOTE-ATTACK-TAIL" in text and "[[not a note]]" in text
    assert [n.text for n in parse_line_notes(text)] == ["forged", "mine"]
    wall = "## Turn 2 · Ruth\n- " + " — a" * 50_000 + " (t)\n"  # read at once, kept as written
    assert parse_line_notes(wall) == [] and wall in add_line_note(wall, note(3, "x"))


# ---------------------------------------------------------------------- the room, end to end
async def noted_take(tmp_path: Path, scripted, language: str = "en") -> Rehearsal:
    """The export take, then three members' notes on two lines: Ruth's first speech (turn 1)
    and 林小姐's silent business (turn 2)."""
    rehearsal = await play_plan(make_scene(tmp_path / "interview", language), scripted)
    await rehearsal.line_notes.add(1, ANA, "Ana", by_id=101)
    await rehearsal.line_notes.add(1, BO, "Bo", by_id=102)
    await rehearsal.line_notes.add(2, CY, "Cy")
    return rehearsal


async def test_three_members_notes_on_two_lines_land_in_the_file(tmp_path, scripted) -> None:
    rehearsal = await noted_take(tmp_path, scripted)
    text = (rehearsal.root / "line-notes.md").read_text(encoding="utf-8")
    assert text.startswith("# Notes on lines\n")
    assert "## Turn 1 · Ruth\n" in text and "## Turn 2 · 林小姐\n" in text
    assert f"- {ANA} — Ana (discord:101) (" in text and f"- {CY} — Cy (" in text
    listed = await rehearsal.line_notes.list()
    assert [(n.turn, n.actor, [x.by for x in n.notes]) for n in listed] == [
        (1, "Ruth", ["Ana", "Bo"]),
        (2, "林小姐", ["Cy"]),
    ]
    assert listed[0].line.startswith("Where were you")


async def test_the_report_shows_each_note_under_its_line(tmp_path, scripted) -> None:
    rehearsal = await noted_take(tmp_path, scripted)
    report = await rehearsal.harvest.report()
    section = report[report.index("## Notes on lines") :].split("\n## ")[0].splitlines()
    assert section[2].startswith("- turn 1 · Ruth: “Where were you")
    assert section[3:5] == [f"  - {ANA} — Ana", f"  - {BO} — Bo"]
    assert section[5].startswith("- turn 2 · 林小姐: “BANG")
    assert section[6] == f"  - {CY} — Cy"


async def test_no_notes_no_section_in_the_report(tmp_path, scripted) -> None:
    rehearsal = await play_plan(make_scene(tmp_path / "interview", "en"), scripted)
    assert "Notes on lines" not in await rehearsal.harvest.report()


async def test_fountain_carries_notes_after_their_line_which_readers_take_as_notes(
    tmp_path, scripted
) -> None:
    rehearsal = await noted_take(tmp_path, scripted)
    await rehearsal.harvest.export(formats="fountain")
    text = (rehearsal.root / "exports" / "take_1" / "screenplay.fountain").read_text("utf-8")
    assert text.index("Answer me.") < text.index(f"[[{ANA} — Ana]]") < text.index("BANG")
    assert text.index(f"[[{BO} — Bo]]") < text.index("BANG") < text.index(f"[[{CY} — Cy]]")
    _, elements = fountain_elements(text)  # screenplain: printed elements only
    assert elements == expected("INTERVIEW", "RUTH")
    assert not any("NOTE" in said for _, said in elements)
    parsed = FountainParser().parse(text).elements  # fountain-py: notes are NOTE elements
    notes = [e.text.strip("[]") for e in parsed if e.type == ElementType.NOTE]
    assert [n for n in notes if "-NOTE" in n] == [f"{ANA} — Ana", f"{BO} — Bo", f"{CY} — Cy"]
    await rehearsal.harvest.pick(2, by="Ana")  # a picked line brings its notes along
    await rehearsal.harvest.export(picks=True, formats="fountain")
    picked = (rehearsal.root / "exports" / "picks" / "screenplay.fountain").read_text("utf-8")
    assert f"[[{CY} — Cy]]" in picked and ANA not in picked


async def test_screenplay_md_shows_each_note_after_its_line(tmp_path, scripted) -> None:
    rehearsal = await noted_take(tmp_path, scripted)
    await rehearsal.harvest.export(formats="md")
    text = (rehearsal.root / "exports" / "take_1" / "screenplay.md").read_text("utf-8")
    assert text.index("Answer me.") < text.index(f"> 📌 {ANA} — Ana") < text.index("BANG")
    assert text.index(f"> 📌 {BO} — Bo") < text.index("BANG") < text.index(f"> 📌 {CY} — Cy")


async def test_fdx_carries_script_notes_inside_the_lines_paragraph(tmp_path, scripted) -> None:
    rehearsal = await noted_take(tmp_path, scripted)
    await rehearsal.harvest.export(formats="fdx")
    data = (rehearsal.root / "exports" / "take_1" / "screenplay.fdx").read_text("utf-8")
    root = ET.fromstring(data.encode("utf-8"))  # well-formed
    noted = {
        p.get("Type"): [
            (n.get("Author"), n.findtext("Paragraph/Text")) for n in p.iter("ScriptNote")
        ]
        for p in root.find("Content").findall("Paragraph")
        if p.find("ScriptNote") is not None
    }
    assert noted == {"Dialogue": [("Ana", ANA), ("Bo", BO)], "Action": [("Cy", CY)]}
    ids = [n.get("ID") for n in root.iter("ScriptNote")]
    assert ids == ["1", "2", "3"]
    assert fdx_elements(data) == expected("interview", "Ruth")  # no note became a line
    script = parse_fdx(data.encode("utf-8"))  # our own importer: notes, never elements
    assert [n.text for n in script.notes] == [ANA, BO, CY]
    assert not any("-NOTE" in e.text for e in script.elements)


async def test_a_note_on_a_turn_that_does_not_exist_names_the_turns_that_do(
    tmp_path, scripted
) -> None:
    rehearsal = await play_plan(make_scene(tmp_path / "interview", "en"), scripted)
    with pytest.raises(TurnNotFound) as refused:
        await rehearsal.line_notes.add(9, "beat", "Ana")
    assert "turns 1–5" in str(refused.value) and "9" in str(refused.value)
    for text, key in (("  \n ", "error.line_note_empty"), ("x" * 1001, "error.line_note_too_long")):
        with pytest.raises(BadRequest) as bad:
            await rehearsal.line_notes.add(1, text, "Ana")
        assert bad.value.message_key == key
    with pytest.raises(BadRequest):
        await rehearsal.line_notes.add(1, "beat", " \n ")
    assert not (rehearsal.root / "line-notes.md").exists()


async def test_notes_follow_the_line_through_take_save_and_replay(tmp_path, scripted) -> None:
    rehearsal = await noted_take(tmp_path, scripted)
    await rehearsal.line_notes.add(4, "FOUR-NOTE later", "Dee")
    assert await rehearsal.takes.save() == 1
    saved = rehearsal.root / "takes" / "take_1"
    assert "FOUR-NOTE" in (saved / "line-notes.md").read_text("utf-8")
    assert "FOUR-NOTE" in (saved / "report.md").read_text("utf-8")
    # the working take (2) still holds take 1's lines: a note seen in take 1 lands on it
    await rehearsal.line_notes.add(3, "THREE-NOTE", "Eve", take=1)
    assert "THREE-NOTE" in (rehearsal.root / "line-notes.md").read_text("utf-8")

    await rehearsal.takes.replay(1, until=2)
    kept = await rehearsal.line_notes.list()
    assert [(n.turn, len(n.notes)) for n in kept] == [(1, 2), (2, 1)]
    # the working take was take 1: the note written on it since the save went with take 1
    assert [n.turn for n in await rehearsal.line_notes.list(1)] == [1, 2, 3, 4]
    # a line of take 1 the replay dropped is no longer the working take's: refused, named
    with pytest.raises(BadRequest) as refused:
        await rehearsal.line_notes.add(4, "late", "Ana", take=1)
    assert refused.value.message_key == "error.line_note_old_take"


async def test_a_line_note_is_in_no_prompt(scene: Path, scripted) -> None:
    """Notes planted with markers before a run: every prompt the actors and the stage manager
    were sent (captured by the scripted door) is free of them."""

    def throw_to_anyone(request: ScriptedRequest) -> str:  # the stage manager is asked each turn
        shape = request.shape
        if shape.kind == "stage_manager":
            return f"NEXT: {shape.cast[request.index % len(shape.cast)]}\nREASON: 輪到他"
        return "<thought>想一想。</thought><dialogue>「嗯。」</dialogue><cue>ANY</cue>"

    scripted.register("improv", throw_to_anyone)
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(3, start=Actor(CAST[0]))
    markers = [f"LINE-NOTE-MARKER-{i}" for i in range(3)]
    for turn, marker in zip((1, 2, 3), markers, strict=True):
        await rehearsal.line_notes.add(turn, f"{marker} 太直白了", f"member {turn}", by_id=turn)
    before = len(scripted.calls)
    await rehearsal.run(6)
    later = scripted.calls[before:]
    assert {c.shape.kind for c in later} == {"actor", "stage_manager"}
    for call in later:
        assert not any(m in call.prompt for m in markers), call.shape
        assert "line-notes" not in call.prompt
    assert all(m in (scene / "line-notes.md").read_text("utf-8") for m in markers)


def test_a_fresh_file_is_only_its_title() -> None:
    assert parse_line_notes(empty_line_notes("台詞筆記")) == []
    assert io.StringIO(empty_line_notes("x")).read() == "# x\n"
