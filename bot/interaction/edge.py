"""The edge between Discord interactions and the engine: every error, described once.

Invariants: every error raised by a command handler, a check, a form or a button — engine
(CircusError), bot (BotProblem), Discord (Forbidden), an option that did not resolve, or a bug —
is translated here, once, into one private (ephemeral) reply in the scene's language; nothing
is ever half-answered or answered in public. No reply names a server path: a file is named by
its path inside the scene folder, and to someone who may not direct the scene a scene that
fails to load is only "its directors have the details". (Who may act: bot.interaction.gate.)
"""

from __future__ import annotations

import contextlib
import logging

import discord
from discord import app_commands

from bot.errors import BotProblem
from bot.i18n import t
from bot.interaction.gate import language, may_direct, scene_thread_or_none
from bot.interaction.host import host_of
from bot.interaction.replies import reply
from bot.render import scrub
from engine import BadName, BadSceneFile, CircusError, SceneBusy, SceneNotFound, UnknownActor

log = logging.getLogger("circus.bot")

# Errors that mean "this scene's files can't be read as a scene" (a broken front matter, an
# actor folder the engine refuses): their text quotes file contents, so only directors see it.
LOAD_ERRORS = (BadSceneFile, BadName, SceneNotFound)
ALREADY_ACKNOWLEDGED = 40060  # Discord: "Interaction has already been acknowledged"
ANSWERED_ELSEWHERE = (
    "interaction %s was already answered by another process: is a second circus bot connected "
    "with the same shards? (each shard must be in one process's --shards)"
)


async def describe(interaction: discord.Interaction, error: BaseException) -> str:
    """The sentence a person sees for `error`, in the scene's language."""
    lang = language(interaction)
    scene_thread = scene_thread_or_none(interaction)
    if isinstance(error, BotProblem):
        return t(error.key, lang, **error.values)
    if isinstance(error, SceneBusy) and scene_thread is not None:
        return t("busy", lang, scene=scene_thread.name)
    if (
        isinstance(error, LOAD_ERRORS)
        and scene_thread is not None
        and not may_direct(interaction, scene_thread)
    ):
        return t("scene_broken", lang)
    if isinstance(error, UnknownActor) and scene_thread is not None:
        ns = interaction.namespace
        name = getattr(ns, "actor", None) or getattr(ns, "start", None) or "?"
        with contextlib.suppress(CircusError):
            cast = (await scene_thread.rehearsal.view()).cast
            return t("unknown_actor", lang, name=name, cast=", ".join(cast))
    if isinstance(error, CircusError):
        # relative=True: a file by its path inside the scene; scrub() is the second lock.
        return scrub(error.in_language(lang, relative=True), host_of(interaction).scenes_dir)
    if isinstance(error, discord.Forbidden):
        where = f"<#{interaction.channel_id}>"
        return t("missing_permission", lang, channel=where, what=error.text or "403")
    if isinstance(error, app_commands.AppCommandError) and not isinstance(
        error, app_commands.CommandInvokeError
    ):
        return str(error)
    log.error("unexpected error in an interaction", exc_info=error)
    return t("unexpected", lang, error=type(error).__name__)


async def report(interaction: discord.Interaction, error: BaseException) -> None:
    """Translate an error once and answer privately; never raise."""
    if isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    elif isinstance(error, app_commands.TransformerError) and error.__cause__ is not None:
        error = error.__cause__  # e.g. the engine's UnknownActor from ActorOption
    if isinstance(error, discord.HTTPException) and error.code == ALREADY_ACKNOWLEDGED:
        # Someone else answered: another process on the same shard (an overlapping --shards).
        # The member has their answer from it; there is nobody here to tell.
        log.warning(ANSWERED_ELSEWHERE, interaction.id)
        return
    text = await describe(interaction, error)
    try:
        await reply(interaction, text)
    except discord.HTTPException:
        log.warning("could not deliver an error reply: %s", text)


async def on_tree_error(
    interaction: discord.Interaction, error: app_commands.AppCommandError
) -> None:
    await report(interaction, error)
