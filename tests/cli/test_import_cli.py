"""Script in → rehearse → script out from the command line, as a writer runs it (subprocesses,
scripted model): `circus import`, `circus run`, `circus export --into`, and the refusals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from clikit import circus, listing
from scriptkit import SCRIPTS, screenplain_speeches


def test_import_run_and_splice_back(tmp_path: Path) -> None:
    script = Path(shutil.copy(SCRIPTS / "teahouse.fountain", tmp_path / "茶樓.fountain"))
    made = circus("import", str(script), "tea", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    said = made.stdout
    assert "老闆、阿梅" in said
    assert "老闆知道店已經賣了" in said  # the writer's note, listed to the director alone
    assert "circus run" in said
    run = circus("run", "tea", "-n", "2", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "[6]" in run.stdout  # turn 6: right after the five imported lines
    out = circus("export", "tea", "--into", str(script), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    spliced = tmp_path / "tea" / "exports" / "take_1" / "茶樓.fountain"
    assert "tea/exports/take_1/茶樓.fountain" in out.stdout
    before = script.read_text(encoding="utf-8")
    after = spliced.read_text(encoding="utf-8")
    cut = before.index("INT. 茶樓 - 晨")
    assert after.startswith(before[: before.index("她會回來的。") + len("她會回來的。\n")])
    assert after.endswith(before[cut - 1 :])
    added = after[
        before.index("她會回來的。") + len("她會回來的。\n") : len(after) - len(before[cut - 1 :])
    ]
    new = screenplain_speeches(after)[5:7]  # the five imported speeches come first
    assert len(new) == 2 and {name for name, _, _ in new} <= {"老闆", "阿梅"}
    assert all(f"\n@{name}\n" in added for name, _, _ in new)  # Chinese cues forced with @


def test_scene_by_heading_and_until(tmp_path: Path) -> None:
    made = circus(
        "import", str(SCRIPTS / "harbour.fountain"), "office", "--heading", "harbour office",
        "--until", "41", cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "4 line(s)" in made.stdout and "through line 41" in made.stdout


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--scene", "9"], "2 · INT. HARBOUR OFFICE - NIGHT"),
        (["--heading", "nowhere"], "1 · COLD OPEN"),
        (["--scene", "2", "--heading", "pier"], "--scene"),
    ],
)
def test_a_wrong_scene_is_one_line_and_nothing_written(tmp_path: Path, argv, says) -> None:
    before = listing(tmp_path)
    made = circus("import", str(SCRIPTS / "harbour.fountain"), "s", *argv, cwd=tmp_path)
    assert made.returncode == 2
    assert says in made.stderr and len(made.stderr.strip().splitlines()) == 1
    assert listing(tmp_path) == before


def test_an_unforced_chinese_cue_names_the_way_out(tmp_path: Path) -> None:
    script = tmp_path / "s.fountain"
    script.write_text(
        "INT. 茶樓 - 夜\n\n老闆\n門沒鎖。\n\n阿梅\n你收到我的信了。\n", encoding="utf-8"
    )
    refused = circus("import", str(script), "s", cwd=tmp_path)
    assert refused.returncode == 2 and "@老闆" in refused.stderr and "--cast" in refused.stderr
    assert not (tmp_path / "s").exists()
    made = circus("import", str(script), "s", "--cast", "老闆,阿梅", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "2 句台詞" in made.stdout


@pytest.mark.parametrize("until", ["0", "x"])
def test_until_is_a_line_number(tmp_path: Path, until: str) -> None:
    made = circus("import", str(SCRIPTS / "harbour.fountain"), "s", "--until", until, cwd=tmp_path)
    assert made.returncode == 2 and "line number" in made.stderr
    assert not (tmp_path / "s").exists()


def test_export_into_replace_swaps_the_writer_range(tmp_path: Path) -> None:
    script = Path(shutil.copy(SCRIPTS / "teahouse.fountain", tmp_path / "茶樓.fountain"))
    assert circus("import", str(script), "tea", cwd=tmp_path).returncode == 0
    assert circus("run", "tea", "-n", "2", cwd=tmp_path).returncode == 0
    bad = circus("export", "tea", "--into", str(script), "--replace", "4-6", cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "INT. 茶樓 - 夜" in bad.stderr and not (tmp_path / "tea" / "exports").exists()
    out = circus("export", "tea", "--into", str(script), "--replace", "29-30", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "取代了第 29–30 行" in out.stdout  # the scene speaks Chinese
    before = script.read_text(encoding="utf-8").split("\n")
    after = (tmp_path / "tea" / "exports" / "take_1" / "茶樓.fountain").read_text(encoding="utf-8")
    head, tail = "\n".join(before[:28]) + "\n", "\n" + "\n".join(before[30:])
    assert after.startswith(head) and after.endswith(tail) and "她會回來的。" not in after
    new = screenplain_speeches(after)[4:6]  # four imported speeches kept, the fifth replaced
    assert len(new) == 2 and {name for name, _, _ in new} <= {"老闆", "阿梅"}


def test_replace_without_into_is_a_usage_error(tmp_path: Path) -> None:
    made = circus("export", "tea", "--replace", "1-2", cwd=tmp_path)
    assert made.returncode == 2 and "--into" in made.stderr


@pytest.mark.parametrize("ignored", [["--format", "fdx"], ["--thoughts"]])
def test_into_with_a_format_or_thoughts_is_refused_not_ignored(tmp_path: Path, ignored) -> None:
    script = SCRIPTS / "harbour.fountain"
    made = circus("export", "tea", "--into", str(script), *ignored, cwd=tmp_path)
    assert made.returncode == 2 and "--format and --thoughts" in made.stderr


@pytest.mark.parametrize(
    ("heading", "cuts"), [("cold open", 1), ("harbour office", 1), ("pier", 0)]
)
def test_only_the_scenes_own_cut_passages_are_counted(tmp_path: Path, heading, cuts) -> None:
    # harbour.fountain has two /* … */ passages: one in the cold open, one in the office
    made = circus(
        "import", str(SCRIPTS / "harbour.fountain"), "s", "--heading", heading, cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    said = [line for line in made.stdout.splitlines() if "cut passage" in line]
    assert said == ([f"{cuts} cut passage(s) ignored."] if cuts else [])
    sheet = next((tmp_path / "s").rglob("script.md")).read_text(encoding="utf-8")
    assert f"- Cut passages ignored: {cuts}\n" in sheet
