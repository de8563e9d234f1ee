"""Which Discord thread a scene plays in, kept inside the scene folder (.circus/discord.json).

Invariant: the file on disk is the truth — the engine's store writes it atomically (the bot
never writes into a scene folder itself), so a crash never leaves half a binding, and a
restarted bot re-attaches every scene to its thread by scanning the scenes folder. A binding
that is there but unreadable is an error, never "unbound". Also: the pure rules for directing
and opening a scene.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from engine import BadSceneFile, list_scenes, read_frontend_file, whole_number, write_frontend_file

log = logging.getLogger("circus.bot")
ID_DIGITS = 20  # a Discord snowflake is a 64-bit integer
FRONTEND = "discord"  # the engine keeps it as .circus/discord.json


@dataclass(frozen=True)
class Binding:
    guild_id: int
    channel_id: int  # the parent text channel (owner of the webhook)
    thread_id: int
    directors: tuple[int, ...] = field(default_factory=tuple)
    webhook_id: int | None = None
    panel_id: int | None = None  # the thread's control panel message (bot.panel.message)

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
    """The scene's binding, or None if it has none. An unreadable one is a BadSceneFile naming
    .circus/discord.json, never None: None means "free", which anyone allowed /scene (or a
    moderator of another server) may take over — and with it its directors' DMs of thoughts."""
    data = read_frontend_file(scene_dir, FRONTEND)
    if data is None:
        return None
    ids = {key: whole_number(data.get(key), ID_DIGITS) for key in _IDS}
    directors = data.get("directors") or []
    if not isinstance(directors, list):
        directors = [None]  # refused below, like any id that is not one
    director_ids = [whole_number(d, ID_DIGITS) for d in directors]
    webhook = data.get("webhook_id")
    webhook_id = whole_number(webhook, ID_DIGITS) if webhook else None
    panel = data.get("panel_id")
    panel_id = whole_number(panel, ID_DIGITS) if panel else None
    guild_id, channel_id, thread_id = ids["guild_id"], ids["channel_id"], ids["thread_id"]
    if (
        guild_id is None
        or channel_id is None
        or thread_id is None
        or None in director_ids
        or (webhook and webhook_id is None)
        or (panel and panel_id is None)
    ):
        path = Path(scene_dir) / ".circus" / f"{FRONTEND}.json"
        raise BadSceneFile(path, "error.file.state_unreadable", rel=f".circus/{FRONTEND}.json")
    return Binding(
        guild_id=guild_id,
        channel_id=channel_id,
        thread_id=thread_id,
        directors=tuple(d for d in director_ids if d is not None),
        webhook_id=webhook_id,
        panel_id=panel_id,
    )


_IDS = ("guild_id", "channel_id", "thread_id")


def binding_or_none(scene_dir: Path) -> Binding | None:
    """For listings that must go on past one broken scene: its binding, or None (and a log
    line) when it is unreadable. Never a reason to treat that scene as free."""
    try:
        return read_binding(scene_dir)
    except BadSceneFile as exc:
        log.warning("%s", exc)
        return None


def write_binding(scene_dir: Path, binding: Binding) -> None:
    """Persist the binding (ids as strings, like Discord's own JSON)."""
    data = {
        k: ([str(d) for d in v] if isinstance(v, tuple) else (str(v) if v is not None else None))
        for k, v in asdict(binding).items()
    }
    write_frontend_file(scene_dir, FRONTEND, data)


def scan_bindings(scenes_dir: Path) -> dict[str, Binding]:
    """Every bound scene in the scenes folder: scene name -> binding. A scene whose binding is
    unreadable is left unattached (logged), until its file is fixed."""
    out: dict[str, Binding] = {}
    for name in list_scenes(scenes_dir):
        binding = binding_or_none(Path(scenes_dir) / name)
        if binding is not None:
            out[name] = binding
    return out
