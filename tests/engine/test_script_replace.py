"""`export --into --replace FROM-TO`: the take's lines in place of a range the writer names,
read back by the independent parsers; every byte outside the range kept; each range that is
no good refused in one line with no file written."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from scriptkit import SCRIPTS, fountain_py_speeches, our_speeches, screenplain_speeches

from engine import BadScript, Config, ImportAsk, Rehearsal, import_script
from engine.folder.turns import parse_transcript
from engine.script.fdx import parse_fdx

HARBOUR = SCRIPTS / "harbour.fountain"
FDX = SCRIPTS / "harbour.fdx"
SCRIPTED = Config.from_env({"CIRCUS_MODEL": "scripted/improv"})


async def rehearsed(source: Path, folder: Path, scripted, **ask) -> Rehearsal:
    done = await import_script(source, folder, ImportAsk(**ask))
    r = Rehearsal(done.root, models=scripted, config=SCRIPTED)
    await r.run(2)
    await r.takes.save()
    return r


async def test_fountain_lines_are_swapped_for_the_take(tmp_path: Path, scripted) -> None:
    source = tmp_path / "draft.fountain"  # CRLF and a BOM: kept as they are
    source.write_bytes(b"\xef\xbb\xbf" + HARBOUR.read_bytes().replace(b"\n", b"\r\n"))
    r = await rehearsed(source, tmp_path / "office", scripted, scene="2")
    out = tmp_path / "out.fountain"
    spliced = await r.harvest.splice(into=source, take=1, out=out, replace="69-70")
    assert spliced.count == 2 and spliced.replaced == (69, 70)
    before, after = source.read_bytes(), out.read_bytes()
    lines = before.split(b"\r\n")
    head, tail = b"\r\n".join(lines[:68]) + b"\r\n", b"\r\n" + b"\r\n".join(lines[70:])
    assert after.startswith(head) and after.endswith(tail)  # RAY's line 69-70 gone, all else kept
    added = after[len(head) : len(after) - len(tail)].decode("utf-8")
    assert "He's hiding something." not in added and "\n" not in added.replace("\r\n", "")
    turns = parse_transcript((r.root / "transcript.md").read_text(encoding="utf-8"))[10:]
    old_text, new_text = (b.decode("utf-8-sig").replace("\r\n", "\n") for b in (before, after))
    for reader in (screenplain_speeches, fountain_py_speeches, our_speeches):
        old, new = reader(old_text), reader(new_text)
        k = 1 + 9  # the cold open's V.O., then scene 2's speeches before RAY's last
        assert new[:k] == old[:k] and new[k + 2 :] == old[k + 1 :]
        assert [(s[0], s[2].split("\n")[-1]) for s in new[k : k + 2]] == [
            (t.actor, t.dialogue) for t in turns
        ]


async def test_fdx_paragraphs_are_swapped_under_a_new_revision(tmp_path: Path, scripted) -> None:
    r = await rehearsed(FDX, tmp_path / "s", scripted)
    out = tmp_path / "out.fdx"
    spliced = await r.harvest.splice(into=FDX, out=out, replace="20-21")  # RAY: "Am I late?"
    assert spliced.replaced == (20, 21)
    before, after = FDX.read_bytes(), out.read_bytes()
    start = before.index(b'<Paragraph Type="Character">\n      <Text>RAY</Text>')
    end = before.index(b"\n", before.index(b"Am I late?") + 20)  # after RAY's </Paragraph>
    cut = after.index(b'\n    <Paragraph Type="Transition">')
    entry = after.index(b'<Revision Color="#00000000FFFF"')
    new_entry = after[entry : after.index(b"/>", entry) + 2]
    assert after[:start] == before[:start]  # every byte before the range and after it kept
    assert after[cut:].replace(new_entry, b"", 1) == before[end:]
    assert b"Am I late?" not in after[start:cut]
    root = ET.fromstring(after)
    assert [x.get("ID") for x in root.find("Revisions").findall("Revision")] == ["1", "2"]
    texts = [(p.get("Type"), t.get("RevisionID")) for p in root.iter("Paragraph")
             for t in p.findall("Text")]  # fmt: skip
    assert [k for k, rev in texts if rev == "2"] == ["Character", "Parenthetical", "Dialogue"] * 2
    old = [(e.kind, e.text, e.name) for e in parse_fdx(before).elements]
    now = [(e.kind, e.text, e.name) for e in parse_fdx(after).elements]
    i = next(i for i, e in enumerate(old) if e[1] == "Am I late?")
    assert now[:i] == old[:i] and now[i + 2 :] == old[i + 1 :]
    assert ("speech", "Am I late?", "RAY") not in now


@pytest.mark.parametrize(
    ("asked", "why"),
    [
        ("69", "bad_range"),
        ("70-69", "range_inverted"),
        ("0-3", "range_inverted"),
        ("19-22", "range_outside"),  # over the scene's heading
        ("70-76", "range_outside"),  # into the next scene
        ("200-201", "range_outside"),  # out of the file
        ("45-47", "range_cuts"),  # half of MARA's speech
        ("48-49", "range_cuts"),  # one side of the dual dialogue
        ("64-64", "range_cuts"),  # half of a cut passage
    ],
)
async def test_a_fountain_range_that_is_no_good_writes_nothing(
    tmp_path: Path, scripted, asked: str, why: str
) -> None:
    r = await rehearsed(HARBOUR, tmp_path / "office", scripted, scene="2")
    out = tmp_path / "out.fountain"
    with pytest.raises(BadScript) as caught:
        await r.harvest.splice(into=HARBOUR, out=out, replace=asked)
    assert caught.value.message_key == f"error.script.{why}"
    assert "\n" not in str(caught.value)
    assert not out.exists()


@pytest.mark.parametrize(
    ("asked", "why"),
    [
        ("1-3", "range_outside"),  # the heading
        ("22-23", "range_outside"),  # the next scene's heading
        ("11-12", "range_cuts"),  # a dual dialogue cut in half
        ("14-16", "range_cuts"),  # a wrapped dual dialogue cut in half
        ("5-5", "range_cuts"),  # a cue without its line
    ],
)
async def test_an_fdx_range_that_is_no_good_writes_nothing(
    tmp_path: Path, scripted, asked: str, why: str
) -> None:
    r = await rehearsed(FDX, tmp_path / "s", scripted)
    out = tmp_path / "out.fdx"
    with pytest.raises(BadScript) as caught:
        await r.harvest.splice(into=FDX, out=out, replace=asked)
    assert caught.value.message_key == f"error.script.{why}"
    assert not out.exists()


async def test_nothing_rehearsed_puts_nothing_in_place_of_the_range(tmp_path: Path) -> None:
    done = await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))
    out = tmp_path / "out.fountain"
    with pytest.raises(BadScript) as caught:
        await Rehearsal(done.root).harvest.splice(into=HARBOUR, out=out, replace="69-70")
    assert caught.value.message_key == "error.script.range_nothing"
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "first", "last", "expected"),
    [
        ("A\n\nB\n\nC\n", 2, 2, "A\n\nX\nY\n\nC\n"),  # one paragraph for another
        ("A\nB\nC\n", 1, 1, "A\n\nX\nY\n\nC\n"),  # text right above and below: a blank kept
        ("A\n\nB", 2, 2, "A\n\nX\nY"),  # the last line, no line break after it
        ("A\r\n\r\nB\r\n\r\nC", 2, 2, "A\r\n\r\nX\r\nY\r\n\r\nC"),  # the file's own line ending
    ],
)
def test_replace_lines_keeps_every_byte_outside_the_range(text, first, last, expected) -> None:
    from engine.script.replacing import replace_lines

    assert replace_lines(text, first, last, [["X", "Y"]]) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("72-75", (72, 75)), (" 3 - 5 ", (3, 5)), ("72–75", (72, 75)), ("9～9", (9, 9))],
)
def test_a_range_is_two_line_numbers(text: str, expected: tuple[int, int]) -> None:
    from engine.script.replacing import parse_range

    assert parse_range(text) == expected


def test_a_headingless_file_keeps_its_title_page() -> None:
    from engine.script.fountain import parse_fountain
    from engine.script.record import scenes_of
    from engine.script.replacing import check_range

    text = "Title: Notes\n\nMARA\nHello.\n\nTOM\nHi.\n"
    script = parse_fountain(text)
    [scene] = scenes_of(script)
    assert check_range(script, scene, (3, 4), 7, text) == (2, 3)
    with pytest.raises(BadScript) as caught:
        check_range(script, scene, (1, 4), 7, text)
    assert caught.value.message_key == "error.script.range_outside"
