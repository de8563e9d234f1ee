"""How the bot answers an interaction: acknowledged at once, then answered privately.

Invariant: every answer is ephemeral, mentions nobody, fits one Discord message (2000
characters), and carries a pending notice for its reader (bot.thread.backstage: closed DMs) once.
"""

from __future__ import annotations

import contextlib
from typing import Any

import discord

from bot.interaction.host import host_of

MESSAGE_LIMIT = 2000


async def defer(interaction: discord.Interaction) -> None:
    """Acknowledge now (Discord's 3 s window); the answer follows privately.

    A command used in an archived scene thread revives it, so the answer (and the scene) can
    be posted there again."""
    if not interaction.response.is_done():
        await interaction.response.defer(ephemeral=True, thinking=True)
    channel = interaction.channel
    if isinstance(channel, discord.Thread) and channel.archived and not channel.locked:
        with contextlib.suppress(discord.HTTPException):
            await channel.edit(archived=False)


async def reply(
    interaction: discord.Interaction,
    text: str,
    *,
    file: discord.File | None = None,
    files: list[discord.File] | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
) -> None:
    """Answer privately, whether or not the interaction was deferred."""
    notice = host_of(interaction).backstage.take_notice(interaction.user.id)
    if notice:
        text = f"{text}\n\n{notice}"
    if len(text) > MESSAGE_LIMIT:
        text = text[: MESSAGE_LIMIT - 1] + "…"
    kwargs: dict[str, Any] = {"ephemeral": True}
    if file is not None:
        kwargs["file"] = file
    if files:
        kwargs["files"] = files
    if embed is not None:
        kwargs["embed"] = embed
    if view is not None:
        kwargs["view"] = view
    allowed = discord.AllowedMentions.none()
    if interaction.response.is_done():
        await interaction.followup.send(text, allowed_mentions=allowed, **kwargs)
    else:
        await interaction.response.send_message(text, allowed_mentions=allowed, **kwargs)
