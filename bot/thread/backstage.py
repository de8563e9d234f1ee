"""Backstage by DM: private text (thoughts, stage-manager decisions, run errors, alerts) to
directors (and whoever armed an alert).

Invariants: this is the only way private text leaves the bot, and it goes only to the user ids
it is given (a scene's directors) in their DM channels — never to a guild channel or thread.
Each director has one ordered inbox (bot.serial); queued items are packed into as few
≤2000-character DMs as fit (an item with an enclosure — a file, an embed — travels alone, in
order). A director whose DMs are closed (50007) is told once, privately (an ephemeral follow-up
to their latest interaction, or to their next one), how to open them.
"""

from __future__ import annotations

import contextlib
import io
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import discord

from bot.i18n import t
from bot.render import LIMIT, pack_messages
from bot.serial import Serial

log = logging.getLogger("circus.bot.backstage")

DMS_CLOSED = 50007
FOLLOWUP_TTL = 14 * 60  # seconds an interaction token can still send follow-ups (Discord: 15)


@dataclass(frozen=True)
class Enclosure:
    """What travels with one DM besides its text: a file (e.g. a take's report.md), an embed,
    buttons (an alert's persistent `view`)."""

    filename: str = ""
    data: bytes = b""
    embed: discord.Embed | None = None
    view: discord.ui.View | None = None


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


def _attached(enclosure: Enclosure) -> dict[str, Any]:
    """The keyword arguments of `send` for what an enclosure carries."""
    extra: dict[str, Any] = {}
    if enclosure.filename:
        extra["file"] = discord.File(io.BytesIO(enclosure.data), enclosure.filename)
    if enclosure.embed is not None:
        extra["embed"] = enclosure.embed
    if enclosure.view is not None:
        extra["view"] = enclosure.view
    return extra


class Backstage:
    """Delivers private text to directors by DM, one ordered inbox per director."""

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        # one inbox per director: what queued while a DM was going out leaves as one batch
        self._inboxes: Serial[int, Item] = Serial(self._deliver, name="backstage", batch=True)
        self._closed: set[int] = set()  # DMs were refused; skip until the next run starts
        self._told: set[int] = set()
        self._pending_notice: dict[int, tuple[str, str]] = {}  # user -> (scene, lang)
        self._last: dict[int, tuple[float, discord.Interaction]] = {}
        self.delivered = 0

    def queued(self) -> int:
        """DMs waiting to go out (scale: /metrics' queue depth)."""
        return self._inboxes.depth

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
            if uid not in self._closed:
                self._inboxes.put(uid, (scene, lang, text, enclosure))

    def reopen(self, user_ids: list[int] | tuple[int, ...]) -> None:
        """Try DMs again (a new run starts: the director may have opened them)."""
        self._closed.difference_update(user_ids)

    async def _deliver(self, user_id: int, batch: list[Item]) -> None:
        scene, lang = batch[0][0], batch[0][1]
        try:
            channel = await self.client.create_dm(discord.Object(user_id))
            for message, enclosure in _messages(batch):
                extra: dict[str, Any] = {}
                if enclosure is not None:
                    extra.update(_attached(enclosure))
                await channel.send(
                    message, allowed_mentions=discord.AllowedMentions.none(), **extra
                )
                self.delivered += 1
        except discord.Forbidden as exc:
            if exc.code != DMS_CLOSED:
                log.warning("DM to %s refused: %s", user_id, exc)
            self._closed.add(user_id)
            self._inboxes.discard(user_id)  # what queued meanwhile is given up on too
            await self._tell_closed(user_id, scene, lang)
        except discord.HTTPException as exc:
            log.warning("DM to %s failed: %s", user_id, exc)

    # ------------------------------------------------------------------ closed DMs
    def remember(self, interaction: discord.Interaction) -> None:
        """Keep a director's latest interaction, to reach them privately if DMs fail."""
        self._last[interaction.user.id] = (time.monotonic(), interaction)

    async def _tell_closed(self, user_id: int, scene: str, lang: str) -> None:
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
        await self._inboxes.drain()

    async def close(self) -> None:
        await self._inboxes.close()
