"""The stage from the terminal: `circus enter|exit|event|say` and the console's ENTER, EXIT,
EVENT, PLAY and UNPLAY — black-box, in a subprocess, with the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest
from clikit import circus, cli_env, listing, turns_of

from engine.folder.stage import parse_blocks


@pytest.fixture
def wake(tmp_path: Path) -> Path:
    result = circus("new", "wake", "--template", "wake", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "wake"


def blocks_of(scene: Path):
    return parse_blocks((scene / "transcript.md").read_text(encoding="utf-8"))


def test_exit_event_enter_and_say_land_on_the_record(wake: Path) -> None:
    s = str(wake)
    result = circus("exit", s, "Carol", cwd=wake.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[0.1] — Carol exits —"
    assert circus("run", s, "-n", "2", cwd=wake.parent).returncode == 0
    assert {t.actor for t in turns_of(wake)} == {"Ruth", "Danny"}
    result = circus("event", s, "The", "power", "goes", "out.", cwd=wake.parent)
    assert result.stdout.strip() == "[2.1] 〔Event〕 The power goes out."
    assert circus("enter", s, "carol", cwd=wake.parent).stdout.strip() == "[2.2] — Carol enters —"
    result = circus(
        "say", s, "Carol", "Who", "turned", "off", "the", "lights?",
        "--action", "stands in the doorway", "--cue", "danny", "--thought", "It was me.",
        cwd=wake.parent,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "[3] Carol" in result.stdout and "→ Danny" in result.stdout
    assert "It was me." not in result.stdout  # the thought is private
    last = turns_of(wake)[-1]
    assert (last.actor, last.action, last.dialogue, last.cue) == (
        "Carol", "stands in the doorway", "Who turned off the lights?", "Danny",
    )  # fmt: skip
    assert "It was me." in (wake / "backstage" / "Carol.log").read_text(encoding="utf-8")
    assert [(b.kind, b.actor) for b in blocks_of(wake)] == [
        ("exit", "Carol"), ("event", ""), ("enter", "Carol"),
    ]  # fmt: skip
    status = circus("status", s, cwd=wake.parent).stdout
    assert "on stage: Ruth, Danny, Carol" in status


REFUSED = [
    ("cue", "{s}", "Carol"),
    ("run", "{s}", "--start", "Carol"),
    ("say", "{s}", "Carol", "I am here."),
    ("exit", "{s}", "Carol"),
    ("enter", "{s}", "Ruth"),
    ("enter", "{s}", "Nobody"),
    ("event", "{s}", "   "),
    ("say", "{s}", "Ruth"),
]


@pytest.mark.parametrize("argv", REFUSED, ids=lambda a: " ".join(a))
def test_stage_refusals_exit_2_with_one_line_and_write_nothing(wake: Path, argv) -> None:
    assert circus("exit", str(wake), "Carol", cwd=wake.parent).returncode == 0
    before = listing(wake.parent)
    result = circus(*(a.format(s=wake) for a in argv), cwd=wake.parent)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("circus: "), result.stderr
    assert result.stdout == ""
    assert listing(wake.parent) == before
    if "Carol" in argv and argv[0] != "enter":
        assert "off stage" in lines[0] and "enter Carol" in lines[0]


def test_the_console_plays_a_character_and_stages_entrances(wake: Path) -> None:
    script = "\n".join(
        [
            "EXIT Danny",
            "EVENT A car pulls into the driveway.",
            "PLAY Ruth",
            "RUN 3 Carol",
            "(sets down the glass) Who is that? → Carol",
            "WAIT",
            "ENTER Danny",
            "UNPLAY",
            "STATUS",
        ]
    )
    result = circus("console", str(wake), cwd=wake.parent, stdin=script + "\n")
    assert result.returncode == 0, result.stderr
    turns = turns_of(wake)
    assert [t.actor for t in turns] == ["Carol", "Ruth", "Carol"]
    ruth = turns[1]
    assert (ruth.action, ruth.dialogue, ruth.cue) == (
        "sets down the glass",
        "Who is that?",
        "Carol",
    )
    assert "waiting for Ruth" in result.stderr
    assert [(b.kind, b.actor) for b in blocks_of(wake)] == [
        ("exit", "Danny"), ("event", ""), ("enter", "Danny"),
    ]  # fmt: skip
    assert "— Danny exits —" in result.stdout and "〔Event〕 A car" in result.stdout
    assert "Ruth: back to the model." in result.stdout
    assert not (wake / "backstage" / "Ruth.log").exists()  # her line carried no thought
    assert "played by" not in result.stdout.split("scene:")[-1]


def test_the_console_never_hangs_waiting_for_a_player_at_end_of_input(wake: Path) -> None:
    result = circus(
        "console", str(wake), cwd=wake.parent, stdin="PLAY Ruth\nRUN 4 Carol\n", env=cli_env()
    )
    assert result.returncode == 0, result.stderr
    assert [t.actor for t in turns_of(wake)] == ["Carol"]
    assert "cut" in result.stderr


@pytest.mark.parametrize(
    "script",
    ["PLAY Danny\nCUE Ruth go\nWAIT\nQUIT\n", "PLAY Danny\nCUE Ruth go\nWAIT\n"],
    ids=["QUIT", "end of input"],
)
def test_leaving_the_console_gives_its_roles_back(wake: Path, script: str) -> None:
    result = circus("console", str(wake), cwd=wake.parent, stdin=script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("Danny: back to the model.")
    assert "Danny" not in (wake / ".circus" / "players.json").read_text("utf-8")
    run = circus("run", str(wake), "-n", "2", cwd=wake.parent)
    assert run.returncode == 0, run.stderr
    assert [t.actor for t in turns_of(wake)] == ["Ruth", "Danny", "Ruth"]
    assert "waiting for" not in run.stderr


def claimed(scene: Path, player: str) -> None:
    """Danny left claimed by `player` in players.json, as that frontend wrote it."""
    (scene / ".circus").mkdir(exist_ok=True)
    (scene / ".circus" / "players.json").write_text(f'{{"Danny": "{player}"}}', "utf-8")


def test_a_console_that_played_nobody_leaves_the_folder_as_it_was(wake: Path) -> None:
    before = listing(wake)
    result = circus("console", str(wake), cwd=wake.parent, stdin="STATUS\nQUIT\n")
    assert result.returncode == 0, result.stderr
    assert listing(wake) == before  # no players.json written on the way out


def test_a_run_from_the_terminal_never_waits_for_a_player_who_cannot_type_here(
    wake: Path,
) -> None:
    claimed(wake, "console")  # as a console killed mid-scene leaves it
    run = circus("run", str(wake), "-n", "3", "--start", "Danny", cwd=wake.parent)
    assert run.returncode == 0, run.stderr
    assert [t.actor for t in turns_of(wake)] == ["Danny", "Ruth", "Carol"]  # Danny's model
    assert "waiting for" not in run.stderr
    assert run.stderr.count("Danny is played by console") == 1
    assert "PLAY Danny in `circus console`; UNPLAY there" in run.stderr
    # The role stays the console's: the next console plays it, and UNPLAY there frees it.
    result = circus("console", str(wake), cwd=wake.parent, stdin="UNPLAY\n")
    assert "Danny: back to the model." in result.stdout
    assert "Danny" not in (wake / ".circus" / "players.json").read_text("utf-8")


def test_a_discord_members_role_is_played_by_the_model_here_and_points_to_unplay(
    wake: Path,
) -> None:
    claimed(wake, "discord:7")
    run = circus("run", str(wake), "-n", "1", "--start", "Danny", cwd=wake.parent)
    assert run.returncode == 0, run.stderr
    assert "Danny is played by discord:7 in Discord" in run.stderr
    assert "/unplay" in run.stderr and "circus console" not in run.stderr
    assert "discord:7" in (wake / ".circus" / "players.json").read_text("utf-8")  # still theirs
