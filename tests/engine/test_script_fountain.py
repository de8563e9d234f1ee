"""Our Fountain reader (engine.script) against two independent ones: the same cue/dialogue
sequence as screenplain and fountain-py on every fixture script, notes and cut passages kept
out of every element, and one scene staged by the screenplay's own conventions."""

from __future__ import annotations

import pytest
from scriptkit import SCRIPTS, fountain_py_speeches, our_speeches, screenplain_speeches

from engine.errors import BadScript
from engine.folder.stage import ENTER, EVENT, EXIT, PRESENT
from engine.script.fountain import parse_fountain
from engine.script.record import pick_scene, recognise, scenes_of, stage

FOUNTAINS = sorted(p.name for p in SCRIPTS.glob("*.fountain"))


@pytest.mark.parametrize("name", FOUNTAINS)
def test_three_readers_agree_on_every_cue_and_speech(name: str) -> None:
    text = (SCRIPTS / name).read_text(encoding="utf-8")
    ours = our_speeches(text)
    assert ours, name
    assert ours == screenplain_speeches(text)
    assert ours == fountain_py_speeches(text)


def harbour():
    return parse_fountain((SCRIPTS / "harbour.fountain").read_text(encoding="utf-8"))


def test_title_page_notes_and_cut_passages_are_kept_apart() -> None:
    script = harbour()
    assert script.title["Title"] == "The Harbour"
    assert script.title["Contact"] == "ana@example.com"
    assert [(n.line, n.text) for n in script.notes] == [
        (26, "Tom knows about the sale. Mara doesn't.")
    ]
    assert script.cut == 2
    every = "\n".join(e.text for e in script.elements)
    assert "sale" not in every and "second gull" not in every and "Cut line" not in every


def test_headings_numbers_and_forced_elements() -> None:
    scenes = scenes_of(harbour())
    assert [(s.ordinal, s.label, s.number) for s in scenes] == [
        (1, "COLD OPEN", "1"),
        (2, "INT. HARBOUR OFFICE - NIGHT", "2"),
        (3, "EXT. PIER - DAWN", "3"),
        (4, "FLASHBACK - MARA'S KITCHEN", ""),
    ]
    assert pick_scene(scenes, "3", None).label == "EXT. PIER - DAWN"
    assert pick_scene(scenes, None, "mara's kitchen").ordinal == 4
    mc = [e for e in scenes[3].elements if e.kind == "speech"][0]
    assert mc.name == "McCLANE"  # @ forces a mixed-case cue, kept as spelled


def test_an_unknown_scene_lists_the_headings() -> None:
    with pytest.raises(BadScript) as caught:
        pick_scene(scenes_of(harbour()), "9", None)
    assert "2 · INT. HARBOUR OFFICE - NIGHT" in str(caught.value)
    assert caught.value.message_key == "error.script.no_scene"


def test_a_scene_staged_by_the_screenplays_conventions() -> None:
    staged = stage(pick_scene(scenes_of(harbour()), "2", None), "en")
    assert staged.cast == ("MARA", "TOM", "BRICK", "RAY")
    assert staged.goal == "Tom must get Mara to sign before Ray arrives."
    moves = [(b.key, b.kind, b.actor or b.names or b.text) for b in staged.blocks]
    assert moves[0] == ((0, 1), PRESENT, ("TOM",))  # TOM (50s) in the opening action
    assert ((0, 2), ENTER, "MARA") in moves  # an O.S. cue: on stage, unseen
    assert ((7, 2), ENTER, "RAY") in moves  # "RAY bursts in": named in capitals
    assert ((9, 2), EXIT, "TOM") in moves  # "Tom exits to the back room."
    assert ((9, 1), EVENT, "Tom exits to the back room.") in moves
    turns = {t.number: t for t in staged.turns}
    assert turns[1].action == "(O.S.)" and turns[2].action == "(not looking up)"
    assert turns[4].actor == "TOM" and turns[4].action == "(CONT'D)"  # not identity, kept
    assert turns[4].dialogue == "I got all of them."  # emphasis marks gone
    assert turns[5].dialogue == "Then you know why I'm here.\n(beat)\nDon't make me say it twice."
    assert "(at the same time)" in turns[6].action and "(at the same time)" in turns[7].action
    assert staged.last.text == "He's hiding something."  # THE END / SMASH CUT TO: stay in the file


def test_a_voice_over_is_heard_and_never_on_stage() -> None:
    staged = stage(pick_scene(scenes_of(harbour()), "1", None), "en")
    assert staged.cast == ("MARA",)
    assert [b.kind for b in staged.blocks] == [PRESENT]
    assert staged.turns[0].action == "(V.O.)"


def test_until_stops_the_import_at_a_line() -> None:
    staged = stage(pick_scene(scenes_of(harbour()), "2", None), "en", until=41)
    assert [t.dialogue for t in staged.turns][-1] == "I got all of them."
    assert staged.last.end + 1 == 41


def test_chinese_cues_forced_or_named() -> None:
    tea = parse_fountain((SCRIPTS / "teahouse.fountain").read_text(encoding="utf-8"))
    staged = stage(scenes_of(tea)[0], "zh")
    assert staged.cast == ("老闆", "阿梅")
    assert [b.actor for b in staged.blocks if b.kind == EXIT] == ["阿梅"]  # 阿梅離開了茶樓。
    assert staged.turns[0].action == "（頭也不抬）"


def test_an_unforced_chinese_cue_is_refused_unless_named() -> None:
    text = "INT. 茶樓 - 夜\n\n老闆\n門沒鎖。\n\n阿梅\n你收到我的信了。\n"
    scene = scenes_of(parse_fountain(text))[0]
    with pytest.raises(BadScript) as caught:
        recognise(scene.elements, ())
    assert "@老闆" in str(caught.value) and "--cast" in str(caught.value)
    named = recognise(scene.elements, ("老闆", "阿梅"))
    assert [(e.name, e.text) for e in named] == [("老闆", "門沒鎖。"), ("阿梅", "你收到我的信了。")]


def test_a_scene_without_cues_is_refused() -> None:
    with pytest.raises(BadScript) as caught:
        stage(scenes_of(parse_fountain("INT. ROOM - DAY\n\nNobody here.\n"))[0], "en")
    assert caught.value.message_key == "error.script.no_cues"
