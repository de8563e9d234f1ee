"""Moving scenes on disk: engine.folder.relocate's move_scene and move_ledger, and `circus sort-scenes`,
which moves an older folder's bound scenes and spend ledgers into their servers' folders once,
losing or doubling nothing — and `circus bot`'s refusals until it has."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from folderkit import DAY, G0, G2, G3, NEXT_DAY, files_under, scene_at, spend_row

from bot.binding import Binding, read_binding, write_binding
from bot.server_folders import loose_scenes, misplaced, own_scenes, server_folder, sort_scenes
from engine import SceneBusy, SceneNotFound, move_ledger, move_scene
from engine.errors import SceneExists
from engine.folder.store import SceneStore
from engine.spend.ledger import Ledger

REPO = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- move_scene


def test_a_scene_a_run_holds_is_not_moved(tmp_path):
    src = scene_at(tmp_path / "s")
    running = SceneStore(src)
    running.lock("s", announce=True)  # a run in progress (another holder of the run lock)
    try:
        before = files_under(src)
        with pytest.raises(SceneBusy):
            move_scene(src, tmp_path / "1" / "s")
        assert files_under(src) == before
        assert not (tmp_path / "1" / "s").exists()
    finally:
        running.unlock()
    assert move_scene(src, tmp_path / "1" / "s") == tmp_path / "1" / "s"  # free again: moves


@pytest.mark.parametrize("what", ["empty folder", "file", "scene", "symlink"])
def test_move_scene_never_replaces_what_is_at_the_destination(tmp_path, what):
    src = scene_at(tmp_path / "s")
    dest = tmp_path / "d"
    if what == "empty folder":
        dest.mkdir()
    elif what == "file":
        dest.write_text("keep", encoding="utf-8")
    elif what == "scene":
        scene_at(dest)
    else:
        dest.symlink_to(tmp_path / "nowhere")
    with pytest.raises(SceneExists):
        move_scene(src, dest)
    assert (src / "context.md").is_file()
    assert dest.is_symlink() if what == "symlink" else dest.exists()


@pytest.mark.parametrize("src", ["missing", "not-a-scene"])
def test_move_scene_of_no_scene_is_scene_not_found(tmp_path, src):
    (tmp_path / "not-a-scene").mkdir()
    with pytest.raises(SceneNotFound):
        move_scene(tmp_path / src, tmp_path / "d")
    assert not (tmp_path / "d").exists()


# ----------------------------------------------------------------------------- move_ledger


def test_move_ledger_moves_day_files_and_appends_to_one_already_there(tmp_path):
    old = Ledger(tmp_path, "discord-9")
    old.append(DAY, spend_row("old-1"))
    old.append(DAY, spend_row("old-2"))
    old.append(NEXT_DAY, spend_row("old-3"))
    new = Ledger(tmp_path / "9", "discord-9")
    new.append(DAY, spend_row("new-1"))

    assert move_ledger(tmp_path, tmp_path / "9", "discord-9") == 2
    ledger = Ledger(tmp_path / "9", "discord-9")
    assert [r["scene"] for r in ledger.rows(DAY)] == ["new-1", "old-1", "old-2"]
    assert [r["scene"] for r in ledger.rows(NEXT_DAY)] == ["old-3"]
    assert not old.folder.exists()
    assert move_ledger(tmp_path, tmp_path / "9", "discord-9") == 0  # again: nothing


def test_a_torn_last_row_stays_one_unreadable_line(tmp_path):
    old = Ledger(tmp_path, "discord-9")
    old.append(DAY, spend_row("old-1"))
    with open(old.path(DAY), "a", encoding="utf-8") as f:
        f.write('{"scene": "torn", "prompt_tok')  # a crash mid-row
    new = Ledger(tmp_path / "9", "discord-9")
    new.append(DAY, spend_row("new-1"))
    with open(new.path(DAY), "a", encoding="utf-8") as f:
        f.write('{"scene": "torn too')
    move_ledger(tmp_path, tmp_path / "9", "discord-9")
    new.append(DAY, spend_row("new-2"))
    rows = Ledger(tmp_path / "9", "discord-9").rows(DAY)
    assert [r["scene"] for r in rows] == ["new-1", "old-1", "new-2"]


# ----------------------------------------------------------------------------- sort_scenes


@pytest.fixture
def old_layout(tmp_path: Path) -> Path:
    """An older version's scenes folder: bound scenes at the top, ledgers beside them."""
    scenes = tmp_path / "scenes"
    scene_at(scenes / "審訊室", G0)
    scene_at(scenes / "wake", G2, thread=4)
    scene_at(scenes / "night", G2, thread=5)
    scene_at(scenes / "terminal")  # loose: stays
    scene_at(scenes / str(G3) / "already", G3)  # a newer bot's scene: stays
    for guild, days in ((G0, (DAY,)), (G2, (DAY, NEXT_DAY))):
        ledger = Ledger(scenes, f"discord-{guild}")
        for day in days:
            for n in range(3):
                ledger.append(day, spend_row(f"{guild}-{day}-{n}"))
    Ledger(scenes, "terminal").append(DAY, spend_row("terminal"))  # not a server's: stays
    # G2 served by a newer bot already today: its own ledger has a row of the same day
    Ledger(server_folder(scenes, G2), f"discord-{G2}").append(DAY, spend_row("new"))
    return scenes


def markers(scenes: Path, guild: int, day: date) -> list[str]:
    return [r["scene"] for r in Ledger(server_folder(scenes, guild), f"discord-{guild}").rows(day)]


def test_misplaced_names_the_bound_scenes_at_the_top(old_layout):
    assert misplaced(old_layout) == [("night", G2), ("wake", G2), ("審訊室", G0)]


def test_sort_scenes_moves_each_scene_and_ledger_into_its_server(old_layout):
    scenes_before = {name: files_under(old_layout / name) for name in ("審訊室", "wake", "night")}
    moved, ledgers = sort_scenes(old_layout)

    assert moved == [
        ("night", old_layout / str(G2) / "night"),
        ("wake", old_layout / str(G2) / "wake"),
        ("審訊室", old_layout / str(G0) / "審訊室"),
    ]
    assert sorted(ledgers) == sorted([(G0, 1), (G2, 2)])
    for name, dest in moved:
        assert not (old_layout / name).exists()
        after = files_under(dest)
        assert {k: v for k, v in after.items() if k != ".circus/run.lock"} == scenes_before[name]
        assert read_binding(dest) is not None
    assert misplaced(old_layout) == []
    assert loose_scenes(old_layout) == ["terminal"]
    assert own_scenes(old_layout, G2) == ["night", "wake"]
    assert own_scenes(old_layout, G3) == ["already"]

    # every row is in its server's ledger once; nothing is left at the top
    assert markers(old_layout, G0, DAY) == [f"{G0}-{DAY}-{n}" for n in range(3)]
    assert sorted(markers(old_layout, G2, DAY)) == sorted(
        ["new"] + [f"{G2}-{DAY}-{n}" for n in range(3)]
    )
    assert markers(old_layout, G2, NEXT_DAY) == [f"{G2}-{NEXT_DAY}-{n}" for n in range(3)]
    spend = old_layout / ".circus" / "spend"
    assert sorted(p.name for p in spend.iterdir()) == ["terminal"]
    assert [r["scene"] for r in Ledger(old_layout, "terminal").rows(DAY)] == ["terminal"]


def test_sort_scenes_a_second_time_moves_nothing(old_layout):
    sort_scenes(old_layout)
    after_first = files_under(old_layout)
    assert sort_scenes(old_layout) == ([], [])
    assert files_under(old_layout) == after_first


def test_a_stray_file_in_an_old_ledger_folder_is_not_reported_as_moving_again(old_layout):
    stray = old_layout / ".circus" / "spend" / f"discord-{G0}" / "notes.txt"
    stray.write_text("the operator's own note", encoding="utf-8")
    _moved, ledgers = sort_scenes(old_layout)
    assert (G0, 1) in ledgers
    assert sort_scenes(old_layout) == ([], [])
    assert stray.read_text(encoding="utf-8") == "the operator's own note"  # never deleted


def test_sort_scenes_of_a_new_or_empty_folder_moves_nothing(tmp_path):
    assert sort_scenes(tmp_path) == ([], [])
    scene_at(tmp_path / "terminal")
    scene_at(tmp_path / str(G0) / "s", G0)
    assert sort_scenes(tmp_path) == ([], [])


def test_sort_scenes_leaves_a_running_scene_where_it_is(old_layout):
    running = SceneStore(old_layout / "wake")
    running.lock("wake")
    try:
        with pytest.raises(SceneBusy):
            sort_scenes(old_layout)
    finally:
        running.unlock()
    assert (old_layout / "wake" / "context.md").is_file()
    moved, _ledgers = sort_scenes(old_layout)  # once it is free, a rerun finishes the job
    assert "wake" in [name for name, _dest in moved]
    assert misplaced(old_layout) == []


# ----------------------------------------------------------------------------- the command line


def cli_env(**extra: str) -> dict[str, str]:
    """The environment tests/cli/test_cli.py runs `circus` in (no operator settings), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CIRCUS_", "DISCORD_"))}
    env.update(
        CIRCUS_MODEL="scripted/improv",
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def circus(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "circus", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def cli_scenes(tmp_path: Path) -> Path:
    """An older layout made through the CLI: `circus new`, then bound as the bot binds."""
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    for name in ("審訊室", "terminal"):
        made = circus("new", str(scenes / name), cwd=tmp_path, env=cli_env())
        assert made.returncode == 0, made.stderr
    write_binding(scenes / "審訊室", Binding(guild_id=G0, channel_id=2, thread_id=3))
    Ledger(scenes, f"discord-{G0}").append(DAY, spend_row("s"))
    return scenes


def test_circus_sort_scenes_prints_what_it_moved(cli_scenes, tmp_path):
    env = cli_env(CIRCUS_SCENES_DIR=str(cli_scenes))
    result = circus("sort-scenes", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    dest = cli_scenes / str(G0) / "審訊室"
    assert result.stdout.splitlines() == [
        f"moved 審訊室 → {dest}",
        f"moved server {G0}'s spend ledger (1 day file(s))",
    ]
    assert (dest / "context.md").is_file() and (cli_scenes / "terminal" / "context.md").is_file()
    assert markers(cli_scenes, G0, DAY) == ["s"]

    again = circus("sort-scenes", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        "Nothing to move: every bound scene is in its server's folder."
    ]


def test_circus_bot_refuses_to_start_until_the_scenes_are_sorted(cli_scenes, tmp_path):
    # A token that was never valid, and no reachable Discord: the refusal comes before either.
    env = cli_env(
        CIRCUS_SCENES_DIR=str(cli_scenes),
        DISCORD_TOKEN="not-a-token",
        DISCORD_API_BASE="http://127.0.0.1:9/api/v10",
        DISCORD_GATEWAY_URL="ws://127.0.0.1:9/gateway",
    )
    before = files_under(cli_scenes)
    result = circus("bot", cwd=tmp_path, env=env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    said = result.stderr.strip()
    assert said.startswith(f"1 bound scene(s) in {cli_scenes} are not in their server's folder")
    assert "(審訊室)" in said and "`circus sort-scenes`" in said
    assert files_under(cli_scenes) == before  # the refusal moved and wrote nothing


@pytest.mark.parametrize(
    "argv, names",
    [
        (("--shards", "0-3"), ["--shards 0-3", "--shard-count"]),
        (("--shards", "3-1", "--shard-count", "4"), ["'3-1'"]),
        (("--shards", "0-4", "--shard-count", "4"), ["0 to 3"]),
        (("--shard-count", "0"), ["not '0'"]),
    ],
)
def test_circus_bot_refuses_bad_shard_settings_naming_them(tmp_path, argv, names):
    (tmp_path / "scenes").mkdir()
    env = cli_env(
        CIRCUS_SCENES_DIR=str(tmp_path / "scenes"),
        DISCORD_TOKEN="not-a-token",
        DISCORD_API_BASE="http://127.0.0.1:9/api/v10",
        DISCORD_GATEWAY_URL="ws://127.0.0.1:9/gateway",
    )
    result = circus("bot", *argv, cwd=tmp_path, env=env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    for name in names:
        assert name in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_circus_sort_scenes_stopped_by_a_name_taken_still_says_what_it_moved(cli_scenes, tmp_path):
    # G0 already has a scene called `龍` in its folder (a newer bot made it), and the
    # older layout has one of the same name bound to G0 at the top.
    scene_at(cli_scenes / str(G0) / "龍", G0)
    scene_at(cli_scenes / "龍", G0)
    env = cli_env(CIRCUS_SCENES_DIR=str(cli_scenes))
    result = circus("sort-scenes", cwd=tmp_path, env=env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout.splitlines() == [f"moved 審訊室 → {cli_scenes / str(G0) / '審訊室'}"]
    assert result.stderr.strip() == (
        f"circus: {cli_scenes / str(G0) / '龍'} already exists — choose another name; "
        "nothing was written."
    )
    assert (cli_scenes / "龍" / "context.md").is_file()  # left where it was, nothing replaced

    (cli_scenes / "龍").rename(cli_scenes / "龍舊")  # the operator renames it, and reruns
    again = circus("sort-scenes", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        f"moved 龍舊 → {cli_scenes / str(G0) / '龍舊'}",
        f"moved server {G0}'s spend ledger (1 day file(s))",
    ]
    assert markers(cli_scenes, G0, DAY) == ["s"]
