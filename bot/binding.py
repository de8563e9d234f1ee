"""Which Discord thread a scene plays in, kept inside the scene folder (.circus/discord.json).

Invariant: the file on disk is the truth — it is written atomically (temp file + os.replace),
so a crash never leaves half a binding, and a restarted bot re-attaches every scene to its
thread by scanning the scenes folder. Also: the pure rules for directing and opening a scene.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from engine.scene import CONTEXT

BINDING = ".circus/discord.json"


@dataclass(frozen=True)
class Binding:
    guild_id: int
    channel_id: int  # the parent text channel (owner of the webhook)
    thread_id: int
    directors: tuple[int, ...] = field(default_factory=tuple)
    webhook_id: int | None = None

    def with_director(self, user_id: int) -> Binding:
        if user_id in self.directors:
            return self
        return replace(self, directors=(*self.directors, user_id))

    def without_director(self, user_id: int) -> Binding:
        return replace(self, directors=tuple(d for d in self.directors if d != user_id))


def can_direct(user_id: int, binding: Binding, manage_threads: bool) -> bool:
    """Directors are the scene's creator and co-directors; Manage Threads overrides."""
    return manage_threads or user_id in binding.directors


def opening(
    user_id: int, guild_id: int | None, manage_threads: bool, old: Binding | None
) -> tuple[int, ...] | str:
    """Who directs a scene once `user_id` opens it from `guild_id`, or why not
    ("not_director" | "elsewhere"). Discord only delivers /scene to members allowed to open
    scenes, so an unbound scene is theirs; a bound one keeps its directors, joined only by one
    of them, by Manage Threads in the scene's own server, or by anyone there if it has none —
    a moderator elsewhere must never take over a scene (and its directors' DMs of every
    thought)."""
    if old is None:
        return (user_id,)
    same_guild = guild_id == old.guild_id
    if can_direct(user_id, old, same_guild and manage_threads) or (
        same_guild and not old.directors
    ):
        return old.with_director(user_id).directors
    return "not_director" if same_guild else "elsewhere"


def read_binding(scene_dir: Path) -> Binding | None:
    """The scene's binding, or None if it has none (or an unreadable one)."""
    path = Path(scene_dir) / BINDING
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Binding(
            guild_id=int(data["guild_id"]),
            channel_id=int(data["channel_id"]),
            thread_id=int(data["thread_id"]),
            directors=tuple(int(d) for d in data.get("directors") or ()),
            webhook_id=int(data["webhook_id"]) if data.get("webhook_id") else None,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_binding(scene_dir: Path, binding: Binding) -> None:
    """Write the binding atomically (ids as strings, like Discord's own JSON)."""
    path = Path(scene_dir) / BINDING
    path.parent.mkdir(parents=True, exist_ok=True)
    data = asdict(binding)
    data = {
        k: ([str(d) for d in v] if isinstance(v, tuple) else (str(v) if v is not None else None))
        for k, v in data.items()
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def list_scenes(scenes_dir: Path) -> list[str]:
    """Scene folder names (those with a context.md), never the templates folder."""
    root = Path(scenes_dir)
    if not root.is_dir():
        return []
    return sorted(
        entry.name
        for entry in root.iterdir()
        if entry.is_dir()
        and not entry.name.startswith(".")
        and entry.name != "templates"
        and (entry / CONTEXT).is_file()
    )


def scan_bindings(scenes_dir: Path) -> dict[str, Binding]:
    """Every bound scene in the scenes folder: scene name -> binding."""
    out: dict[str, Binding] = {}
    for name in list_scenes(scenes_dir):
        binding = read_binding(Path(scenes_dir) / name)
        if binding is not None:
            out[name] = binding
    return out


def visible_scenes(scenes_dir: Path, guild_id: int | None) -> list[str]:
    """Scenes this server may see: unbound ones and those bound to this server."""
    names = []
    for name in list_scenes(scenes_dir):
        binding = read_binding(scenes_dir / name)
        if binding is None or binding.guild_id == guild_id:
            names.append(name)
    return names
