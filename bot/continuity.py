"""`/scene next`, `/secrets` and `/take list` with the takes tree, in a scene thread (issue 21).

Invariants: each is for the scene's directors (`directors_only`, before anything runs) and
answers privately; `/scene next` makes the new folder through the engine (start_next: nothing
written on a refusal), opens its thread with the old scene's directors as its directors, and
shows each carried section only to the director who asked, with a button per actor that opens
the same soul form as `/soul edit` (the form checks again who may direct the new scene). The
ledger and the tree read take folders: no run lock, nothing written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import discord
from discord import app_commands

from bot.commands import MODAL_LIMIT, SoulModal, soul_file
from bot.edge import (
    bot_of,
    defer,
    describe,
    directed,
    directors_only,
    may_direct,
    reply,
    report,
    scene_of,
)
from bot.errors import NotDirector
from bot.i18n import COMMAND_TEXT, t
from bot.render import LIMIT, render_takes, split_message
from bot.scenes import open_thread
from bot.stage import Stage
from engine import Actor, CircusError, check_name, secrets_lines, start_next, tree_lines_of

EDIT_SECONDS = 15 * 60.0  # the buttons live as long as the interaction token
PREVIEW = 1200  # a carried section's characters shown inline

# The slash commands' descriptions in Chinese (bot.i18n's table, extended here).
COMMAND_TEXT.update(
    {
        "Start the next scene from a take of this one": ("從這場的某次排演開始下一場", "从这场的某次排演开始下一场"),
        "The new scene's name (its folder)": ("新場景的名稱（也是資料夾名）", "新场景的名称（也是文件夹名）"),
        "The take to carry (default: the last saved)": ("要承接的排演（預設：最後存檔的那次）", "要承接的排演（默认：最后存档的那次）"),
        "When each secret surfaced in a take, and every breach": ("每個秘密在排演中何時浮上檯面，以及每次越界", "每个秘密在排演中何时浮上台面，以及每次越界"),
        "A saved take (default: the last saved)": ("已存檔的排演（預設：最後存檔的那次）", "已存档的排演（默认：最后存档的那次）"),
    }
)  # fmt: skip


class NewSceneSoulModal(SoulModal):
    """The `/soul edit` form, for a soul of the scene just made: it is opened from the old
    scene's thread, so it writes to the scene it was opened for (never the thread's own) and
    checks that its user may direct that scene."""

    async def on_submit(self, interaction: discord.Interaction) -> None:
        stage = self.stage
        if not may_direct(interaction, stage):
            raise NotDirector(", ".join(f"<@{d}>" for d in stage.binding.directors))
        await defer(interaction)
        text = self.body.value
        try:
            await stage.rehearsal.set_soul(self.actor, text, origin="discord")
        except CircusError as exc:  # refused: say why, and hand back what was typed
            why = await describe(interaction, exc)
            kept = t("soul_form_kept", stage.lang, actor=self.actor.name)
            await reply(interaction, f"{why}\n{kept}", file=soul_file(self.actor.name, text))
            return
        await reply(interaction, t("soul_saved", stage.lang, actor=self.actor.name))


def _chunks(text: str) -> list[str]:
    return split_message(text[: LIMIT * 4])


class EditSouls(discord.ui.View):
    """A button per actor of the new scene: each opens that soul in the soul form."""

    def __init__(self, stage: Stage, cast: tuple[str, ...]) -> None:
        super().__init__(timeout=EDIT_SECONDS)
        self.stage = stage
        for actor in cast[:25]:
            button: discord.ui.Button[EditSouls] = discord.ui.Button(
                label=t("next.edit_button", stage.lang, actor=actor)[:80],
                style=discord.ButtonStyle.secondary,
                custom_id=f"next:edit:{actor}"[:100],
            )
            button.callback = self._edit(actor)  # type: ignore[method-assign]
            self.add_item(button)

    def _edit(self, actor: str) -> Callable[[discord.Interaction], Awaitable[None]]:
        async def callback(interaction: discord.Interaction) -> None:
            try:
                stage = bot_of(interaction).stages.get(self.stage.name, self.stage)
                text = await stage.rehearsal.soul_text(Actor(actor))
                if len(text) > MODAL_LIMIT:
                    await defer(interaction)
                    message = t("soul_too_long", stage.lang, actor=actor, length=len(text))
                    await reply(interaction, message)
                    return
                if not may_direct(interaction, stage):
                    raise NotDirector(", ".join(f"<@{d}>" for d in stage.binding.directors))
                modal = NewSceneSoulModal(stage, Actor(actor), text)
                await interaction.response.send_modal(modal)
            except Exception as exc:  # one private line, never a traceback
                await report(interaction, exc)

        return callback


async def scene_next(
    interaction: discord.Interaction, name: str, take: app_commands.Range[int, 1] | None = None
) -> None:
    old = directed(interaction)
    bot = bot_of(interaction)
    await defer(interaction)
    name = check_name(name, "Scene")
    done = await start_next(old.rehearsal.root, bot.scenes_dir / name, take, config=bot.config)
    thread = await open_thread(interaction, name, old.binding.directors)
    stage = bot.stages[name]
    lang = stage.lang
    head = t("next.created", lang, scene=name, old=old.name, take=done.take, thread=thread.mention)
    await reply(interaction, head)
    for actor in done.cast:
        section = await carried_of(stage, actor)
        shown = section if len(section) <= PREVIEW else section[:PREVIEW].rstrip() + "…"
        text = (
            t("next.draft", lang, actor=actor) + "\n```md\n" + shown.replace("```", "ˋˋˋ") + "\n```"
        )
        await interaction.followup.send(text[:LIMIT], ephemeral=True)
    await interaction.followup.send(
        t("next.edit_hint", lang), view=EditSouls(stage, done.cast), ephemeral=True
    )


async def carried_of(stage: Stage, actor: str) -> str:
    """The section carried into `actor`'s soul (the text from its heading on)."""
    text = await stage.rehearsal.soul_text(Actor(actor))
    at = text.rfind("\n### ")
    return text[at + 1 :].split("\n## ", 1)[0].strip() if at >= 0 else ""


@app_commands.command(name="secrets")
@directors_only
@app_commands.describe(take="A saved take (default: the last saved)")
async def secrets(
    interaction: discord.Interaction, take: app_commands.Range[int, 1] | None = None
) -> None:
    """When each secret surfaced in a take, and every breach"""
    stage = scene_of(interaction)
    await defer(interaction)
    lines = await secrets_lines(stage.rehearsal.root, take)
    for chunk in _chunks("\n".join(lines)):
        await reply(interaction, chunk)


@directors_only
async def take_list(interaction: discord.Interaction) -> None:
    stage = scene_of(interaction)
    await defer(interaction)
    listing = render_takes(await stage.rehearsal.list_takes(), stage.lang)
    tree = "\n".join(await tree_lines_of(stage.rehearsal.root))
    await reply(interaction, f"{listing}\n```\n{tree}\n```"[:LIMIT])


def setup(tree: app_commands.CommandTree) -> None:
    """Add /scene next, /secrets, and the tree to /take list (after bot.app's other setups)."""
    scene = tree.get_command("scene")
    if isinstance(scene, app_commands.Group):
        command = app_commands.Command(
            name="next",
            description="Start the next scene from a take of this one",
            callback=scene_next,
        )
        command = app_commands.describe(  # locale_str: the translator gives them Chinese
            name=app_commands.locale_str("The new scene's name (its folder)"),
            take=app_commands.locale_str("The take to carry (default: the last saved)"),
        )(command)
        scene.add_command(command)
    takes = tree.get_command("take")
    if isinstance(takes, app_commands.Group):
        listing = app_commands.Command(
            name="list", description="List the saved takes", callback=take_list
        )
        children = list(takes.commands)  # replaced in place: the group keeps its order
        for child in children:
            takes.remove_command(child.name)
        for child in children:
            takes.add_command(listing if child.name == "list" else child)
    tree.add_command(secrets)
