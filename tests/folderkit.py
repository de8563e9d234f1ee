"""Scene folders on disk for the server-folder tests: real scenes, bound as the bot binds them,
and a file-by-file picture of a folder for "nothing lost, nothing changed"."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from scenekit import write_scene

from bot.binding import Binding, write_binding

# Real-looking server ids and their shard of 4 ((id >> 22) % 4), checked in test_server_folders.
G0 = 175928847299117063  # shard 0
G0B = 1046825418375397446  # shard 0 too
G2 = 81384788765712384  # shard 2
G3 = 1234567890123456789  # shard 3
DAY = date(2026, 12, 1)
NEXT_DAY = date(2026, 12, 2)


def scene_at(folder: Path, guild: int | None = None, thread: int = 3) -> Path:
    """A scene folder as `circus new` makes it; bound to `guild` as the bot records it."""
    write_scene(folder, language="en")
    if guild is not None:
        write_binding(folder, Binding(guild_id=guild, channel_id=2, thread_id=thread))
    return folder


def files_under(root: Path) -> dict[str, bytes]:
    """Every file under root (relative path -> bytes), for "nothing lost, nothing changed"."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def spend_row(marker: str) -> dict:
    return {"at": "2026-12-01T10:00:00+00:00", "scene": marker, "prompt_tokens": 7, "calls": 1}
