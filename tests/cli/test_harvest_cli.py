"""The harvest from the command line: pick, unpick, picks, export, report, take diff, and the
console's PICK/PICKS, run as a director would (subprocesses, scripted model)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from clikit import circus, listing, turns_of


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wake scene after 3 turns (made once; each test works on its own copy)."""
    root = tmp_path_factory.mktemp("played")
    assert circus("new", "wake", "--template", "wake", cwd=root).returncode == 0
    result = circus("run", "wake", "-n", "3", "--start", "Ruth", cwd=root)
    assert result.returncode == 0, result.stderr
    return root / "wake"


@pytest.fixture
def wake(played: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(played, tmp_path / "wake"))


def test_the_harvest_from_the_command_line(wake: Path) -> None:
    cwd, s = wake.parent, str(wake)
    help_text = circus("--help", cwd=cwd).stdout
    for command in ("pick", "unpick", "picks", "export", "report"):
        assert command in help_text

    second = turns_of(wake)[1]
    result = circus("pick", s, "2", "--note", "keep this", "--by", "alice", cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Picked: take_1 · turn 2 · " + second.actor)
    assert circus("pick", s, "2", "--by", "bob", cwd=cwd).returncode == 0
    again = circus("pick", s, "2", "--by", "Alice", cwd=cwd)  # the same writer, another case
    assert again.returncode == 0, again.stderr
    listed = circus("picks", s, cwd=cwd).stdout.strip().splitlines()
    assert len(listed) == 1 and "⭐2 (alice, bob)" in listed[0] and "keep this" in listed[0]
    assert second.dialogue in (wake / "picks.md").read_text(encoding="utf-8")

    report = circus("report", s, cwd=cwd)
    # titled by the scene's own heading (the wake template's context.md has one)
    title = "# Take 1 · The kitchen on Jefferson Street, the night after the funeral\n"
    assert report.returncode == 0 and report.stdout.startswith(title)
    assert "⭐ 2 (alice, bob)" in report.stdout and not (wake / "takes").exists()

    exported = circus("export", s, cwd=cwd)
    assert exported.returncode == 0, exported.stderr
    names = sorted(Path(p).name for p in exported.stdout.split())
    assert names == ["screenplay.fdx", "screenplay.fountain", "screenplay.md", "storyboard.csv"]
    assert all((wake / "exports" / "take_1" / n).is_file() for n in names)
    only = circus("export", s, "--picks", "--format", "csv", "--out", str(cwd / "o"), cwd=cwd)
    assert only.returncode == 0 and [Path(p).name for p in only.stdout.split()] == [
        "storyboard.csv"
    ]

    assert circus("take", s, "save", cwd=cwd).returncode == 0
    assert (wake / "takes" / "take_1" / "report.md").is_file()
    assert not (wake / "takes" / "take_1" / "exports").exists()
    assert circus("run", s, "-n", "2", cwd=cwd).returncode == 0
    diff = circus("take", s, "diff", "1", "current", cwd=cwd)
    assert diff.returncode == 0, diff.stderr
    assert "Shared opening: 3 turns (1–3)." in diff.stdout and "They part at turn 4." in diff.stdout
    assert "## take 2 (current) from turn 4" in diff.stdout
    full = circus("take", s, "diff", "1", "2", "--full", cwd=cwd).stdout
    assert all(f"[{n}] " in full for n in (1, 2, 3, 4, 5))

    assert circus("unpick", s, "2", "--take", "1", "--by", "alice", cwd=cwd).returncode == 0
    assert "⭐1 (bob)" in circus("picks", s, cwd=cwd).stdout
    assert circus("unpick", s, "2", "--take", "1", cwd=cwd).stdout.strip() == "Unpicked turn 2."
    assert "Nothing picked yet" in circus("picks", s, cwd=cwd).stdout


BAD_HARVEST = [
    ("unpick", "{s}", "1"),  # not picked
    ("unpick", "{s}", "1", "--take", "9"),
    ("pick", "{s}", "1", "--take", "9"),
    ("pick", "{s}", "99"),
    ("pick", "{s}", "x"),
    ("export", "{s}", "--format", "fountain,pdf"),
    ("export", "{s}", "--take", "9"),
    ("export", "{s}", "--picks"),  # nothing picked
    ("report", "{s}", "--take", "9"),
    ("take", "{s}", "diff", "1", "9"),
    ("take", "{s}", "diff", "1"),
    ("take", "{s}", "list", "--full"),
]


@pytest.mark.parametrize("argv", BAD_HARVEST, ids=lambda a: " ".join(a))
def test_bad_harvest_input_exits_2_with_one_line_and_writes_nothing(wake: Path, argv) -> None:
    before = listing(wake.parent)
    result = circus(*(a.format(s=wake) for a in argv), cwd=wake.parent)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("circus: "), result.stderr
    assert result.stdout == ""
    assert listing(wake.parent) == before


def test_console_pick_and_picks(wake: Path) -> None:
    result = circus(
        "console",
        str(wake),
        cwd=wake.parent,
        stdin="PICK 1 what a line\nPICKS\nPICK x\nUNPICK 1\nTAKE SAVE\nTAKE DIFF 1 current\n",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Picked: take_1 · turn 1 · Ruth" in out and "what a line" in out
    assert "PICK needs a turn number" in out + result.stderr
    assert "Unpicked turn 1." in out
    assert "Shared opening: 3 turns (1–3)." in out and "The takes are identical." in out
    assert "## take_1 · turn 1" not in (wake / "picks.md").read_text(encoding="utf-8")


def test_notes_on_lines_from_the_command_line(wake: Path) -> None:
    cwd, s = wake.parent, str(wake)
    first, second, _ = turns_of(wake)
    for turn, text, by in (("1", "the beat", "ana"), ("1", "too on the", "bo"), ("2", "cut", "")):
        extra = ["--by", by] if by else []
        noted = circus("line-note", s, turn, *text.split(), *extra, cwd=cwd)
        assert noted.returncode == 0, noted.stderr
        assert noted.stdout.startswith(f"📌 Noted on turn {turn} (")
    text = (wake / "line-notes.md").read_text(encoding="utf-8")
    assert f"## Turn 1 · {first.actor}\n- the beat — ana (" in text
    assert "- cut — console (" in text  # the terminal's writer, as the console names them

    listed = circus("notes", s, cwd=cwd).stdout.splitlines()
    assert listed[0].startswith(f"turn 1 · {first.actor}: {first.dialogue[:20]}")
    assert listed[1:3] == ["  📌 the beat — ana", "  📌 too on the — bo"]
    assert listed[3].startswith(f"turn 2 · {second.actor}: ") and listed[4] == "  📌 cut — console"
    assert "the beat — ana" in circus("report", s, cwd=cwd).stdout

    before = listing(wake)
    missing = circus("line-note", s, "9", "late", cwd=cwd)
    assert missing.returncode == 2 and "turns 1–3" in missing.stderr and "9" in missing.stderr
    assert listing(wake) == before
    assert circus("take", s, "save", cwd=cwd).returncode == 0  # the take keeps its notes
    assert circus("notes", s, "--take", "1", cwd=cwd).stdout.splitlines() == listed
    assert circus("notes", s, "--take", "9", cwd=cwd).returncode == 2


def test_a_take_without_notes_says_how_to_leave_one(wake: Path) -> None:
    listed = circus("notes", str(wake), cwd=wake.parent)
    assert listed.returncode == 0
    assert listed.stdout.startswith(
        "No notes on the lines of take 1 (note one with: circus line-note"
    )
