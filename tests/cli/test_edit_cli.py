"""Editing a scene's text in the writer's $EDITOR (`soul edit`, `context edit`), black-box: an
editor that cannot start is one line naming it, and an edit the engine refuses is kept."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from clikit import circus, cli_env, listing, refused


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


EDITOR = """
import sys
mode, path = sys.argv[1], sys.argv[2]  # $EDITOR is "python editor.py MODE", then the file
text = open(path, encoding="utf-8").read()
if mode == "break":
    text = "---\\nneglect_turn: 4\\n---\\n# The diner\\n\\nMY EDIT, typed for an hour.\\n"
else:  # "fix": the writer starts from their kept draft and fixes the setting's name
    assert "MY EDIT" in text, text
    text = text.replace("neglect_turn:", "neglect_turns:")
open(path, "w", encoding="utf-8").write(text)
"""


def test_a_refused_context_edit_is_kept_as_a_draft_and_the_next_edit_reopens_it(
    scene: Path, tmp_path: Path
) -> None:
    context = scene / "context.md"
    before = context.read_text("utf-8")
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR, "utf-8")
    run = f"{sys.executable} {editor}"

    broken = circus("context", str(scene), "edit", cwd=tmp_path, env=cli_env(EDITOR=f"{run} break"))
    refused(
        broken, "unknown setting `neglect_turn`", str(scene / "drafts" / "context.md"), "reopens it"
    )
    assert context.read_text("utf-8") == before
    draft = scene / "drafts" / "context.md"
    assert "MY EDIT" in draft.read_text("utf-8")
    status = circus("status", str(scene), cwd=tmp_path)
    assert "warning: drafts/context.md: a context.md edit that could not be used" in status.stdout

    fixed = circus("context", str(scene), "edit", cwd=tmp_path, env=cli_env(EDITOR=f"{run} fix"))
    assert fixed.returncode == 0, fixed.stderr
    assert "continuing from your kept draft, drafts/context.md" in fixed.stdout
    assert "Updated context.md" in fixed.stdout
    text = context.read_text("utf-8")
    assert "neglect_turns: 4" in text and "MY EDIT" in text
    assert not draft.exists()
