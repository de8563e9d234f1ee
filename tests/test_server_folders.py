"""bot.server_folders and engine.relocate on real scene folders: a server's scenes live in
scenes/<server id>/, a process sees only the servers of its shards, a loose (terminal) scene is
every server's until one opens it — and then exactly one server's — and `circus sort-scenes`
moves an older folder's bound scenes and spend ledgers once, losing or doubling nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from conftest import write_scene

from bot.binding import Binding, opening, read_binding, write_binding
from bot.server_folders import (
    bound_scenes,
    claim,
    home_of,
    loose_scenes,
    misplaced,
    own_scenes,
    scene_folder,
    server_folder,
    server_ids,
    sort_scenes,
    visible_scenes,
)
from bot.shards import ShardPlan, shard_of
from engine import SceneBusy, SceneNotFound, move_ledger, move_scene
from engine.errors import SceneExists
from engine.ledger import Ledger
from engine.store import SceneStore

REPO = Path(__file__).resolve().parent.parent

# Real-looking server ids and their shard of 4 ((id >> 22) % 4), checked below.
G0 = 175928847299117063  # shard 0
G0B = 1046825418375397446  # shard 0 too
G2 = 81384788765712384  # shard 2
G3 = 1234567890123456789  # shard 3
DAY = date(2026, 12, 1)
NEXT_DAY = date(2026, 12, 2)


def test_the_servers_shards_are_what_the_tables_below_assume():
    assert [shard_of(g, 4) for g in (G0, G0B, G2, G3)] == [0, 0, 2, 3]


def scene_at(folder: Path, guild: int | None = None, thread: int = 3) -> Path:
    """A scene folder as `circus new` makes it; bound to `guild` as the bot records it."""
    write_scene(folder, language="en")
    if guild is not None:
        write_binding(folder, Binding(guild_id=guild, channel_id=2, thread_id=thread))
    return folder


def files_under(root: Path) -> dict[str, bytes]:
    """Every file under root (relative path -> bytes), for "nothing lost, nothing changed"."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def spend_row(marker: str) -> dict:
    return {"at": "2026-12-01T10:00:00+00:00", "scene": marker, "prompt_tokens": 7, "calls": 1}


# ----------------------------------------------------------------------------- what a process sees


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    """Three servers' folders, a loose scene and a scene copied by hand into the wrong server."""
    scenes = tmp_path / "scenes"
    scene_at(scenes / str(G0) / "審訊室", G0)
    scene_at(scenes / str(G0) / "draft")  # unbound, in G0's folder: G0's to open
    scene_at(scenes / str(G0B) / "wake", G0B)
    scene_at(scenes / str(G2) / "審訊室", G2)  # the same name in another server
    scene_at(scenes / str(G2) / "copied", G3)  # G3's binding found in G2's folder
    scene_at(scenes / str(G3) / "night", G3)
    scene_at(scenes / "loose")  # made in the terminal: nobody's yet
    (scenes / "12345abc").mkdir()  # not a server id: ignored
    scene_at(scenes / "12345abc" / "x", G0)
    return scenes


def test_server_ids_are_the_folders_named_by_a_number(folders):
    assert server_ids(folders) == sorted([G0, G0B, G2, G3])
    assert server_ids(folders / "missing") == []


PLANS = [
    # (plan, the (server, scene) pairs its process attaches)
    (ShardPlan(), [(G0, "審訊室"), (G0B, "wake"), (G2, "審訊室"), (G3, "night")]),
    (ShardPlan((0,), 4), [(G0, "審訊室"), (G0B, "wake")]),
    (ShardPlan((2,), 4), [(G2, "審訊室")]),  # G3's copied scene is never attached here
    (ShardPlan((3,), 4), [(G3, "night")]),
    (ShardPlan((2, 3), 4), [(G2, "審訊室"), (G3, "night")]),
    (ShardPlan((1,), 4), []),
    (ShardPlan((0, 1, 2, 3), 4), [(G0, "審訊室"), (G0B, "wake"), (G2, "審訊室"), (G3, "night")]),
]


@pytest.mark.parametrize("plan, expected", PLANS, ids=lambda p: getattr(p, "label", ""))
def test_bound_scenes_are_only_the_servers_of_the_plans_shards(folders, plan, expected):
    found = bound_scenes(folders, plan)
    assert sorted((g, name) for g, name, _b in found) == sorted(expected)
    for guild, _name, binding in found:
        assert binding.guild_id == guild


OWN = [
    (G0, ["draft", "審訊室"]),
    (G0B, ["wake"]),
    (G2, ["審訊室"]),  # `copied` is G3's: skipped
    (G3, ["night"]),  # and not G3's either while it sits in G2's folder
    (42, []),  # a server with no folder yet
]


@pytest.mark.parametrize("guild, names", OWN)
def test_own_scenes_skip_another_servers_scene(folders, guild, names):
    assert own_scenes(folders, guild) == sorted(names)


@pytest.mark.parametrize("guild, names", OWN)
def test_loose_scenes_are_visible_in_every_server(folders, guild, names):
    assert loose_scenes(folders) == ["loose"]
    assert visible_scenes(folders, guild) == sorted({*names, "loose"})


def test_a_loose_scene_with_an_unreadable_binding_is_nobodys(folders):
    broken = scene_at(folders / "broken")
    (broken / ".circus").mkdir(exist_ok=True)
    (broken / ".circus" / "discord.json").write_text('{"guild_id": "x"}', encoding="utf-8")
    assert loose_scenes(folders) == ["loose"]
    assert "broken" not in visible_scenes(folders, G0)
    assert misplaced(folders) == []  # nor anyone's to sort: its file must be fixed by hand


HOMES = [
    # (server, name, where /scene open finds it, relative to the scenes folder)
    (G0, "審訊室", f"{G0}/審訊室"),
    (G2, "審訊室", f"{G2}/審訊室"),  # same name, each server its own
    (G0, "draft", f"{G0}/draft"),
    (G0, "loose", "loose"),
    (G2, "loose", "loose"),
    (G3, "copied", None),  # G3's scene sitting in G2's folder is not found from G3
    (G0B, "night", None),  # another server's scene is not found by name
    (G0, "nowhere", None),
]


@pytest.mark.parametrize("guild, name, where", HOMES)
def test_home_of(folders, guild, name, where):
    found = home_of(folders, guild, name)
    assert found == (folders / where if where else None)


def test_another_servers_scene_in_this_folder_is_refused_as_elsewhere(folders):
    # /scene open finds the folder by name, then the opening rules read its binding: G3's
    # scene copied into G2's folder is never G2's to direct.
    folder = home_of(folders, G2, "copied")
    assert folder == folders / str(G2) / "copied"
    binding = read_binding(folder)
    assert binding is not None and binding.guild_id == G3
    assert opening(7, G2, True, binding) == "elsewhere"


# ----------------------------------------------------------------------------- claiming a loose scene


def test_claim_moves_a_loose_scene_into_the_servers_folder_whole(folders):
    before = files_under(folders / "loose")
    dest = claim(folders, G2, "loose")
    assert dest == folders / str(G2) / "loose" == scene_folder(folders, G2, "loose")
    assert not (folders / "loose").exists()
    after = files_under(dest)
    assert {k: v for k, v in after.items() if k != ".circus/run.lock"} == before
    assert "loose" not in loose_scenes(folders)
    assert "loose" in visible_scenes(folders, G2)
    assert "loose" not in visible_scenes(folders, G0)  # it is G2's now
    assert home_of(folders, G0, "loose") is None


def test_a_loose_scene_opened_by_two_servers_goes_to_one(folders):
    first = claim(folders, G0, "loose")
    with pytest.raises(SceneNotFound):
        claim(folders, G3, "loose")
    assert first.is_dir()
    assert not (server_folder(folders, G3) / "loose").exists()
    assert own_scenes(folders, G3) == ["night"]


def test_claim_never_replaces_a_scene_of_the_same_name(folders):
    scene_at(folders / "審訊室")  # a loose scene named like G0's own
    own = files_under(folders / str(G0) / "審訊室")
    with pytest.raises(SceneExists):
        claim(folders, G0, "審訊室")
    assert files_under(folders / str(G0) / "審訊室") == own
    assert (folders / "審訊室" / "context.md").is_file()  # the loose one stays where it was


def test_claim_makes_the_servers_folder_if_it_has_none(folders):
    dest = claim(folders, 555, "loose")
    assert dest == folders / "555" / "loose" and (dest / "context.md").is_file()
    assert server_ids(folders)[0] == 555


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
    """The environment tests/test_cli.py runs `circus` in (no operator settings), plus `extra`."""
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


# ----------------------------------------------------------------------------- from review
def test_a_loose_scene_kept_in_a_vault_behind_a_relative_link_still_opens_after_its_claim(
    tmp_path,
):
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    scene_at(tmp_path / "vault" / "夜")
    os.symlink("../vault/夜", scenes / "夜")  # a writer keeps the scene in their vault
    assert loose_scenes(scenes) == ["夜"]
    dest = claim(scenes, G0, "夜")
    assert dest.is_symlink() and dest.resolve() == (tmp_path / "vault" / "夜").resolve()
    assert "夜" in own_scenes(scenes, G0) and not (scenes / "夜").exists()
    assert is_scene_dir(dest)


def is_scene_dir(path: Path) -> bool:
    from engine import is_scene

    return is_scene(path)


async def test_a_terminal_run_that_loses_the_race_to_a_claim_leaves_no_stray_folder(
    tmp_path, models
):
    """`circus run scenes/夜` has read the scene when a server's /scene open moves it; the
    run's lock then finds it gone and says so, and makes nothing at the old path."""
    import asyncio

    from engine import Rehearsal

    scenes = tmp_path / "scenes"
    scene_at(scenes / "夜")
    terminal = Rehearsal(scenes / "夜", models=models)
    real = terminal.spend.refuse_if_spent

    async def check_then_lose_the_race(state):  # the last step before the run's lock
        await asyncio.to_thread(claim, scenes, G0, "夜")
        return await real(state)

    terminal.spend.refuse_if_spent = check_then_lose_the_race
    with pytest.raises(SceneNotFound):
        await terminal.run(2)
    assert not (scenes / "夜").exists()
    assert is_scene_dir(scenes / str(G0) / "夜")
