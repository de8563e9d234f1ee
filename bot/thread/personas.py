"""Actors post as webhook personas: one webhook per parent channel, one FIFO queue per webhook.

Invariants: posts through one webhook leave in the order they were queued (so a scene's turns
appear in order), one at a time (bot.serial), honouring Discord's 429 `retry_after`; the bot
reuses its own webhook in a channel (creating one only if it has none, at most 15 exist per
channel); a deleted webhook is recreated once per post; an archived thread is revived. Only
frontstage text is ever handed to this module (bot.thread.scene decides that).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import discord

from bot.errors import MissingPermission, WebhookLimit
from bot.render import sanitise_webhook_name
from bot.serial import Serial

log = logging.getLogger("circus.bot.personas")

WEBHOOK_NAME = "Circus"
# discord.py waits out a 429 and retries, but gives up after 5 tries at one request (at once if
# no `Via` header says Discord sent it): a scene's line outlasts a longer burst by going again.
MAX_429_ROUNDS = 3
UNKNOWN_WEBHOOK = 10015
ARCHIVED_OR_LOCKED = 50083
MAX_WEBHOOKS = 30007


@dataclass
class Post:
    """One message for one thread, as one persona."""

    thread_id: int
    username: str
    avatar_url: str | None
    content: str
    message_id: int | None = None  # Discord's id once the post landed (⭐ votes find the turn)
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


def retry_after(exc: discord.HTTPException) -> float:
    """Seconds Discord asked us to wait, from a 429's headers (precise first)."""
    headers = getattr(exc.response, "headers", {}) or {}
    for key in ("X-RateLimit-Reset-After", "Retry-After"):
        try:
            return max(0.0, float(headers[key]))
        except (KeyError, TypeError, ValueError):
            continue
    return 1.0


class _Channel:
    """The webhook of one parent channel."""

    def __init__(self, channel_id: int) -> None:
        self.channel_id = channel_id
        self.webhook: discord.Webhook | None = None
        self.lock = asyncio.Lock()


class Personas:
    """Posts actors' lines into scene threads through each parent channel's webhook."""

    def __init__(
        self,
        client: discord.Client,
        on_webhook: Callable[[int, int], None] | None = None,
    ) -> None:
        self.client = client
        self.on_webhook = on_webhook  # (channel_id, webhook_id) when a webhook is (re)made
        self._channels: dict[int, _Channel] = {}
        self._posts: Serial[int, Post] = Serial(self._deliver, name="personas")  # per channel

    def queued(self) -> int:
        """Posts waiting to go out (scale: /metrics' queue depth)."""
        return self._posts.depth

    def _slot(self, channel_id: int) -> _Channel:
        slot = self._channels.get(channel_id)
        if slot is None:
            slot = self._channels[channel_id] = _Channel(channel_id)
        return slot

    # ------------------------------------------------------------------ webhooks
    async def webhook(self, channel_id: int, *, fresh: bool = False) -> discord.Webhook:
        """The bot's webhook in a parent channel: reused if it exists, created otherwise."""
        slot = self._slot(channel_id)
        async with slot.lock:
            if slot.webhook is not None and not fresh:
                return slot.webhook
            stale = slot.webhook
            slot.webhook = None
            channel = self.client.get_channel(channel_id) or await self.client.fetch_channel(
                channel_id
            )
            where = getattr(channel, "mention", f"<#{channel_id}>")
            try:
                hook = None
                if not fresh:
                    hooks = await channel.webhooks()  # type: ignore[union-attr]
                    mine = self.client.user.id if self.client.user else None
                    hook = next(
                        (h for h in hooks if h.token and h.user is not None and h.user.id == mine),
                        None,
                    )
                if hook is None or (stale is not None and hook.id == stale.id):
                    hook = await channel.create_webhook(name=WEBHOOK_NAME)  # type: ignore[union-attr]
            except discord.Forbidden as exc:
                raise MissingPermission(where, "Manage Webhooks") from exc
            except discord.HTTPException as exc:
                if exc.code == MAX_WEBHOOKS:
                    raise WebhookLimit(where) from exc
                raise
            slot.webhook = hook
            if self.on_webhook is not None:
                self.on_webhook(channel_id, hook.id)
            return hook

    # ------------------------------------------------------------------ posting
    def post(
        self, channel_id: int, thread_id: int, actor: str, avatar_url: str | None, content: str
    ) -> Post:
        """Queue one message; its `done` future resolves when Discord accepted it."""
        job = Post(thread_id, sanitise_webhook_name(actor), avatar_url, content)
        self._posts.put(channel_id, job)
        return job

    async def _deliver(self, channel_id: int, jobs: list[Post]) -> None:
        for job in jobs:  # one at a time: Serial hands over a single post
            try:
                await self._send(self._slot(channel_id), job)
            except Exception as exc:  # reported to whoever awaits the post
                if not job.done.done():
                    job.done.set_exception(exc)
            else:
                if not job.done.done():
                    job.done.set_result(None)

    async def _send(self, slot: _Channel, job: Post) -> None:
        recreated = revived = False
        rounds = 0
        while True:
            hook = await self.webhook(slot.channel_id)
            try:
                message = await hook.send(
                    job.content,
                    username=job.username,
                    avatar_url=job.avatar_url or discord.utils.MISSING,
                    thread=discord.Object(job.thread_id),
                    allowed_mentions=discord.AllowedMentions.none(),
                    wait=True,
                )
                job.message_id = message.id
                return
            except discord.NotFound as exc:
                if exc.code == UNKNOWN_WEBHOOK and not recreated:
                    recreated = True
                    await self.webhook(slot.channel_id, fresh=True)
                    continue
                raise
            except discord.Forbidden as exc:
                raise MissingPermission(f"<#{job.thread_id}>", "Send Messages in Threads") from exc
            except discord.HTTPException as exc:
                if exc.status == 429 and rounds < MAX_429_ROUNDS:
                    rounds += 1
                    await asyncio.sleep(retry_after(exc))
                    continue
                if exc.code == ARCHIVED_OR_LOCKED and not revived:
                    revived = True
                    await self._revive(job.thread_id)
                    continue
                raise

    async def _revive(self, thread_id: int) -> None:
        """Unarchive a thread Discord would not let us post into (a lock is a moderator's call)."""
        try:
            thread = await self.client.fetch_channel(thread_id)
            if isinstance(thread, discord.Thread):
                await thread.edit(archived=False)
        except discord.Forbidden as exc:
            raise MissingPermission(f"<#{thread_id}>", "Manage Threads") from exc

    async def drain(self) -> None:
        """Wait until every queued post has been sent or has failed."""
        await self._posts.drain()

    async def close(self) -> None:
        await self._posts.close()
