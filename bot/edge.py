"""The edge between Discord interactions and the engine: who may act, and private replies.

Invariants: every error raised by a command handler — engine (CircusError), bot (BotProblem),
Discord (Forbidden), an option that did not resolve, or a bug — is translated here, once, into
one private (ephemeral) reply in the scene's language; nothing is ever half-answered or answered
in public. `directors_only` (an app_commands check, built on `directed()`) is the only gate for
director commands: it refuses before any option is resolved or the engine is touched. No reply
names a server path: a file is named by its path inside the scene folder, and to someone who
may not direct the scene a scene that fails to load is only "its directors have the details".
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, TypeVar

import discord
from discord import app_commands

from bot.binding import can_direct
from bot.errors import BotProblem, NotDirector, NotInScene
from bot.i18n import lang_of, t
from bot.render import scrub
from engine import BadName, BadSceneFile, CircusError, SceneBusy, SceneNotFound, UnknownActor

if TYPE_CHECKING:
    from collections.abc import Callable

    from bot.app import CircusBot
    from bot.stage import Stage

log = logging.getLogger("circus.bot")
T = TypeVar("T")


def bot_of(interaction: discord.Interaction) -> CircusBot:
    return interaction.client  # type: ignore[return-value]


def scene_of(interaction: discord.Interaction) -> Stage:
    """The scene whose thread this interaction came from (NotInScene otherwise)."""
    stage = bot_of(interaction).stage_for_thread(interaction.channel_id)
    if stage is None:
        raise NotInScene()
    return stage


def may_direct(interaction: discord.Interaction, stage: Stage) -> bool:
    """A scene's director, or a member with Manage Threads in the scene's own server."""
    manage = bool(interaction.permissions.manage_threads)
    manage = manage and interaction.guild_id == stage.binding.guild_id
    return can_direct(interaction.user.id, stage.binding, manage)


def directed(interaction: discord.Interaction) -> Stage:
    """The scene, if the user may direct it (NotDirector otherwise)."""
    stage = scene_of(interaction)
    if not may_direct(interaction, stage):
        mentions = ", ".join(f"<@{d}>" for d in stage.binding.directors)
        raise NotDirector(mentions or t("nobody", language(interaction)))
    bot_of(interaction).backstage.remember(interaction)
    return stage


async def _is_director(interaction: discord.Interaction) -> bool:
    directed(interaction)  # raises NotDirector / NotInScene, which on_tree_error renders
    return True


directors_only = app_commands.check(_is_director)
"""A command only a scene's directors may use (checked before its options are resolved)."""


def directors_only_if(option: str, refusal: str = "not_director") -> Callable[[T], T]:
    """Directors only when `option` is given (/unplay ACTOR, /export thoughts:true); refused
    with the i18n key `refusal`."""

    async def predicate(interaction: discord.Interaction) -> bool:
        if getattr(interaction.namespace, option, None):
            try:
                directed(interaction)
            except NotDirector as exc:
                if refusal == "not_director":
                    raise
                raise BotProblem(refusal, **exc.values) from None
        return True

    return app_commands.check(predicate)


def language(interaction: discord.Interaction) -> str:
    """The reply language: the scene's in a scene thread (once it has loaded), else the
    user's Discord locale."""
    stage = bot_of(interaction).stage_for_thread(interaction.channel_id)
    if stage is not None and stage.lang_known:
        return stage.lang
    return lang_of(str(interaction.locale.value if interaction.locale else ""))


async def defer(interaction: discord.Interaction) -> None:
    """Acknowledge now (Discord's 3 s window); the answer follows privately.

    A command used in an archived scene thread revives it, so the answer (and the scene) can
    be posted there again."""
    if not interaction.response.is_done():
        await interaction.response.defer(ephemeral=True, thinking=True)
    channel = interaction.channel
    if isinstance(channel, discord.Thread) and channel.archived and not channel.locked:
        with contextlib.suppress(discord.HTTPException):
            await channel.edit(archived=False)


async def reply(
    interaction: discord.Interaction,
    text: str,
    *,
    file: discord.File | None = None,
    files: list[discord.File] | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
) -> None:
    """Answer privately, whether or not the interaction was deferred."""
    notice = bot_of(interaction).backstage.take_notice(interaction.user.id)
    if notice:
        text = f"{text}\n\n{notice}"
    if len(text) > 2000:
        text = text[:1999] + "…"
    kwargs: dict[str, object] = {"ephemeral": True}
    if file is not None:
        kwargs["file"] = file
    if files:
        kwargs["files"] = files
    if embed is not None:
        kwargs["embed"] = embed
    if view is not None:
        kwargs["view"] = view
    allowed = discord.AllowedMentions.none()
    if interaction.response.is_done():
        await interaction.followup.send(text, allowed_mentions=allowed, **kwargs)  # type: ignore[arg-type]
    else:
        await interaction.response.send_message(text, allowed_mentions=allowed, **kwargs)  # type: ignore[arg-type]


# Errors that mean "this scene's files can't be read as a scene" (a broken front matter, an
# actor folder the engine refuses): their text quotes file contents, so only directors see it.
LOAD_ERRORS = (BadSceneFile, BadName, SceneNotFound)


async def describe(interaction: discord.Interaction, error: BaseException) -> str:
    """The sentence a person sees for `error`, in the scene's language."""
    lang = language(interaction)
    bot = bot_of(interaction)
    stage = bot.stage_for_thread(interaction.channel_id)
    if isinstance(error, BotProblem):
        return t(error.key, lang, **error.values)
    if isinstance(error, SceneBusy) and stage is not None:
        return t("busy", lang, scene=stage.name)
    if isinstance(error, LOAD_ERRORS) and stage is not None and not may_direct(interaction, stage):
        return t("scene_broken", lang)
    if isinstance(error, UnknownActor) and stage is not None:
        ns = interaction.namespace
        name = getattr(ns, "actor", None) or getattr(ns, "start", None) or "?"
        with contextlib.suppress(CircusError):
            cast = (await stage.rehearsal.view()).cast
            return t("unknown_actor", lang, name=name, cast=", ".join(cast))
    if isinstance(error, CircusError):
        # relative=True: a file by its path inside the scene; scrub() is the second lock.
        return scrub(error.in_language(lang, relative=True), bot.scenes_dir)
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
    text = await describe(interaction, error)
    try:
        await reply(interaction, text)
    except discord.HTTPException:
        log.warning("could not deliver an error reply: %s", text)


async def on_tree_error(
    interaction: discord.Interaction, error: app_commands.AppCommandError
) -> None:
    await report(interaction, error)
