"""`/scene new|list|open`: scene folders on disk become public threads in a text channel.

Invariants: `/scene` carries `default_member_permissions` = Manage Threads, so Discord delivers
it only to members a server's admins allow (Server Settings → Integrations can widen or narrow
that per role, member and channel); whoever may use it becomes a director of what they open.
`/scene new cast:` makes a blank scene of that cast (the engine checks every name) instead of a
template copy; `/scene context` and `/scene backstory` (bot.commands.context, bot.commands.backstory) are for the
scene's directors as well, inside its thread.
A scene bound to a server is opened elsewhere only by its own directors. A scene is bound to a
thread only once its folder loads and its webhook and thread exist; a `/scene new` that fails
midway removes the folder it just made (nothing is left half-made); the thread opens with a
public scene card only (context body and cast names, never a soul).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from functools import partial
from typing import Literal

import discord
from discord import app_commands

from bot.binding import Binding, binding_or_none, opening, read_binding
from bot.commands import backstory, context
from bot.errors import BotProblem, MissingPermission, NotDirector
from bot.i18n import t, words
from bot.interaction.gate import language
from bot.interaction.host import host_of
from bot.interaction.replies import defer, reply
from bot.render import autocomplete_names, render_scene_list, scene_card, split_message
from bot.server_folders import claim, home_of, scene_folder, scene_key, visible_scenes
from engine import DEFAULT_TEMPLATE, Rehearsal, check_name, is_zh, new_scene, split_cast

log = logging.getLogger("circus.bot")

THREAD_ARCHIVE_MINUTES: Literal[10080] = 10080  # a week: rehearsals pause for days
SCENE_PERMISSIONS = discord.Permissions(manage_threads=True)  # who may create and open scenes
CAST_CHARS = 1000  # 12 names of at most 64 characters, with commas
LANGUAGES = [
    app_commands.Choice(name=words("cmd.scene_new.language.zh"), value="zh"),
    app_commands.Choice(name=words("cmd.scene_new.language.en"), value="en"),
]


def parent_channel(interaction: discord.Interaction) -> discord.TextChannel:
    """The text channel a scene thread will live in (the thread's parent if used in a thread)."""
    channel = interaction.channel
    if isinstance(channel, discord.Thread):
        channel = channel.parent
    if not isinstance(channel, discord.TextChannel):
        raise BotProblem("need_text_channel")
    return channel


async def open_thread(
    interaction: discord.Interaction, scene: str, directors: tuple[int, ...]
) -> discord.Thread:
    """Create the scene's thread (with the webhook ready), bind it, and post the scene card."""
    thread, hook_id = await make_thread(interaction, scene)
    return await bind_thread(interaction, scene, thread, hook_id, directors)


async def make_thread(interaction: discord.Interaction, scene: str) -> tuple[discord.Thread, int]:
    """The scene's new thread and the parent channel's webhook id (nothing bound yet)."""
    channel = parent_channel(interaction)
    hook = await host_of(interaction).personas.webhook(channel.id)
    try:
        thread = await channel.create_thread(
            name=f"🎭 {scene}"[:100],
            type=discord.ChannelType.public_thread,
            auto_archive_duration=THREAD_ARCHIVE_MINUTES,
        )
    except discord.Forbidden as exc:
        raise MissingPermission(channel.mention, "Create Public Threads") from exc
    return thread, hook.id


async def bind_thread(
    interaction: discord.Interaction,
    scene: str,
    thread: discord.Thread,
    hook_id: int,
    directors: tuple[int, ...],
) -> discord.Thread:
    """Bind the server's scene to its new thread, post the scene card and the panel."""
    bot = host_of(interaction)
    channel = parent_channel(interaction)
    binding = Binding(channel.guild.id, channel.id, thread.id, directors, hook_id)
    scene_thread = await bot.bind(scene, binding)
    view = await scene_thread.rehearsal.view()
    card = scene_card(scene, view.context, view.cast, directors, scene_thread.lang)
    try:
        for chunk in split_message(card):
            await thread.send(chunk, allowed_mentions=discord.AllowedMentions.none())
        await thread.add_user(interaction.user)
    except discord.Forbidden as exc:
        raise MissingPermission(thread.mention, "Send Messages in Threads") from exc
    await bot.show_panel(scene_thread)  # the control panel, under the scene card
    return thread


def may_open(interaction: discord.Interaction, scene: str, old: Binding | None) -> tuple[int, ...]:
    """The directors `scene` will have once this member opens it (see `binding.opening`)."""
    manage = bool(interaction.permissions.manage_threads)
    decision = opening(interaction.user.id, interaction.guild_id, manage, old)
    if decision == "elsewhere":
        raise BotProblem("scene_elsewhere", scene=scene)
    if isinstance(decision, str):
        raise NotDirector(", ".join(f"<@{d}>" for d in old.directors) if old else "")
    return decision


def blank_language(chosen: str | None, locale: str) -> str | None:
    """A blank scene's language: the one chosen, else Chinese for a member whose Discord is in
    Chinese, else None — the engine then reads it from the names (林小姐 → Chinese)."""
    if chosen:
        return chosen
    return "zh" if is_zh(locale) else None


def template_for(chosen: str | None, templates: list[str]) -> str:
    """The template a scene starts from: the one chosen, else the default one if offered, else
    the first offered."""
    if chosen:
        return chosen
    if DEFAULT_TEMPLATE in templates or not templates:
        return DEFAULT_TEMPLATE
    return templates[0]


# ---------------------------------------------------------------------- the bodies
async def create_scene(
    interaction: discord.Interaction,
    templates: list[str],
    name: str,
    template: str | None = None,
    cast: str | None = None,
    language: str | None = None,
) -> None:
    """/scene new: a scene folder (from a template, or blank with `cast`) and its thread; a
    scene whose thread could not be made is removed again."""
    bot = host_of(interaction)
    parent_channel(interaction)
    await defer(interaction)
    name = check_name(name, "Scene")
    names = split_cast(cast or "")
    if names and template:
        raise BotProblem("scene_cast_or_template")
    guild = parent_channel(interaction).guild.id
    dest = scene_folder(bot.scenes_dir, guild, name)
    await asyncio.to_thread(dest.parent.mkdir, parents=True, exist_ok=True)
    if names:  # a blank scene: its souls and context wait for /actor add and /scene context
        locale = str(interaction.locale.value if interaction.locale else "")
        lang = blank_language(language, locale)
        make = partial(new_scene, dest, config=bot.config, cast=names, language=lang)
    else:
        make = partial(new_scene, dest, template_for(template, templates), config=bot.config)
    folder = await asyncio.to_thread(make)
    try:
        thread = await open_thread(interaction, name, (interaction.user.id,))
    except BaseException:
        await bot.unbind(scene_key(guild, name))
        await asyncio.to_thread(shutil.rmtree, folder, True)
        raise
    lang = bot.scene_threads[scene_key(guild, name)].lang
    key = "scene_created_blank" if names else "scene_created"
    await reply(interaction, t(key, lang, scene=name, thread=thread.mention))


async def list_scenes_here(interaction: discord.Interaction) -> None:
    """/scene list: the scenes this server may see, and where each plays."""
    bot = host_of(interaction)
    guild = interaction.guild_id or 0
    scenes = [
        (
            name,
            getattr(binding_or_none(scene_folder(bot.scenes_dir, guild, name)), "thread_id", None),
        )
        for name in visible_scenes(bot.scenes_dir, guild, bot.terminal_servers)
    ]
    await reply(interaction, render_scene_list(scenes, language(interaction)))


async def open_scene(interaction: discord.Interaction, name: str) -> None:
    """/scene open: an existing scene in a new thread (its opener directs it from now on)."""
    bot = host_of(interaction)
    guild = parent_channel(interaction).guild.id
    folder = home_of(bot.scenes_dir, guild, name, bot.terminal_servers)
    if folder is None:
        raise BotProblem("scene_unknown", scene=name)
    directors = may_open(interaction, name, read_binding(folder))
    await defer(interaction)
    # Load it before anything is made: a broken scene gets no thread, and its opener (a
    # director from now on) reads what to fix.
    await Rehearsal(folder, config=bot.config).view()
    if folder == scene_folder(bot.scenes_dir, guild, name):
        thread = await open_thread(interaction, name, directors)
    else:  # a loose scene: this server's once its thread exists (a failure leaves it loose)
        thread, hook_id = await make_thread(interaction, name)
        try:
            await asyncio.to_thread(claim, bot.scenes_dir, guild, name)
        except BaseException:  # another server took it first, or a terminal is running it
            with contextlib.suppress(discord.HTTPException):
                await thread.delete()
            raise
        await bind_thread(interaction, name, thread, hook_id, directors)
    lang = bot.scene_threads[scene_key(guild, name)].lang
    await reply(interaction, t("scene_opened", lang, scene=name, thread=thread.mention))


async def scene_names(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """Autocomplete for /scene open: the scenes this server may see."""
    try:
        bot = host_of(interaction)
        scenes = visible_scenes(bot.scenes_dir, interaction.guild_id or 0, bot.terminal_servers)
        names = autocomplete_names(current, scenes)
    except Exception:  # autocomplete answers, always: an empty list at worst
        log.exception("autocomplete of scene names failed")
        return []
    return [app_commands.Choice(name=n[:100], value=n) for n in names]


# ---------------------------------------------------------------------- the commands
def build(templates: list[str]) -> app_commands.Group:
    """The /scene group; `templates` become the choices of /scene new's template option."""
    group = app_commands.Group(
        name="scene",
        description=words("cmd.scene.description"),
        guild_only=True,
        # Discord allows this only on top-level commands; admins override it per role/channel.
        default_permissions=SCENE_PERMISSIONS,
    )

    @group.command(name="new", description=words("cmd.scene_new.description"))
    @app_commands.describe(
        name=words("cmd.scene_new.name"),
        template=words("cmd.scene_new.template"),
        cast=words("cmd.scene_new.cast"),
        language=words("cmd.scene_new.language"),
    )
    @app_commands.choices(language=LANGUAGES)
    async def scene_new(
        interaction: discord.Interaction,
        name: str,
        template: str | None = None,
        cast: app_commands.Range[str, 1, CAST_CHARS] | None = None,
        language: str | None = None,
    ) -> None:
        await create_scene(interaction, templates, name, template, cast, language)

    if templates:
        choices = [app_commands.Choice(name=n, value=n) for n in templates[:25]]
        scene_new = app_commands.choices(template=choices)(scene_new)

    @group.command(name="list", description=words("cmd.scene_list.description"))
    async def scene_list(interaction: discord.Interaction) -> None:
        await list_scenes_here(interaction)

    @group.command(name="open", description=words("cmd.scene_open.description"))
    @app_commands.describe(name=words("cmd.scene_open.name"))
    @app_commands.autocomplete(name=scene_names)
    async def scene_open(interaction: discord.Interaction, name: str) -> None:
        await open_scene(interaction, name)

    context.attach(group)
    backstory.attach(group)
    return group
