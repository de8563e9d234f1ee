"""`/scene next`, `/secrets` and `/take list` with the takes tree, in a scene thread.

Invariants: each is for the scene's directors (`directed`, before anything runs; /secrets also
for its captains, who see their own characters' secrets alone: `room_only`, `private_actors`) and
answers privately; `/scene next` makes the new folder through the engine (start_next: nothing
written on a refusal), opens its thread with the old scene's directors as its directors, and
shows each carried section only to the director who asked, with a button per actor that opens
the same soul form as `/soul edit` (the form checks again who may direct the new scene). The
ledger and the tree read take folders: no run lock, nothing written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import discord
from discord import app_commands

from bot.commands.directing import SoulModal
from bot.commands.scenes import open_thread
from bot.i18n import t, words
from bot.interaction.edge import report
from bot.interaction.files import MODAL_LIMIT
from bot.interaction.gate import (
    directed,
    may_direct,
    only_of,
    private_actors,
    refuse,
    room_only,
    scene_of,
)
from bot.interaction.host import host_of
from bot.interaction.replies import defer, reply
from bot.render import LIMIT, split_message
from bot.server_folders import scene_key
from bot.thread.scene import SceneThread
from engine import Actor, check_name, secrets_lines, start_next

EDIT_SECONDS = 15 * 60.0  # the buttons live as long as the interaction token
PREVIEW = 1200  # a carried section's characters shown inline


def _chunks(text: str) -> list[str]:
    return split_message(text[: LIMIT * 4])


class EditSouls(discord.ui.View):
    """A button per actor of the new scene: each opens that soul in the soul form."""

    def __init__(self, scene_thread: SceneThread, cast: tuple[str, ...]) -> None:
        super().__init__(timeout=EDIT_SECONDS)
        self.scene_thread = scene_thread
        for actor in cast[:25]:
            button: discord.ui.Button[EditSouls] = discord.ui.Button(
                label=t("next.edit_button", scene_thread.lang, actor=actor)[:80],
                style=discord.ButtonStyle.secondary,
                custom_id=f"next:edit:{actor}"[:100],
            )
            button.callback = self._edit(actor)  # type: ignore[assignment]
            self.add_item(button)

    def _edit(self, actor: str) -> Callable[[discord.Interaction], Awaitable[None]]:
        async def callback(interaction: discord.Interaction) -> None:
            try:
                scene_thread = host_of(interaction).scene_threads.get(
                    self.scene_thread.key, self.scene_thread
                )
                text = await scene_thread.rehearsal.souls.text(Actor(actor))
                if len(text) > MODAL_LIMIT:
                    await defer(interaction)
                    message = t("soul_too_long", scene_thread.lang, actor=actor, length=len(text))
                    await reply(interaction, message)
                    return
                if not may_direct(interaction, scene_thread):
                    raise refuse(interaction, scene_thread)
                modal = SoulModal(scene_thread, Actor(actor), text)
                modal.for_scene = (
                    scene_thread  # opened from the old thread: it writes to the new scene
                )
                await interaction.response.send_modal(modal)
            except Exception as exc:  # one private line, never a traceback
                await report(interaction, exc)

        return callback


async def scene_next(
    interaction: discord.Interaction, name: str, take: app_commands.Range[int, 1] | None = None
) -> None:
    old = directed(interaction)
    bot = host_of(interaction)
    await defer(interaction)
    name = check_name(name, "Scene")
    dest = old.rehearsal.root.parent / name  # the same server's folder
    done = await start_next(old.rehearsal.root, dest, take, config=bot.config)
    thread = await open_thread(interaction, name, old.binding.directors)
    scene_thread = bot.scene_threads[scene_key(old.binding.guild_id, name)]
    lang = scene_thread.lang
    head = t("next.created", lang, scene=name, old=old.name, take=done.take, thread=thread.mention)
    await reply(interaction, head)
    for actor in done.cast:
        section = await carried_of(scene_thread, actor)
        shown = section if len(section) <= PREVIEW else section[:PREVIEW].rstrip() + "…"
        text = (
            t("next.draft", lang, actor=actor) + "\n```md\n" + shown.replace("```", "ˋˋˋ") + "\n```"
        )
        await interaction.followup.send(text[:LIMIT], ephemeral=True)
    await interaction.followup.send(
        t("next.edit_hint", lang), view=EditSouls(scene_thread, done.cast), ephemeral=True
    )


async def carried_of(scene_thread: SceneThread, actor: str) -> str:
    """The section carried into `actor`'s soul (the text from its heading on)."""
    text = await scene_thread.rehearsal.souls.text(Actor(actor))
    at = text.rfind("\n### ")
    return text[at + 1 :].split("\n## ", 1)[0].strip() if at >= 0 else ""


@app_commands.command(name="secrets", description=words("cmd.secrets.description"))
@room_only
@app_commands.describe(take=words("cmd.secrets.take"))
async def secrets(
    interaction: discord.Interaction, take: app_commands.Range[int, 1] | None = None
) -> None:
    scene_thread = scene_of(interaction)
    only = only_of(await private_actors(interaction, scene_thread))  # a captain: their own
    await defer(interaction)
    lines = await secrets_lines(scene_thread.rehearsal.root, take, only)
    for chunk in _chunks("\n".join(lines)):
        await reply(interaction, chunk)


def setup(tree: app_commands.CommandTree) -> None:
    """Add /scene next to the /scene group (bot.commands.scenes builds it first) and /secrets."""
    scene = tree.get_command("scene")
    if isinstance(scene, app_commands.Group):
        command: app_commands.Command[Any, Any, Any] = app_commands.Command(
            name="next", description=words("cmd.scene_next.description"), callback=scene_next
        )
        command = app_commands.describe(
            name=words("cmd.scene_next.name"), take=words("cmd.scene_next.take")
        )(command)
        scene.add_command(command)
    tree.add_command(secrets)
