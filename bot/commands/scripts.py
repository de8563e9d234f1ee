"""`/scene import`: a scene, and its thread, from one scene of a writer's uploaded script.

Invariants: the upload's type and size are checked before a byte of it is fetched (the
engine's list and cap); the engine makes the folder (import_script: nothing written on a
refusal) and the thread opens the way `/scene new` opens one, its maker the director; a scene
whose thread could not be made is removed again. The thread gets the scene card and the last
few imported lines (public: they are the record); the writer's notes go only to the director
who asked, by DM through bot/thread/backstage.py (the one way private text leaves the bot) —
no model, and nobody else, sees them.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import discord
from discord import app_commands

from bot.commands.scenes import open_thread, parent_channel
from bot.i18n import t, words
from bot.interaction.files import checked_script
from bot.interaction.host import host_of
from bot.interaction.replies import defer, reply
from bot.render import LIMIT
from bot.server_folders import scene_folder, scene_key
from engine import ImportAsk, check_name, import_script


def ask_for(scene: str | None) -> ImportAsk:
    """A scene number (digits) or words of its heading."""
    wanted = (scene or "").strip()
    if not wanted:
        return ImportAsk()
    return ImportAsk(scene=wanted) if wanted.isdigit() else ImportAsk(heading=wanted)


async def import_scene(
    interaction: discord.Interaction,
    file: discord.Attachment,
    scene: str | None = None,
    name: str | None = None,
) -> None:
    bot = host_of(interaction)
    guild = parent_channel(interaction).guild.id
    filename = checked_script(file)
    await defer(interaction)
    name = check_name(name or f"{Path(filename).stem} {scene or 1}"[:64], "Scene")
    dest = scene_folder(bot.scenes_dir, guild, name)
    await asyncio.to_thread(dest.parent.mkdir, parents=True, exist_ok=True)
    data = await file.read()
    done = await import_script(filename, dest, ask_for(scene), data=data, config=bot.config)
    try:
        thread = await open_thread(interaction, name, (interaction.user.id,))
    except BaseException:
        await bot.unbind(scene_key(guild, name))
        await asyncio.to_thread(shutil.rmtree, dest, True)
        raise
    scene_thread = bot.scene_threads[scene_key(guild, name)]
    lang = scene_thread.lang
    last = [f"> **{actor}**: {line}"[:300] for actor, line in done.last_lines]
    posted = t("script_last_lines", lang, file=filename, turns=done.turns, lines="\n".join(last))
    await thread.send(posted[:LIMIT], allowed_mentions=discord.AllowedMentions.none())
    said = t("script_imported", lang, scene=name, thread=thread.mention, turns=done.turns,
             file=filename, number=done.scene, heading=done.heading or "—")  # fmt: skip
    await reply(interaction, said)
    if done.notes:
        notes = "\n".join(f"- {line}: {text}" for line, text in done.notes)
        bot.backstage.remember(interaction)  # closed DMs are then told here, privately
        bot.backstage.send((interaction.user.id,), name, lang, t("script_notes", lang, notes=notes))


async def scene_import(
    interaction: discord.Interaction,
    file: discord.Attachment,
    scene: app_commands.Range[str, 1, 100] | None = None,
    name: str | None = None,
) -> None:
    await import_scene(interaction, file, scene, name)


def setup(tree: app_commands.CommandTree) -> None:
    """Add /scene import to the /scene group (bot.commands.scenes builds it first)."""
    group = tree.get_command("scene")
    if isinstance(group, app_commands.Group):
        command: app_commands.Command[Any, Any, Any] = app_commands.Command(
            name="import", description=words("cmd.scene_import.description"), callback=scene_import
        )
        command = app_commands.describe(
            file=words("cmd.scene_import.file"),
            scene=words("cmd.scene_import.scene"),
            name=words("cmd.scene_import.name"),
        )(command)
        group.add_command(command)
