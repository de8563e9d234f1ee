"""`circus scene give SCENE_DIR --server ID`: the one way a scene made in the terminal reaches a
Discord server without the operator naming that server in CIRCUS_TERMINAL_SCENE_SERVERS. It
moves whole into `scenes/<id>/`, and every refusal is one line that leaves the folder as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from clikit import circus, cli_env, listing, turns_of

SERVER = "123456789012345678"


@pytest.fixture
def made(tmp_path: Path) -> Path:
    """A scene made in the terminal, in the scenes folder (CIRCUS_SCENES_DIR, ./scenes)."""
    (tmp_path / "scenes").mkdir()
    done = circus("new", "scenes/ops_secret", "--template", "wake", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_a_given_scene_moves_whole_into_the_servers_folder_and_runs_there(made: Path) -> None:
    before = [(p, size) for p, size, _ in listing(made / "scenes" / "ops_secret")]
    done = circus("scene", "give", "scenes/ops_secret", "--server", SERVER, cwd=made)
    assert done.returncode == 0, done.stderr
    dest = made / "scenes" / SERVER / "ops_secret"
    assert (
        f"Gave ops_secret to server {SERVER}" in done.stdout
        and str(dest.relative_to(made)) in done.stdout
    )
    assert not (made / "scenes" / "ops_secret").exists()
    after = [(p, size) for p, size, _ in listing(dest)]
    # the writer's files as they were (the move takes the scene's run lock, in .circus/)
    assert [e for e in after if not e[0].startswith(".circus")] == [
        e for e in before if not e[0].startswith(".circus")
    ]
    run = circus("run", f"scenes/{SERVER}/ops_secret", "-n", "1", cwd=made)
    assert run.returncode == 0, run.stderr
    old_path = circus("status", "scenes/ops_secret", cwd=made)  # the path the writer knew
    assert old_path.returncode == 2
    assert f"lives at scenes/{SERVER}/ops_secret now" in old_path.stderr
    assert len(turns_of(dest)) == 1


@pytest.mark.parametrize(
    "scene, server, says",
    [
        ("scenes/ops_secret", "1,2", "--server takes one Discord server's id"),
        ("scenes/ops_secret", "all", "--server takes one Discord server's id, not 'all'"),
        ("scenes/ops_secret", "0", "not '0'"),
        ("scenes/nowhere", SERVER, "No scene at scenes/nowhere"),
        ("ops_secret", SERVER, "is not a scene at the top of the scenes folder"),
    ],
)
def test_a_give_that_cannot_be_made_is_one_line_and_moves_nothing(
    made: Path, scene: str, server: str, says: str
) -> None:
    before = listing(made)
    done = circus("scene", "give", scene, "--server", server, cwd=made)
    assert done.returncode in (1, 2)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert "CIRCUS_TERMINAL_SCENE_SERVERS" not in done.stderr  # the writer typed --server
    assert listing(made) == before


def test_a_scene_a_server_already_has_is_not_replaced(made: Path) -> None:
    env = cli_env(CIRCUS_SCENES_DIR="scenes")
    assert (
        circus("scene", "give", "scenes/ops_secret", "--server", SERVER, cwd=made).returncode == 0
    )
    assert circus("new", "scenes/ops_secret", "--template", "wake", cwd=made).returncode == 0
    before = listing(made)
    done = circus("scene", "give", "scenes/ops_secret", "--server", SERVER, cwd=made, env=env)
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "already exists" in done.stderr
    assert listing(made) == before
