"""Driving the console (circus console) in process, and the prompts a scripted actor received."""

from __future__ import annotations

import io
from pathlib import Path

from circus.console import Console
from engine import Rehearsal

FORMS = {"林小姐": ("林小姐", "林", "林曉雯"), "刑警": ("刑警", "王警官"), "Al": ("Al",)}


async def console(scene: Path, *lines: str, models=None) -> tuple[str, str, Console]:
    out, err = io.StringIO(), io.StringIO()
    stdin = io.StringIO("\n".join(lines) + "\nWAIT\nQUIT\n")
    shell = Console(Rehearsal(scene, models=models), stdin=stdin, out=out, err=err)
    assert await shell.run() == 0
    return out.getvalue(), err.getvalue(), shell


def prompts_of(scripted, actor: str) -> list[str]:
    return [c.prompt for c in scripted.calls if c.shape.speaker == actor]
