"""`/scene backstory file:`: one full backstory in, a prior story per actor drafted, and each
draft shown to the director privately, to accept, edit or drop.

Invariants: the full backstory and every draft reach only the director who sent it (ephemeral
messages; never the thread, never another actor); nothing is written into a soul until a
director presses Accept (or submits the edited draft), and then only its part 2 (the engine's
accept_prior_story); every button and form checks again that its user directs the scene (their
`interaction_check`, bot.interaction.forms).
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.errors import BotProblem
from bot.i18n import t, words
from bot.interaction.files import MODAL_LIMIT, text_file, uploaded_text
from bot.interaction.forms import DirectorsForm, DirectorsView
from bot.interaction.gate import directors_only, scene_of
from bot.interaction.replies import defer, reply
from bot.render import LIMIT
from bot.thread.scene import SceneThread
from engine import UnknownActor

PREVIEW = 1500  # a draft's characters shown inline; a longer one also comes as a file
# discord.py ends a private message's buttons after 15 minutes (its interaction token's life).
DECIDE_SECONDS = 15 * 60.0
# What a draft's message says first, by its state (catalog keys).
STATES = {
    "draft": "backstory.draft",
    "accepted": "backstory.accepted",
    "edited": "backstory.edited",
    "dropped": "backstory.dropped",
    "empty": "backstory.empty",
}


def _quote(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in text.strip().splitlines())


def draft_message(actor: str, draft: str, state: str, lang: str, kept: str | None = None) -> str:
    """What the director reads about one draft: its state ("draft", "accepted", "edited",
    "dropped", "empty"), where the prior story it replaced is `kept` (if it was), and, unless
    dropped, the draft itself (cut to fit one message)."""
    head = t(STATES[state], lang, actor=actor, length=len(draft))
    if kept is not None:
        head += "\n" + t("backstory.kept", lang, path=kept)
    if state in ("dropped", "empty") or not draft.strip():
        return head
    shown = draft.strip()
    if len(shown) > PREVIEW:
        shown = shown[:PREVIEW].rstrip() + "…"
    return f"{head}\n{_quote(shown)}"[:LIMIT]


def draft_file(actor: str, draft: str) -> discord.File:
    return text_file(f"{actor}-prior-story.md", draft)


class DraftView(DirectorsView):
    """Accept / Edit / Drop under one actor's draft; it holds the draft until then."""

    def __init__(self, scene_thread: SceneThread, actor: str, draft: str) -> None:
        super().__init__(timeout=DECIDE_SECONDS)
        self.scene_thread = scene_thread
        self.actor = actor
        self.draft = draft
        lang = scene_thread.lang
        buttons = (
            ("accept", "backstory.accept_button", discord.ButtonStyle.success, self.accept),
            ("edit", "backstory.edit_button", discord.ButtonStyle.secondary, self.edit),
            ("drop", "backstory.drop_button", discord.ButtonStyle.danger, self.drop),
        )
        for name, label, style, callback in buttons:
            button: discord.ui.Button[DraftView] = discord.ui.Button(
                label=t(label, lang)[:80],
                style=style,
                custom_id=f"backstory:{name}",
                disabled=name == "edit" and len(draft) > MODAL_LIMIT,
            )
            button.callback = callback  # type: ignore[method-assign]
            self.add_item(button)

    async def accept(self, interaction: discord.Interaction) -> None:
        await self.write(interaction, self.draft, "accepted")

    async def edit(self, interaction: discord.Interaction) -> None:
        if len(self.draft) > MODAL_LIMIT:  # the button is disabled then; a client may not care
            raise BotProblem("backstory.too_long", actor=self.actor, limit=MODAL_LIMIT)
        await interaction.response.send_modal(DraftModal(self))

    async def drop(self, interaction: discord.Interaction) -> None:
        scene_thread = scene_of(interaction)
        self.stop()
        text = draft_message(self.actor, self.draft, "dropped", scene_thread.lang)
        await interaction.response.edit_message(content=text, view=None, attachments=[])

    async def write(self, interaction: discord.Interaction, text: str, state: str) -> None:
        """Write `text` as the actor's prior story (the director said so), then show it done."""
        scene_thread = scene_of(interaction)
        try:
            actor = await scene_thread.rehearsal.resolve_actor(self.actor)  # still in the cast?
        except UnknownActor:  # removed or renamed since the draft was made
            cast = ", ".join((await scene_thread.rehearsal.view()).cast)
            raise BotProblem("unknown_actor", name=self.actor, cast=cast) from None
        kept = await scene_thread.rehearsal.souls.accept_prior_story(actor, text)
        self.draft = text
        self.stop()
        shown = draft_message(actor.name, text, state, scene_thread.lang, kept)
        await interaction.response.edit_message(content=shown, view=None, attachments=[])


class DraftModal(DirectorsForm):
    """One draft prior story, prefilled, for the director to rewrite before it is written."""

    def __init__(self, view: DraftView) -> None:
        lang = view.scene_thread.lang
        super().__init__(title=t("backstory.form_title", lang, actor=view.actor)[:45], timeout=None)
        self.draft_view = view
        self.story: discord.ui.TextInput[DraftModal] = discord.ui.TextInput(
            label=t("backstory.label", lang)[:45],
            style=discord.TextStyle.paragraph,
            default=view.draft or None,
            max_length=MODAL_LIMIT,
            custom_id="prior_story",
        )
        self.add_item(self.story)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        text = self.story.value or ""
        if len(text) > MODAL_LIMIT:
            label = t("backstory.label", self.draft_view.scene_thread.lang)
            raise BotProblem(
                "cast.field_too_long", field=label, length=len(text), limit=MODAL_LIMIT
            )
        if not text.strip():
            raise BotProblem("backstory.empty_edit", actor=self.draft_view.actor)
        await self.draft_view.write(interaction, text, "edited")


async def draft_backstories(
    interaction: discord.Interaction, scene_thread: SceneThread, file: discord.Attachment
) -> None:
    """/scene backstory: one draft prior story per actor, each shown privately with its buttons."""
    await defer(interaction)
    text = await uploaded_text(file, too_big="upload_too_big")
    drafts = await scene_thread.rehearsal.souls.backstory_drafts(text)
    await reply(interaction, t("backstory.drafted", scene_thread.lang, count=len(drafts)))
    for actor, draft in drafts.items():
        if not draft.strip():
            await reply(interaction, draft_message(actor, draft, "empty", scene_thread.lang))
            continue
        file_ = draft_file(actor, draft) if len(draft) > PREVIEW else None
        await reply(
            interaction,
            draft_message(actor, draft, "draft", scene_thread.lang),
            file=file_,
            view=DraftView(scene_thread, actor, draft),
        )


def attach(group: app_commands.Group) -> None:
    """Add `/scene backstory` to the /scene group."""

    @group.command(name="backstory", description=words("cmd.scene_backstory.description"))
    @app_commands.describe(file=words("cmd.scene_backstory.file"))
    @directors_only
    async def scene_backstory(interaction: discord.Interaction, file: discord.Attachment) -> None:
        await draft_backstories(interaction, scene_of(interaction), file)
