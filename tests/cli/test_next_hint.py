"""The `Next:` hints name `circus` as a writer types it: plain `circus` when that is the very
program on PATH (as README shows), the path it was called by only when plain `circus` would
run another program or none."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from clikit import circus, cli_env


def program(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "circus"
    path.write_text("#!/bin/sh\n", "utf-8")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    "on_path, says_plain",
    [
        ("the same", True),  # a venv's bin on PATH: `Next: circus run …`
        ("a link to it", True),
        ("another", False),
        ("none", False),
    ],
)
def test_next_says_plain_circus_only_when_it_runs_this_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_path: str, says_plain: bool
) -> None:
    called = program(tmp_path / "venv" / "bin")
    monkeypatch.setattr(sys, "argv", [str(called), "new"])
    first = tmp_path / "path"
    first.mkdir()
    if on_path == "the same":
        first = called.parent
    elif on_path == "a link to it":
        (first / "circus").symlink_to(called)
    elif on_path == "another":
        program(first)
    env = cli_env(PATH=f"{first}{os.pathsep}/usr/bin{os.pathsep}/bin")
    result = circus("new", "s1", "--template", "wake", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    me = "circus" if says_plain else str(called)
    assert f"Next: {me} run s1   (or: {me} console s1)" in result.stdout
