"""Editing a scene's text in the writer's $EDITOR (`soul edit`, `context edit`), black-box: an
editor that cannot start is one line naming it, and an edit the engine refuses is kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from clikit import circus, cli_env, listing


def refused(result, *says: str) -> str:
    """Exit 2 with one `circus:` line on stderr that says each of `says`."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("circus: "), result.stderr
    for text in says:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    result = circus("new", "s", "--cast", "Eddie, Carol", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "s"


@pytest.mark.parametrize("command", [("soul", "{s}", "edit", "Carol"), ("context", "{s}", "edit")])
@pytest.mark.parametrize(
    "variables, named",
    [
        ({"EDITOR": "nonexistent-editor", "VISUAL": None}, "nonexistent-editor"),
        ({"EDITOR": "vi", "VISUAL": "no-such-visual --wait"}, "no-such-visual"),
        ({"EDITOR": '"vim', "VISUAL": None}, '"vim'),
    ],
)
def test_an_editor_that_cannot_start_is_named_in_one_line_and_nothing_changes(
    scene: Path, command, variables, named
) -> None:
    before = listing(scene)
    args = [a.format(s=scene) for a in command]
    result = circus(*args, cwd=scene.parent, env=cli_env(**variables))
    line = refused(result, f"cannot start the editor {named}", "$EDITOR", "$VISUAL")
    assert "Traceback" not in result.stderr and "nothing was changed" in line
    assert listing(scene) == before
