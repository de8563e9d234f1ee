"""Director commands inside a scene thread: run, cue, cut, resume, note, take, replay, soul,
status, director.

Invariants: a director command refuses anyone else before anything runs (`directors_only`, a
check), and an actor option is resolved once, before the handler (`ActorArg`); the handler
then acknowledges, calls the engine once, and answers privately; runs start in the background
so the interaction is answered at once. Errors are not handled here but at the edge (bot.edge).
`setup(tree)` registers them; a command's docstring is its description.
"""

from __future__ import annotations

import io
import logging

import discord
from discord import app_commands

from bot.edge import (
    defer,
    describe,
    directed,
    directors_only,
    may_direct,
    reply,
    report,
    scene_of,
)
from bot.errors import BotProblem
from bot.i18n import t
from bot.options import ActorArg
from bot.render import render_status, render_takes, render_warnings
from bot.stage import Stage
from engine import DEFAULT_TURNS, MAX_FILE_BYTES, Actor, CircusError, dropped_warning

log = logging.getLogger("circus.bot")

MODAL_LIMIT = 4000
UPLOAD_LIMIT = MAX_FILE_BYTES  # the engine's cap for a soul.md, checked before downloading
INLINE_LIMIT = 1900

Turns = app_commands.Range[int, 1, 50]


# ---------------------------------------------------------------------- running
@app_commands.command(name="run")
@directors_only
async def run(
    interaction: discord.Interaction, turns: Turns = DEFAULT_TURNS, start: ActorArg | None = None
) -> None:
    """Let the scene play by itself for N turns

    Args:
        turns: How many turns (1–50)
        start: Who speaks first
    """
    stage = scene_of(interaction)
    await defer(interaction)
    await stage.rehearsal.start_run(turns, start=start, mode="run")
    stage.run_interaction = interaction
    # The reply names the opener as the director typed them (an alias stays an alias).
    first = t("run_from", stage.lang, actor=interaction.namespace.start) if start else ""
    await reply(interaction, t("run_started", stage.lang, turns=turns, start=first))


@app_commands.command(name="cue")
@directors_only
async def cue(
    interaction: discord.Interaction, actor: ActorArg, direction: str | None = None
) -> None:
    """Give one actor the next turn

    Args:
        actor: The actor
        direction: A private direction for this turn only
    """
    stage = scene_of(interaction)
    await defer(interaction)
    await stage.rehearsal.start_run(1, start=actor, mode="cue", direction=direction or "")
    stage.run_interaction = interaction
    text = t("cue_started", stage.lang, actor=actor.name)
    if direction:
        text += " " + t("cue_direction", stage.lang, actor=actor.name)
    await reply(interaction, text)


@app_commands.command(name="cut")
@directors_only
async def cut(interaction: discord.Interaction) -> None:
    """Stop the run now"""
    stage = scene_of(interaction)
    await defer(interaction)
    stopped = await stage.rehearsal.cut()
    await reply(interaction, t("cut_done" if stopped else "cut_nothing", stage.lang))


@app_commands.command(name="resume")
@directors_only
async def resume(interaction: discord.Interaction, turns: Turns = DEFAULT_TURNS) -> None:
    """Play on from where the scene stopped

    Args:
        turns: How many turns
    """
    stage = scene_of(interaction)
    await defer(interaction)
    await stage.rehearsal.start_run(turns, mode="resume")
    stage.run_interaction = interaction
    await reply(interaction, t("resume_started", stage.lang, turns=turns))


# ---------------------------------------------------------------------- whispers
@app_commands.command(name="note")
@directors_only
async def note(interaction: discord.Interaction, text: str, actor: ActorArg | None = None) -> None:
    """Whisper to every actor, or to one

    Args:
        text: What to whisper
        actor: Only this actor hears it (default: everyone)
    """
    stage = scene_of(interaction)
    await defer(interaction)
    dropped = await stage.rehearsal.notes.note(text, actor)
    key = "note_actor" if actor else "note_all"
    said = t(key, stage.lang, actor=actor.name if actor else None)
    if dropped:
        said += "\n" + dropped_warning(actor.name if actor else "", dropped, stage.lang)
    await reply(interaction, said)


# ---------------------------------------------------------------------- takes
class Take(app_commands.Group, name="take"):
    """Save and browse takes"""

    @app_commands.command(name="save")
    @directors_only
    async def save(self, interaction: discord.Interaction) -> None:
        """Save the current take"""
        stage = scene_of(interaction)
        await defer(interaction)
        number = await stage.rehearsal.takes.save_take()
        await reply(interaction, t("take_saved", stage.lang, take=number))

    @app_commands.command(name="list")
    @directors_only
    async def list_takes(self, interaction: discord.Interaction) -> None:
        """List the saved takes"""
        stage = scene_of(interaction)
        await defer(interaction)
        await reply(interaction, render_takes(await stage.rehearsal.takes.list_takes(), stage.lang))


@app_commands.command(name="replay")
@directors_only
async def replay(
    interaction: discord.Interaction,
    take: app_commands.Range[int, 1],
    until: app_commands.Range[int, 0] | None = None,
) -> None:
    """Start again from a saved take

    Args:
        take: The take number
        until: Keep turns up to this one (default: all)
    """
    stage = scene_of(interaction)
    await defer(interaction)
    async with stage.votes.lock:  # a replay re-files picks: never beside a ⭐ vote (bot.votes)
        result = await stage.rehearsal.takes.replay(take, until)
    values = dict(from_take=result.from_take, kept=result.kept_turns, take=result.take)
    stage.status_line(t("line_replay", stage.lang, **values))
    text = t("replay_done", stage.lang, **values)
    if result.autosaved:
        text += t("replay_autosaved", stage.lang, n=result.autosaved)
    await reply(interaction, text)


# ---------------------------------------------------------------------- souls
def soul_file(actor: str, text: str) -> discord.File:
    return discord.File(io.BytesIO(text.encode("utf-8")), filename=f"{actor}-soul.md")


class Soul(app_commands.Group, name="soul"):
    """Read or rewrite an actor's soul.md"""

    @app_commands.command(name="show")
    @directors_only
    async def show(self, interaction: discord.Interaction, actor: ActorArg) -> None:
        """Show an actor's soul.md (privately)

        Args:
            actor: The actor
        """
        stage = scene_of(interaction)
        await defer(interaction)
        text = await stage.rehearsal.souls.soul_text(actor)
        if len(text) <= INLINE_LIMIT and "```" not in text:
            await reply(interaction, f"```md\n{text}\n```")
        else:
            message = t("soul_file", stage.lang, actor=actor.name)
            await reply(interaction, message, file=soul_file(actor.name, text))

    @app_commands.command(name="edit")
    @directors_only
    async def edit(
        self,
        interaction: discord.Interaction,
        actor: ActorArg,
        file: discord.Attachment | None = None,
    ) -> None:
        """Edit an actor's soul.md

        Args:
            actor: The actor
            file: A replacement soul.md (for souls over 4000 characters)
        """
        stage = scene_of(interaction)
        if file is not None:
            await defer(interaction)
            await stage.rehearsal.souls.set_soul(actor, await uploaded_text(file), origin="discord")
            await reply(interaction, t("soul_saved", stage.lang, actor=actor.name))
            return
        text = await stage.rehearsal.souls.soul_text(actor)
        if len(text) > MODAL_LIMIT:
            await defer(interaction)
            message = t("soul_too_long", stage.lang, actor=actor.name, length=len(text))
            await reply(interaction, message, file=soul_file(actor.name, text))
            return
        await interaction.response.send_modal(SoulModal(stage, actor, text))


async def uploaded_text(file: discord.Attachment, too_big: str = "soul_file_too_big") -> str:
    """An uploaded soul.md (or other scene text) as text: UTF-8 (a BOM is dropped), refused
    naming the file else; `too_big` is the refusal's key for a file over the engine's cap."""
    shown = discord.utils.escape_markdown(file.filename[:100]).replace("`", "ˋ")
    if file.size > UPLOAD_LIMIT:
        raise BotProblem(too_big, file=shown, size=file.size, limit=UPLOAD_LIMIT)
    try:
        return (await file.read()).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BotProblem("soul_bad_file", file=shown) from exc


class SoulModal(discord.ui.Modal):
    """A form holding one soul.md (≤ 4000 characters); submitting rewrites it."""

    def __init__(self, stage: Stage, actor: Actor, text: str) -> None:
        super().__init__(title=t("soul_title", stage.lang, actor=actor.name)[:45], timeout=None)
        self.stage = stage
        self.actor = actor
        self.body: discord.ui.TextInput[SoulModal] = discord.ui.TextInput(
            label=t("soul_label", stage.lang),
            style=discord.TextStyle.paragraph,
            default=text,
            max_length=MODAL_LIMIT,
            custom_id="soul",
        )
        self.add_item(self.body)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        stage = directed(interaction)  # a form is no command: the gate is called by hand
        await defer(interaction)
        # What arrives through Discord is data, not configuration: origin="discord" refuses
        # api_base and models outside the operator's allow-list.
        text = self.body.value
        try:
            await stage.rehearsal.souls.set_soul(self.actor, text, origin="discord")
        except CircusError as exc:  # refused: say why, and hand back what was typed
            why = await describe(interaction, exc)
            kept = t("soul_form_kept", stage.lang, actor=self.actor.name)
            await reply(interaction, f"{why}\n{kept}", file=soul_file(self.actor.name, text))
            return
        await reply(interaction, t("soul_saved", stage.lang, actor=self.actor.name))

    async def on_error(self, interaction: discord.Interaction, error: Exception, /) -> None:
        await report(interaction, error)


# ---------------------------------------------------------------------- status
@app_commands.command(name="status")
async def status(interaction: discord.Interaction) -> None:
    """Cast, turns, mode, tokens and cost"""
    stage = scene_of(interaction)
    await defer(interaction)
    text = render_status(await stage.rehearsal.status(), stage.lang)
    # What a hand-built scene should fix names files and may quote an alias (a private
    # nickname): for its directors only.
    if may_direct(interaction, stage):
        warnings = [w.text(stage.lang) for w in await stage.rehearsal.cast.warnings()]
        text = "\n".join(filter(None, (text, render_warnings(warnings, stage.lang))))
    await reply(interaction, text)


# ---------------------------------------------------------------------- directors
class Director(app_commands.Group, name="director"):
    """Share the director's chair"""

    @app_commands.command(name="add")
    @directors_only
    async def add(self, interaction: discord.Interaction, user: discord.User) -> None:
        """Make someone a co-director

        Args:
            user: The member
        """
        stage = scene_of(interaction)
        values = dict(user=user.mention, scene=stage.name)
        if user.bot:
            raise BotProblem("director_bot")
        if user.id in stage.binding.directors:
            await reply(interaction, t("director_already", stage.lang, **values))
            return
        stage.rebind(stage.binding.with_director(user.id))
        await reply(interaction, t("director_added", stage.lang, **values))

    @app_commands.command(name="remove")
    @directors_only
    async def remove(self, interaction: discord.Interaction, user: discord.User) -> None:
        """Remove a co-director

        Args:
            user: The member
        """
        stage = scene_of(interaction)
        values = dict(user=user.mention, scene=stage.name)
        if user.id not in stage.binding.directors:
            await reply(interaction, t("director_not", stage.lang, **values))
            return
        if stage.binding.directors == (user.id,):
            raise BotProblem("director_last", **values)
        stage.rebind(stage.binding.without_director(user.id))
        await reply(interaction, t("director_removed", stage.lang, **values))


def setup(tree: app_commands.CommandTree) -> None:
    """Register the director commands (each tree gets its own groups)."""
    for command in (run, cue, cut, resume, note, Take(), replay, Soul(), status, Director()):
        tree.add_command(command)
