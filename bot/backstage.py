"""Backstage by DM: private text (thoughts, stage-manager decisions, run errors) to directors.

Invariants: this is the only way private text leaves the bot, and it goes only to the user ids
it is given (a scene's directors) in their DM channels — never to a guild channel or thread.
Each director has one ordered inbox; queued items are packed into as few ≤2000-character DMs
as fit (an item with an enclosure — a file, an embed — travels alone, in order). A director
whose DMs are closed (50007) is told once, privately (an ephemeral
follow-up to their latest interaction, or to their next one), how to open them.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import discord

from bot.i18n import t
from bot.render import LIMIT, pack_messages

log = logging.getLogger("circus.bot.backstage")

DMS_CLOSED = 50007
FOLLOWUP_TTL = 14 * 60  # seconds an interaction token can still send follow-ups (Discord: 15)


@dataclass(frozen=True)
class Enclosure:
    """A file (and optionally an embed) sent with one DM, e.g. a take's report.md."""

    filename: str
    data: bytes
    embed: discord.Embed | None = None


Item = tuple[str, str, str, Enclosure | None]  # (scene, lang, text, enclosure)


def _messages(batch: list[Item]) -> Iterator[tuple[str, Enclosure | None]]:
    """The DMs for a batch: plain texts packed together, an enclosed item on its own."""
    texts: list[str] = []
    for _, _, text, enclosure in batch:
        if enclosure is None:
            texts.append(text)
            continue
        yield from ((message, None) for message in pack_messages(texts))
        texts = []
        yield text[:LIMIT], enclosure
    yield from ((message, None) for message in pack_messages(texts))


@dataclass
class _Inbox:
    user_id: int
    items: list[Item] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    worker: asyncio.Task[None] | None = None
    closed: bool = False  # DMs were refused; skip until the next run starts


class Backstage:
    """Delivers private text to directors by DM, one ordered inbox per director."""

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        self._inboxes: dict[int, _Inbox] = {}
        self._told: set[int] = set()
        self._pending_notice: dict[int, tuple[str, str]] = {}  # user -> (scene, lang)
        self._last: dict[int, tuple[float, discord.Interaction]] = {}
        self.delivered = 0
        self._pending = 0  # items queued and not yet delivered or given up on
        self._settled = asyncio.Event()
        self._settled.set()

    # ------------------------------------------------------------------ sending
    def send(
        self,
        user_ids: list[int] | tuple[int, ...],
        scene: str,
        lang: str,
        text: str,
        enclosure: Enclosure | None = None,
    ) -> None:
        """Queue `text` (with `enclosure`, if any) for each director (non-blocking)."""
        for uid in user_ids:
            inbox = self._inboxes.get(uid)
            if inbox is None:
                inbox = self._inboxes[uid] = _Inbox(uid)
            if inbox.closed:
                continue
            inbox.items.append((scene, lang, text, enclosure))
            inbox.wake.set()
            self._pending += 1
            self._settled.clear()
            if inbox.worker is None or inbox.worker.done():
                inbox.worker = asyncio.create_task(self._work(inbox), name=f"backstage-{uid}")

    def reopen(self, user_ids: list[int] | tuple[int, ...]) -> None:
        """Try DMs again (a new run starts: the director may have opened them)."""
        for uid in user_ids:
            inbox = self._inboxes.get(uid)
            if inbox is not None:
                inbox.closed = False

    async def _work(self, inbox: _Inbox) -> None:
        while True:
            await inbox.wake.wait()
            inbox.wake.clear()
            batch, inbox.items = inbox.items, []
            if batch:
                try:
                    await self._deliver(inbox, batch)
                finally:
                    self._done(len(batch))
            if inbox.items:
                inbox.wake.set()

    async def _deliver(self, inbox: _Inbox, batch: list[Item]) -> None:
        scene, lang = batch[0][0], batch[0][1]
        try:
            channel = await self.client.create_dm(discord.Object(inbox.user_id))
            for message, enclosure in _messages(batch):
                extra: dict[str, object] = {}
                if enclosure is not None:
                    extra["file"] = discord.File(io.BytesIO(enclosure.data), enclosure.filename)
                    if enclosure.embed is not None:
                        extra["embed"] = enclosure.embed
                await channel.send(
                    message, allowed_mentions=discord.AllowedMentions.none(), **extra
                )  # type: ignore[arg-type]
                self.delivered += 1
        except discord.Forbidden as exc:
            if exc.code != DMS_CLOSED:
                log.warning("DM to %s refused: %s", inbox.user_id, exc)
            inbox.closed = True
            self._done(len(inbox.items))
            inbox.items.clear()
            await self._closed(inbox.user_id, scene, lang)
        except discord.HTTPException as exc:
            log.warning("DM to %s failed: %s", inbox.user_id, exc)

    def _done(self, count: int) -> None:
        self._pending -= count
        if self._pending <= 0:
            self._pending = 0
            self._settled.set()

    # ------------------------------------------------------------------ closed DMs
    def remember(self, interaction: discord.Interaction) -> None:
        """Keep a director's latest interaction, to reach them privately if DMs fail."""
        self._last[interaction.user.id] = (time.monotonic(), interaction)

    async def _closed(self, user_id: int, scene: str, lang: str) -> None:
        if user_id in self._told:
            return
        self._told.add(user_id)
        seen = self._last.get(user_id)
        if seen is not None and time.monotonic() - seen[0] < FOLLOWUP_TTL:
            with contextlib.suppress(discord.HTTPException):
                await seen[1].followup.send(t("dms_closed", lang, scene=scene), ephemeral=True)
                return
        self._pending_notice[user_id] = (scene, lang)

    def take_notice(self, user_id: int) -> str | None:
        """The closed-DMs notice still owed to this user, once."""
        pending = self._pending_notice.pop(user_id, None)
        if pending is None:
            return None
        return t("dms_closed", pending[1], scene=pending[0])

    async def drain(self) -> None:
        """Wait until every queued DM has been delivered or given up on."""
        await self._settled.wait()

    async def close(self) -> None:
        for inbox in self._inboxes.values():
            if inbox.worker is not None:
                inbox.worker.cancel()
                with contextlib.suppress(BaseException):
                    await inbox.worker
