"""/watch: page me when… — arm an alert in a scene, list the alerts, clear them.

Invariants: who may arm an alert (and for which actor) is decided by one function,
bot.interaction.gate.may_watch, after the condition is read and its actor resolved by the
engine; anyone else is refused privately and nothing is armed. `/watch list` shows a director
every alert and anyone else their own; `/watch clear` clears one's own, and everyone's only
for a director (`everyone:`). The alerts live in the scene folder (engine: rehearsal.alerts);
what happens when one fires is bot.panel.alerts.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.i18n import t, words
from bot.interaction.gate import (
    directors_only_if,
    may_direct,
    may_watch,
    only_of,
    private_actors,
    refuse,
    scene_of,
)
from bot.interaction.options import ActorArg
from bot.interaction.replies import MESSAGE_LIMIT, defer, reply
from bot.thread.scene import SceneThread
from engine import Actor, Alert, parse_condition

FORMS = ("secret", "exit", "enter", "turn:10", "converge", "budget:80%", "stop")
WITH_ACTOR = ("secret", "exit", "enter")


def armed_by(user: discord.abc.Snowflake) -> str:
    return f"discord:{int(user.id)}"


# ---------------------------------------------------------------------- the bodies
async def arm(
    interaction: discord.Interaction,
    scene_thread: SceneThread,
    condition: str,
    actor: Actor | None,
) -> None:
    """/watch add: arm `condition` (for `actor`, if given) for the member who asked."""
    await defer(interaction)
    text = f"{condition.strip()}:{actor.name}" if actor is not None else condition
    alerts = scene_thread.rehearsal.alerts
    readable = only_of(await private_actors(interaction, scene_thread))
    wanted = await alerts.resolve(parse_condition(text), readable)  # their aliases alone
    if not await may_watch(interaction, scene_thread, wanted.actor or None):
        raise refuse(interaction, scene_thread)
    alert = await alerts.arm(wanted, armed_by(interaction.user))
    said = t("watch.armed", scene_thread.lang, condition=alert.condition.text, id=alert.id)
    await reply(interaction, said)


async def list_alerts(interaction: discord.Interaction, scene_thread: SceneThread) -> None:
    """/watch list: a director sees every alert, anyone else their own."""
    await defer(interaction)
    alerts = await scene_thread.rehearsal.alerts.all()
    if not may_direct(interaction, scene_thread):
        alerts = tuple(a for a in alerts if a.by == armed_by(interaction.user))
    lang = scene_thread.lang
    if not alerts:
        await reply(interaction, t("watch.none", lang))
        return
    rows = [t("watch.head", lang)] + [_row(a, lang) for a in alerts]
    await reply(interaction, "\n".join(rows)[:MESSAGE_LIMIT])


def _row(alert: Alert, lang: str) -> str:
    kind, _, ident = alert.by.partition(":")
    by = f"<@{ident}>" if kind == "discord" and ident.isdigit() else alert.by
    return t(
        "watch.row", lang, id=alert.id, condition=alert.condition.text, by=by, created=alert.created
    )


async def clear_alerts(
    interaction: discord.Interaction, scene_thread: SceneThread, everyone: bool
) -> None:
    """/watch clear: one's own alerts, or (a director, `everyone`) all of them."""
    await defer(interaction)
    by = None if everyone else armed_by(interaction.user)
    gone = await scene_thread.rehearsal.alerts.clear(by)
    await reply(interaction, t("watch.cleared", scene_thread.lang, count=len(gone)))


async def condition_choices(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """The text forms, with the cast's names where a condition takes one (at most 25)."""
    offered = list(FORMS)
    try:
        cast = (await scene_of(interaction).rehearsal.view()).cast
    except Exception:  # outside a scene, or one that fails to load: the forms alone
        cast = ()
    offered += [f"{kind}:{name}" for kind in WITH_ACTOR for name in cast]
    typed = current.strip().casefold()
    found = [o for o in offered if typed in o.casefold()] if typed else offered
    return [app_commands.Choice(name=o[:100], value=o[:100]) for o in found[:25]]


# ---------------------------------------------------------------------- the commands
class WatchGroup(app_commands.Group, name="watch", description=words("cmd.watch.description")):
    """Alerts: open to the thread; who may arm what is checked in the body (may_watch)."""

    @app_commands.command(name="add", description=words("cmd.watch_add.description"))
    @app_commands.describe(
        condition=words("cmd.watch_add.condition"), actor=words("cmd.watch_add.actor")
    )
    @app_commands.autocomplete(condition=condition_choices)
    async def add(
        self,
        interaction: discord.Interaction,
        condition: app_commands.Range[str, 1, 80],
        actor: ActorArg | None = None,
    ) -> None:
        await arm(interaction, scene_of(interaction), condition, actor)

    @app_commands.command(name="list", description=words("cmd.watch_list.description"))
    async def show(self, interaction: discord.Interaction) -> None:
        await list_alerts(interaction, scene_of(interaction))

    @app_commands.command(name="clear", description=words("cmd.watch_clear.description"))
    @app_commands.describe(everyone=words("cmd.watch_clear.everyone"))
    @directors_only_if("everyone")
    async def clear(self, interaction: discord.Interaction, everyone: bool = False) -> None:
        await clear_alerts(interaction, scene_of(interaction), everyone)


def setup(tree: app_commands.CommandTree) -> None:
    """Register /watch."""
    tree.add_command(WatchGroup())
