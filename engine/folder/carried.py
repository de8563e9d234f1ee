"""What a next scene carried (.circus/carried.json), and which carried sections are unedited.

Invariant: read-only and pure — the record is written once by engine.continuity.next_scene when the scene
is made; a section counts as unedited while the soul still holds it exactly as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from engine.folder.checkup import SceneWarning
from engine.folder.scene import soul_path
from engine.folder.store import STATE_DIR

CARRIED = f"{STATE_DIR}/carried.json"  # in the new scene: each actor's carried section


def unedited(carried_text: str, souls: Mapping[str, str | None]) -> list[str]:
    """The actors whose soul still holds its carried section exactly as written."""
    try:
        data = json.loads(carried_text) if carried_text.strip() else {}
    except ValueError:
        return []
    sections = data.get("sections") if isinstance(data, dict) else None
    if not isinstance(sections, dict):
        return []
    return [
        a
        for a, text in souls.items()
        if isinstance(sections.get(a), str) and text and sections[a] in text
    ]


def unedited_warnings(
    carried_text: str, souls: Mapping[str, str | None]
) -> tuple[SceneWarning, ...]:
    """One warning per carried section not yet rewritten (`circus status`, the console)."""
    return tuple(
        SceneWarning("warning.carried_unedited", soul_path(a))
        for a in unedited(carried_text, souls)
    )
