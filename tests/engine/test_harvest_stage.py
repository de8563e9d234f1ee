"""Entrances, exits and stage events are part of the play: every export shows them where they
happened, as stage directions, and a take comparison counts them as part of the record."""

from __future__ import annotations

from pathlib import Path

from exportkit import PLAN, fdx_elements, fountain_elements, make_scene, play_plan, read_csv

from engine import Actor

EVENT = "The phone rings.\n\nNobody moves. INT. HALL - NIGHT"


async def test_stage_blocks_are_exported_as_stage_directions(tmp_path: Path, scripted) -> None:
    scene = make_scene(tmp_path / "interview", "en")
    rehearsal = await play_plan(scene, scripted)  # five turns
    await rehearsal.stage.exit(Actor("林小姐"))
    await rehearsal.stage.event(EVENT)
    await rehearsal.stage.enter(Actor("林小姐"))
    transcript = (scene / "transcript.md").read_text(encoding="utf-8")
    assert "## 5.1" in transcript and "## 5.3" in transcript
    await rehearsal.harvest.export(thoughts=True)
    out = scene / "exports" / "take_1"

    directions = [
        ("action", "林小姐 exits."),
        ("action", "The phone rings.\n\nNobody moves. INT. HALL - NIGHT"),
        ("action", "林小姐 enters."),
    ]
    _, fountain = fountain_elements((out / "screenplay.fountain").read_text(encoding="utf-8"))
    assert fountain[-3:] == directions and fountain[-4] == ("dialogue", "Fine.")
    fdx = fdx_elements((out / "screenplay.fdx").read_text(encoding="utf-8"))
    assert fdx[-3:] == directions
    md = (out / "screenplay.md").read_text(encoding="utf-8")
    assert md.index("Fine.") < md.index("*(林小姐 exits.)*") < md.index("The phone rings")
    rows = read_csv(out / "storyboard.csv")
    assert [(r[0], r[2], r[4], r[5], r[-1]) for r in rows[-3:]] == [
        ("S006", "", "林小姐 exits.", "", ""),
        ("S007", "", EVENT, "", ""),
        ("S008", "", "林小姐 enters.", "", ""),
    ]
    assert len(rows) == 1 + len(PLAN) + 3


async def test_a_take_comparison_shows_where_the_stage_changed(tmp_path: Path, scripted) -> None:
    scene = make_scene(tmp_path / "interview", "en")
    rehearsal = await play_plan(scene, scripted)
    await rehearsal.takes.save()
    await rehearsal.takes.replay(1, until=5)  # the same five turns...
    await rehearsal.stage.event("A siren outside.")  # ...and then something happens
    text = await rehearsal.harvest.diff(1, "current", full=True)
    assert "Shared opening: 5 turns (1–5)." in text
    assert "They part at turn 5.1." in text
    assert "[5.1] Event\n    A siren outside." in text
    assert "| turns | 5 | 5 |" in text  # blocks are not turns
