"""Message menus (long-press an actor's line → Apps): ⭐ Pick line, 🎬 Cue this actor, 💭 Thought,
📌 Note on this line.

Invariants: a menu works only on a message the scene remembered as one of its actors' lines
(bot.thread.votes: message → take and turn); on anything else it answers privately what it works on.
"🎬 Cue this actor" takes /cue's own gate; "💭 Thought" is for the scene's directors and
captains (`room_only`, before anything is read), and shows a line's thought only to whoever
`private_actors` lets read that character's — privately. "⭐ Pick line" is one vote per member,
the same as a ⭐ reaction. "📌 Note on this
line" opens a form for anyone `may_note_lines` lets in (asked again on submit); the note is
stored with the member's name and id in the scene's line-notes.md, which no prompt reads.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.errors import BotProblem
from bot.i18n import t, words
from bot.interaction.gate import (
    author,
    crew_refusal,
    may_direct,
    may_note_lines,
    may_read,
    private_actors,
    refuse,
    room_only,
    scene_of,
)
from bot.interaction.replies import defer, reply
from bot.panel.controls import CueForm, Form, checked
from bot.panel.text import title
from bot.thread.scene import SceneThread
from engine import LINE_NOTE_MOST_CHARS


async def line_of(scene_thread: SceneThread, message: discord.Message) -> tuple[int, int, str, str]:
    """(take, turn, actor, thought) of an actor's line; a private refusal for anything else."""
    found = await scene_thread.votes.turn_of(message.id)
    if found is None:
        raise BotProblem("menu.not_a_line")
    take, turn = found
    actor, thought = await scene_thread.rehearsal.harvest.line_of(take, turn)
    return take, turn, actor, thought


async def pick_line(interaction: discord.Interaction, message: discord.Message) -> None:
    scene_thread = scene_of(interaction)
    await defer(interaction)
    take, turn, actor, _ = await line_of(scene_thread, message)
    user = interaction.user
    counted = await scene_thread.votes.vote(take, turn, user.display_name, user.id)
    if not counted:
        key = "menu.already"
    else:
        key = "menu.picked" if may_direct(interaction, scene_thread) else "menu.voted"
    await reply(interaction, t(key, scene_thread.lang, take=take, turn=turn, actor=actor))


async def cue_actor(interaction: discord.Interaction, message: discord.Message) -> None:
    scene_thread = scene_of(interaction)
    await checked(interaction, "cue")  # the same gate as /cue
    _, _, name, _ = await line_of(scene_thread, message)
    actor = await scene_thread.rehearsal.resolve_actor(name, ())  # the line's speaker's name
    await author(interaction, scene_thread, actor.name, cue=True)  # refused before typing
    await interaction.response.send_modal(CueForm(scene_thread, actor))


async def thought(interaction: discord.Interaction, message: discord.Message) -> None:
    scene_thread = scene_of(interaction)
    private = await private_actors(interaction, scene_thread)
    await defer(interaction)
    take, turn, actor, text = await line_of(scene_thread, message)
    if not may_read(private, actor):  # a captain, on another character's line
        raise refuse(interaction, scene_thread)
    values = dict(take=take, turn=turn, actor=actor, thought=text)
    await reply(
        interaction,
        t("menu.thought_of" if text else "menu.no_thought", scene_thread.lang, **values),
    )


class LineNoteForm(Form):
    """📌 Note on this line: the member's note on one turn, for the room (never an actor)."""

    def __init__(self, scene_thread: SceneThread, take: int, turn: int, actor: str) -> None:
        lang = scene_thread.lang
        super().__init__(
            title=title("menu.line_note_title", lang, turn=turn, actor=actor), timeout=None
        )
        self.scene_thread, self.take, self.turn = scene_thread, take, turn
        self.text: discord.ui.TextInput[LineNoteForm] = discord.ui.TextInput(
            label=t("menu.line_note_label", lang)[:45],
            placeholder=t("menu.line_note_hint", lang)[:100],
            style=discord.TextStyle.paragraph,
            max_length=LINE_NOTE_MOST_CHARS,
            custom_id="line_note",
        )
        self.add_item(self.text)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        scene_thread = self.scene_thread
        if not await may_note_lines(interaction, scene_thread):  # the setting may have changed
            raise crew_refusal(interaction, scene_thread)
        await defer(interaction)
        user = interaction.user
        note = await scene_thread.rehearsal.line_notes.add(
            self.turn, self.text.value, user.display_name, take=self.take, by_id=user.id
        )
        text = discord.utils.escape_markdown(note.text)
        await reply(
            interaction,
            t("menu.line_noted", scene_thread.lang, turn=note.turn, actor=note.actor, text=text),
        )


async def note_line(interaction: discord.Interaction, message: discord.Message) -> None:
    scene_thread = scene_of(interaction)
    if not await may_note_lines(interaction, scene_thread):
        raise crew_refusal(interaction, scene_thread)
    take, turn, actor, _ = await line_of(scene_thread, message)
    await interaction.response.send_modal(LineNoteForm(scene_thread, take, turn, actor))


def setup(tree: app_commands.CommandTree) -> None:
    """Register the four message menus (names in English; Discord shows them per locale)."""
    tree.add_command(app_commands.ContextMenu(name=words("cmd.menu.pick"), callback=pick_line))
    tree.add_command(app_commands.ContextMenu(name=words("cmd.menu.cue"), callback=cue_actor))
    menu = app_commands.ContextMenu(name=words("cmd.menu.thought"), callback=thought)
    tree.add_command(room_only(menu))
    tree.add_command(app_commands.ContextMenu(name=words("cmd.menu.note_line"), callback=note_line))
