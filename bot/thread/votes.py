"""⭐ votes: the writers' room stars an actor's line in the thread, and the turn is picked.

Invariants: a ⭐ counts only on a message the scene remembered as one of its actors' lines
(every post of a line split over several messages maps to that line's take and turn); the map
lives in the scene folder (`Rehearsal.remember_post`), so it survives a restart. One member is
one vote, keyed by their Discord id (`voter`), so removing the reaction removes exactly that
vote whatever their display name is now. Anything else — another emoji, a status line, the
scene card, a bot, another thread — changes nothing.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata

import discord

from bot.thread.personas import Post
from engine import CircusError, Rehearsal

log = logging.getLogger("circus.bot.votes")

STAR = "⭐"
NAME_LIMIT = 32
# Characters a display name may not carry into picks.md (markdown and the vote list's syntax).
_UNSAFE = re.compile(r"[\x00-\x1f\x7f|,;()\[\]<>`*_~#\\]+")


def is_star(emoji: discord.PartialEmoji) -> bool:
    """The ⭐ emoji (with or without the emoji variation selector); never a custom emoji."""
    return emoji.id is None and (emoji.name or "").replace("\ufe0f", "") == STAR


def voter(display_name: str, user_id: int) -> str:
    """A member's vote as picks.md records it: a readable name and their stable Discord id.

    The name is untrusted (any member chooses it): it is normalised, stripped of characters
    that are syntax in markdown or in the list of votes, and shortened."""
    name = unicodedata.normalize("NFKC", display_name or "")
    name = " ".join(_UNSAFE.sub(" ", name).split())[:NAME_LIMIT].strip() or "member"
    return f"{name} {voter_tag(user_id)}"


def voter_tag(user_id: int) -> str:
    return f"(discord:{int(user_id)})"


class Votes:
    """One scene's message → (take, turn) map and its ⭐ votes (owned by its `SceneThread`)."""

    def __init__(self, rehearsal: Rehearsal) -> None:
        self.rehearsal = rehearsal
        self._landed: dict[int, tuple[int, int]] = {}  # landed posts not yet on disk
        self._writes: set[asyncio.Task[None]] = set()
        # One change of picks.md at a time per scene (votes, and a replay re-filing picks):
        # the engine's file lock on picks.md blocks the event loop while it waits, so two
        # holders in this one process would deadlock the whole bot.
        self.lock = asyncio.Lock()

    # ------------------------------------------------------------------ the map
    def remember(self, post: Post, take: int, turn: int) -> None:
        """When `post` lands, record its message as (take, turn) in the scene folder."""
        post.done.add_done_callback(lambda fut: self._landed_post(fut, post, take, turn))

    def _landed_post(self, fut: asyncio.Future[None], post: Post, take: int, turn: int) -> None:
        if fut.cancelled() or fut.exception() is not None or post.message_id is None:
            return
        self._landed[post.message_id] = (take, turn)
        task = asyncio.create_task(self._write(post.message_id, take, turn))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, message_id: int, take: int, turn: int) -> None:
        try:
            await self.rehearsal.harvest.remember_post(message_id, take, turn)
        except (CircusError, OSError) as exc:  # the line stays visible; only ⭐ on it is lost
            log.warning(
                "scene %s: could not record post %s: %s", self.rehearsal.name, message_id, exc
            )
        finally:  # from now on the scene folder answers (a replay may re-point the take)
            self._landed.pop(message_id, None)

    async def turn_of(self, message_id: int) -> tuple[int, int] | None:
        """(take, turn) of an actor's line, or None for any other message."""
        if message_id in self._landed:
            return self._landed[message_id]
        return await self.rehearsal.harvest.post_of(message_id)

    async def drain(self) -> None:
        """Wait until every landed post is recorded on disk."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    # ------------------------------------------------------------------ votes
    async def react(self, event: discord.RawReactionActionEvent, me: int | None) -> None:
        """Count a ⭐ added or removed on one of this scene's lines; ignore anything else."""
        if not is_star(event.emoji) or event.user_id == me:
            return
        added = event.event_type == "REACTION_ADD"
        if added and (event.member is None or event.member.bot):
            return  # a vote is a person in the server
        found = await self.turn_of(event.message_id)
        if found is None:
            return
        take, turn = found
        name = event.member.display_name if event.member else ""
        try:
            await self.vote(take, turn, name, event.user_id, added=added)
        except CircusError as exc:  # e.g. the take's folder was deleted by hand
            log.warning("scene %s: ⭐ on take %s turn %s: %s", self.rehearsal.name, take, turn, exc)

    async def vote(
        self, take: int, turn: int, name: str, user_id: int, *, added: bool = True
    ) -> bool:
        """Add (or take back) one member's vote for a line; False if nothing changed (a
        second vote by the same member, or none to take back). ⭐ and the "Pick line" menu."""
        tag = voter_tag(user_id)
        async with self.lock:
            pick = next(
                (
                    p
                    for p in await self.rehearsal.harvest.picks()
                    if (p.take, p.turn) == (take, turn)
                ),
                None,
            )
            mine = [v for v in (pick.votes if pick else ()) if v.endswith(tag)]
            if added and not mine:
                await self.rehearsal.harvest.pick(turn, take=take, by=voter(name, user_id))
                return True
            if not added:
                for vote in mine:
                    await self.rehearsal.harvest.unpick(turn, take=take, by=vote)
            return not added and bool(mine)


async def on_reaction(client: discord.Client, event: discord.RawReactionActionEvent) -> None:
    """Route a raw reaction event to the scene playing in its thread (if any)."""
    find = getattr(client, "scene_thread_in", None)
    scene_thread = find(event.channel_id) if find else None
    if scene_thread is None:
        return
    await scene_thread.votes.react(event, client.user.id if client.user else None)
