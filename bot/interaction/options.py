"""How a command's actor option reads: offered as you type, resolved once by the engine.

Invariant: `ActorOption` is the only place an actor option meets the engine — `autocomplete`
offers the cast (aliases only to directors: they can be private nicknames) and never raises;
`transform` turns what was typed into an `Actor` through `Rehearsal.resolve_actor`, or refuses
with the engine's UnknownActor (rendered at the edge). Handlers receive the Actor and never
match names again.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from bot.interaction.gate import (
    may_direct,
    only_of,
    private_actors,
    scene_of,
    scene_thread_or_none,
)
from bot.render import autocomplete_names
from engine import Actor

log = logging.getLogger("circus.bot")


async def actor_choices(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """The scene's cast matching what was typed, at most 25. A scene that fails to load offers
    nothing (the command itself then says why)."""
    scene_thread = scene_thread_or_none(interaction)
    if scene_thread is None:
        return []
    try:
        view = await scene_thread.rehearsal.view()
        aliases = dict(view.aliases) if may_direct(interaction, scene_thread) else None
        names = autocomplete_names(current, list(view.cast), aliases)
    except Exception as exc:
        log.warning("autocomplete in scene %s: %s", scene_thread.name, exc)
        return []
    return [app_commands.Choice(name=n[:100], value=n) for n in names]


class ActorOption(app_commands.Transformer):
    """An option naming one of the scene's actors (by name or alias)."""

    async def transform(self, interaction: discord.Interaction, value: str, /) -> Actor:
        # by the aliases of the characters this member may read: trying names must not tell
        # anyone else which alias belongs to whom (aliases live in the private souls)
        scene_thread = scene_of(interaction)
        readable = only_of(await private_actors(interaction, scene_thread))
        return await scene_thread.rehearsal.resolve_actor(value, readable)

    async def autocomplete(  # type: ignore[override]
        self, interaction: discord.Interaction, value: str, /
    ) -> list[app_commands.Choice[str]]:
        return await actor_choices(interaction, value)


ActorArg = app_commands.Transform[Actor, ActorOption]
