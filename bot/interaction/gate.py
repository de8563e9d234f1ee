"""Who may act in a scene thread: the scene lookup, the director test and the checks built on it.

Invariant: `directors_only` (an app_commands check), `DirectorsGroup` (a group's
`interaction_check`) and `directors_only_if` are the only gates for director commands, and
`room_only` for the few a captain may use too: they run before any option is resolved or the
engine is touched, and refuse with NotDirector (naming the directors) or NotInScene, which the
tree's error handler (bot.interaction.edge) answers privately. `private_actors` is the one rule
for private text — a director reads every character's, a captain their own characters', anyone
else none — and every private path (DMs, /backstage, /report, /secrets, the 💭 menu, exports)
asks it; `author` decides whom a note or cue may reach and who it is from.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TypeVar

import discord
from discord import app_commands

from bot.binding import can_direct
from bot.errors import BotProblem, NotDirector, NotInScene
from bot.i18n import lang_of, t
from bot.interaction.host import host_of
from bot.thread.scene import SceneThread
from engine import Author, author_of, captained_by

T = TypeVar("T")


def scene_thread_or_none(interaction: discord.Interaction) -> SceneThread | None:
    """The scene playing in the thread this interaction came from, if any."""
    return host_of(interaction).scene_thread_in(interaction.channel_id)


def scene_of(interaction: discord.Interaction) -> SceneThread:
    """The scene whose thread this interaction came from (NotInScene otherwise)."""
    scene_thread = scene_thread_or_none(interaction)
    if scene_thread is None:
        raise NotInScene()
    return scene_thread


def may_direct(interaction: discord.Interaction, scene_thread: SceneThread) -> bool:
    """A scene's director, or a member with Manage Threads in the scene's own server."""
    manage = bool(interaction.permissions.manage_threads)
    manage = manage and interaction.guild_id == scene_thread.binding.guild_id
    return can_direct(interaction.user.id, scene_thread.binding, manage)


async def may_watch(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: str | None
) -> bool:
    """May this member arm an alert in the scene (for `actor`'s secret, entrance or exit; None:
    for anyone or for the scene as a whole)? Directors may arm any, a captain one for their
    own character only — and nobody an alert that could never page them (`may_read_private`:
    a member who directs only through Manage Threads is no listed director, so no DM could
    reach them when it fires)."""
    if actor is None and not may_direct(interaction, scene_thread):
        return False
    if actor is not None and not may_read(await private_actors(interaction, scene_thread), actor):
        return False
    return await may_read_private(scene_thread, interaction.user.id, actor)


async def may_read_private(scene_thread: SceneThread, user_id: int, actor: str | None) -> bool:
    """May this user read `actor`'s private text (None: every actor's) — asked when an alert
    fires and when its buttons are pressed, with no interaction at hand (so Manage Threads,
    a permission of an interaction, does not count here: the scene's listed directors do, and
    `actor`'s captains, read afresh)."""
    if can_direct(user_id, scene_thread.binding, False):
        return True
    if actor is None:
        return False
    return actor in captained_by((await scene_thread.rehearsal.view()).captains, writer_of(user_id))


def language(interaction: discord.Interaction) -> str:
    """The reply language: the scene's in a scene thread (once it has loaded), else the
    user's Discord locale."""
    scene_thread = scene_thread_or_none(interaction)
    if scene_thread is not None and scene_thread.lang_known:
        return scene_thread.lang
    return lang_of(str(interaction.locale.value if interaction.locale else ""))


def refuse(interaction: discord.Interaction, scene_thread: SceneThread) -> NotDirector:
    """The refusal for someone who may not direct `scene_thread` (it names its directors)."""
    mentions = ", ".join(f"<@{d}>" for d in scene_thread.binding.directors)
    return NotDirector(mentions or t("nobody", language(interaction)))


def directed(interaction: discord.Interaction) -> SceneThread:
    """The scene, if the user may direct it (NotDirector otherwise)."""
    scene_thread = scene_of(interaction)
    if not may_direct(interaction, scene_thread):
        raise refuse(interaction, scene_thread)
    host_of(interaction).backstage.remember(interaction)
    return scene_thread


async def is_director(interaction: discord.Interaction) -> bool:
    """A check: True for a director of this thread's scene; raises the refusal otherwise."""
    directed(interaction)  # raises NotDirector / NotInScene, which on_tree_error renders
    return True


directors_only = app_commands.check(is_director)
"""A command only a scene's directors may use (checked before its options are resolved)."""


class DirectorsGroup(app_commands.Group):
    """A command group whose every subcommand is for the scene's directors only."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return await is_director(interaction)


def directors_only_if(option: str, refusal: str = "not_director") -> Callable[[T], T]:
    """Directors only when `option` is given (/export thoughts:true); refused with the i18n
    key `refusal`."""

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


async def may_note_lines(interaction: discord.Interaction, scene_thread: SceneThread) -> bool:
    """Who may leave a note on a line of this scene (📌 Note on this line): anyone who may see
    its thread, unless the scene's context.md says `line_notes: crew`; then only its crew —
    its directors and its captains (`private_actors`: anyone who reads some character's
    private text). Every way to note a line asks here."""
    if (await scene_thread.rehearsal.view()).line_notes != "crew":
        return True
    return bool(await private_actors(interaction, scene_thread))


def crew_refusal(interaction: discord.Interaction, scene_thread: SceneThread) -> BotProblem:
    """The private refusal for a member who may not note a line here (it names the directors)."""
    mentions = ", ".join(f"<@{d}>" for d in scene_thread.binding.directors)
    return BotProblem(
        "menu.line_notes_crew", directors=mentions or t("nobody", language(interaction))
    )


async def is_reader(interaction: discord.Interaction) -> bool:
    """A check for /read: a director, or anyone in the thread when the scene's context.md says
    `spectators_read: true`; refused naming the directors otherwise."""
    scene_thread = scene_of(interaction)
    if may_direct(interaction, scene_thread):
        return True
    if (await scene_thread.rehearsal.view()).spectators_read:
        return True
    mentions = ", ".join(f"<@{d}>" for d in scene_thread.binding.directors)
    raise BotProblem("read_directors", directors=mentions or t("nobody", language(interaction)))


readers_only = app_commands.check(is_reader)
"""/read and its panel button: directors, or anyone when the scene allows it."""


# ---------------------------------------------------------------------- captains
class Everyone(enum.Enum):
    """Every character's private text (a director's reach)."""

    ALL = "all"


ALL = Everyone.ALL
Private = Everyone | frozenset[str]  # whose private text a member may read


def writer_of(user_id: int) -> str:
    """A Discord member as the scene's captains.json names them."""
    return f"discord:{user_id}"


async def private_actors(interaction: discord.Interaction, scene_thread: SceneThread) -> Private:
    """Whose private text (thoughts, souls, whispers, secrets) this member may read: a director
    every character's (ALL); a captain their own characters'; anyone else nobody's. Read
    afresh each time: a captain added or removed counts at once."""
    if may_direct(interaction, scene_thread):
        return ALL
    captains = (await scene_thread.rehearsal.view()).captains
    return captained_by(captains, writer_of(interaction.user.id))


def only_of(private: Private) -> frozenset[str] | None:
    """`private_actors` as the engine's `only` (None: every character)."""
    return None if isinstance(private, Everyone) else private


def may_read(private: Private, actor: str) -> bool:
    return isinstance(private, Everyone) or actor in private


async def is_room(interaction: discord.Interaction) -> bool:
    """A check: True for a director or a captain of this thread's scene (what they may reach is
    the command's to decide, through `private_actors` or `author`); refused otherwise."""
    scene_thread = scene_of(interaction)
    if not await private_actors(interaction, scene_thread):
        raise refuse(interaction, scene_thread)
    host_of(interaction).backstage.remember(interaction)
    return True


room_only = app_commands.check(is_room)
"""A command the scene's directors and captains may use (/note, /cue, /report, /secrets, …)."""


async def author(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    target: str | None,
    *,
    cue: bool = False,
) -> Author:
    """Who a note (or cue) to `target` (None: everyone) is from; NotYourCharacter when a
    captain reaches past their character, NotDirector for anyone who is neither."""
    writer, name = writer_of(interaction.user.id), interaction.user.display_name
    if may_direct(interaction, scene_thread):  # a director reaches anyone: no scene to read
        return author_of({}, writer, name, target, director=True)
    view = await scene_thread.rehearsal.view()
    if not captained_by(view.captains, writer):
        raise refuse(interaction, scene_thread)
    return author_of(
        view.captains, writer, name, target, director=False, cue=cue,
        captains_cue=view.captains_cue,
    )  # fmt: skip
