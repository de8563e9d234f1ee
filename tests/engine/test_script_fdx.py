"""Final Draft files: our hardened reader on the fixture (split text runs, a ScriptNote, dual
dialogue bare and wrapped, SmartType, revisions), hostile and broken XML refused, and the
splice back byte for byte without rehearsal, with a new revision set after one."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from scriptkit import SCRIPTS

from engine import BadScript, Config, ImportAsk, Rehearsal, import_script
from engine.script.fdx import parse_fdx

FDX = SCRIPTS / "harbour.fdx"
SCRIPTED = Config.from_env({"CIRCUS_MODEL": "scripted/improv"})


def test_every_text_run_note_and_dual_dialogue_is_read() -> None:
    script = parse_fdx(FDX.read_bytes())
    speeches = [
        (e.name, e.extensions, e.text, e.dual) for e in script.elements if e.kind == "speech"
    ]
    assert speeches[:2] == [
        ("MARA", ("O.S.",), "Tom? Are you in there?", False),  # three runs, one line
        ("TOM", (), "(not looking up)\nDoor's open. It always is.", False),
    ]
    assert speeches[2:6] == [
        ("MARA", (), "You sold it.", False),  # a bare <DualDialogue>
        ("TOM", (), "I sold it.", True),
        ("MARA", ("CONT'D",), "When?", False),  # one wrapped in a <Paragraph>
        ("TOM", (), "Tuesday.", True),
    ]
    action = [e.text for e in script.elements if e.kind == "action"]
    assert (
        action[0] == "Rain on the window. TOM (50s) sorts papers at a desk that is too big for him."
    )
    assert "MARA enters, soaked & shaking." in action
    assert [(n.line, n.text) for n in script.notes] == [
        (3, "Tom knows about the sale. Mara doesn't.")
    ]
    assert all("sale" not in e.text for e in script.elements)
    assert script.characters == ("MARA", "TOM", "RAY", "BRICK")
    assert script.revision == "First Revision" and script.title == {"Title": "The Harbour"}
    assert [e.text for e in script.elements if e.kind == "synopsis"] == [
        "Mara learns the boat is already sold."
    ]


HOSTILE = [
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
    b'<FinalDraft><Content><Paragraph Type="Action"><Text>&lol2;</Text></Paragraph></Content></FinalDraft>',
    b'<?xml version="1.0"?><!DOCTYPE x SYSTEM "file:///etc/passwd"><FinalDraft>&x;</FinalDraft>',
]


@pytest.mark.parametrize("data", HOSTILE)
def test_a_dtd_or_an_entity_is_refused_never_expanded(data: bytes) -> None:
    with pytest.raises(BadScript) as caught:
        parse_fdx(data)
    assert caught.value.message_key == "error.script.hostile_xml"


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"<FinalDraft><Content><Paragraph></Content>", "bad_xml"),
        (b"<html><body>hello</body></html>", "not_fdx"),
    ],
)
def test_broken_or_foreign_xml_is_one_line(data: bytes, why: str) -> None:
    with pytest.raises(BadScript) as caught:
        parse_fdx(data)
    assert caught.value.message_key == f"error.script.{why}"
    assert "\n" not in str(caught.value)


async def test_fdx_import_and_splice_without_rehearsal_is_byte_for_byte(tmp_path: Path) -> None:
    done = await import_script(FDX, tmp_path / "s", ImportAsk())
    assert done.cast == ("MARA", "TOM", "RAY", "BRICK")  # BRICK: SmartType, named in the action
    assert "Mara learns the boat" in (done.root / "script.md").read_text(encoding="utf-8")
    spliced = await Rehearsal(done.root).harvest.splice(into=FDX)
    assert spliced.path.read_bytes() == FDX.read_bytes()


async def test_fdx_splice_carries_a_new_revision(tmp_path: Path, scripted) -> None:
    done = await import_script(FDX, tmp_path / "s", ImportAsk())
    r = Rehearsal(done.root, models=scripted, config=SCRIPTED)
    await r.run(2)
    out = tmp_path / "out.fdx"
    await r.harvest.splice(into=FDX, out=out)
    root = ET.fromstring(out.read_bytes())
    revisions = root.find("Revisions")
    assert [r.get("ID") for r in revisions.findall("Revision")] == ["1", "2"]
    texts = [(p.get("Type"), t.text, t.get("RevisionID")) for p in root.iter("Paragraph")
             for t in p.findall("Text")]  # fmt: skip
    new = [(kind, text) for kind, text, rev in texts if rev == "2"]
    assert [k for k, _ in new] == ["Character", "Parenthetical", "Dialogue"] * 2
    before, after = parse_fdx(FDX.read_bytes()), parse_fdx(out.read_bytes())
    old = [(e.kind, e.text, e.name) for e in before.elements]
    now = [(e.kind, e.text, e.name) for e in after.elements]
    i = next(i for i, e in enumerate(old) if e[1] == "Am I late?") + 1
    assert now[:i] == old[:i] and now[i + 2 :] == old[i:]
    assert after.characters == before.characters and after.notes == before.notes


async def test_a_note_outside_every_paragraph_is_kept_for_the_director(tmp_path: Path) -> None:
    data = FDX.read_bytes().replace(
        b"  <SmartType>",
        b'  <ScriptNotes><ScriptNote ID="2"><Paragraph><Text>Ray owes Tom money.</Text>'
        b"</Paragraph></ScriptNote></ScriptNotes>\n  <SmartType>",
    )
    source = tmp_path / "notes.fdx"
    source.write_bytes(data)
    done = await import_script(source, tmp_path / "s", ImportAsk())
    assert (0, "Ray owes Tom money.") in done.notes
    sheet = (done.root / "script.md").read_text(encoding="utf-8")
    assert "Ray owes Tom money." in sheet
    assert "Ray owes Tom money." not in (done.root / "transcript.md").read_text(encoding="utf-8")
