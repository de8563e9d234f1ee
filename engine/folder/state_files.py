"""Small JSON state files under a scene's .circus/: a frontend's own (the bot's thread binding,
what it posted) and the engine's few objects (players.json).

Invariant: a write is atomic (a temp file, then a rename), so a crash never leaves half a file;
a read is bounded and refuses anything that is not a JSON object Circus could have written,
naming the file — an unreadable file is never taken for "nothing stored". A frontend's file is
never one of the engine's own.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import BadSceneFile
from engine.folder.store import STATE_DIR, decode, unreadable

# A frontend keeps its own small state inside a scene (the bot: which thread plays it) in one
# JSON file under .circus/, named after the frontend; never one of the engine's own files.
_FRONTEND = re.compile(r"[a-z][a-z0-9-]{0,31}")
_ENGINE_OWN = frozenset(
    {
        "pending",
        "players",
        "captains",
        "usage",
        "posts",
        "run",
        "spend",
        "calls",
        "carried",
        "takes",
    }
)  # carried, takes: engine/continuity/next_scene.py, engine/takes/tree.py
_STATE_LIMIT = 256 * 1024  # a few ids and names; more is not a file Circus wrote


def _frontend_path(scene_dir: Path | str, frontend: str) -> Path:
    if not _FRONTEND.fullmatch(frontend) or frontend in _ENGINE_OWN:
        raise ValueError(f"{frontend!r} is not a frontend's file name")
    return Path(scene_dir) / STATE_DIR / f"{frontend}.json"


def read_frontend_file(scene_dir: Path | str, frontend: str) -> dict[str, Any] | None:
    """What `frontend` stored in this scene, or None if it stored nothing. A file that is there
    but unreadable (torn by hand, not an object) is a BadSceneFile, never "nothing": for the
    bot, "nothing" means the scene is free for anyone to take over."""
    path = _frontend_path(scene_dir, frontend)
    return read_state_json(path, f"{STATE_DIR}/{path.name}", _read_small(path))


def _read_small(path: Path) -> str | None:
    """A small state file's text (None if it does not exist), refused the way `read` is."""
    rel = f"{STATE_DIR}/{path.name}"
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(mode):  # a FIFO would hang the read
            raise BadSceneFile(path, "error.file.not_regular", rel=rel)
        with open(path, "rb") as f:
            data = f.read(_STATE_LIMIT + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise unreadable(path, rel, exc) from None
    if len(data) > _STATE_LIMIT:
        raise BadSceneFile(path, "error.file.too_big", rel=rel, kb=_STATE_LIMIT // 1024)
    return decode(data, path, rel)


def read_state_json(path: Path, rel: str, text: str | None) -> dict[str, Any] | None:
    """One of the small JSON objects Circus keeps under .circus/ (players.json, a frontend's
    file): None when the file is absent; anything but a JSON object is refused naming it."""
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise BadSceneFile(path, "error.file.state_unreadable", rel=rel)
    return data


def write_frontend_file(scene_dir: Path | str, frontend: str, data: Mapping[str, Any]) -> None:
    """Store `frontend`'s state in this scene atomically (temp file + rename): a crash never
    leaves half of it. Small and synchronous: it is a few ids."""
    path = _frontend_path(scene_dir, frontend)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(dict(data), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
