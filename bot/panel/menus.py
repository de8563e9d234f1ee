"""Message menus (long-press an actor's line → Apps): ⭐ Pick line, 🎬 Cue this actor, 💭 Thought.

Invariants: a menu works only on a message the scene remembered as one of its actors' lines
(bot.thread.votes: message → take and turn); on anything else it answers privately what it works on.
"🎬 Cue this actor" takes /cue's own gate; "💭 Thought" is for the scene's directors and
captains (`room_only`, before anything is read), and shows a line's thought only to whoever
`private_actors` lets read that character's — privately. "⭐ Pick line" is one vote per member, the same as a ⭐ reaction.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.errors import BotProblem
from bot.i18n import t, words
from bot.interaction.gate import may_direct, may_read, private_actors, refuse, room_only, scene_of
from bot.interaction.replies import defer, reply
from bot.panel.controls import CueForm, checked
from bot.thread.scene import SceneThread


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
    actor = await scene_thread.rehearsal.resolve_actor(name)
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


def setup(tree: app_commands.CommandTree) -> None:
    """Register the three message menus (names in English; Discord shows them per locale)."""
    tree.add_command(app_commands.ContextMenu(name=words("cmd.menu.pick"), callback=pick_line))
    tree.add_command(app_commands.ContextMenu(name=words("cmd.menu.cue"), callback=cue_actor))
    menu = app_commands.ContextMenu(name=words("cmd.menu.thought"), callback=thought)
    tree.add_command(room_only(menu))
