"""The panel's controls on Discord: persistent buttons and selects (dynamic items, found again
by their custom id after a restart) and the forms they open.

Invariants: a control is another way to call a slash command, never a second implementation —
`checked` runs the registered command's own checks (`directors_only`, any group check), then the
control calls the command's body (bot.commands.directing, bot.commands.harvest: the same function the command
calls); a form checks again on submit, so a member who lost the chair meanwhile is refused then
too. A custom id and a select's values come from
Discord and are untrusted (bot.panel.text.parse_id, resolve_actor); a control whose scene is
gone, or that is not one of ours, answers privately and changes nothing. Every error is
answered once, privately, by bot.interaction.edge.report.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from bot.commands import directing, harvest
from bot.errors import BotProblem
from bot.i18n import t
from bot.interaction.edge import report
from bot.interaction.gate import author
from bot.interaction.host import host_of
from bot.panel.text import (
    BUTTONS,
    EVERYONE,
    SELECTS,
    ButtonSpec,
    PanelId,
    SelectSpec,
    Snapshot,
    cue_select,
    note_select,
    page_of,
    parse_id,
    title,
    turns_given,
)
from bot.thread.scene import SceneThread
from engine import DEFAULT_TURNS, Actor, UnknownActor, shown_number

log = logging.getLogger("circus.bot.panel")

MOST_TURNS = 50  # what /run turns: accepts (bot.commands.directing.Turns)
NOTE_LIMIT = 2000  # a whisper typed in the form (a slash option is capped the same)
_SCENE = r"(?P<page>[0-9]{1,2}):(?P<scene>[^\x00-\x1f]{1,64})"
BUTTON_TEMPLATE = rf"circus:(?P<action>{'|'.join(BUTTONS)}):{_SCENE}"
SELECT_TEMPLATE = rf"circus:(?P<action>{'|'.join(SELECTS)}):{_SCENE}"


# ---------------------------------------------------------------------- one implementation
def command(interaction: discord.Interaction, path: str) -> app_commands.Command[Any, ..., Any]:
    """The slash command `path` ("cut", "take save") as the bot registered it."""
    first, *rest = path.split()
    tree: app_commands.CommandTree = interaction.client.tree  # type: ignore[attr-defined]
    found: Any = tree.get_command(first)
    for name in rest:
        found = found.get_command(name) if isinstance(found, app_commands.Group) else None
    if not isinstance(found, app_commands.Command):
        raise LookupError(f"no slash command /{path}")
    return found


async def checked(interaction: discord.Interaction, path: str) -> app_commands.Command:
    """The command, once its checks let this member use it (they raise, or CheckFailure)."""
    cmd = command(interaction, path)
    # discord.py's own gate of a slash command: group checks, then the command's checks.
    if not await cmd._check_can_run(interaction):
        raise app_commands.CheckFailure(path)
    return cmd


def scene_thread_for_panel(interaction: discord.Interaction, pid: PanelId | None) -> SceneThread:
    """The scene a control belongs to, if it still plays in this thread."""
    if pid is None:
        raise BotProblem("panel.unknown")
    scene_thread = host_of(interaction).scene_thread_in(interaction.channel_id)
    if scene_thread is None or scene_thread.name != pid.scene:
        raise BotProblem("panel.gone")
    return scene_thread


# ---------------------------------------------------------------------- what each control does
async def act(interaction: discord.Interaction, custom_id: str, values: object) -> None:
    """A member used a panel control: do what it says, or say privately why not."""
    try:
        pid = parse_id(custom_id)
        scene_thread = scene_thread_for_panel(interaction, pid)
        assert pid is not None
        if pid.action in SELECTS:
            await choose(interaction, scene_thread, pid, chosen(values))
        elif pid.action == "run":
            await checked(interaction, "run")
            await interaction.response.send_modal(RunForm(scene_thread))
        elif pid.action == "cut":
            await checked(interaction, "cut")
            await directing.cut_run(interaction, scene_thread)
        elif pid.action == "resume":
            await checked(interaction, "resume")
            await directing.resume_run(interaction, scene_thread, DEFAULT_TURNS)
        elif pid.action == "save":
            await checked(interaction, "take save")
            await directing.save_take(interaction, scene_thread)
        elif pid.action == "report":
            await checked(interaction, "report")
            await harvest.report_take(interaction, scene_thread, "current")
        elif pid.action == "read":
            await checked(interaction, "read")
            await harvest.read_take(interaction, scene_thread, "current")
    except Exception as exc:
        await report(interaction, exc)


def chosen(values: object) -> str:
    """The one value a select sent (untrusted: anything else is refused)."""
    if isinstance(values, list) and len(values) == 1 and isinstance(values[0], str):
        return values[0][:100]
    raise BotProblem("panel.unknown")


async def choose(
    interaction: discord.Interaction, scene_thread: SceneThread, pid: PanelId, value: str
) -> None:
    """The Cue or Note select: turn its page, or open the form for whom was chosen."""
    await checked(interaction, pid.action)
    page = page_of(value)
    if page is not None:
        await show_page(interaction, scene_thread, pid.action, page)
        return
    if pid.action == "note" and value == EVERYONE:
        await author(interaction, scene_thread, None)  # a captain is refused before typing
        await interaction.response.send_modal(NoteForm(scene_thread, None))
        return
    if value == EVERYONE:  # an empty cast's placeholder option
        raise BotProblem("panel.unknown")
    try:
        actor = await scene_thread.rehearsal.resolve_actor(value, ())  # a name, no alias
    except UnknownActor:  # renamed or removed since the panel was drawn
        raise BotProblem("panel.nobody_there", actor=discord.utils.escape_markdown(value)) from None
    # Whom this member may note or cue is known now: refuse before the form, not after typing.
    await author(interaction, scene_thread, actor.name, cue=pid.action == "cue")
    form = CueForm(scene_thread, actor) if pid.action == "cue" else NoteForm(scene_thread, actor)
    await interaction.response.send_modal(form)


async def show_page(
    interaction: discord.Interaction, scene_thread: SceneThread, action: str, page: int
) -> None:
    """Another page of a long cast, privately: a select like the panel's, for those names."""
    snap = Snapshot(scene_thread.lang, await scene_thread.rehearsal.status())
    spec = cue_select(snap, page) if action == "cue" else note_select(snap, page)
    view = discord.ui.View(timeout=None)
    view.add_item(PanelSelect.of(spec))
    await interaction.response.send_message(
        t("panel.page", scene_thread.lang), view=view, ephemeral=True
    )


# ---------------------------------------------------------------------- dynamic items
class PanelButton(discord.ui.DynamicItem[discord.ui.Button], template=BUTTON_TEMPLATE):
    """A panel button; works for as long as its message exists, across restarts."""

    def __init__(self, button: discord.ui.Button) -> None:
        super().__init__(button)

    @classmethod
    def of(cls, spec: ButtonSpec) -> PanelButton:
        style = discord.ButtonStyle.danger if spec.danger else discord.ButtonStyle.secondary
        return cls(
            discord.ui.Button(
                custom_id=spec.custom_id, label=spec.label, disabled=spec.disabled, style=style
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item, match: Any, /
    ) -> PanelButton:
        assert isinstance(item, discord.ui.Button)
        return cls(item)

    async def callback(self, interaction: discord.Interaction) -> None:
        await act(interaction, self.custom_id, None)


class PanelSelect(discord.ui.DynamicItem[discord.ui.Select], template=SELECT_TEMPLATE):
    """The panel's Cue or Note select (or one page of it)."""

    def __init__(self, select: discord.ui.Select) -> None:
        super().__init__(select)

    @classmethod
    def of(cls, spec: SelectSpec) -> PanelSelect:
        options = [discord.SelectOption(label=label, value=value) for label, value in spec.options]
        return cls(
            discord.ui.Select(
                custom_id=spec.custom_id,
                placeholder=spec.placeholder,
                options=options,
                disabled=spec.disabled,
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item, match: Any, /
    ) -> PanelSelect:
        assert isinstance(item, discord.ui.Select)
        return cls(item)

    async def callback(self, interaction: discord.Interaction) -> None:
        data: Any = interaction.data or {}
        await act(interaction, self.custom_id, data.get("values"))


def to_view(rows: list[list[ButtonSpec] | SelectSpec]) -> discord.ui.View:
    """The panel's components, row by row (bot.panel.text.layout)."""
    view = discord.ui.View(timeout=None)
    for number, row in enumerate(rows):
        items = [PanelSelect.of(row)] if isinstance(row, SelectSpec) else map(PanelButton.of, row)
        for item in items:
            item.row = number
            view.add_item(item)
    return view


# ---------------------------------------------------------------------- forms
class Form(discord.ui.Modal):
    """A panel form: errors are answered like a command's."""

    # discord.py's Modal.on_error takes no item (it narrows BaseView's the same way)
    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction, error: Exception, /
    ) -> None:
        await report(interaction, error)


class RunForm(Form):
    """▶ Run: how many turns (prefilled with the default)."""

    def __init__(self, scene_thread: SceneThread) -> None:
        super().__init__(title=title("panel.run_title", scene_thread.lang), timeout=None)
        self.scene_thread = scene_thread
        self.turns: discord.ui.TextInput[RunForm] = discord.ui.TextInput(
            label=t("panel.turns_label", scene_thread.lang, most=MOST_TURNS)[:45],
            default=str(DEFAULT_TURNS),
            max_length=3,
            required=False,
            custom_id="turns",
        )
        self.add_item(self.turns)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        turns = turns_given(self.turns.value, DEFAULT_TURNS, MOST_TURNS)
        if turns is None:
            raise BotProblem(
                "panel.bad_turns", value=shown_number(self.turns.value), most=MOST_TURNS
            )
        await checked(interaction, "run")
        await directing.start_run(interaction, self.scene_thread, turns, None)


class CueForm(Form):
    """🎬 Cue: an optional private direction for the chosen actor's next turn."""

    def __init__(self, scene_thread: SceneThread, actor: Actor) -> None:
        super().__init__(
            title=title("panel.cue_title", scene_thread.lang, actor=actor.name), timeout=None
        )
        self.scene_thread = scene_thread
        self.actor = actor
        self.direction: discord.ui.TextInput[CueForm] = discord.ui.TextInput(
            label=t("panel.direction_label", scene_thread.lang)[:45],
            placeholder=t("panel.direction_hint", scene_thread.lang, actor=actor.name)[:100],
            style=discord.TextStyle.paragraph,
            required=False,
            max_length=NOTE_LIMIT,
            custom_id="direction",
        )
        self.add_item(self.direction)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        direction = self.direction.value.strip() or None
        await checked(interaction, "cue")
        await directing.cue_actor(interaction, self.scene_thread, self.actor, direction)


class NoteForm(Form):
    """📝 Note: a whisper to everyone, or to the chosen actor."""

    def __init__(self, scene_thread: SceneThread, actor: Actor | None) -> None:
        who = actor.name if actor else t("panel.everyone", scene_thread.lang)
        super().__init__(title=title("panel.note_title", scene_thread.lang, who=who), timeout=None)
        self.scene_thread = scene_thread
        self.actor = actor
        self.text: discord.ui.TextInput[NoteForm] = discord.ui.TextInput(
            label=t("panel.note_label", scene_thread.lang)[:45],
            style=discord.TextStyle.paragraph,
            max_length=NOTE_LIMIT,
            custom_id="note",
        )
        self.add_item(self.text)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await checked(interaction, "note")
        await directing.whisper(interaction, self.scene_thread, self.text.value, self.actor)
