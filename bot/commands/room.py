"""The writers' room in a scene thread: `/captain add|remove|list` and `/backstage actor:`.

Invariants: `/captain` is for the scene's directors only (`DirectorsGroup`, before anything
runs); who captains whom is the engine's (.circus/captains.json, `rehearsal.room`), naming a
member as `discord:<id>`. `/backstage` shows one character's thoughts, privately, to whoever
`private_actors` lets read them (a director, or that character's captain) and refuses anyone
else before anything is read. Every answer is private; mentions never ping.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from bot.errors import BotProblem
from bot.i18n import t, words
from bot.interaction.gate import (
    DirectorsGroup,
    may_read,
    private_actors,
    refuse,
    room_only,
    scene_of,
    writer_of,
)
from bot.interaction.options import ActorArg
from bot.interaction.replies import MESSAGE_LIMIT, defer, reply
from bot.render import player
from bot.thread.scene import SceneThread
from engine import Actor


# ---------------------------------------------------------------------- the bodies
async def add_captain(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor, user: discord.User
) -> None:
    """/captain add: `user` captains `actor` from the next turn."""
    if user.bot:
        raise BotProblem("captain_bot")
    await defer(interaction)
    name = await scene_thread.rehearsal.room.add(actor, writer_of(user.id))
    values = dict(user=user.mention, actor=name)
    await reply(interaction, t("captain_added", scene_thread.lang, **values))


async def remove_captain(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor, user: discord.User
) -> None:
    """/captain remove: `user` no longer captains `actor` (from the next turn)."""
    await defer(interaction)
    removed = await scene_thread.rehearsal.room.remove(actor, writer_of(user.id))
    key = "captain_removed" if removed else "captain_not"
    await reply(interaction, t(key, scene_thread.lang, user=user.mention, actor=actor.name))


async def list_captains(interaction: discord.Interaction, scene_thread: SceneThread) -> None:
    """/captain list: who captains whom."""
    await defer(interaction)
    captains = await scene_thread.rehearsal.room.captains()
    lang = scene_thread.lang
    if not captains:
        await reply(interaction, t("captain_none", lang))
        return
    lines = [
        t("captain_line", lang, actor=a, names=", ".join(player(w) for w in writers))
        for a, writers in captains.items()
    ]
    await reply(interaction, "\n".join(lines)[:MESSAGE_LIMIT])


async def show_backstage(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor
) -> None:
    """/backstage: one character's thoughts in the working take, to those who may read them."""
    if not may_read(await private_actors(interaction, scene_thread), actor.name):
        raise refuse(interaction, scene_thread)
    await defer(interaction)
    harvest = scene_thread.rehearsal.harvest
    view = await harvest.take_view("current")
    thoughts = await harvest.thoughts_of(view)
    mine = [(x.number, thoughts.get(x.number, "")) for x in view.turns if x.actor == actor.name]
    lang = scene_thread.lang
    lines = [t("backstage_line", lang, turn=n, thought=text) for n, text in mine if text]
    if not lines:
        await reply(interaction, t("backstage_empty", lang, actor=actor.name))
        return
    head = t("backstage_of", lang, actor=actor.name, take=view.number)
    chunk = head
    for line in lines:  # the newest last; several private messages when they are many
        if len(chunk) + 1 + len(line) > MESSAGE_LIMIT:
            await reply(interaction, chunk)
            chunk = ""
        chunk = f"{chunk}\n{line}" if chunk else line[:MESSAGE_LIMIT]
    await reply(interaction, chunk)


# ---------------------------------------------------------------------- the commands
class CaptainGroup(DirectorsGroup, name="captain", description=words("cmd.captain.description")):
    @app_commands.command(name="add", description=words("cmd.captain_add.description"))
    @app_commands.describe(actor=words("cmd.captain_add.actor"), user=words("cmd.captain_add.user"))
    async def add(
        self, interaction: discord.Interaction, actor: ActorArg, user: discord.User
    ) -> None:
        await add_captain(interaction, scene_of(interaction), actor, user)

    @app_commands.command(name="remove", description=words("cmd.captain_remove.description"))
    @app_commands.describe(
        actor=words("cmd.captain_remove.actor"), user=words("cmd.captain_remove.user")
    )
    async def remove(
        self, interaction: discord.Interaction, actor: ActorArg, user: discord.User
    ) -> None:
        await remove_captain(interaction, scene_of(interaction), actor, user)

    @app_commands.command(name="list", description=words("cmd.captain_list.description"))
    async def listing(self, interaction: discord.Interaction) -> None:
        await list_captains(interaction, scene_of(interaction))


@app_commands.command(name="backstage", description=words("cmd.backstage.description"))
@room_only
@app_commands.describe(actor=words("cmd.backstage.actor"))
async def backstage(interaction: discord.Interaction, actor: ActorArg) -> None:
    await show_backstage(interaction, scene_of(interaction), actor)


def setup(tree: app_commands.CommandTree) -> None:
    """Register /captain and /backstage."""
    command: app_commands.Command[Any, Any, Any] | app_commands.Group
    for command in (CaptainGroup(), backstage):
        tree.add_command(command)
