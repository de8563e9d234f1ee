"""Director commands inside a scene thread: run, cue, cut, resume, note, take, replay, soul,
status, director.

Invariants: a director command refuses anyone else before anything runs (`directors_only`, or
its group's `interaction_check`), and an actor option is resolved once, before the handler
(`ActorArg`); the handler then acknowledges, calls the engine once, and answers privately;
runs start in the background so the interaction is answered at once. Errors are not handled
here but at the edge (bot.interaction.edge). Each command's body is a plain
`async (interaction, scene_thread, …)` function, so a button (bot.panel.controls) can do exactly
what the command does; the slash command around it only finds the scene. `setup(tree)` registers them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import discord
from discord import app_commands

from bot.errors import BotProblem
from bot.i18n import t, words
from bot.interaction.edge import describe
from bot.interaction.files import INLINE_LIMIT, MODAL_LIMIT, soul_file, uploaded_text
from bot.interaction.forms import DirectorsForm
from bot.interaction.gate import (
    DirectorsGroup,
    author,
    directors_only,
    may_direct,
    may_read,
    private_actors,
    refuse,
    room_only,
    scene_of,
)
from bot.interaction.options import ActorArg
from bot.interaction.replies import MESSAGE_LIMIT, defer, reply
from bot.render import render_status, render_takes, render_warnings
from bot.thread.scene import SceneThread
from engine import (
    DEFAULT_TURNS,
    Actor,
    CircusError,
    Cue,
    Resume,
    Run,
    dropped_warning,
    tree_lines_of,
)

Turns = app_commands.Range[int, 1, 50]


# ---------------------------------------------------------------------- the bodies
async def _with_warnings(scene_thread: SceneThread, text: str) -> str:
    """`text`, then what the scene's files should fix (the engine's warnings), for directors:
    they name files and may quote an alias (a private nickname)."""
    warnings = [w.text(scene_thread.lang) for w in await scene_thread.rehearsal.cast.warnings()]
    return "\n".join(filter(None, (text, render_warnings(warnings, scene_thread.lang))))


async def start_run(
    interaction: discord.Interaction, scene_thread: SceneThread, turns: int, start: Actor | None
) -> None:
    """/run: the scene plays by itself for `turns` turns (from `start`, if given)."""
    await defer(interaction)
    await scene_thread.rehearsal.start_run(Run(turns, start))
    scene_thread.run_interaction = interaction
    # The reply names the opener as the director typed them (an alias stays an alias).
    typed = getattr(interaction.namespace, "start", None) or (start.name if start else "")
    first = t("run_from", scene_thread.lang, actor=typed) if start else ""
    text = t("run_started", scene_thread.lang, turns=turns, start=first)
    await reply(interaction, await _with_warnings(scene_thread, text))


async def cue_actor(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor, direction: str | None
) -> None:
    """/cue: one actor takes the next turn (with a private direction for it, if given). A
    captain may cue only their own character, and only where the scene lets captains cue."""
    by = await author(interaction, scene_thread, actor.name, cue=True)
    await defer(interaction)
    await scene_thread.rehearsal.start_run(Cue(actor, direction or "", by))
    scene_thread.run_interaction = interaction
    text = t("cue_started", scene_thread.lang, actor=actor.name)
    if direction:
        text += " " + t("cue_direction", scene_thread.lang, actor=actor.name)
    await reply(interaction, await _with_warnings(scene_thread, text))


async def cut_run(interaction: discord.Interaction, scene_thread: SceneThread) -> None:
    """/cut: stop the run now."""
    await defer(interaction)
    stopped = await scene_thread.rehearsal.cut()
    await reply(interaction, t("cut_done" if stopped else "cut_nothing", scene_thread.lang))


async def resume_run(
    interaction: discord.Interaction, scene_thread: SceneThread, turns: int
) -> None:
    """/resume: play on for `turns` turns from where the scene stopped."""
    await defer(interaction)
    await scene_thread.rehearsal.start_run(Resume(turns))
    scene_thread.run_interaction = interaction
    text = t("resume_started", scene_thread.lang, turns=turns)
    await reply(interaction, await _with_warnings(scene_thread, text))


async def whisper(
    interaction: discord.Interaction, scene_thread: SceneThread, text: str, actor: Actor | None
) -> None:
    """/note: whisper to every actor, or to one (a captain: to their own character alone),
    attributed to its writer in director_notes.md."""
    by = await author(interaction, scene_thread, actor.name if actor else None)
    await defer(interaction)
    dropped = await scene_thread.rehearsal.notes.note(text, actor, by=by)
    key = "note_actor" if actor else "note_all"
    said = t(key, scene_thread.lang, actor=actor.name if actor else None)
    if dropped:
        said += "\n" + dropped_warning(actor.name if actor else "", dropped, scene_thread.lang)
    await reply(interaction, said)


async def save_take(interaction: discord.Interaction, scene_thread: SceneThread) -> None:
    """/take save."""
    await defer(interaction)
    number = await scene_thread.rehearsal.takes.save()
    await reply(interaction, t("take_saved", scene_thread.lang, take=number))


async def list_takes(interaction: discord.Interaction, scene_thread: SceneThread) -> None:
    """/take list."""
    await defer(interaction)
    listing = render_takes(await scene_thread.rehearsal.takes.saved(), scene_thread.lang)
    tree = "\n".join(await tree_lines_of(scene_thread.rehearsal.root))  # replays branch
    await reply(interaction, f"{listing}\n```\n{tree}\n```"[:MESSAGE_LIMIT])


async def replay_take(
    interaction: discord.Interaction, scene_thread: SceneThread, take: int, until: int | None
) -> None:
    """/replay: start again from a saved take (up to turn `until`)."""
    await defer(interaction)
    async with (
        scene_thread.votes.lock
    ):  # a replay re-files picks: never beside a ⭐ vote (bot.thread.votes)
        result = await scene_thread.rehearsal.takes.replay(take, until)
    await scene_thread.mark_all_posted()  # the record was cut back to turns the thread has had
    values = dict(from_take=result.from_take, kept=result.kept_turns, take=result.take)
    scene_thread.status_line(t("line_replay", scene_thread.lang, **values))
    text = t("replay_done", scene_thread.lang, **values)
    if result.autosaved:
        text += t("replay_autosaved", scene_thread.lang, n=result.autosaved)
    await reply(interaction, text)


async def show_soul(
    interaction: discord.Interaction, scene_thread: SceneThread, actor: Actor
) -> None:
    """/soul show: an actor's soul.md, inline if it fits, else attached — to a director, or
    to that character's captain (a soul is its character's private text)."""
    if not may_read(await private_actors(interaction, scene_thread), actor.name):
        raise refuse(interaction, scene_thread)
    await defer(interaction)
    text = await scene_thread.rehearsal.souls.text(actor)
    if len(text) <= INLINE_LIMIT and "```" not in text:
        await reply(interaction, f"```md\n{text}\n```")
    else:
        message = t("soul_file", scene_thread.lang, actor=actor.name)
        await reply(interaction, message, file=soul_file(actor.name, text))


async def edit_soul(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    actor: Actor,
    file: discord.Attachment | None = None,
) -> None:
    """/soul edit: an uploaded soul.md is written; else a form opens (or, for a soul longer
    than a form holds, the file comes back to edit and upload)."""
    if file is not None:
        await defer(interaction)
        await scene_thread.rehearsal.souls.set(actor, await uploaded_text(file), origin="member")
        await reply(interaction, t("soul_saved", scene_thread.lang, actor=actor.name))
        return
    text = await scene_thread.rehearsal.souls.text(actor)
    if len(text) > MODAL_LIMIT:
        await defer(interaction)
        message = t("soul_too_long", scene_thread.lang, actor=actor.name, length=len(text))
        await reply(interaction, message, file=soul_file(actor.name, text))
        return
    await interaction.response.send_modal(SoulModal(scene_thread, actor, text))


async def show_status(interaction: discord.Interaction, scene_thread: SceneThread) -> None:
    """/status: cast, turns, mode, tokens and cost (and, for directors, what to fix)."""
    await defer(interaction)
    status = await scene_thread.rehearsal.status()
    # Which whispers no longer fit says who was whispered to: for whoever may read them
    private = await private_actors(interaction, scene_thread)
    dropped = tuple(
        (section, count)
        for section, count in status.notes_dropped
        if (may_read(private, section) if section else bool(private))
    )
    text = render_status(replace(status, notes_dropped=dropped), scene_thread.lang)
    if may_direct(interaction, scene_thread):  # what to fix is for its directors only
        text = await _with_warnings(scene_thread, text)
    await reply(interaction, text)


async def add_director(
    interaction: discord.Interaction, scene_thread: SceneThread, user: discord.User
) -> None:
    """/director add."""
    values = dict(user=user.mention, scene=scene_thread.name)
    if user.bot:
        raise BotProblem("director_bot")
    if user.id in scene_thread.binding.directors:
        await reply(interaction, t("director_already", scene_thread.lang, **values))
        return
    scene_thread.rebind(scene_thread.binding.with_director(user.id))
    await reply(interaction, t("director_added", scene_thread.lang, **values))


async def remove_director(
    interaction: discord.Interaction, scene_thread: SceneThread, user: discord.User
) -> None:
    """/director remove (never the last one)."""
    values = dict(user=user.mention, scene=scene_thread.name)
    if user.id not in scene_thread.binding.directors:
        await reply(interaction, t("director_not", scene_thread.lang, **values))
        return
    if scene_thread.binding.directors == (user.id,):
        raise BotProblem("director_last", **values)
    scene_thread.rebind(scene_thread.binding.without_director(user.id))
    await reply(interaction, t("director_removed", scene_thread.lang, **values))


class SoulModal(DirectorsForm):
    """A form holding one soul.md (≤ 4000 characters); submitting rewrites it."""

    def __init__(self, scene_thread: SceneThread, actor: Actor, text: str) -> None:
        super().__init__(
            title=t("soul_title", scene_thread.lang, actor=actor.name)[:45], timeout=None
        )
        self.scene_thread = scene_thread
        self.actor = actor
        self.body: discord.ui.TextInput[SoulModal] = discord.ui.TextInput(
            label=t("soul_label", scene_thread.lang),
            style=discord.TextStyle.paragraph,
            default=text,
            max_length=MODAL_LIMIT,
            custom_id="soul",
        )
        self.add_item(self.body)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        # a director's (interaction_check let it through): the thread's, or the one it was
        # opened for
        scene_thread = self.for_scene or scene_of(interaction)
        await defer(interaction)
        # What arrives through Discord is data, not configuration: origin="member" refuses
        # api_base and models outside the operator's allow-list.
        text = self.body.value
        try:
            await scene_thread.rehearsal.souls.set(self.actor, text, origin="member")
        except CircusError as exc:  # refused: say why, and hand back what was typed
            why = await describe(interaction, exc)
            kept = t("soul_form_kept", scene_thread.lang, actor=self.actor.name)
            await reply(interaction, f"{why}\n{kept}", file=soul_file(self.actor.name, text))
            return
        await reply(interaction, t("soul_saved", scene_thread.lang, actor=self.actor.name))


# ---------------------------------------------------------------------- the commands
@app_commands.command(name="run", description=words("cmd.run.description"))
@directors_only
@app_commands.describe(turns=words("cmd.run.turns"), start=words("cmd.run.start"))
async def run(
    interaction: discord.Interaction, turns: Turns = DEFAULT_TURNS, start: ActorArg | None = None
) -> None:
    await start_run(interaction, scene_of(interaction), turns, start)


@app_commands.command(name="cue", description=words("cmd.cue.description"))
@room_only
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
@room_only
@app_commands.describe(text=words("cmd.note.text"), actor=words("cmd.note.actor"))
async def note(interaction: discord.Interaction, text: str, actor: ActorArg | None = None) -> None:
    await whisper(interaction, scene_of(interaction), text, actor)


class TakeGroup(app_commands.Group, name="take", description=words("cmd.take.description")):
    # No group check: /take compare (bot.commands.harvest) joins this group and is open to the thread.
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


class SoulGroup(app_commands.Group, name="soul", description=words("cmd.soul.description")):
    """/soul show (directors, and a captain for their own character) and /soul edit
    (directors only)."""

    @room_only
    @app_commands.command(name="show", description=words("cmd.soul_show.description"))
    @app_commands.describe(actor=words("cmd.soul_show.actor"))
    async def show(self, interaction: discord.Interaction, actor: ActorArg) -> None:
        await show_soul(interaction, scene_of(interaction), actor)

    @directors_only
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


class DirectorGroup(DirectorsGroup, name="director", description=words("cmd.director.description")):
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
    for command in (
        run,
        cue,
        cut,
        resume,
        note,
        TakeGroup(),
        replay,
        SoulGroup(),
        status,
        DirectorGroup(),
    ):
        tree.add_command(command)
