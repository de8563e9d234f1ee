"""Each scene thread's control panel: one message from the bot, posted when the scene is bound,
found again by its id in the scene's binding after a restart, edited in place while it runs.

Invariants: a scene has at most one panel message (its id lives in .circus/discord.json, written
through bot.binding); the panel is edited at most once every `interval` seconds per scene and
each edit shows the state at that moment (bot.panel.text.Coalescer) — never a new message per
turn. The panel shows only public facts (never a thought, a note or a direction). A panel that
cannot be posted, pinned or edited (permissions, an archived thread) is logged and never stops
the scene.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import replace

import discord

from bot.panel.controls import to_view
from bot.panel.text import Coalescer, Progress, Snapshot, advance, layout, panel_text, shows_change
from bot.thread.scene import SceneThread
from engine import CircusError, Event, Status

log = logging.getLogger("circus.bot.panel")

EDIT_INTERVAL = 2.0  # seconds between two edits of one panel (Discord: 5 edits / 5 s / channel)


class Panel:
    """The panel of one scene: listens to its events and keeps its message up to date."""

    def __init__(self, scene_thread: SceneThread, client: discord.Client, interval: float) -> None:
        self.scene_thread = scene_thread
        self.client = client
        self.coalescer = Coalescer(interval)
        self.progress = Progress()
        self._full: Status | None = None  # the last whole status read
        self._task: asyncio.Task[None] | None = None
        self._unlisten: Callable[[], None] = scene_thread.rehearsal.events.listen(self._on_event)

    # ------------------------------------------------------------------ events
    def _on_event(self, event: Event) -> None:
        self.progress = advance(self.progress, event)
        if shows_change(event):
            self.nudge()

    def nudge(self) -> None:
        """Something the panel shows may have changed: edit it when the coalescer allows."""
        self.coalescer.changed()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._flush(), name=f"panel-{self.scene_thread.name}")

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while (delay := self.coalescer.delay(loop.time())) is not None:
            if delay > 0:
                await asyncio.sleep(delay)  # the coalescing window, not a wait for a result
            self.coalescer.taking(loop.time())
            await self.edit()

    async def settled(self) -> None:
        """Wait until no edit is pending (tests, bench)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    # ------------------------------------------------------------------ the message
    async def snapshot(self) -> Snapshot:
        """What the panel shows now. While this bot runs the scene (edits every 2 s) it reads
        the scene's view, take and budgets — not the whole /status, which also re-counts
        tokens and re-reads every call's spend (those lines keep their last value)."""
        rehearsal = self.scene_thread.rehearsal
        if rehearsal.running and self._full is not None:
            view = await rehearsal.view()
            status = replace(
                self._full,
                take=await rehearsal.current_take(),
                turns=view.turns,
                cast=tuple(view.cast),
                mode="running",
                on_stage=tuple(view.on_stage),
                players=tuple((a, p) for a, p in view.players.items() if a in view.cast),
                captains=tuple(view.captains.items()),
                budgets=await rehearsal.spend.budgets(),
                held_by=None,
            )
            last = view.last_turn.actor if view.last_turn else ""
            return Snapshot(self.scene_thread.lang, status, self.progress, last, self._directors)
        status = self._full = await rehearsal.status()
        last = ""
        if not self.progress.last_speaker:
            view = await rehearsal.view()
            last = view.last_turn.actor if view.last_turn else ""
        return Snapshot(self.scene_thread.lang, status, self.progress, last, self._directors)

    @property
    def _directors(self) -> tuple[int, ...]:
        return tuple(self.scene_thread.binding.directors)

    async def _content(self) -> tuple[str, discord.ui.View]:
        snap = await self.snapshot()
        return panel_text(snap), to_view(layout(snap))

    def _thread(self) -> discord.PartialMessageable:
        b = self.scene_thread.binding
        return self.client.get_partial_messageable(b.thread_id, guild_id=b.guild_id)

    async def post(self) -> None:
        """Post a new panel, remember its id in the binding, and pin it if the bot may."""
        try:
            content, view = await self._content()
            message = await self._thread().send(
                content, view=view, allowed_mentions=discord.AllowedMentions.none()
            )
        except (discord.HTTPException, CircusError) as exc:
            log.warning("scene %s: no panel posted: %s", self.scene_thread.name, exc)
            return
        self.scene_thread.rebind(replace(self.scene_thread.binding, panel_id=message.id))
        with contextlib.suppress(discord.HTTPException):  # pinned when allowed, works without
            await message.pin(reason="Circus scene panel")

    async def edit(self) -> None:
        """Show the scene's state now (a deleted panel is posted again)."""
        panel_id = self.scene_thread.binding.panel_id
        if panel_id is None:
            await self.post()
            return
        try:
            content, view = await self._content()
            message = self._thread().get_partial_message(panel_id)
            await message.edit(
                content=content, view=view, allowed_mentions=discord.AllowedMentions.none()
            )
        except discord.NotFound:
            await self.post()
        except (discord.HTTPException, CircusError) as exc:
            log.warning("scene %s: panel not updated: %s", self.scene_thread.name, exc)

    def close(self) -> None:
        self._unlisten()
        if self._task is not None:
            self._task.cancel()


class Panels:
    """Every bound scene's panel (owned by the bot)."""

    def __init__(self, client: discord.Client, interval: float = EDIT_INTERVAL) -> None:
        self.client = client
        self.interval = interval
        self.by_scene: dict[str, Panel] = {}

    def queued(self) -> int:
        """Panels with an edit waiting (their coalescing window open): /metrics' depth."""
        return sum(1 for p in self.by_scene.values() if p._task is not None and not p._task.done())

    def _panel(self, scene_thread: SceneThread) -> Panel:
        panel = self.by_scene.get(scene_thread.key)
        if panel is None or panel.scene_thread is not scene_thread:
            if panel is not None:
                panel.close()
            panel = self.by_scene[scene_thread.key] = Panel(
                scene_thread, self.client, self.interval
            )
        return panel

    async def show(self, scene_thread: SceneThread) -> None:
        """The scene was bound to a (new) thread: post its panel there."""
        await self._panel(scene_thread).post()

    async def adopt(self, scene_thread: SceneThread) -> None:
        """After a restart: find the scene's panel again by its id and bring it up to date
        (a scene bound before panels existed gets one)."""
        await self._panel(scene_thread).edit()

    def nudge(self, key: str) -> None:
        """A command changed the scene `key` (its SceneThread.key) in a way no event tells (a replay,
        a new actor)."""
        panel = self.by_scene.get(key)
        if panel is not None:
            panel.nudge()

    def drop(self, key: str) -> None:
        panel = self.by_scene.pop(key, None)
        if panel is not None:
            panel.close()

    async def settled(self) -> None:
        for panel in list(self.by_scene.values()):
            await panel.settled()

    def close(self) -> None:
        for key in list(self.by_scene):
            self.drop(key)
