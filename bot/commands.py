"""Director commands inside a scene thread: run, cue, cut, resume, note, take, replay, soul,
status, director.

Invariants: each handler checks permission first (`directed`, before anything changes), then
acknowledges, calls the engine once, and answers privately; runs start in the background so
the interaction is answered at once. Errors are not handled here but at the edge (bot.edge).
"""

from __future__ import annotations

import io
import logging

import discord
from discord import app_commands

from bot.edge import bot_of, defer, directed, may_direct, reply, report, scene_of
from bot.errors import BotProblem
from bot.i18n import t
from bot.render import autocomplete_names, render_status, render_takes
from bot.stage import Stage
from engine import DEFAULT_TURNS
from engine.settings import MAX_FILE_BYTES

log = logging.getLogger("circus.bot")

MODAL_LIMIT = 4000
UPLOAD_LIMIT = MAX_FILE_BYTES  # the engine's cap for a soul.md, checked before downloading
INLINE_LIMIT = 1900

Turns = app_commands.Range[int, 1, 50]


async def actor_choices(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """Autocomplete for actor options: the scene's cast, at most 25. Aliases match only for
    directors (a soul's aliases can be private nicknames). Never raises: a scene that fails to
    load offers nothing (the command itself then says why)."""
    stage = bot_of(interaction).stage_for_thread(interaction.channel_id)
    if stage is None:
        return []
    try:
        state = await stage.rehearsal.state()
        aliases = state.aliases() if may_direct(interaction, stage) else None
        names = autocomplete_names(current, state.cast, aliases)
    except Exception as exc:
        log.warning("autocomplete in scene %s: %s", stage.name, exc)
        return []
    return [app_commands.Choice(name=n[:100], value=n) for n in names]


# ---------------------------------------------------------------------- running
@app_commands.command(name="run", description="Let the scene play by itself for N turns")
@app_commands.describe(turns="How many turns (1–50)", start="Who speaks first")
@app_commands.autocomplete(start=actor_choices)
async def run(
    interaction: discord.Interaction, turns: Turns = DEFAULT_TURNS, start: str | None = None
) -> None:
    stage = directed(interaction)
    await defer(interaction)
    await stage.rehearsal.start_run(turns, start=start or None, mode="run")
    stage.run_interaction = interaction
    first = t("run_from", stage.lang, actor=start) if start else ""
    await reply(interaction, t("run_started", stage.lang, turns=turns, start=first))


@app_commands.command(name="cue", description="Give one actor the next turn")
@app_commands.describe(actor="The actor", direction="A private direction for this turn only")
@app_commands.autocomplete(actor=actor_choices)
async def cue(interaction: discord.Interaction, actor: str, direction: str | None = None) -> None:
    stage = directed(interaction)
    await defer(interaction)
    name = await stage.rehearsal.resolve_actor(actor)
    await stage.rehearsal.start_run(1, start=name, mode="cue", direction=direction or "")
    stage.run_interaction = interaction
    text = t("cue_started", stage.lang, actor=name)
    if direction:
        text += " " + t("cue_direction", stage.lang, actor=name)
    await reply(interaction, text)


@app_commands.command(name="cut", description="Stop the run now")
async def cut(interaction: discord.Interaction) -> None:
    stage = directed(interaction)
    await defer(interaction)
    stopped = await stage.rehearsal.cut()
    await reply(interaction, t("cut_done" if stopped else "cut_nothing", stage.lang))


@app_commands.command(name="resume", description="Play on from where the scene stopped")
@app_commands.describe(turns="How many turns")
async def resume(interaction: discord.Interaction, turns: Turns = DEFAULT_TURNS) -> None:
    stage = directed(interaction)
    await defer(interaction)
    await stage.rehearsal.start_run(turns, mode="resume")
    stage.run_interaction = interaction
    await reply(interaction, t("resume_started", stage.lang, turns=turns))


# ---------------------------------------------------------------------- whispers
@app_commands.command(name="note", description="Whisper to every actor, or to one")
@app_commands.describe(text="What to whisper", actor="Only this actor hears it (default: everyone)")
@app_commands.autocomplete(actor=actor_choices)
async def note(interaction: discord.Interaction, text: str, actor: str | None = None) -> None:
    stage = directed(interaction)
    await defer(interaction)
    target = await stage.rehearsal.resolve_actor(actor) if actor else None
    await stage.rehearsal.note(text, target)
    key = "note_actor" if target else "note_all"
    await reply(interaction, t(key, stage.lang, actor=target))


# ---------------------------------------------------------------------- takes
take = app_commands.Group(name="take", description="Save and browse takes")


@take.command(name="save", description="Save the current take")
async def take_save(interaction: discord.Interaction) -> None:
    stage = directed(interaction)
    await defer(interaction)
    number = await stage.rehearsal.save_take()
    await reply(interaction, t("take_saved", stage.lang, take=number))


@take.command(name="list", description="List the saved takes")
async def take_list(interaction: discord.Interaction) -> None:
    stage = directed(interaction)
    await defer(interaction)
    await reply(interaction, render_takes(await stage.rehearsal.list_takes(), stage.lang))


@app_commands.command(name="replay", description="Start again from a saved take")
@app_commands.describe(take="The take number", until="Keep turns up to this one (default: all)")
async def replay(
    interaction: discord.Interaction,
    take: app_commands.Range[int, 1],
    until: app_commands.Range[int, 0] | None = None,
) -> None:
    stage = directed(interaction)
    await defer(interaction)
    async with stage.votes.lock:  # a replay re-files picks: never beside a ⭐ vote (bot.votes)
        result = await stage.rehearsal.replay(take, until)
    values = dict(from_take=result.from_take, kept=result.kept_turns, take=result.take)
    stage.status_line(t("line_replay", stage.lang, **values))
    text = t("replay_done", stage.lang, **values)
    if result.autosaved:
        text += t("replay_autosaved", stage.lang, n=result.autosaved)
    await reply(interaction, text)


# ---------------------------------------------------------------------- souls
soul = app_commands.Group(name="soul", description="Read or rewrite an actor's soul.md")


def soul_file(actor: str, text: str) -> discord.File:
    return discord.File(io.BytesIO(text.encode("utf-8")), filename=f"{actor}-soul.md")


@soul.command(name="show", description="Show an actor's soul.md (privately)")
@app_commands.describe(actor="The actor")
@app_commands.autocomplete(actor=actor_choices)
async def soul_show(interaction: discord.Interaction, actor: str) -> None:
    stage = directed(interaction)
    await defer(interaction)
    name = await stage.rehearsal.resolve_actor(actor)
    text = await stage.rehearsal.soul_text(name)
    if len(text) <= INLINE_LIMIT and "```" not in text:
        await reply(interaction, f"```md\n{text}\n```")
    else:
        await reply(interaction, t("soul_file", stage.lang, actor=name), file=soul_file(name, text))


@soul.command(name="edit", description="Edit an actor's soul.md")
@app_commands.describe(
    actor="The actor", file="A replacement soul.md (for souls over 4000 characters)"
)
@app_commands.autocomplete(actor=actor_choices)
async def soul_edit(
    interaction: discord.Interaction, actor: str, file: discord.Attachment | None = None
) -> None:
    stage = directed(interaction)
    name = await stage.rehearsal.resolve_actor(actor)
    if file is not None:
        await defer(interaction)
        await stage.rehearsal.set_soul(name, await uploaded_text(file), origin="discord")
        await reply(interaction, t("soul_saved", stage.lang, actor=name))
        return
    text = await stage.rehearsal.soul_text(name)
    if len(text) > MODAL_LIMIT:
        await defer(interaction)
        message = t("soul_too_long", stage.lang, actor=name, length=len(text))
        await reply(interaction, message, file=soul_file(name, text))
        return
    await interaction.response.send_modal(SoulModal(stage, name, text))


async def uploaded_text(file: discord.Attachment) -> str:
    """An uploaded soul.md as text: UTF-8 (a BOM is dropped), refused naming the file else."""
    shown = discord.utils.escape_markdown(file.filename[:100]).replace("`", "ˋ")
    if file.size > UPLOAD_LIMIT:
        raise BotProblem("soul_file_too_big", file=shown, size=file.size, limit=UPLOAD_LIMIT)
    try:
        return (await file.read()).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BotProblem("soul_bad_file", file=shown) from exc


class SoulModal(discord.ui.Modal):
    """A form holding one soul.md (≤ 4000 characters); submitting rewrites it."""

    def __init__(self, stage: Stage, actor: str, text: str) -> None:
        super().__init__(title=t("soul_title", stage.lang, actor=actor)[:45], timeout=None)
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
        stage = directed(interaction)
        await defer(interaction)
        # What arrives through Discord is data, not configuration: origin="discord" refuses
        # api_base and models outside the operator's allow-list.
        await stage.rehearsal.set_soul(self.actor, self.body.value, origin="discord")
        await reply(interaction, t("soul_saved", stage.lang, actor=self.actor))

    async def on_error(self, interaction: discord.Interaction, error: Exception, /) -> None:
        await report(interaction, error)


# ---------------------------------------------------------------------- status
@app_commands.command(name="status", description="Cast, turns, mode, tokens and cost")
async def status(interaction: discord.Interaction) -> None:
    stage = scene_of(interaction)
    await defer(interaction)
    await reply(interaction, render_status(await stage.rehearsal.status(), stage.lang))


# ---------------------------------------------------------------------- directors
director = app_commands.Group(name="director", description="Share the director's chair")


@director.command(name="add", description="Make someone a co-director")
@app_commands.describe(user="The member")
async def director_add(interaction: discord.Interaction, user: discord.User) -> None:
    stage = directed(interaction)
    values = dict(user=user.mention, scene=stage.name)
    if user.bot:
        raise BotProblem("director_bot")
    if user.id in stage.binding.directors:
        await reply(interaction, t("director_already", stage.lang, **values))
        return
    stage.rebind(stage.binding.with_director(user.id))
    await reply(interaction, t("director_added", stage.lang, **values))


@director.command(name="remove", description="Remove a co-director")
@app_commands.describe(user="The member")
async def director_remove(interaction: discord.Interaction, user: discord.User) -> None:
    stage = directed(interaction)
    values = dict(user=user.mention, scene=stage.name)
    if user.id not in stage.binding.directors:
        await reply(interaction, t("director_not", stage.lang, **values))
        return
    if stage.binding.directors == (user.id,):
        raise BotProblem("director_last", **values)
    stage.rebind(stage.binding.without_director(user.id))
    await reply(interaction, t("director_removed", stage.lang, **values))


COMMANDS: list[app_commands.Command | app_commands.Group] = [
    run,
    cue,
    cut,
    resume,
    note,
    take,
    replay,
    soul,
    status,
    director,
]
