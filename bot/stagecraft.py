"""The stage in Discord: /enter /exit /event (directors), /play /unplay, /say (the player).

Invariants: /enter, /exit, /event and /play are `directors_only` (checked before anything
changes, before an actor option is even resolved), and so is /unplay ACTOR for anyone who plays
nobody here (a player may give back their own role, never another's); /say is
accepted only from the member who plays an actor in this scene (anyone else is refused
privately) and posts through that actor's own persona like any turn; stage blocks are posted
in the thread, in order with the turns, by a neutral stage persona; a run waiting for a player
mentions them once, from the bot itself, after everything before it is in the thread.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.edge import defer, directed, directors_only, may_direct, reply, scene_of
from bot.errors import NotDirector
from bot.i18n import t
from bot.options import ActorArg, actor_choices
from bot.render import split_message
from engine import Actor, Event, NotPlaying, StageChanged, WaitingForPlayer, whole_number
from engine import say as catalog_say

if TYPE_CHECKING:
    from bot.stage import Stage

PLAYER = "discord:{}"  # how a member is named in .circus/players.json


def say_text(key: str, lang: str, **values: object) -> str:
    """The stage line `bot.stage.<key>` of engine's catalog in `lang`."""
    return catalog_say("bot.stage." + key, lang, **values)


def player_id(user: discord.abc.Snowflake) -> str:
    return PLAYER.format(user.id)


def _mention(player: str) -> tuple[str, int | None]:
    user_id = whole_number(player[8:], 20) if player.startswith("discord:") else None
    if user_id is not None:
        return f"<@{user_id}>", user_id
    return player, None


# ---------------------------------------------------------------------- rendering
def block_message(event: StageChanged, lang: str) -> str:
    """A stage block as the thread shows it (public text only: the record's own)."""
    if event.kind in ("enter", "exit"):
        return say_text(event.kind, lang, actor=event.actor)
    if event.kind == "present":
        return say_text("present", lang, names=tuple(event.names))
    return say_text(event.kind, lang, text=event.text.strip())


async def render_stage_event(stage: Stage, event: Event) -> None:
    """Called by the scene's pump, in order with its turns."""
    if isinstance(event, StageChanged):
        persona = say_text("persona", stage.lang)
        for chunk in split_message(block_message(event, stage.lang)):
            stage.personas.post(
                stage.binding.channel_id, stage.binding.thread_id, persona, None, chunk
            )
    elif isinstance(event, WaitingForPlayer):
        stage._stop_typing()
        # Everything before the wait must be in the thread first (the webhook queue is FIFO).
        await stage.personas.drain()
        mention, user = _mention(event.player)
        text = say_text("waiting", stage.lang, actor=event.actor, mention=mention)
        allowed = discord.AllowedMentions(
            everyone=False, roles=False, users=[discord.Object(user)] if user else False
        )
        channel = stage.client.get_partial_messageable(
            stage.binding.thread_id, guild_id=stage.binding.guild_id
        )
        with contextlib.suppress(discord.HTTPException):
            await channel.send(text, allowed_mentions=allowed)


# ---------------------------------------------------------------------- the stage
@app_commands.command(name="enter")
@directors_only
async def enter(interaction: discord.Interaction, actor: ActorArg) -> None:
    """An actor walks on stage

    Args:
        actor: The actor
    """
    stage = scene_of(interaction)
    await defer(interaction)
    block = await stage.rehearsal.stage.enter(actor)
    await reply(interaction, say_text("entered", stage.lang, actor=block.actor))


@app_commands.command(name="exit")
@directors_only
async def exit_(interaction: discord.Interaction, actor: ActorArg) -> None:
    """An actor walks off stage

    Args:
        actor: The actor
    """
    stage = scene_of(interaction)
    await defer(interaction)
    block = await stage.rehearsal.stage.exit(actor)
    await reply(interaction, say_text("exited", stage.lang, actor=block.actor))


@app_commands.command(name="event")
@directors_only
async def event(interaction: discord.Interaction, text: app_commands.Range[str, 1, 1500]) -> None:
    """Something happens on stage, for everyone

    Args:
        text: What happens (a phone rings, the lights fail…)
    """
    stage = scene_of(interaction)
    await defer(interaction)
    await stage.rehearsal.stage.event(text)
    await reply(interaction, say_text("evented", stage.lang))


# ---------------------------------------------------------------------- players
@app_commands.command(name="play")
@directors_only
async def play(
    interaction: discord.Interaction, actor: ActorArg, user: discord.User | None = None
) -> None:
    """Play a character yourself (or hand it to someone)

    Args:
        actor: The actor
        user: Who plays them (default: you)
    """
    stage = scene_of(interaction)
    member = user or interaction.user
    if member.bot:
        raise _PlayRefused(stage.lang)
    await defer(interaction)
    name = await stage.rehearsal.stage.play(actor, player_id(member))
    await reply(interaction, say_text("played", stage.lang, user=member.mention, actor=name))


class _PlayRefused(app_commands.AppCommandError):
    def __init__(self, lang: str) -> None:
        super().__init__(say_text("play_bot", lang))


async def _directs_or_plays(interaction: discord.Interaction) -> bool:
    """/unplay ACTOR: a director, or a member who plays someone here (whether ACTOR is theirs
    the engine decides, once it is resolved). Anyone else is refused before it is resolved."""
    if getattr(interaction.namespace, "actor", None):
        stage = scene_of(interaction)
        if not may_direct(interaction, stage):
            me = player_id(interaction.user)
            if me not in (await stage.rehearsal.stage.players()).values():
                directed(interaction)  # raises NotDirector, naming the directors
    return True


@app_commands.command(name="unplay")
@app_commands.check(_directs_or_plays)  # your own role needs no permission; another's does
async def unplay(interaction: discord.Interaction, actor: ActorArg | None = None) -> None:
    """Give a character back to its model

    Args:
        actor: The actor (default: the one you play; someone else's: directors only)
    """
    stage = scene_of(interaction)
    await defer(interaction)
    me = player_id(interaction.user)
    if actor and may_direct(interaction, stage):
        freed = await stage.rehearsal.stage.unplay(actor)
    elif actor:
        try:
            freed = await stage.rehearsal.stage.unplay(actor, player=me)
        except NotPlaying:  # someone else's role: that is a director's call
            mentions = ", ".join(f"<@{d}>" for d in stage.binding.directors)
            raise NotDirector(mentions or t("nobody", stage.lang)) from None
    else:
        freed = await stage.rehearsal.stage.unplay(player=me)
    key = "unplayed" if freed else "unplayed_none"
    await reply(interaction, say_text(key, stage.lang, actors=", ".join(freed)))


@app_commands.command(name="say")
@app_commands.autocomplete(cue=actor_choices)  # a cue is typed text (ANY, or anyone): not resolved
async def say(
    interaction: discord.Interaction,
    line: app_commands.Range[str, 1, 1900] | None = None,
    action: app_commands.Range[str, 1, 1000] | None = None,
    cue: str | None = None,
    thought: app_commands.Range[str, 1, 1900] | None = None,
) -> None:
    """Say your character's line

    Args:
        line: What your character says
        action: What your character visibly does
        cue: Who should speak next
        thought: A private thought (directors see it)
    """
    stage = scene_of(interaction)
    me = player_id(interaction.user)
    played = [a for a, p in (await stage.rehearsal.stage.players()).items() if p == me]
    if not played:
        raise NotPlaying(None)
    await defer(interaction)
    actor = played[0]
    waiting = stage.rehearsal.stage.waiting_for == actor
    # The player's own actor, as the engine named it: the check inside `say` is all it needs.
    await stage.rehearsal.stage.say(
        Actor(actor), line or "", action or "", cue or "", thought or "", player=me
    )
    await reply(
        interaction, say_text("said_waiting" if waiting else "said", stage.lang, actor=actor)
    )


def setup(tree: app_commands.CommandTree) -> None:
    for command in (enter, exit_, event, play, unplay, say):
        tree.add_command(command)
