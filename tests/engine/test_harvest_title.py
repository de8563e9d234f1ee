"""A scene's title in its exports and reports is its own `# ` heading (the first one in
context.md's body), or its folder name when it has none."""

from __future__ import annotations

from pathlib import Path

import pytest
from exportkit import fdx_elements, fountain_elements, make_scene, play_plan, read_csv

from engine import Rehearsal
from engine.harvest.export import TITLE_MAX, scene_title


@pytest.mark.parametrize(
    ("body", "title", "opening"),
    [
        ("# 審訊室 · 深夜\n\n警局二樓。", "審訊室 · 深夜", "警局二樓。"),
        ("A small room.\n\n# The Interview\nIt is late.", "The Interview", "A small room.\n\nIt is late."),
        ("#   Spaced   out   \nx", "Spaced out", "x"),
        ("# First\n# Second", "First", "# Second"),
        ("## Only a subheading\nx", "pawn", "## Only a subheading\nx"),
        ("#NoSpace\nx", "pawn", "#NoSpace\nx"),
        ("#   \nx", "pawn", "#   \nx"),
        ("", "pawn", ""),
        ("# " + "長" * 500, "長" * TITLE_MAX, ""),
    ],
)  # fmt: skip
def test_the_title_is_the_first_heading_else_the_folder(body, title, opening) -> None:
    assert scene_title(body, "pawn") == (title, opening)


HEADED = "---\nmodel: scripted/plan\nlanguage: en\ncast: [Ruth, 林小姐]\n---\n"
BODY = "# INT. POLICE STATION - NIGHT\n\nA small room. It is late.\n"


async def test_exports_and_reports_carry_the_scenes_own_heading(tmp_path: Path, scripted) -> None:
    scene = make_scene(tmp_path / "S1", "en")
    (scene / "context.md").write_text(HEADED + BODY, encoding="utf-8")
    rehearsal = await play_plan(scene, scripted)
    await rehearsal.harvest.export()
    out = scene / "exports" / "take_1"

    title, elements = fountain_elements((out / "screenplay.fountain").read_text("utf-8"))
    assert title["Title"] == ["INT. POLICE STATION - NIGHT"]
    assert elements[0] == ("heading", "INT. POLICE STATION - NIGHT")
    assert fdx_elements((out / "screenplay.fdx").read_text("utf-8"))[0] == (
        "heading",
        "INT. POLICE STATION - NIGHT",
    )
    md = (out / "screenplay.md").read_text("utf-8")
    assert md.startswith("# INT. POLICE STATION - NIGHT\n")
    assert md.count("INT. POLICE STATION") == 2  # the title and the scene, not the opening
    assert "A small room. It is late." in md
    assert {row[1] for row in read_csv(out / "storyboard.csv")[1:]} == {
        "INT. POLICE STATION - NIGHT"
    }
    assert (await rehearsal.harvest.report()).startswith("# Take 1 · INT. POLICE STATION - NIGHT\n")

    # a saved take keeps the heading it was played under
    await rehearsal.takes.save()
    (scene / "context.md").write_text(HEADED + "No heading any more.\n", encoding="utf-8")
    assert (await rehearsal.harvest.report(1)).startswith(
        "# Take 1 · INT. POLICE STATION - NIGHT\n"
    )
    assert (await rehearsal.harvest.report()).startswith("# Take 2 · S1\n")
    await rehearsal.harvest.pick(1, take=1, by="alice")
    await rehearsal.harvest.export(picks=True, formats="fountain")
    picked = (scene / "exports" / "picks" / "screenplay.fountain").read_text("utf-8")
    assert fountain_elements(picked)[0]["Title"] == ["S1"]  # picks: the scene as it is now


async def test_a_scene_without_a_heading_is_titled_by_its_folder(tmp_path: Path) -> None:
    scene = make_scene(tmp_path / "pawn", "en")
    assert (await Rehearsal(scene).harvest.report()).startswith("# Take 1 · pawn\n")
