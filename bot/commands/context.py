"""`/scene context`: the scene's public stage facts (context.md's body), rewritten in a form.

Invariants: only a scene's directors reach the form or upload a file (`directors_only`, and the
form's own `interaction_check` on submit); the text arrives as data (origin="member": the scene's operator
settings stay as on disk), the engine writes it whole or not at all, and a refused form is
handed back as a file. A body over a form's 4000 characters comes as a file to edit and upload.
"""

from __future__ import annotations

import re

import discord
from discord import app_commands

from bot.errors import BotProblem
from bot.i18n import t, words
from bot.interaction.edge import describe
from bot.interaction.files import MODAL_LIMIT, text_file, uploaded_text
from bot.interaction.forms import DirectorsForm
from bot.interaction.gate import directors_only, scene_of
from bot.interaction.replies import defer, reply
from bot.thread.scene import SceneThread
from engine import CircusError

_OPEN = re.compile(r"\ufeff?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


def split_context(text: str) -> tuple[str, str]:
    """context.md as (its settings block with both `---` fences, the public body). The form
    shows the body only; the settings go back exactly as they are on disk. Without a closed
    settings block all of it is the body (the engine then says what is wrong, on save)."""
    opening = _OPEN.match(text)
    closing = _CLOSE.search(text, opening.end()) if opening else None
    if closing is None:
        return "", text
    return text[: closing.end()], text[closing.end() :]


def with_body(header: str, body: str) -> str:
    """context.md again from its settings block and a new public body (ending in a newline)."""
    body = body.strip("\n")
    if not header:
        return body + "\n" if body else ""
    if not header.endswith("\n"):
        header += "\n"
    return f"{header}\n{body}\n" if body else header


def context_file(text: str) -> discord.File:
    return text_file("context.md", text)


class ContextModal(DirectorsForm):
    """context.md's public body in one field, prefilled with what is on disk."""

    def __init__(self, scene_thread: SceneThread, body: str) -> None:
        lang = scene_thread.lang
        super().__init__(
            title=t("context.form_title", lang, scene=scene_thread.name)[:45], timeout=None
        )
        self.scene_thread = scene_thread
        self.body: discord.ui.TextInput[ContextModal] = discord.ui.TextInput(
            label=t("context.label", lang)[:45],
            placeholder=t("context.hint", lang)[:100],
            style=discord.TextStyle.paragraph,
            default=body.strip("\n") or None,
            max_length=MODAL_LIMIT,
            custom_id="context",
        )
        self.add_item(self.body)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        scene_thread = scene_of(interaction)  # a director's: interaction_check let it through
        await defer(interaction)
        text = self.body.value or ""
        if len(text) > MODAL_LIMIT:
            label = t("context.label", scene_thread.lang)
            raise BotProblem(
                "cast.field_too_long", field=label, length=len(text), limit=MODAL_LIMIT
            )
        # The settings as they are now (a terminal may have changed them meanwhile), untouched.
        header, _ = split_context(await scene_thread.rehearsal.cast.context_text())
        whole = with_body(header, text)
        try:
            await scene_thread.rehearsal.cast.set_context(whole, origin="member")
        except CircusError as exc:  # refused: say why, and hand back what was typed
            why = await describe(interaction, exc)
            kept = t("context.form_kept", scene_thread.lang)
            await reply(interaction, f"{why}\n{kept}", file=context_file(whole))
            return
        await saved(interaction, scene_thread)


async def saved(interaction: discord.Interaction, scene_thread: SceneThread) -> None:
    await scene_thread.refresh()  # the language may have changed with it
    await reply(interaction, t("context.saved", scene_thread.lang))


async def edit_context(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    file: discord.Attachment | None = None,
) -> None:
    """/scene context: an uploaded context.md is written; else a form opens with its public
    body (or, for a body longer than a form holds, the file comes back to edit and upload)."""
    if file is not None:
        await defer(interaction)
        text = await uploaded_text(file, too_big="upload_too_big")
        await scene_thread.rehearsal.cast.set_context(text, origin="member")
        await saved(interaction, scene_thread)
        return
    whole = await scene_thread.rehearsal.cast.context_text()
    _, body = split_context(whole)
    if len(body.strip("\n")) > MODAL_LIMIT:
        await defer(interaction)
        message = t("context.too_long", scene_thread.lang, length=len(body.strip("\n")))
        await reply(interaction, message, file=context_file(whole))
        return
    await interaction.response.send_modal(ContextModal(scene_thread, body))


def attach(group: app_commands.Group) -> None:
    """Add `/scene context` to the /scene group."""

    @group.command(name="context", description=words("cmd.scene_context.description"))
    @app_commands.describe(file=words("cmd.scene_context.file"))
    @directors_only
    async def scene_context(
        interaction: discord.Interaction, file: discord.Attachment | None = None
    ) -> None:
        await edit_context(interaction, scene_of(interaction), file)
