"""The fixture scene on disk: three actors whose private texts carry unique markers, so a
test can grep any prompt or file for what must not be there.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.config import Config

CAST = ("林小姐", "刑警", "律師")


# Every private text in the fixture scene carries a marker, so a test can grep any prompt or
# message for text that crossed a wall.
SOUL_MARKER = {a: f"SOUL-SECRET-{i}" for i, a in enumerate(CAST)}
WHISPER_MARKER = {a: f"PRIVATE-WHISPER-{i}" for i, a in enumerate(CAST)}
PUBLIC_CONTEXT = "PUBLIC-CONTEXT 深夜十一點，警局二樓的審訊室。"
ALL_WHISPER = "ALL-WHISPER 節奏放慢。"


def write_scene(root: Path, model: str = "scripted/improv", language: str = "zh") -> Path:
    (root / "actors").mkdir(parents=True)
    (root / "context.md").write_text(
        f"---\nmodel: {model}\nstage_manager_model: {model}\nlanguage: {language}\n"
        f"neglect_turns: 3\ncast: [林小姐, 刑警, 律師]\n---\n{PUBLIC_CONTEXT}\n",
        encoding="utf-8",
    )
    for actor in CAST:
        folder = root / "actors" / actor
        folder.mkdir()
        aliases = {"林小姐": "[林, 林曉雯]", "刑警": "[王警官]", "律師": "[張律師]"}[actor]
        (folder / "soul.md").write_text(
            f"---\naliases: {aliases}\n---\n## 角色小傳\n{actor}。{SOUL_MARKER[actor]}\n\n"
            f"## 前期劇本\n{actor}知道的事。\n\n## 導戲筆記\n目標。\n",
            encoding="utf-8",
        )
    notes = [f"## 全體\n- {ALL_WHISPER}\n"] + [f"## {a}\n- {WHISPER_MARKER[a]}\n" for a in CAST]
    (root / "director_notes.md").write_text("# 導演耳語\n\n" + "\n".join(notes), encoding="utf-8")
    return root


def operator_config() -> Config:
    """The operator's Config as the environment (a test's monkeypatched one) sets it now: what
    each entry point reads once and hands down."""
    return Config.from_env(os.environ)
