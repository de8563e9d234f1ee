"""`import_script` and the splice back, as a writer sees them: the folder it makes, what a
run then plays, the writer's file byte for byte, and the refusals that write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from scriptkit import SCRIPTS, fountain_py_speeches, our_speeches, screenplain_speeches

from engine import BadScript, Config, ImportAsk, Rehearsal, import_script
from engine.errors import SceneExists
from engine.folder.stage import parse_blocks
from engine.folder.turns import parse_transcript

HARBOUR = SCRIPTS / "harbour.fountain"
SCRIPTED = Config.from_env({"CIRCUS_MODEL": "scripted/improv"})


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


async def test_the_folder_is_a_normal_scene(tmp_path: Path) -> None:
    done = await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))
    root = done.root
    assert done.cast == ("MARA", "TOM", "BRICK", "RAY")
    assert (done.turns, done.line, done.cut) == (10, 70, 1)  # its own; the cold open has the other
    context = (root / "context.md").read_text(encoding="utf-8")
    assert "cast: [MARA, TOM, BRICK, RAY]" in context and "language: en" in context
    assert "# INT. HARBOUR OFFICE - NIGHT" in context
    assert "From The Harbour, scene 2." in context and "Time: NIGHT." in context
    assert "Rain on the window." in context
    turns = parse_transcript((root / "transcript.md").read_text(encoding="utf-8"))
    assert [t.number for t in turns] == list(range(1, 11))
    soul = (root / "actors" / "TOM" / "soul.md").read_text(encoding="utf-8")
    assert "## Bio" in soul and "## Prior story" in soul and "## Director's notes" in soul
    sheet = (root / "script.md").read_text(encoding="utf-8")
    assert "Tom knows about the sale" in sheet and "Tom must get Mara to sign" in sheet
    view = await Rehearsal(root).view()
    assert view.on_stage == ("MARA", "BRICK", "RAY")  # TOM left for the back room


async def test_a_later_scene_carries_what_each_character_witnessed(tmp_path: Path) -> None:
    done = await import_script(HARBOUR, tmp_path / "pier", ImportAsk(scene="3"))
    soul = (done.root / "actors" / "RAY" / "soul.md").read_text(encoding="utf-8")
    assert "### Previously (from the script): INT. HARBOUR OFFICE - NIGHT" in soul
    assert '"Am I late?"' in soul and "He's hiding something." in soul
    # RAY came in at "RAY bursts in": nothing said before it reached him
    assert "You got my letter" not in soul and "Tom? Are you in there?" not in soul
    assert "sale" not in soul  # a note is nobody's memory


async def test_run_goes_on_after_the_last_imported_line(tmp_path: Path, scripted) -> None:
    done = await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))
    r = Rehearsal(done.root, models=scripted, config=SCRIPTED)
    await r.run(2)
    turns = parse_transcript((done.root / "transcript.md").read_text(encoding="utf-8"))
    assert [t.number for t in turns] == list(range(1, 13))
    assert {t.actor for t in turns[10:]} <= {"MARA", "BRICK", "RAY"}


async def test_splice_without_rehearsal_is_the_file_byte_for_byte(tmp_path: Path) -> None:
    source = tmp_path / "draft.fountain"  # CRLF and a BOM: kept as they are
    source.write_bytes(b"\xef\xbb\xbf" + HARBOUR.read_bytes().replace(b"\n", b"\r\n"))
    done = await import_script(source, tmp_path / "office", ImportAsk(scene="2"))
    r = Rehearsal(done.root)
    spliced = await r.harvest.splice(into=source, take="current")
    assert spliced.count == 0
    assert spliced.path.read_bytes() == source.read_bytes()


async def test_splice_sets_the_rehearsed_lines_after_the_last_imported_one(
    tmp_path: Path, scripted
) -> None:
    done = await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))
    r = Rehearsal(done.root, models=scripted, config=SCRIPTED)
    await r.run(3)
    await r.takes.save()
    out = tmp_path / "out.fountain"
    spliced = await r.harvest.splice(into=HARBOUR, take=1, out=out)
    assert spliced.count == 3 and spliced.line == 70
    before, after = HARBOUR.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    lines = before.split("\n")
    head, tail = "\n".join(lines[:70]) + "\n", "\n".join(lines[70:])
    assert after.startswith(head) and after.endswith(tail)
    added = after[len(head) : len(after) - len(tail)]
    rehearsed = parse_transcript((done.root / "transcript.md").read_text(encoding="utf-8"))[10:]
    for turn in rehearsed:
        assert turn.dialogue in added
    for reader in (screenplain_speeches, fountain_py_speeches, our_speeches):
        old, new = reader(before), reader(after)
        k = 10 + 1  # the cold open's V.O., then scene 2's ten speeches
        assert new[:k] == old[:k] and new[k + 3 :] == old[k:]
        # each rehearsed line under its own cue, its short action as the parenthetical
        assert [(s[0], s[2].split("\n")[-1]) for s in new[k : k + 3]] == [
            (t.actor, t.dialogue) for t in rehearsed
        ]


async def test_splice_is_refused_when_the_scene_changed_in_the_file(tmp_path: Path) -> None:
    done = await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))
    edited = tmp_path / "edited.fountain"
    edited.write_text(HARBOUR.read_text().replace("You got my letter.", "You got it."))
    with pytest.raises(BadScript) as caught:
        await Rehearsal(done.root).harvest.splice(into=edited)
    assert caught.value.message_key == "error.script.changed"
    assert not (done.root / "exports").exists()


async def test_splice_is_refused_for_a_scene_that_was_not_imported(tmp_path, scene) -> None:
    with pytest.raises(BadScript) as caught:
        await Rehearsal(scene).harvest.splice(into=HARBOUR)
    assert caught.value.message_key == "error.script.not_imported"


BAD = [
    ("notes.fountain", b"Just some prose about a boat.\n\nAnd more prose.\n", "no_cues"),
    ("empty.fountain", b"", "not_a_screenplay"),
    ("picture.fountain", b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
    ("big5.fountain", "INT. 茶樓\n\n@老闆\n門\n".encode("big5"), "not_utf8"),
    ("script.docx", b"PK\x03\x04", "unknown_type"),
    ("chinese.fountain", "INT. 茶樓 - 夜\n\n老闆\n門沒鎖。\n".encode(), "cjk_cue"),
    ("bad_name.fountain", b"INT. ROOM - DAY\n\nEVERYONE\nHi.\n", None),
]


@pytest.mark.parametrize(("name", "data", "why"), BAD)
async def test_bad_input_is_one_line_and_nothing_written(tmp_path, name, data, why) -> None:
    source = tmp_path / name
    source.write_bytes(data)
    before = listing(tmp_path)
    with pytest.raises(Exception) as caught:
        await import_script(source, tmp_path / "scene", ImportAsk())
    if why:
        assert isinstance(caught.value, BadScript) and caught.value.message_key.endswith(why)
    assert "\n" not in str(caught.value)
    assert listing(tmp_path) == before


async def test_an_oversize_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    source = tmp_path / "huge.fountain"
    with open(source, "wb") as f:
        f.truncate(10 * 1024 * 1024 + 1)
    with pytest.raises(BadScript) as caught:
        await import_script(source, tmp_path / "scene", ImportAsk())
    assert caught.value.message_key == "error.script.too_big"


async def test_an_existing_folder_is_never_written_over(tmp_path: Path) -> None:
    (tmp_path / "office").mkdir()
    with pytest.raises(SceneExists):
        await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))


async def test_blocks_round_trip_through_the_transcript(tmp_path: Path) -> None:
    done = await import_script(HARBOUR, tmp_path / "pier", ImportAsk(scene="3"))
    blocks = parse_blocks((done.root / "transcript.md").read_text(encoding="utf-8"))
    assert [(b.kind, b.names, b.actor) for b in blocks] == [
        ("present", (), ""),
        ("enter", (), "RAY"),
    ]


async def test_draft_writes_each_bio_and_prior_story_from_what_that_character_witnessed(
    tmp_path: Path, scripted
) -> None:
    def drafter(request) -> str:
        system = request.messages[0]["content"]
        return "Speaks in short bursts; wants the pier." if "bio" in system else "He came back."

    scripted.register("improv", drafter)
    done = await import_script(
        HARBOUR, tmp_path / "pier", ImportAsk(scene="3"), draft=True, models=scripted,
        config=SCRIPTED,
    )  # fmt: skip
    assert done.drafted and not done.draft_failed
    drafts = [c for c in scripted.calls if c.shape.kind != "actor"]
    assert len(drafts) == 2  # RAY, the pier's one character: his prior story, then his bio
    for call in drafts:  # each from what RAY witnessed, nothing from before he was there
        assert "Am I late?" in call.prompt and "You got my letter" not in call.prompt
    soul = (done.root / "actors" / "RAY" / "soul.md").read_text(encoding="utf-8")
    bio, rest = soul.split("He came back.")[0], soul.split("He came back.")[1]
    assert "Speaks in short bursts; wants the pier." in bio  # the first part: the bio
    assert "Speaks in short bursts" not in rest and '"Am I late?"' not in soul
    calls = (done.root / ".circus" / "calls.jsonl").read_text(encoding="utf-8")
    assert calls.count('"summarize"') == 2  # both drafts billed and recorded


async def test_picks_splice_only_rehearsed_lines(tmp_path: Path, scripted) -> None:
    done = await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))
    r = Rehearsal(done.root, models=scripted, config=SCRIPTED)
    await r.run(3)
    await r.takes.save()
    await r.harvest.pick(3, take=1, by="Ana")  # an imported line: not spliced again
    await r.harvest.pick(12, take=1, by="Ana")
    spliced = await r.harvest.splice(into=HARBOUR, picks=True, out=tmp_path / "picks.fountain")
    assert spliced.count == 1
    added = screenplain_speeches(spliced.path.read_text(encoding="utf-8"))[11]
    picked = parse_transcript((done.root / "transcript.md").read_text(encoding="utf-8"))[11]
    assert (added[0], added[2].split("\n")[-1]) == (picked.actor, picked.dialogue)


async def test_where_two_readers_part_the_import_is_refused_naming_the_line(tmp_path) -> None:
    source = tmp_path / "odd.fountain"  # a cue with two trailing spaces: a cue to one reader only
    source.write_text("INT. ROOM - DAY\n\nMARA\nHello.\n\nTOM  \nWho is there?\n", "utf-8")
    with pytest.raises(BadScript) as caught:
        await import_script(source, tmp_path / "s", ImportAsk())
    assert caught.value.message_key == "error.script.readers_differ"
    assert caught.value.values["line"] == 6
    assert not (tmp_path / "s").exists()


async def test_a_song_inside_a_speech_is_read_alike(tmp_path) -> None:
    source = tmp_path / "song.fountain"
    source.write_text("INT. ROOM - DAY\n\nMARA\n~Oh the harbour lights\n~are low\n", "utf-8")
    done = await import_script(source, tmp_path / "s", ImportAsk())
    turns = parse_transcript((done.root / "transcript.md").read_text(encoding="utf-8"))
    assert turns[0].dialogue == "~Oh the harbour lights\n~are low"


async def test_a_splice_finds_the_scene_where_the_writer_moved_it(tmp_path, scripted) -> None:
    done = await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))
    r = Rehearsal(done.root, models=scripted, config=SCRIPTED)
    await r.run(2)
    moved = tmp_path / "moved.fountain"  # a new line in the cold open, before the scene
    text = HARBOUR.read_text(encoding="utf-8")
    text = text.replace("A gull screams", "Dawn.\n\nA gull screams")
    moved.write_text(text, encoding="utf-8")
    spliced = await r.harvest.splice(into=moved, out=tmp_path / "out.fountain")
    assert spliced.line == 72  # "He's hiding something.", two lines further down now
    after = spliced.path.read_text(encoding="utf-8")
    cut = text.index("\n> THE END <")
    assert after.startswith(text[:cut]) and after.endswith(text[cut:])


async def test_every_element_reads_back_the_same_around_the_splice(tmp_path, scripted) -> None:
    from engine.script.fountain import parse_fountain

    done = await import_script(HARBOUR, tmp_path / "office", ImportAsk(scene="2"))
    r = Rehearsal(done.root, models=scripted, config=SCRIPTED)
    await r.run(3)
    await r.stage.event("A door slams somewhere below.")
    spliced = await r.harvest.splice(into=HARBOUR, out=tmp_path / "out.fountain")

    def shown(text: str) -> list[tuple]:
        return [(e.kind, e.text, e.name, e.extensions, e.dual, e.number)
                for e in parse_fountain(text).elements]  # fmt: skip

    before = shown(HARBOUR.read_text(encoding="utf-8"))
    after = shown(spliced.path.read_text(encoding="utf-8"))
    at = next(i for i, e in enumerate(before) if e[1] == "He's hiding something.") + 1
    added = after[at : len(after) - (len(before) - at)]
    assert after[:at] == before[:at] and after[at + len(added) :] == before[at:]
    assert [e[0] for e in added] == ["speech"] * 3 + ["action"]
    assert added[-1][1] == "A door slams somewhere below."


async def test_named_cues_count_in_the_earlier_scenes_too(tmp_path: Path) -> None:
    source = tmp_path / "tea.fountain"
    source.write_text(
        "INT. 茶樓 - 夜\n\n老闆\n門沒鎖。\n\n阿梅\n你收到我的信了。\n\n"
        "INT. 茶樓 - 晨\n\n老闆\n她會回來的。\n",
        encoding="utf-8",
    )
    done = await import_script(source, tmp_path / "s", ImportAsk(scene="2", cast=("老闆", "阿梅")))
    soul = (done.root / "actors" / "老闆" / "soul.md").read_text(encoding="utf-8")
    assert "前情（出自劇本）：INT. 茶樓 - 夜" in soul and "你收到我的信了。" in soul
