"""Panning for gold in a scene thread: /picks, /notes, /take compare, /export, /report and /read.

Invariants: every answer is private. What only directors may see stays behind the director
check (bot.interaction.gate.directors_only_if): an export with the actors' thoughts (a captain
is refused it too: it holds every character's); a take's report (it counts the stage manager's
choices and the models' costs) is for directors and captains (`room_only`), a captain's with
their own characters' secrets alone (`private_actors`); the line bin, the room's notes on lines, a
comparison of takes and a frontstage export hold only what the thread already showed or the
room wrote, so anyone in the thread may ask for them. Exports are written
into a private temporary folder and attached; nothing is left behind in the scene folder.
(⭐ votes are bot.thread.votes; the report's embed and its DM to directors are bot.thread.reports.)
/read is the one harvest that is posted in the thread for the room to hear: its progress line
is edited in place (at most every READ_EDIT_SECONDS) and becomes the post with the audio; it is
for directors, or anyone when the scene says `spectators_read: true` (bot.interaction.gate).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import tempfile
from pathlib import Path
from typing import Any

import discord
from discord import app_commands

from bot.errors import BotProblem, IntoOwnFormat, ReplaceNeedsInto
from bot.i18n import t, words
from bot.interaction.files import INLINE_LIMIT, checked_script, text_file
from bot.interaction.gate import (
    directors_only_if,
    only_of,
    private_actors,
    readers_only,
    room_only,
    scene_of,
    scene_thread_or_none,
)
from bot.interaction.replies import defer, reply
from bot.thread.reports import report_message
from bot.thread.scene import SceneThread
from engine import NotedLine, Pick, ReadOrder, ReadResult, render_picks, whole_number

FORMATS = ("fountain", "fdx", "md", "csv")
READ_EDIT_SECONDS = 2.0  # the progress line of a /read is edited at most this often
UPLOAD_LIMIT = 10 * 1024 * 1024  # Discord's attachment limit without a server boost
TakeRef = int | str  # a take number, or "current"

_CURRENT = {"", "current", "now", "目前", "當前", "当前", "现在", "現在"}
_TAKE = re.compile(r"^(?:take[_ ]?|第\s*)?([0-9]+)\s*(?:條|条)?$", re.IGNORECASE)
_TAG = re.compile(r"\s*\(discord:\d+\)$")


def parse_take(text: str | None) -> TakeRef | None:
    """`3`, `take_3`, `第3條` → 3; empty or `current` → "current"; anything else → None."""
    value = (text or "").strip()
    if value.casefold() in _CURRENT:
        return "current"
    match = _TAKE.match(value)
    number = whole_number(match.group(1)) if match else None  # bounded: never int()'s refusal
    return number if number else None


def take_of(text: str | None) -> TakeRef:
    """The take a user asked for (BotProblem "bad_take" if it is not one)."""
    ref = parse_take(text)
    if ref is None:
        raise BotProblem("bad_take", value=(text or "")[:100])
    return ref


def voter_name(vote: str) -> str:
    """A vote as people read it: Discord votes lose their `(discord:<id>)` tag."""
    return _TAG.sub("", vote)


def render_pick_line(pick: Pick, lang: str, width: int = 80) -> str:
    """One pick in the /picks list: where it is, who said what, how many votes and whose."""
    said = " ".join((pick.dialogue or pick.action).split())
    if len(said) > width:
        said = said[: width - 1] + "…"
    line = f"“{said}”" if pick.dialogue else f"*{said}*"
    who = ", ".join(voter_name(v) for v in pick.votes)
    return t(
        "picks_line",
        lang,
        take=pick.take,
        turn=pick.turn,
        actor=pick.actor,
        votes=len(pick.votes),
        line=line,
        who=f" ({who})" if who else "",
    )


async def take_choices(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """Autocomplete for take options: the take being played, then the saved ones (newest first)."""
    scene_thread = scene_thread_or_none(interaction)
    if scene_thread is None:
        return []
    number = await scene_thread.rehearsal.current_take()
    choices = [
        app_commands.Choice(name=t("take_current", scene_thread.lang, n=number), value="current")
    ]
    for info in reversed(await scene_thread.rehearsal.takes.saved()):
        label = t("take_saved_choice", scene_thread.lang, n=info.number, turns=info.turns)
        choices.append(app_commands.Choice(name=label[:100], value=str(info.number)))
    typed = current.strip().casefold()
    return [c for c in choices if typed in c.name.casefold() or typed in c.value][:25]


async def take_number(scene_thread: SceneThread, ref: TakeRef) -> int:
    return await scene_thread.rehearsal.current_take() if ref == "current" else int(ref)


# ---------------------------------------------------------------------- the bodies
async def show_picks(interaction: discord.Interaction, scene_thread: SceneThread) -> None:
    """/picks: the picked lines and their votes, inline if they fit, else picks.md attached."""
    await defer(interaction)
    found = await scene_thread.rehearsal.harvest.picks()
    if not found:
        await reply(interaction, t("picks_none", scene_thread.lang))
        return
    lines = "\n".join(render_pick_line(p, scene_thread.lang) for p in found)
    text = t("picks_list", scene_thread.lang, count=len(found), lines=lines)
    if len(text) <= INLINE_LIMIT:
        await reply(interaction, text)
        return
    bin_md = render_picks(found, scene_thread.lang)
    await reply(
        interaction,
        t("picks_file", scene_thread.lang, count=len(found)),
        file=text_file("picks.md", bin_md),
    )


def render_noted(noted: list[NotedLine], lang: str, width: int = 60) -> str:
    """The /notes list: each noted line (turn, actor, its first words), its notes under it."""
    out = []
    for line in noted:
        said = " ".join(line.line.split())
        said = said if len(said) <= width else said[: width - 1] + "…"
        shown = discord.utils.escape_markdown(said) or "—"
        out.append(t("line_notes_line", lang, turn=line.turn, actor=line.actor, line=shown))
        for note in line.notes:
            text, by = (discord.utils.escape_markdown(x) for x in (note.text, note.by))
            out.append(t("line_notes_note", lang, text=text, by=by))
    return "\n".join(out)


async def show_line_notes(
    interaction: discord.Interaction, scene_thread: SceneThread, take: str
) -> None:
    """/notes: the room's notes on a take's lines, inline if they fit, else attached."""
    ref = take_of(take)
    await defer(interaction)
    lang, number = scene_thread.lang, await take_number(scene_thread, ref)
    noted = await scene_thread.rehearsal.line_notes.list(ref)
    if not noted:
        await reply(interaction, t("line_notes_none", lang, take=number))
        return
    lines = render_noted(noted, lang)
    text = t("line_notes_list", lang, take=number, count=len(noted), lines=lines)
    if len(text) <= INLINE_LIMIT:
        await reply(interaction, text)
        return
    await reply(
        interaction,
        t("line_notes_file", lang, take=number, count=len(noted)),
        file=text_file("line-notes.md", lines),
    )


async def compare_takes(
    interaction: discord.Interaction, scene_thread: SceneThread, a: str, b: str, full: bool
) -> None:
    """/take compare: two takes side by side, inline if it fits, else attached."""
    first, second = take_of(a), take_of(b)
    await defer(interaction)
    text = await scene_thread.rehearsal.harvest.diff(first, second, full=full)
    if len(text) <= INLINE_LIMIT:
        await reply(interaction, text)
        return
    na, nb = await take_number(scene_thread, first), await take_number(scene_thread, second)
    await reply(
        interaction,
        t("compare_file", scene_thread.lang, a=na, b=nb),
        file=text_file(f"take_{na}-vs-take_{nb}.md", text),
    )


async def export_take(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    take: str,
    format: str,
    picks: bool,
    thoughts: bool,
) -> None:
    """/export: the take's files, written in a private temporary folder and attached."""
    ref = take_of(take)
    formats = FORMATS if format == "all" else (format,)
    await defer(interaction)
    with tempfile.TemporaryDirectory(prefix="circus-export-") as folder:
        paths = await scene_thread.rehearsal.harvest.export(
            take=ref, formats=formats, picks=picks, thoughts=thoughts, out=Path(folder)
        )
        files = [discord.File(io.BytesIO(p.read_bytes()), filename=p.name) for p in paths]
    names = ", ".join(f"`{p.name}`" for p in paths)
    if picks:
        text = t("export_picks_done", scene_thread.lang, files=names)
    else:
        text = t(
            "export_done", scene_thread.lang, take=await take_number(scene_thread, ref), files=names
        )
    await reply(interaction, text, files=files)


async def splice_take(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    take: str,
    picks: bool,
    into: discord.Attachment,
    replace: str | None = None,
) -> None:
    """/export into: the writer's script with the take's rehearsed lines set back in (after
    the imported scene, or in place of the lines `replace:` names), as an attachment
    (directors only; its type and size checked before it is fetched)."""
    name = Path(checked_script(into)).name
    await defer(interaction)
    data = await into.read()
    with tempfile.TemporaryDirectory(prefix="circus-splice-") as folder:
        done = await scene_thread.rehearsal.harvest.splice(
            into=Path(name), take=take_of(take), picks=picks, data=data, out=Path(folder) / name,
            replace=replace,
        )  # fmt: skip
        file = discord.File(io.BytesIO(done.path.read_bytes()), filename=name)
    shown = discord.utils.escape_markdown(name[:100]).replace("`", "ˋ")
    if done.replaced:
        said = t("export_replaced", scene_thread.lang, file=shown, take=done.take,
                 count=done.count, first=done.replaced[0], last=done.replaced[1])  # fmt: skip
    else:
        said = t("export_spliced", scene_thread.lang, file=shown, take=done.take,
                 count=done.count, line=done.line)  # fmt: skip
    await reply(interaction, said, file=file)


async def report_take(
    interaction: discord.Interaction, scene_thread: SceneThread, take: str
) -> None:
    """/report: the take's report embed, with report.md attached (directors; a captain gets
    it with their own characters' secrets alone)."""
    ref = take_of(take)
    only = only_of(await private_actors(interaction, scene_thread))
    await defer(interaction)
    number = await take_number(scene_thread, ref)
    embed, enclosed = await report_message(
        scene_thread.rehearsal, scene_thread.lang, ref, number, only
    )
    await reply(
        interaction,
        t("report_done", scene_thread.lang, take=number),
        embed=embed,
        file=discord.File(io.BytesIO(enclosed.data), filename=enclosed.filename),
    )


def upload_limit(interaction: discord.Interaction) -> int:
    """The most one audio file may weigh here: the server's attachment limit (a boosted
    server allows more), less a margin for the request around it."""
    guild = interaction.guild
    limit = guild.filesize_limit if guild is not None else UPLOAD_LIMIT
    return max(64 * 1024, int(limit * 0.95))


class ReadProgress:
    """The public progress line of a /read, edited in place as lines are rendered."""

    def __init__(self, message: discord.Message, lang: str, take: int) -> None:
        self.message, self.lang, self.take = message, lang, take
        self.loop = asyncio.get_running_loop()
        self.edited = self.loop.time()

    async def __call__(self, done: int, total: int) -> None:
        now = self.loop.time()
        if done < total and now - self.edited < READ_EDIT_SECONDS:
            return
        self.edited = now
        text = t("read_progress", self.lang, take=self.take, done=done, total=total)
        with contextlib.suppress(discord.HTTPException):
            await self.message.edit(content=text)


def read_text(result: ReadResult, lang: str, part: int) -> str:
    """What the post of part `part` (1-based) of a read says."""
    minutes, seconds = divmod(round(result.seconds), 60)
    if len(result.audio) == 1:
        return t("read_done", lang, take=result.take, length=f"{minutes}:{seconds:02d}")
    return t(
        "read_part", lang, take=result.take, length=f"{minutes}:{seconds:02d}",
        n=part, of=len(result.audio),
    )  # fmt: skip


async def read_take(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    take: str,
    first: int | None = None,
    last: int | None = None,
) -> None:
    """/read: the take rendered in its voices and posted in the thread, one file that fits the
    server's limit (numbered parts when it cannot), the cue sheet beside it."""
    ref = take_of(take)
    await defer(interaction)
    lang, number = scene_thread.lang, await take_number(scene_thread, ref)
    channel = interaction.channel
    assert isinstance(channel, discord.abc.Messageable)
    none = discord.AllowedMentions.none()
    line = await channel.send(
        t("read_progress", lang, take=number, done=0, total="…"), allowed_mentions=none
    )
    try:
        with tempfile.TemporaryDirectory(prefix="circus-read-") as folder:
            order = ReadOrder(
                take=ref, first=first, last=last, out=Path(folder) / f"take_{number}",
                limit=upload_limit(interaction),
            )  # fmt: skip
            result = await scene_thread.rehearsal.read.read(order, ReadProgress(line, lang, number))
            parts = [(p.name, p.read_bytes()) for p in result.audio]
            cues = (result.cue_sheet.name, result.cue_sheet.read_bytes())
    except BaseException:
        with contextlib.suppress(discord.HTTPException):
            await line.delete()  # the private answer says why
        raise
    for i, (name, data) in enumerate(parts, 1):
        files = [discord.File(io.BytesIO(data), filename=name)]
        if i == 1:
            files.append(discord.File(io.BytesIO(cues[1]), filename=cues[0]))
            await line.edit(content=read_text(result, lang, i), attachments=files)
        else:
            await channel.send(read_text(result, lang, i), files=files, allowed_mentions=none)
    await reply(interaction, t("read_posted", lang, take=number, link=line.jump_url))


# ---------------------------------------------------------------------- the commands
@app_commands.command(name="picks", description=words("cmd.picks.description"))
async def picks(interaction: discord.Interaction) -> None:
    await show_picks(interaction, scene_of(interaction))


@app_commands.command(name="notes", description=words("cmd.notes.description"))
@app_commands.autocomplete(take=take_choices)
@app_commands.describe(take=words("cmd.notes.take"))
async def notes(interaction: discord.Interaction, take: str = "current") -> None:
    await show_line_notes(interaction, scene_of(interaction), take)


@app_commands.command(name="compare", description=words("cmd.take_compare.description"))
@app_commands.autocomplete(a=take_choices, b=take_choices)
@app_commands.describe(
    a=words("cmd.take_compare.a"),
    b=words("cmd.take_compare.b"),
    full=words("cmd.take_compare.full"),
)
async def take_compare(
    interaction: discord.Interaction, a: str, b: str = "current", full: bool = False
) -> None:
    await compare_takes(interaction, scene_of(interaction), a, b, full)


FORMAT_CHOICES = [
    app_commands.Choice(name=words("cmd.export.format.all"), value="all"),
    app_commands.Choice(name=words("cmd.export.format.fountain"), value="fountain"),
    app_commands.Choice(name=words("cmd.export.format.fdx"), value="fdx"),
    app_commands.Choice(name=words("cmd.export.format.md"), value="md"),
    app_commands.Choice(name=words("cmd.export.format.csv"), value="csv"),
]


@app_commands.command(name="export", description=words("cmd.export.description"))
# The subtext is backstage: with thoughts, directors only, refused before anything runs.
@directors_only_if("thoughts", refusal="export_thoughts_directors")
@directors_only_if("into")
@app_commands.autocomplete(take=take_choices)
@app_commands.choices(format=FORMAT_CHOICES)
@app_commands.describe(
    take=words("cmd.export.take"),
    format=words("cmd.export.format"),
    picks=words("cmd.export.picks"),
    thoughts=words("cmd.export.thoughts"),
    into=words("cmd.export.into"),
    replace=words("cmd.export.replace"),
)
async def export(
    interaction: discord.Interaction,
    take: str = "current",
    format: str = "all",
    picks: bool = False,
    thoughts: bool = False,
    into: discord.Attachment | None = None,
    replace: app_commands.Range[str, 1, 40] | None = None,
) -> None:
    if replace is not None and into is None:
        raise ReplaceNeedsInto()
    if into is not None and (format != "all" or thoughts):
        raise IntoOwnFormat()
    if into is not None:
        await splice_take(interaction, scene_of(interaction), take, picks, into, replace)
        return
    await export_take(interaction, scene_of(interaction), take, format, picks, thoughts)


@app_commands.command(name="report", description=words("cmd.report.description"))
@room_only
@app_commands.autocomplete(take=take_choices)
@app_commands.describe(take=words("cmd.report.take"))
async def report(interaction: discord.Interaction, take: str = "current") -> None:
    await report_take(interaction, scene_of(interaction), take)


@app_commands.command(name="read", description=words("cmd.read.description"))
@readers_only
@app_commands.autocomplete(take=take_choices)
@app_commands.rename(first="from", last="to")
@app_commands.describe(
    take=words("cmd.read.take"), first=words("cmd.read.from"), last=words("cmd.read.to")
)
async def read(
    interaction: discord.Interaction,
    take: str = "current",
    first: app_commands.Range[int, 1, 1_000_000] | None = None,
    last: app_commands.Range[int, 1, 1_000_000] | None = None,
) -> None:
    await read_take(interaction, scene_of(interaction), take, first, last)


def setup(tree: app_commands.CommandTree) -> None:
    """Register the harvest commands; `/take compare` joins the `take` group that
    bot.commands.directing.setup registered first."""
    take_group = tree.get_command("take")
    assert isinstance(take_group, app_commands.Group), (
        "bot.commands.directing.setup(tree) comes first"
    )
    take_group.add_command(take_compare)
    command: app_commands.Command[Any, Any, Any] | app_commands.Group
    for command in (picks, notes, export, report, read):
        tree.add_command(command)
