"""How the stage reads in a thread: stage blocks (entrances, exits, events) and a player's cue.

Invariant: a stage block shows only the record's own public text; a member is named in the
thread as a mention built from their Discord id (`discord:<id>` in players.json), anything
else as written. Pure: the SceneThread posts what these say.
"""

from __future__ import annotations

import discord

from engine import StageChanged, whole_number
from engine import say as catalog_say

PLAYER = "discord:{}"  # how a member is named in .circus/players.json


def say_text(key: str, lang: str, **values: object) -> str:
    """The stage line `bot.thread.scene.<key>` of engine's catalog in `lang`."""
    return catalog_say("bot.stage." + key, lang, **values)


def player_id(user: discord.abc.Snowflake) -> str:
    return PLAYER.format(user.id)


def mention_of(player: str) -> tuple[str, int | None]:
    """How the thread names a player, and their Discord id if they are a member."""
    user_id = whole_number(player[8:], 20) if player.startswith("discord:") else None
    if user_id is not None:
        return f"<@{user_id}>", user_id
    return player, None


def block_message(event: StageChanged, lang: str) -> str:
    """A stage block as the thread shows it (public text only: the record's own)."""
    if event.kind in ("enter", "exit"):
        return say_text(event.kind, lang, actor=event.actor)
    if event.kind == "present":
        return say_text("present", lang, names=tuple(event.names))
    return say_text(event.kind, lang, text=event.text.strip())
