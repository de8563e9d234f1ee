"""A number a person types (or hand-edits into a scene file) is read by one bounded parser,
engine.whole_number: a 5,000-digit number, "²" or "١٢" is one clear line everywhere — the
console, the command line, the bot — never int()'s ValueError or a traceback."""

from __future__ import annotations

import pytest
from botkit import room
from clikit import circus
from consolekit import console

from engine import Rehearsal, shown_number, whole_number
from engine.folder.stage import parse_blocks
from engine.harvest.picks import parse_picks

HUGE = "9" * 5000


@pytest.mark.parametrize(
    "text, digits, signed, expected",
    [
        ("7", 9, False, 7),
        (" 12 ", 9, False, 12),
        ("007", 9, False, 7),
        ("123456789", 9, False, 123456789),
        ("1234567890", 9, False, None),  # more digits than asked for
        (HUGE, 9, False, None),  # int() would raise "Exceeds the limit (4300 digits)"
        ("²", 9, False, None),  # "²".isdigit() is True, int("²") raises
        ("١٢", 9, False, None),  # int() reads Arabic-Indic digits; people never mean them
        ("１２", 9, False, None),  # full-width
        ("1_000", 9, False, None),  # int() reads underscores
        ("-3", 9, False, None),
        ("-3", 9, True, -3),
        ("+3", 9, True, 3),
        ("-", 9, True, None),
        ("", 9, False, None),
        ("3.0", 9, False, None),
        (None, 9, False, None),
        (True, 9, False, None),  # JSON true is not a number
        (42, 9, False, 42),  # a JSON number a file held
        ("12345678901234567890", 20, False, 12345678901234567890),  # a Discord snowflake
    ],
)
def test_whole_number_reads_only_bounded_ascii_digits(text, digits, signed, expected):
    assert whole_number(text, digits, signed=signed) == expected


def test_a_refusal_quotes_a_long_number_short():
    assert shown_number(HUGE) == repr("9" * 20 + "…")
    assert shown_number("²") == "'²'"


async def test_console_pick_and_unpick_with_a_strange_number_is_one_line(scene, scripted):
    out, err, _ = await console(
        scene,
        "RUN 2",
        "WAIT",
        f"PICK {HUGE}",
        f"UNPICK {HUGE}",
        "PICK ²",
        "UNPICK ١٢",
        "PICK",
        "PICK 1 STILL-HERE",
        models=scripted,
    )
    errors = [line for line in err.splitlines() if line.startswith("circus:")]
    assert len(errors) == 5, err
    assert all(len(line) < 200 for line in errors), errors
    assert "Traceback" not in err + out and "ValueError" not in err + out
    assert "STILL-HERE" in (scene / "picks.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "argv",
    [("pick", "{s}", HUGE), ("unpick", "{s}", "²"), ("run", "{s}", "-n", HUGE)],
    ids=["pick-huge", "unpick-superscript", "run-huge"],
)
def test_the_command_line_refuses_a_strange_number_in_one_short_line(scene, argv):
    result = circus(*(a.format(s=scene) for a in argv), cwd=scene.parent)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("circus: ") and len(lines[0]) < 300, lines


async def test_a_hand_edited_heading_with_a_huge_number_is_just_a_line(scene):
    picks = f"## take_{HUGE} · turn 1 · 林小姐\n\n**Line:** 是。\n"
    assert parse_picks(picks) == []
    blocks = f"## {HUGE}.1 · Event\n\n電話響了。\n"
    assert parse_blocks(blocks) == []
    (scene / "picks.md").write_text(picks, encoding="utf-8")
    assert await Rehearsal(scene).harvest.picks() == []


@pytest.fixture
def improv(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


@pytest.mark.parametrize(
    "command, options",
    [
        ("export", {"take": HUGE}),
        ("export", {"take": "take_²"}),
        ("take compare", {"a": HUGE, "b": "current"}),
        ("take compare", {"a": "1", "b": "١٢"}),
        ("report", {"take": HUGE}),  # a director's command: asked by one below
    ],
    ids=["export-huge", "export-superscript", "compare-huge", "compare-arabic", "report-huge"],
)
async def test_asking_the_bot_for_a_strange_take_reads_one_line(
    tmp_path, improv, caplog, command, options
):
    async with room(tmp_path) as r:
        r.fake.add_user("bob")
        thread = await r.new_scene("審訊室")
        user = "alice" if command == "report" else "bob"
        text = await r.ask(command, options, user=user, channel=thread)
        assert "不是" in text or "is not a take" in text, text
        assert "ValueError" not in text and len(text) < 300
    assert "Traceback" not in caplog.text and "ValueError" not in caplog.text
