"""`/actor add|remove|rename`: a scene's cast, set up from Discord (from a phone).

Invariants: every command is for directors only (the group's `interaction_check`: refused
before anything is read or written); a
new soul arrives as data (origin="member": no api_base, models only from the operator's
allow-list) either as the three parts of a form or as an uploaded soul.md; the engine writes
it whole or not at all, and a refused form is handed back as a file, so nothing typed is lost.
A cast change is announced in the thread by name only (never a soul), and the scene's personas
are refreshed at once, so a new actor posts under its own name from its first line.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import discord
from discord import app_commands

from bot.errors import BotProblem
from bot.i18n import t, words
from bot.interaction.edge import describe
from bot.interaction.files import MODAL_LIMIT, soul_file, uploaded_text
from bot.interaction.forms import DirectorsForm
from bot.interaction.gate import DirectorsGroup, scene_of
from bot.interaction.options import ActorArg
from bot.interaction.replies import defer, reply
from bot.thread.scene import SceneThread
from engine import MAX_CAST, Actor, CircusError, check_name, say

NameArg = app_commands.Range[str, 1, 64]  # engine.check_name's own bound, told to Discord too


# ---------------------------------------------------------------------- pure decisions
@dataclass(frozen=True)
class SoulParts:
    """The three parts of a soul as a form carries them (seed 000 §6)."""

    bio: str
    prior_story: str = ""
    notes: str = ""


# field -> (its heading in soul.md, the form's label, the form's hint): catalog keys
PARTS = {
    "bio": ("soul.bio", "cast.bio_label", "cast.bio_hint"),
    "prior_story": ("soul.prior_story", "cast.prior_story_label", "cast.prior_story_hint"),
    "notes": ("soul.notes", "cast.notes_label", "cast.notes_hint"),
}


def too_long(values: Mapping[str, str], limit: int = MODAL_LIMIT) -> tuple[str, int] | None:
    """The first field over `limit` characters (name, length), if any: a form is bounded by
    Discord, but what arrives is checked again here."""
    for name, value in values.items():
        if len(value) > limit:
            return name, len(value)
    return None


def compose_soul(parts: SoulParts, language: str) -> str:
    """A soul.md body from its three parts, under the headings engine.folder.soul reads (in the
    scene's language); an empty part keeps its heading, so the writer sees where it goes."""
    chunks = []
    for field, (heading, _, _) in PARTS.items():
        text = getattr(parts, field).strip()
        title = f"## {say(heading, language)}\n"
        chunks.append(f"{title}\n{text}\n" if text else title)
    return "\n".join(chunks)


def _key(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().strip()


def name_taken(name: str, cast: Sequence[str], aliases: Mapping[str, Sequence[str]]) -> str | None:
    """The cast member whose name or alias `name` already is (after case and width folding),
    or None. Asked before a form opens, so nobody types a soul for a name that is taken."""
    wanted = _key(name)
    for actor in cast:
        if _key(actor) == wanted or any(_key(a) == wanted for a in aliases.get(actor, ())):
            return actor
    return None


# ---------------------------------------------------------------------- the form
class ActorModal(DirectorsForm):
    """A new actor's soul in three fields: bio (required), prior story, director's notes."""

    def __init__(self, scene_thread: SceneThread, name: str) -> None:
        lang = scene_thread.lang
        super().__init__(title=t("cast.form_title", lang, actor=name)[:45], timeout=None)
        self.scene_thread = scene_thread
        self.name = name
        self.fields: dict[str, discord.ui.TextInput[ActorModal]] = {}
        for field, (_, label, hint) in PARTS.items():
            box: discord.ui.TextInput[ActorModal] = discord.ui.TextInput(
                label=t(label, lang)[:45],
                placeholder=t(hint, lang)[:100],
                style=discord.TextStyle.paragraph,
                max_length=MODAL_LIMIT,
                required=field == "bio",
                custom_id=field,
            )
            self.fields[field] = box
            self.add_item(box)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        scene_thread = scene_of(interaction)  # a director's: interaction_check let it through
        await defer(interaction)
        values = {field: box.value or "" for field, box in self.fields.items()}
        over = too_long(values)
        if over is not None:
            field, length = over
            label = t(PARTS[field][1], scene_thread.lang)
            raise BotProblem("cast.field_too_long", field=label, length=length, limit=MODAL_LIMIT)
        text = compose_soul(SoulParts(**values), scene_thread.lang)
        try:
            actor = await scene_thread.rehearsal.cast.add(self.name, text, origin="member")
        except CircusError as exc:  # refused: say why, and hand back what was typed
            why = await describe(interaction, exc)
            kept = t("cast.form_kept", scene_thread.lang, actor=self.name)
            await reply(interaction, f"{why}\n{kept}", file=soul_file(self.name, text))
            return
        await joined(interaction, scene_thread, actor)


async def joined(interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor) -> None:
    """A new actor is in the cast: personas know them now; the thread and the director hear."""
    await scene_thread.refresh()
    scene_thread.status_line(t("cast.line_joined", scene_thread.lang, actor=actor.name))
    await reply(interaction, t("cast.added", scene_thread.lang, actor=actor.name))


async def add_actor(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    name: str,
    file: discord.Attachment | None = None,
) -> None:
    """/actor add: refused before the form if the name is taken or the cast is full; an
    uploaded soul.md is written at once, else the form opens."""
    name = check_name(name, "Actor")
    view = await scene_thread.rehearsal.view()
    taken = name_taken(name, view.cast, view.aliases)
    if taken is not None:
        same = _key(taken) == _key(name)  # their own name, or one of their aliases
        raise BotProblem("cast.exists" if same else "cast.taken", name=name, actor=taken)
    if len(view.cast) >= MAX_CAST:  # before the form: nobody types a soul in vain
        raise BotProblem("cast.full", most=MAX_CAST)
    if file is None:
        await interaction.response.send_modal(ActorModal(scene_thread, name))
        return
    await defer(interaction)
    text = await uploaded_text(file)
    actor = await scene_thread.rehearsal.cast.add(name, text, origin="member")
    await joined(interaction, scene_thread, actor)


async def remove_actor(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor
) -> None:
    """/actor remove: the thread hears it by name."""
    await defer(interaction)
    whispers = await scene_thread.rehearsal.cast.remove(actor)
    await scene_thread.refresh()
    scene_thread.status_line(t("cast.line_left", scene_thread.lang, actor=actor.name))
    said = t("cast.removed", scene_thread.lang, actor=actor.name)
    if whispers:  # only who ran the command hears how many whispers there were
        said += "\n" + t("cast.removed_whispers", scene_thread.lang, count=whispers)
    await reply(interaction, said)


async def rename_actor(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor, new_name: str
) -> None:
    """/actor rename (before the take's first turn): the thread hears it by name."""
    await defer(interaction)
    renamed = await scene_thread.rehearsal.cast.rename(actor, new_name)
    await scene_thread.refresh()
    values = dict(old=actor.name, new=renamed.name)
    scene_thread.status_line(t("cast.line_renamed", scene_thread.lang, **values))
    await reply(interaction, t("cast.renamed", scene_thread.lang, **values))


# ---------------------------------------------------------------------- the commands
class ActorGroup(DirectorsGroup, name="actor", description=words("cmd.actor.description")):
    @app_commands.command(name="add", description=words("cmd.actor_add.description"))
    @app_commands.describe(name=words("cmd.actor_add.name"), file=words("cmd.actor_add.file"))
    async def add(
        self,
        interaction: discord.Interaction,
        name: NameArg,
        file: discord.Attachment | None = None,
    ) -> None:
        await add_actor(interaction, scene_of(interaction), name, file)

    @app_commands.command(name="remove", description=words("cmd.actor_remove.description"))
    @app_commands.describe(actor=words("cmd.actor_remove.actor"))
    async def remove(self, interaction: discord.Interaction, actor: ActorArg) -> None:
        await remove_actor(interaction, scene_of(interaction), actor)

    @app_commands.command(name="rename", description=words("cmd.actor_rename.description"))
    @app_commands.describe(
        actor=words("cmd.actor_rename.actor"), new_name=words("cmd.actor_rename.new_name")
    )
    async def rename(
        self, interaction: discord.Interaction, actor: ActorArg, new_name: NameArg
    ) -> None:
        await rename_actor(interaction, scene_of(interaction), actor, new_name)


def setup(tree: app_commands.CommandTree) -> None:
    tree.add_command(ActorGroup())
