"""The stage in Discord: /enter /exit /event (directors), /play /unplay, /say (the player).

Invariants: /enter, /exit, /event and /play are `directors_only` (checked before anything
changes, before an actor option is even resolved), and so is /unplay ACTOR for anyone who plays
nobody here (a player may give back their own role, never another's); /say is
accepted only from the member who plays an actor in this scene (anyone else is refused
privately) and posts through that actor's own persona like any turn. (How stage blocks and a
waiting run read in the thread: bot.thread.blocks, posted by bot.thread.scene in order with the turns.)
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from bot.errors import BotProblem, NotDirector
from bot.i18n import t, words
from bot.interaction.gate import directed, directors_only, may_direct, scene_of
from bot.interaction.options import ActorArg, actor_choices
from bot.interaction.replies import defer, reply
from bot.thread.blocks import player_id, say_text
from bot.thread.scene import SceneThread
from engine import Actor, NotPlaying


# ---------------------------------------------------------------------- the bodies
async def enter_actor(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor
) -> None:
    """/enter: an actor walks on stage."""
    await defer(interaction)
    block = await scene_thread.rehearsal.stage.enter(actor)
    await reply(interaction, say_text("entered", scene_thread.lang, actor=block.actor))


async def exit_actor(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor
) -> None:
    """/exit: an actor walks off stage."""
    await defer(interaction)
    block = await scene_thread.rehearsal.stage.exit(actor)
    await reply(interaction, say_text("exited", scene_thread.lang, actor=block.actor))


async def stage_event(
    interaction: discord.Interaction, scene_thread: SceneThread, text: str
) -> None:
    """/event: something happens on stage, for everyone."""
    await defer(interaction)
    await scene_thread.rehearsal.stage.event(text)
    await reply(interaction, say_text("evented", scene_thread.lang))


async def play_actor(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    actor: Actor,
    member: discord.User | discord.Member,
) -> None:
    """/play: `member` plays `actor` from now on (never a bot)."""
    if member.bot:
        raise BotProblem("stage.play_bot")
    await defer(interaction)
    name = await scene_thread.rehearsal.stage.play(actor, player_id(member))
    await reply(interaction, say_text("played", scene_thread.lang, user=member.mention, actor=name))


async def unplay_actor(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor | None
) -> None:
    """/unplay: a role back to its model — anyone's for a director, else only your own."""
    await defer(interaction)
    me = player_id(interaction.user)
    if actor and may_direct(interaction, scene_thread):
        freed = await scene_thread.rehearsal.stage.unplay(actor)
    elif actor:
        try:
            freed = await scene_thread.rehearsal.stage.unplay(actor, player=me)
        except NotPlaying:  # someone else's role: that is a director's call
            mentions = ", ".join(f"<@{d}>" for d in scene_thread.binding.directors)
            raise NotDirector(mentions or t("nobody", scene_thread.lang)) from None
    else:
        freed = await scene_thread.rehearsal.stage.unplay(player=me)
    key = "unplayed" if freed else "unplayed_none"
    await reply(interaction, say_text(key, scene_thread.lang, actors=", ".join(freed)))


async def say_line(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    line: str = "",
    action: str = "",
    cue: str = "",
    thought: str = "",
) -> None:
    """/say: the line of the actor this member plays (NotPlaying if they play nobody)."""
    me = player_id(interaction.user)
    played = [a for a, p in (await scene_thread.rehearsal.stage.players()).items() if p == me]
    if not played:
        raise NotPlaying(None)
    await defer(interaction)
    actor = played[0]
    waiting = scene_thread.rehearsal.stage.waiting_for == actor
    # The player's own actor, as the engine named it: the check inside `say` is all it needs.
    await scene_thread.rehearsal.stage.say(Actor(actor), line, action, cue, thought, player=me)
    key = "said_waiting" if waiting else "said"
    await reply(interaction, say_text(key, scene_thread.lang, actor=actor))


async def directs_or_plays(interaction: discord.Interaction) -> bool:
    """/unplay ACTOR: a director, or a member who plays someone here (whether ACTOR is theirs
    the engine decides, once it is resolved). Anyone else is refused before it is resolved."""
    if getattr(interaction.namespace, "actor", None):
        scene_thread = scene_of(interaction)
        if not may_direct(interaction, scene_thread):
            me = player_id(interaction.user)
            if me not in (await scene_thread.rehearsal.stage.players()).values():
                directed(interaction)  # raises NotDirector, naming the directors
    return True


# ---------------------------------------------------------------------- the commands
@app_commands.command(name="enter", description=words("cmd.enter.description"))
@directors_only
@app_commands.describe(actor=words("cmd.enter.actor"))
async def enter(interaction: discord.Interaction, actor: ActorArg) -> None:
    await enter_actor(interaction, scene_of(interaction), actor)


@app_commands.command(name="exit", description=words("cmd.exit.description"))
@directors_only
@app_commands.describe(actor=words("cmd.exit.actor"))
async def exit_(interaction: discord.Interaction, actor: ActorArg) -> None:
    await exit_actor(interaction, scene_of(interaction), actor)


@app_commands.command(name="event", description=words("cmd.event.description"))
@directors_only
@app_commands.describe(text=words("cmd.event.text"))
async def event(interaction: discord.Interaction, text: app_commands.Range[str, 1, 1500]) -> None:
    await stage_event(interaction, scene_of(interaction), text)


@app_commands.command(name="play", description=words("cmd.play.description"))
@directors_only
@app_commands.describe(actor=words("cmd.play.actor"), user=words("cmd.play.user"))
async def play(
    interaction: discord.Interaction, actor: ActorArg, user: discord.User | None = None
) -> None:
    await play_actor(interaction, scene_of(interaction), actor, user or interaction.user)


@app_commands.command(name="unplay", description=words("cmd.unplay.description"))
@app_commands.check(directs_or_plays)  # your own role needs no permission; another's does
@app_commands.describe(actor=words("cmd.unplay.actor"))
async def unplay(interaction: discord.Interaction, actor: ActorArg | None = None) -> None:
    await unplay_actor(interaction, scene_of(interaction), actor)


@app_commands.command(name="say", description=words("cmd.say.description"))
@app_commands.autocomplete(cue=actor_choices)  # a cue is typed text (ANY, or anyone): not resolved
@app_commands.describe(
    line=words("cmd.say.line"),
    action=words("cmd.say.action"),
    cue=words("cmd.say.cue"),
    thought=words("cmd.say.thought"),
)
async def say(
    interaction: discord.Interaction,
    line: app_commands.Range[str, 1, 1900] | None = None,
    action: app_commands.Range[str, 1, 1000] | None = None,
    cue: str | None = None,
    thought: app_commands.Range[str, 1, 1900] | None = None,
) -> None:
    scene_thread = scene_of(interaction)
    await say_line(interaction, scene_thread, line or "", action or "", cue or "", thought or "")


def setup(tree: app_commands.CommandTree) -> None:
    command: app_commands.Command[Any, Any, Any] | app_commands.Group
    for command in (enter, exit_, event, play, unplay, say):
        tree.add_command(command)
