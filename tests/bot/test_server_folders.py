"""bot.server_folders on real scene folders: a server's scenes live in scenes/<server id>/, a
process sees only the servers of its shards, and a loose (terminal) scene stays the operator's:
no server sees it unless the operator names the server (CIRCUS_TERMINAL_SCENE_SERVERS) or gives
it the scene (`circus scene give`) — and once one opens it, it is exactly one server's. (Moving scenes and ledgers, and
`circus sort-scenes`: test_sort_scenes.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from folderkit import G0, G0B, G2, G3, files_under, scene_at

from bot.binding import opening, read_binding
from bot.server_folders import (
    bound_scenes,
    claim,
    give_scene,
    home_of,
    loose_scenes,
    misplaced,
    own_scenes,
    scene_folder,
    server_folder,
    server_ids,
    terminal_servers,
    visible_scenes,
)
from bot.shards import ShardPlan, shard_of
from engine import CircusError, SceneNotFound, is_scene
from engine.errors import SceneExists


def test_the_servers_shards_are_what_the_tables_below_assume():
    assert [shard_of(g, 4) for g in (G0, G0B, G2, G3)] == [0, 0, 2, 3]


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
def test_loose_scenes_are_visible_in_no_server_by_default(folders, guild, names):
    assert loose_scenes(folders) == ["loose"]
    assert visible_scenes(folders, guild, frozenset()) == sorted(names)


@pytest.mark.parametrize("guild, names", OWN)
def test_loose_scenes_are_visible_only_in_the_servers_the_operator_names(folders, guild, names):
    named = frozenset({G0, 42})
    expected = sorted({*names, "loose"}) if guild in named else sorted(names)
    assert visible_scenes(folders, guild, named) == expected


@pytest.mark.parametrize(
    "text, ids",
    [
        (None, frozenset()),
        ("", frozenset()),
        (f"{G0}", frozenset({G0})),
        (f" {G0} , {G2},", frozenset({G0, G2})),
    ],
)
def test_the_operator_names_the_servers_by_id(text, ids):
    assert terminal_servers(text) == ids


@pytest.mark.parametrize("text", ["all", "*", "guild-1", "12 34", "-5", "0", "1" * 21, "0123"])
def test_a_server_list_that_is_not_ids_is_refused_in_one_line(text):
    with pytest.raises(CircusError) as caught:
        terminal_servers(text)
    assert "CIRCUS_TERMINAL_SCENE_SERVERS" in str(caught.value) and "\n" not in str(caught.value)


def test_a_loose_scene_with_an_unreadable_binding_is_nobodys(folders):
    broken = scene_at(folders / "broken")
    (broken / ".circus").mkdir(exist_ok=True)
    (broken / ".circus" / "discord.json").write_text('{"guild_id": "x"}', encoding="utf-8")
    assert loose_scenes(folders) == ["loose"]
    assert "broken" not in visible_scenes(folders, G0, frozenset({G0}))
    assert misplaced(folders) == []  # nor anyone's to sort: its file must be fixed by hand


OPEN_TO = frozenset({G0})
HOMES = [
    # (server, name, where /scene open finds it, relative to the scenes folder)
    (G0, "審訊室", f"{G0}/審訊室"),
    (G2, "審訊室", f"{G2}/審訊室"),  # same name, each server its own
    (G0, "draft", f"{G0}/draft"),
    (G0, "loose", "loose"),  # G0 is named in CIRCUS_TERMINAL_SCENE_SERVERS (OPEN_TO)
    (G2, "loose", None),  # G2 is not: the terminal's scene is not found from there
    (G3, "copied", None),  # G3's scene sitting in G2's folder is not found from G3
    (G0B, "night", None),  # another server's scene is not found by name
    (G0, "nowhere", None),
]


@pytest.mark.parametrize("guild, name, where", HOMES)
def test_home_of(folders, guild, name, where):
    found = home_of(folders, guild, name, OPEN_TO)
    assert found == (folders / where if where else None)


def test_another_servers_scene_in_this_folder_is_refused_as_elsewhere(folders):
    # /scene open finds the folder by name, then the opening rules read its binding: G3's
    # scene copied into G2's folder is never G2's to direct.
    folder = home_of(folders, G2, "copied", OPEN_TO)
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
    assert "loose" in visible_scenes(folders, G2, frozenset())  # its own now, named or not
    assert "loose" not in visible_scenes(folders, G0, OPEN_TO)  # it is G2's now
    assert home_of(folders, G0, "loose", OPEN_TO) is None


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


def test_the_operator_gives_a_terminal_scene_to_a_server_whole_and_unbound(folders):
    before = files_under(folders / "loose")
    dest = give_scene(folders, "loose", G2)
    assert dest == scene_folder(folders, G2, "loose")
    assert {k: v for k, v in files_under(dest).items() if k != ".circus/run.lock"} == before
    assert read_binding(dest) is None  # unbound: G2's members open it into a thread
    assert "loose" in visible_scenes(folders, G2, frozenset())
    assert home_of(folders, G2, "loose", frozenset()) == dest


@pytest.mark.parametrize("name, error", [("nowhere", SceneNotFound), ("審訊室", SceneNotFound)])
def test_only_a_loose_scene_can_be_given(folders, name, error):
    listed = files_under(folders)
    with pytest.raises(error):
        give_scene(folders, name, G2)
    assert files_under(folders) == listed


def test_a_scene_is_not_given_over_one_of_the_same_name(folders):
    scene_at(folders / "審訊室")  # a loose scene named like G0's own
    with pytest.raises(SceneExists):
        give_scene(folders, "審訊室", G0)
    assert (folders / "審訊室" / "context.md").is_file()


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
    assert is_scene(dest)


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
    assert is_scene(scenes / str(G0) / "夜")
