"""`circus run SCENE -n 40 --until CONDITION`: the run stops after the first turn that meets a
condition, says why in the scene's language, and exits 0 — it did what was asked. The scripted
model's first call picks the opener (the stage manager); then each actor says "This is line N
from …" on turn N - 1, so a secret marked "line 6" surfaces at turn 5."""

from __future__ import annotations

from pathlib import Path

import pytest
from clikit import circus, listing, turns_of
from scenekit import write_scene


@pytest.fixture
def marked(tmp_path: Path) -> Path:
    root = write_scene(tmp_path / "審訊室")
    soul = root / "actors" / "林小姐" / "soul.md"
    soul.write_text(soul.read_text("utf-8").replace("---\n## ", "secrets: [line 6]\n---\n## ", 1))
    return root


def test_until_secret_stops_at_the_turn_it_surfaced_and_exits_0(marked: Path) -> None:
    result = circus("run", "審訊室", "-n", "40", "--until", "secret", cwd=marked.parent)
    assert result.returncode == 0, result.stderr
    turns = turns_of(marked)
    assert [t.number for t in turns] == [1, 2, 3, 4, 5]
    assert "line 6" in turns[-1].dialogue
    assert "照你的要求在第 5 輪之後停下（--until secret）" in result.stderr
    assert "林小姐標記的秘密在第 5 輪" in result.stderr
    assert "line 6" not in result.stderr  # the secret itself is private: only whose it was


@pytest.mark.parametrize(
    "until, last",
    [
        (["turn:3"], 3),
        (["exit,turn:2"], 2),
        (["secret:林曉雯", "turn:9"], 5),  # an alias names 林小姐
        (["secret:刑警", "turn:7"], 7),  # 刑警 has no marked secret
    ],
)
def test_until_takes_repeats_comma_lists_and_actors(marked: Path, until, last) -> None:
    flags = [x for u in until for x in ("--until", u)]
    result = circus("run", "審訊室", "-n", "40", *flags, cwd=marked.parent)
    assert result.returncode == 0, result.stderr
    assert turns_of(marked)[-1].number == last


def test_resume_until_goes_on_from_where_the_scene_stopped(marked: Path) -> None:
    assert circus("run", "審訊室", "-n", "2", cwd=marked.parent).returncode == 0
    result = circus("resume", "審訊室", "-n", "40", "--until", "turn:4", cwd=marked.parent)
    assert result.returncode == 0, result.stderr
    assert turns_of(marked)[-1].number == 4


@pytest.mark.parametrize("until", ["soon", "turn:x", "secret:nobody"])
def test_a_condition_it_cannot_read_is_refused_and_nothing_runs(marked: Path, until) -> None:
    before = listing(marked)
    result = circus("run", "審訊室", "-n", "40", "--until", until, cwd=marked.parent)
    assert result.returncode != 0 and result.stderr.strip()
    assert listing(marked) == before


@pytest.mark.parametrize(
    ("until", "says"),
    [
        ("secret", "沒有任何角色設定標記秘密"),
        ("secret:刑警", "刑警的角色設定沒有標記秘密"),
    ],
)
def test_a_secret_no_soul_marks_is_refused_before_any_turn(tmp_path: Path, until, says) -> None:
    root = write_scene(tmp_path / "審訊室")  # no soul marks a secret
    before = listing(root)
    result = circus("run", "審訊室", "-n", "40", "--until", until, cwd=root.parent)
    assert result.returncode == 2
    assert says in result.stderr and f"--until {until}" in result.stderr
    assert listing(root) == before  # nothing ran, nothing was paid for


def test_a_secret_condition_beside_one_that_can_fire_is_only_warned_about(marked: Path) -> None:
    result = circus("run", "審訊室", "-n", "40", "--until", "secret:刑警,turn:2", cwd=marked.parent)
    assert result.returncode == 0, result.stderr
    assert "刑警的角色設定沒有標記秘密" in result.stderr
    assert turns_of(marked)[-1].number == 2
