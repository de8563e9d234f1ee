"""`circus read` as a writer runs it (subprocesses, the offline voices): the files it prints,
one clear line for what it cannot do, and nothing half-written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from clikit import circus, circus_process, cli_env, listing
from readkit import cue_times, duration


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wake scene (English) after 4 turns, take 1 saved (made once; each test copies it)."""
    root = tmp_path_factory.mktemp("played")
    assert circus("new", "wake", "--template", "wake", cwd=root).returncode == 0
    result = circus("run", "wake", "-n", "4", "--start", "Ruth", cwd=root)
    assert result.returncode == 0, result.stderr
    assert circus("take", "wake", "save", cwd=root).returncode == 0
    return root / "wake"


@pytest.fixture
def wake(played: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(played, tmp_path / "wake"))


def test_a_read_prints_its_files_and_what_it_took(wake: Path) -> None:
    result = circus("read", str(wake), "--take", "1", cwd=wake.parent)
    assert result.returncode == 0, result.stderr
    audio, cues, summary = result.stdout.strip().splitlines()
    assert audio == str(wake / "exports" / "read" / "take_1.ogg")
    assert cues == str(wake / "exports" / "read" / "take_1.txt")
    assert summary.endswith("0 from the cache.") and "made by espeak" in summary
    sheet = Path(cues).read_text(encoding="utf-8")
    assert "narrator (en-us)" in sheet and "turn 4" in sheet
    assert duration(Path(audio)) > cue_times(sheet)[-1]
    again = circus("read", str(wake), "--take", "1", cwd=wake.parent)
    assert "0 made by espeak" in again.stdout


def test_wav_to_a_file_of_your_own_with_a_range(wake: Path) -> None:
    out = wake.parent / "mine.wav"
    result = circus(
        "read", str(wake), "--from", "2", "--to", "3", "--format", "wav", "--out", str(out),
        cwd=wake.parent,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:4] == b"RIFF"
    sheet = (wake.parent / "mine.txt").read_text(encoding="utf-8")
    assert "turn 2" in sheet and "turn 3" in sheet and "turn 4" not in sheet


def test_the_out_files_name_says_its_format(wake: Path) -> None:
    out = wake.parent / "mine.mp3"
    result = circus("read", str(wake), "--to", "1", "--out", str(out), cwd=wake.parent)
    assert result.returncode == 0, result.stderr
    assert str(out) in result.stdout and not (wake.parent / "mine.ogg").exists()
    assert out.read_bytes()[:3] == b"ID3" or out.read_bytes()[:2] in (b"\xff\xfb", b"\xff\xf3")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--take", "7"), "No take 7"),
        (("--from", "3", "--to", "1"), "runs backwards"),
        (("--from", "40"), "has no turns in that range"),
        (("--picks",), "Nothing is picked yet"),
        (("--format", "flac"), "invalid choice"),
        (("--out", "x.mp3", "--format", "wav"), "names another format"),
        (("--out", "x.m4a"), "names another format"),  # never quietly renamed to x.ogg
    ],
)
def test_bad_input_is_one_line_and_nothing_is_written(wake: Path, args, says) -> None:
    before = listing(wake)
    result = circus("read", str(wake), *args, cwd=wake.parent)
    assert result.returncode == 2
    assert says in result.stderr and len(result.stderr.strip().splitlines()) <= 2
    assert listing(wake) == before


def test_without_a_voice_engine_one_line_says_what_to_install(wake: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked" / "espeakng_loader"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('not installed')\n")
    env = cli_env()
    env["PYTHONPATH"] = f"{blocked.parent}:{env['PYTHONPATH']}"
    before = listing(wake)
    result = circus_process("read", str(wake), cwd=wake.parent, env=env)  # its own imports
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "pip install -e '.[voice]'" in line and "CIRCUS_TTS_MODEL" in line
    assert listing(wake) == before
