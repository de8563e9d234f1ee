"""Helpers for the trust tests: the attack fixtures, and asserting how a scene is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Rehearsal
from engine.errors import BadSceneFile

ATTACKS = Path(__file__).resolve().parent / "fixtures" / "attacks"
LAWYER = "actors/律師/soul.md"


def attack(name: str) -> bytes:
    return (ATTACKS / name).read_bytes()


def soul_file(scene: Path, actor: str = "律師") -> Path:
    return scene / "actors" / actor / "soul.md"


async def refusal(scene: Path) -> BadSceneFile:
    with pytest.raises(BadSceneFile) as refused:
        await Rehearsal(scene).state()
    return refused.value


def no_server_path(error: BadSceneFile, root: Path) -> None:
    for language in ("zh", "en"):
        shown = error.in_language(language, relative=True)
        assert str(root) not in shown and "/tmp" not in shown, shown


def line(cue: str = "") -> str:
    return f"<thought>想。</thought><dialogue>說。</dialogue><cue>{cue}</cue>"
