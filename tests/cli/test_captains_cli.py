"""`circus captain` and `circus note --by`, in-process: the console names who is typing."""

from __future__ import annotations

from pathlib import Path

import pytest
from clikit import circus


@pytest.fixture
def wake(tmp_path: Path) -> Path:
    result = circus("new", "wake", "--template", "wake", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "wake"


def test_captains_are_named_listed_and_their_notes_attributed(wake: Path) -> None:
    cwd, s = wake.parent, str(wake)
    assert "Nobody captains" in circus("captain", s, "list", cwd=cwd).stdout
    added = circus("captain", s, "add", "carol", "小王", cwd=cwd)  # an actor by any case
    assert added.returncode == 0 and "小王 captains Carol" in added.stdout
    assert circus("captain", s, "list", cwd=cwd).stdout.strip() == "Carol: 小王"

    assert circus("note", s, "--to", "Carol", "--by", "小王", "MINE", cwd=cwd).returncode == 0
    other = circus("note", s, "--to", "Ruth", "--by", "小王", "THEIRS", cwd=cwd)
    assert other.returncode == 2 and "You captain Carol" in other.stderr
    everyone = circus("note", s, "--by", "小王", "ALL", cwd=cwd)
    assert everyone.returncode == 2 and "pick your character" in everyone.stderr
    assert circus("note", s, "--to", "Ruth", "--by", "阿明", "DIRECTED", cwd=cwd).returncode == 0
    notes = (wake / "director_notes.md").read_text("utf-8")
    assert "- MINE <!-- by 小王 · captain · take 1 · after turn 0 · " in notes
    assert "- DIRECTED <!-- by 阿明 · director · " in notes
    assert "THEIRS" not in notes and "ALL" not in notes

    missing = circus("captain", s, "add", "Carol", cwd=cwd)
    assert missing.returncode == 2 and "circus captain SCENE" in missing.stderr
    removed = circus("captain", s, "remove", "Carol", "小王", cwd=cwd)
    assert "no longer captains Carol" in removed.stdout
    assert "does not captain" in circus("captain", s, "remove", "Carol", "小王", cwd=cwd).stdout


def test_a_cue_is_signed_by_who_typed_it_and_a_captain_cues_only_when_the_scene_says(
    wake: Path,
) -> None:
    cwd, s = wake.parent, str(wake)
    env = {"CIRCUS_MODEL": "scripted/improv"}
    assert circus("captain", s, "add", "Carol", "小王", cwd=cwd).returncode == 0
    refused = circus("cue", s, "Carol", "--by", "小王", env=env, cwd=cwd)
    assert refused.returncode == 2 and "captains_cue" in refused.stderr
    assert not (wake / "transcript.md").read_text("utf-8").count("Carol")

    context = wake / "context.md"
    context.write_text(
        context.read_text("utf-8").replace("---\n", "---\ncaptains_cue: true\n", 1), "utf-8"
    )
    cued = circus("cue", s, "Carol", "Look at the watch.", "--by", "小王", env=env, cwd=cwd)
    assert cued.returncode == 0, cued.stderr
    assert circus("cue", s, "Ruth", "--by", "阿明", env=env, cwd=cwd).returncode == 0
    directions = (wake / "directions.md").read_text("utf-8")
    assert "<!-- by 小王 · captain · take 1 · turn 1 · " in directions
    assert "<!-- by 阿明 · director · take 1 · turn 2 · " in directions
    mine = circus("cue", s, "Ruth", "--by", "小王", env=env, cwd=cwd)
    assert mine.returncode == 2 and "You captain Carol" in mine.stderr


def test_status_says_who_captains_whom(wake: Path) -> None:
    cwd, s = wake.parent, str(wake)
    assert "captain:" not in circus("status", s, cwd=cwd).stdout
    circus("captain", s, "add", "Carol", "小王", cwd=cwd)
    circus("captain", s, "add", "Carol", "阿明", cwd=cwd)
    assert "captain: Carol ← 小王, 阿明" in circus("status", s, cwd=cwd).stdout
