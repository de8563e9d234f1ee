"""Which Discord thread a scene plays in, kept inside the scene folder (.circus/discord.json).

Invariant: the file on disk is the truth — the engine's store writes it atomically (the bot
never writes into a scene folder itself), so a crash never leaves half a binding, and a
restarted bot re-attaches every scene to its thread by scanning the scenes folder. Also: the
pure rules for directing and opening a scene.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from engine import list_scenes, read_frontend_file, write_frontend_file

FRONTEND = "discord"  # the engine keeps it as .circus/discord.json


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
    data = read_frontend_file(scene_dir, FRONTEND)
    if data is None:
        return None
    try:
        return Binding(
            guild_id=int(data["guild_id"]),
            channel_id=int(data["channel_id"]),
            thread_id=int(data["thread_id"]),
            directors=tuple(int(d) for d in data.get("directors") or ()),
            webhook_id=int(data["webhook_id"]) if data.get("webhook_id") else None,
        )
    except (ValueError, KeyError, TypeError):
        return None


def write_binding(scene_dir: Path, binding: Binding) -> None:
    """Persist the binding (ids as strings, like Discord's own JSON)."""
    data = {
        k: ([str(d) for d in v] if isinstance(v, tuple) else (str(v) if v is not None else None))
        for k, v in asdict(binding).items()
    }
    write_frontend_file(scene_dir, FRONTEND, data)


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
