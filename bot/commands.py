"""Director commands inside a scene thread: run, cue, cut, resume, note, take, replay, soul,
status, director.

Invariants: a director command refuses anyone else before anything runs (`directors_only`, or
its group's `interaction_check`), and an actor option is resolved once, before the handler
(`ActorArg`); the handler then acknowledges, calls the engine once, and answers privately;
runs start in the background so the interaction is answered at once. Errors are not handled
here but at the edge (bot.edge). Each command's body is a plain `async (interaction, stage, …)`
function, so a button (bot.panel) can do exactly what the command does; the slash command
around it only finds the scene. `setup(tree)` registers them.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from bot.edge import describe
from bot.errors import BotProblem
from bot.files import INLINE_LIMIT, MODAL_LIMIT, soul_file, uploaded_text
from bot.forms import DirectorsForm
from bot.gate import DirectorsGroup, directors_only, may_direct, scene_of
from bot.i18n import t, words
from bot.options import ActorArg
from bot.render import render_status, render_takes, render_warnings
from bot.replies import MESSAGE_LIMIT, defer, reply
from bot.stage import Stage
from engine import DEFAULT_TURNS, Actor, CircusError, dropped_warning, tree_lines_of

Turns = app_commands.Range[int, 1, 50]


# ---------------------------------------------------------------------- the bodies
async def start_run(
    interaction: discord.Interaction, stage: Stage, turns: int, start: Actor | None
) -> None:
    """/run: the scene plays by itself for `turns` turns (from `start`, if given)."""
    await defer(interaction)
    await stage.rehearsal.start_run(turns, start=start, mode="run")
    stage.run_interaction = interaction
    # The reply names the opener as the director typed them (an alias stays an alias).
    typed = getattr(interaction.namespace, "start", None) or (start.name if start else "")
    first = t("run_from", stage.lang, actor=typed) if start else ""
    await reply(interaction, t("run_started", stage.lang, turns=turns, start=first))


async def cue_actor(
    interaction: discord.Interaction, stage: Stage, actor: Actor, direction: str | None
) -> None:
    """/cue: one actor takes the next turn (with a private direction for it, if given)."""
    await defer(interaction)
    await stage.rehearsal.start_run(1, start=actor, mode="cue", direction=direction or "")
    stage.run_interaction = interaction
    text = t("cue_started", stage.lang, actor=actor.name)
    if direction:
        text += " " + t("cue_direction", stage.lang, actor=actor.name)
    await reply(interaction, text)


async def cut_run(interaction: discord.Interaction, stage: Stage) -> None:
    """/cut: stop the run now."""
    await defer(interaction)
    stopped = await stage.rehearsal.cut()
    await reply(interaction, t("cut_done" if stopped else "cut_nothing", stage.lang))


async def resume_run(interaction: discord.Interaction, stage: Stage, turns: int) -> None:
    """/resume: play on for `turns` turns from where the scene stopped."""
    await defer(interaction)
    await stage.rehearsal.start_run(turns, mode="resume")
    stage.run_interaction = interaction
    await reply(interaction, t("resume_started", stage.lang, turns=turns))


async def whisper(
    interaction: discord.Interaction, stage: Stage, text: str, actor: Actor | None
) -> None:
    """/note: whisper to every actor, or to one."""
    await defer(interaction)
    dropped = await stage.rehearsal.notes.note(text, actor)
    key = "note_actor" if actor else "note_all"
    said = t(key, stage.lang, actor=actor.name if actor else None)
    if dropped:
        said += "\n" + dropped_warning(actor.name if actor else "", dropped, stage.lang)
    await reply(interaction, said)


async def save_take(interaction: discord.Interaction, stage: Stage) -> None:
    """/take save."""
    await defer(interaction)
    number = await stage.rehearsal.takes.save_take()
    await reply(interaction, t("take_saved", stage.lang, take=number))


async def list_takes(interaction: discord.Interaction, stage: Stage) -> None:
    """/take list."""
    await defer(interaction)
    listing = render_takes(await stage.rehearsal.takes.list_takes(), stage.lang)
    tree = "\n".join(await tree_lines_of(stage.rehearsal.root))  # replays branch (issue 21)
    await reply(interaction, f"{listing}\n```\n{tree}\n```"[:MESSAGE_LIMIT])


async def replay_take(
    interaction: discord.Interaction, stage: Stage, take: int, until: int | None
) -> None:
    """/replay: start again from a saved take (up to turn `until`)."""
    await defer(interaction)
    async with stage.votes.lock:  # a replay re-files picks: never beside a ⭐ vote (bot.votes)
        result = await stage.rehearsal.takes.replay(take, until)
    await stage.mark_all_posted()  # the record was cut back to turns the thread has had
    values = dict(from_take=result.from_take, kept=result.kept_turns, take=result.take)
    stage.status_line(t("line_replay", stage.lang, **values))
    text = t("replay_done", stage.lang, **values)
    if result.autosaved:
        text += t("replay_autosaved", stage.lang, n=result.autosaved)
    await reply(interaction, text)


async def show_soul(interaction: discord.Interaction, stage: Stage, actor: Actor) -> None:
    """/soul show: an actor's soul.md, inline if it fits, else attached."""
    await defer(interaction)
    text = await stage.rehearsal.souls.soul_text(actor)
    if len(text) <= INLINE_LIMIT and "```" not in text:
        await reply(interaction, f"```md\n{text}\n```")
    else:
        message = t("soul_file", stage.lang, actor=actor.name)
        await reply(interaction, message, file=soul_file(actor.name, text))


async def edit_soul(
    interaction: discord.Interaction,
    stage: Stage,
    actor: Actor,
    file: discord.Attachment | None = None,
) -> None:
    """/soul edit: an uploaded soul.md is written; else a form opens (or, for a soul longer
    than a form holds, the file comes back to edit and upload)."""
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


async def show_status(interaction: discord.Interaction, stage: Stage) -> None:
    """/status: cast, turns, mode, tokens and cost (and, for directors, what to fix)."""
    await defer(interaction)
    text = render_status(await stage.rehearsal.status(), stage.lang)
    # What a hand-built scene should fix names files and may quote an alias (a private
    # nickname): for its directors only.
    if may_direct(interaction, stage):
        warnings = [w.text(stage.lang) for w in await stage.rehearsal.cast.warnings()]
        text = "\n".join(filter(None, (text, render_warnings(warnings, stage.lang))))
    await reply(interaction, text)


async def add_director(interaction: discord.Interaction, stage: Stage, user: discord.User) -> None:
    """/director add."""
    values = dict(user=user.mention, scene=stage.name)
    if user.bot:
        raise BotProblem("director_bot")
    if user.id in stage.binding.directors:
        await reply(interaction, t("director_already", stage.lang, **values))
        return
    stage.rebind(stage.binding.with_director(user.id))
    await reply(interaction, t("director_added", stage.lang, **values))


async def remove_director(
    interaction: discord.Interaction, stage: Stage, user: discord.User
) -> None:
    """/director remove (never the last one)."""
    values = dict(user=user.mention, scene=stage.name)
    if user.id not in stage.binding.directors:
        await reply(interaction, t("director_not", stage.lang, **values))
        return
    if stage.binding.directors == (user.id,):
        raise BotProblem("director_last", **values)
    stage.rebind(stage.binding.without_director(user.id))
    await reply(interaction, t("director_removed", stage.lang, **values))


class SoulModal(DirectorsForm):
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
        # a director's (interaction_check let it through): the thread's, or the one it was
        # opened for
        stage = self.for_scene or scene_of(interaction)
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


# ---------------------------------------------------------------------- the commands
@app_commands.command(name="run", description=words("cmd.run.description"))
@directors_only
@app_commands.describe(turns=words("cmd.run.turns"), start=words("cmd.run.start"))
async def run(
    interaction: discord.Interaction, turns: Turns = DEFAULT_TURNS, start: ActorArg | None = None
) -> None:
    await start_run(interaction, scene_of(interaction), turns, start)


@app_commands.command(name="cue", description=words("cmd.cue.description"))
@directors_only
@app_commands.describe(actor=words("cmd.cue.actor"), direction=words("cmd.cue.direction"))
async def cue(
    interaction: discord.Interaction, actor: ActorArg, direction: str | None = None
) -> None:
    await cue_actor(interaction, scene_of(interaction), actor, direction)


@app_commands.command(name="cut", description=words("cmd.cut.description"))
@directors_only
async def cut(interaction: discord.Interaction) -> None:
    await cut_run(interaction, scene_of(interaction))


@app_commands.command(name="resume", description=words("cmd.resume.description"))
@directors_only
@app_commands.describe(turns=words("cmd.resume.turns"))
async def resume(interaction: discord.Interaction, turns: Turns = DEFAULT_TURNS) -> None:
    await resume_run(interaction, scene_of(interaction), turns)


@app_commands.command(name="note", description=words("cmd.note.description"))
@directors_only
@app_commands.describe(text=words("cmd.note.text"), actor=words("cmd.note.actor"))
async def note(interaction: discord.Interaction, text: str, actor: ActorArg | None = None) -> None:
    await whisper(interaction, scene_of(interaction), text, actor)


class Take(app_commands.Group, name="take", description=words("cmd.take.description")):
    # No group check: /take compare (bot.harvest) joins this group and is open to the thread.
    @app_commands.command(name="save", description=words("cmd.take_save.description"))
    @directors_only
    async def save(self, interaction: discord.Interaction) -> None:
        await save_take(interaction, scene_of(interaction))

    @app_commands.command(name="list", description=words("cmd.take_list.description"))
    @directors_only
    async def takes(self, interaction: discord.Interaction) -> None:
        await list_takes(interaction, scene_of(interaction))


@app_commands.command(name="replay", description=words("cmd.replay.description"))
@directors_only
@app_commands.describe(take=words("cmd.replay.take"), until=words("cmd.replay.until"))
async def replay(
    interaction: discord.Interaction,
    take: app_commands.Range[int, 1],
    until: app_commands.Range[int, 0] | None = None,
) -> None:
    await replay_take(interaction, scene_of(interaction), take, until)


class Soul(DirectorsGroup, name="soul", description=words("cmd.soul.description")):
    @app_commands.command(name="show", description=words("cmd.soul_show.description"))
    @app_commands.describe(actor=words("cmd.soul_show.actor"))
    async def show(self, interaction: discord.Interaction, actor: ActorArg) -> None:
        await show_soul(interaction, scene_of(interaction), actor)

    @app_commands.command(name="edit", description=words("cmd.soul_edit.description"))
    @app_commands.describe(actor=words("cmd.soul_edit.actor"), file=words("cmd.soul_edit.file"))
    async def edit(
        self,
        interaction: discord.Interaction,
        actor: ActorArg,
        file: discord.Attachment | None = None,
    ) -> None:
        await edit_soul(interaction, scene_of(interaction), actor, file)


@app_commands.command(name="status", description=words("cmd.status.description"))
async def status(interaction: discord.Interaction) -> None:
    await show_status(interaction, scene_of(interaction))


class Director(DirectorsGroup, name="director", description=words("cmd.director.description")):
    @app_commands.command(name="add", description=words("cmd.director_add.description"))
    @app_commands.describe(user=words("cmd.director_add.user"))
    async def add(self, interaction: discord.Interaction, user: discord.User) -> None:
        await add_director(interaction, scene_of(interaction), user)

    @app_commands.command(name="remove", description=words("cmd.director_remove.description"))
    @app_commands.describe(user=words("cmd.director_remove.user"))
    async def remove(self, interaction: discord.Interaction, user: discord.User) -> None:
        await remove_director(interaction, scene_of(interaction), user)


def setup(tree: app_commands.CommandTree) -> None:
    """Register the director commands (each tree gets its own groups)."""
    command: app_commands.Command[Any, Any, Any] | app_commands.Group
    for command in (run, cue, cut, resume, note, Take(), replay, Soul(), status, Director()):
        tree.add_command(command)
