"""Page me when…: an armed alert that fires is a DM to whoever armed it — the trigger, the line's
public text, a link to its message, and three persistent buttons: Cut here, Retake from here
(a replay up to the line before, as /replay does it), Let it run.

Invariants: the DM goes through bot.thread.backstage (the only way private text leaves the bot),
after the line's post has landed (so its link exists), at most once per alert and line; the
armer's rights are checked when it fires (bot.interaction.gate.may_read_private: a secret's text
only to who may read its owner) and again when a button is pressed — directors; the armer, while
they may still read that actor, only to let it run (a captain may not cut or replay); anyone
else is refused privately and nothing changes. A button's custom id carries the scene (a digest
of its key), the take, the turn, the alert and the action, so it works after a restart (a
dynamic item); it is untrusted input, parsed whole.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from typing import Any

import discord

from bot.commands import directing
from bot.errors import BotProblem
from bot.i18n import t
from bot.interaction.edge import report
from bot.interaction.gate import may_direct, may_read_private
from bot.interaction.host import host_of
from bot.interaction.replies import defer, reply
from bot.render import render_turn_message, scrub
from bot.serial import Serial
from bot.thread.backstage import Enclosure
from bot.thread.blocks import block_message
from bot.thread.scene import SceneThread
from engine import (
    Alert,
    AlertMatch,
    BudgetUsed,
    CircusError,
    Event,
    RunFinished,
    StageChanged,
    TurnCompleted,
    VoicesConverged,
    say,
)

log = logging.getLogger("circus.bot.alerts")

ACTIONS = ("cut", "retake", "dismiss")
ALERT_TEMPLATE = (
    r"circus:alert:(?P<action>cut|retake|dismiss):(?P<scene>[0-9a-f]{16}):"
    r"(?P<take>[0-9]{1,6}):(?P<turn>[0-9]{1,6}):(?P<alert>a[0-9]{1,6})"
)
LINE_MOST = 1500  # of the line's text quoted in the DM
WATCHED = (TurnCompleted, StageChanged, VoicesConverged, BudgetUsed, RunFinished)


def digest(key: str) -> str:
    """A scene key (server and name) as a short fixed-size part of a custom id."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Pressed:
    action: str
    scene: str  # digest(scene key)
    take: int
    turn: int
    alert: str


def parse_alert_id(custom_id: str) -> Pressed | None:
    found = re.fullmatch(ALERT_TEMPLATE, custom_id or "")
    if found is None:
        return None
    return Pressed(
        found["action"], found["scene"], int(found["take"]), int(found["turn"]), found["alert"]
    )


def alert_id(action: str, scene_key: str, take: int, turn: int, alert: str) -> str:
    return f"circus:alert:{action}:{digest(scene_key)}:{take}:{turn}:{alert}"


# ---------------------------------------------------------------------- firing
class Pager:
    """One scene's alerts: each rendered event checked against them, each match paged once."""

    def __init__(self, scene_thread: SceneThread) -> None:
        self.scene_thread = scene_thread
        self.paged: set[tuple[str, int, int, int, str]] = set()  # alert, take, turn, block, why
        self._queue: Serial[str, Event] = Serial(self._check, name="alerts")
        scene_thread.after.append(self._on_event)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, WATCHED):
            self._queue.put(self.scene_thread.name, event)

    async def _check(self, _scene: str, events: list[Event]) -> None:
        for event in events:
            try:
                await self.page(event)
            except CircusError as exc:  # e.g. a broken alerts.json: said to the directors
                st = self.scene_thread
                log.warning("scene %s: alerts not checked: %s", st.name, exc)
                text = exc.in_language(st.lang, relative=True)
                st.backstage.send(st.binding.directors, st.name, st.lang, text)

    async def page(self, event: Event) -> None:
        """DM whoever armed each alert `event` meets (once per alert and line)."""
        alerts = await self.scene_thread.rehearsal.alerts.all()
        if not alerts:
            return
        checked = self.scene_thread.rehearsal.alerts.check(event, [a.condition for a in alerts])
        for match in await checked:
            alert = alerts[match.index]
            key = (alert.id, match.take, match.turn, match.block, match.code)
            if key not in self.paged:
                self.paged.add(key)
                await self._send(alert, match, event)

    async def _send(self, alert: Alert, match: AlertMatch, event: Event) -> None:
        st = self.scene_thread
        user = armer(alert)
        if user is None or not await may_read_private(st, user, alert.actor or None):
            return  # armed from the console, or the armer may no longer read that actor
        lang = st.lang
        trigger = say(match.code, lang, **match.fields)
        link = await st.link_of(match.take, match.turn, match.block) or ""
        line = scrub(await self._line(match, event), st.rehearsal.root.parent)[:LINE_MOST]
        text = t("alert.dm", lang, scene=st.name, take=match.take, trigger=trigger, line=line,
                 link=link)  # fmt: skip
        if match.secret and await may_read_private(st, user, match.actor):
            text += "\n" + t("alert.secret", lang, secret=match.secret)
        view = buttons(st.key, match, alert, lang)
        st.backstage.send([user], st.name, lang, text, Enclosure(view=view))

    async def _line(self, match: AlertMatch, event: Event) -> str:
        """The line an alert fired on, as the thread shows it (public text only)."""
        lang = self.scene_thread.lang
        if isinstance(event, StageChanged):
            return block_message(event, lang)
        turn = next((x for x in await self.scene_thread.rehearsal.record() if x.number == match.turn), None)  # fmt: skip
        if turn is None:
            return ""
        return f"**{turn.actor}**: " + render_turn_message(turn.action, turn.dialogue, "", lang)

    async def drain(self) -> None:
        await self._queue.drain()

    async def close(self) -> None:
        await self._queue.close()


def armer(alert: Alert) -> int | None:
    """The Discord user who armed `alert` (None: armed from the console)."""
    kind, _, ident = alert.by.partition(":")
    return int(ident) if kind == "discord" and ident.isdigit() else None


def buttons(scene_key: str, match: AlertMatch, alert: Alert, lang: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    styles = {"cut": discord.ButtonStyle.danger, "retake": discord.ButtonStyle.primary}
    for action in ACTIONS:
        custom_id = alert_id(action, scene_key, match.take, match.turn, alert.id)
        style = styles.get(action, discord.ButtonStyle.secondary)
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            custom_id=custom_id, label=t(f"alert.{action}", lang), style=style
        )
        view.add_item(AlertButton(button))
    return view


# ---------------------------------------------------------------------- pressing
class AlertButton(discord.ui.DynamicItem[discord.ui.Button], template=ALERT_TEMPLATE):
    """A button of an alert's DM; works for as long as the DM exists, across restarts."""

    def __init__(self, button: discord.ui.Button) -> None:
        super().__init__(button)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item, match: Any, /
    ) -> AlertButton:
        assert isinstance(item, discord.ui.Button)
        return cls(item)

    async def callback(self, interaction: discord.Interaction) -> None:
        await press(interaction, self.custom_id)


async def press(interaction: discord.Interaction, custom_id: str) -> None:
    """Someone pressed an alert's button: check who, then do it, or say privately why not."""
    try:
        pressed = parse_alert_id(custom_id)
        scene_thread = _scene_of(interaction, pressed)
        assert pressed is not None
        if not await may_press(interaction, scene_thread, pressed.alert, pressed.action):
            await reply(interaction, t("alert.refused", scene_thread.lang))  # the scene's words
            return
        if pressed.action == "cut":
            await directing.cut_run(interaction, scene_thread)
        elif pressed.action == "retake":
            await retake(interaction, scene_thread, pressed.take, pressed.turn)
        else:
            done = f"{interaction.message.content if interaction.message else ''}\n"
            done += t("alert.dismissed", scene_thread.lang)
            await interaction.response.edit_message(content=done[:2000], view=None)
    except Exception as exc:
        await report(interaction, exc)


def _scene_of(interaction: discord.Interaction, pressed: Pressed | None) -> SceneThread:
    if pressed is not None:
        for scene_thread in host_of(interaction).scene_threads.values():
            if digest(scene_thread.key) == pressed.scene:
                return scene_thread
    raise BotProblem("alert.gone")


async def may_press(
    interaction: discord.Interaction, scene_thread: SceneThread, alert: str, action: str
) -> bool:
    """Directors; or, to let it run, whoever armed this alert while they may still read its
    actor (a captain may not cut or replay: Cut here and Retake from here are a director's)."""
    if may_direct(interaction, scene_thread):
        return True
    user = interaction.user.id
    if action != "dismiss":
        return False
    for armed in await scene_thread.rehearsal.alerts.all():
        if armed.id == alert and armer(armed) == user:
            return await may_read_private(scene_thread, user, armed.actor or None)
    return False


async def retake(
    interaction: discord.Interaction, scene_thread: SceneThread, take: int, turn: int
) -> None:
    """Retake from here: cut the run if it goes on, keep the take (saved, if it is the working
    one), then replay it up to the turn before the line — exactly as /replay does."""
    await defer(interaction)  # a cut may take a few seconds; Discord waits three
    rehearsal = scene_thread.rehearsal
    if rehearsal.running:
        await rehearsal.cut()
    if take == await rehearsal.current_take() and await rehearsal.record():
        await rehearsal.takes.save()  # /replay starts from a saved take
    await directing.replay_take(interaction, scene_thread, take, max(0, turn - 1))
