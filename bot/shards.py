"""Which Discord shards one `circus bot` process connects, and so which servers are its own.

Invariant: Discord sends a server's events to shard `(server_id >> 22) % shard_count` only, so a
process owns exactly the servers of its shards and touches only their scenes; with no shards
given it owns every server (one process, Discord's recommended count). The settings are the
operator's text, checked here before anything connects: a typo must stop the bot, never make it
serve the wrong servers.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from engine import CircusError, whole_number

MAX_SHARDS = 65536  # far past any bot's need; bounds what a typo can make us allocate


@dataclass(frozen=True)
class ShardPlan:
    """The shards this process connects: `ids` of `count`, or None for "all of them"."""

    ids: tuple[int, ...] | None = None
    count: int | None = None

    def owns(self, guild_id: int) -> bool:
        """Whether this process serves the server `guild_id`."""
        if self.ids is None or self.count is None:
            return True
        return shard_of(guild_id, self.count) in self.ids

    @property
    def label(self) -> str:
        """How the operator's logs name this process's shards (`0-3 of 16`, `all`)."""
        if self.ids is None:
            return "all"
        return f"{ranges_text(self.ids)} of {self.count}"


IDENTIFY_SECONDS = 5.0  # Discord: one IDENTIFY per rate-limit bucket per 5 seconds


def identify_delay(
    shard_id: int, max_concurrency: int, last: dict[int, float], now: float
) -> float:
    """Seconds shard `shard_id` must wait before it may IDENTIFY: its bucket is
    `shard_id % max_concurrency`, and each bucket allows one IDENTIFY per 5 s (`last`: when
    each bucket last identified)."""
    bucket = shard_id % max(1, max_concurrency)
    if bucket not in last:
        return 0.0
    return max(0.0, last[bucket] + IDENTIFY_SECONDS - now)


@dataclass
class IdentifyPacer:
    """Paces this process's IDENTIFYs by Discord's session start limit (`max_concurrency`
    from /gateway/bot), so shards in different buckets connect at once."""

    max_concurrency: int = 1
    last: dict[int, float] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def wait(self, shard_id: int) -> None:
        # The slot is reserved under the lock and slept for outside it: a shard waiting for
        # its own bucket must not hold up a shard of another bucket.
        async with self.lock:
            now = time.monotonic()
            delay = identify_delay(shard_id, self.max_concurrency, self.last, now)
            self.last[shard_id % max(1, self.max_concurrency)] = now + delay
        if delay:
            await asyncio.sleep(delay)


def shard_of(guild_id: int, count: int) -> int:
    """The shard Discord sends the server `guild_id`'s events to."""
    return (guild_id >> 22) % count


def parse_shard_ids(text: str) -> tuple[int, ...]:
    """`0-3`, `5`, `0,2,5-7` → the shard ids, sorted, each once; CircusError on anything else."""
    ids: set[int] = set()
    for part in text.replace(" ", "").split(","):
        low, dash, high = part.partition("-")
        first = whole_number(low, 5)
        last = whole_number(high, 5) if dash else first
        if first is None or last is None or last < first or last >= MAX_SHARDS:
            raise CircusError("error.shards.bad", text=text[:40])
        ids.update(range(first, last + 1))
    return tuple(sorted(ids))


def shard_plan(shards: str | None, count: str | None) -> ShardPlan:
    """The plan for CIRCUS_SHARDS / --shards and CIRCUS_SHARD_COUNT / --shard-count."""
    if count is None and shards is None:
        return ShardPlan()
    total = whole_number(count, 5) if count is not None else None
    if count is not None and (total is None or not 1 <= total <= MAX_SHARDS):
        raise CircusError("error.shards.bad_count", text=count[:40])
    if shards is None:  # a count alone: this process connects every one of them
        assert total is not None
        return ShardPlan(tuple(range(total)), total)
    ids = parse_shard_ids(shards)
    if total is None:
        raise CircusError("error.shards.no_count", shards=shards[:40])
    if ids[-1] >= total:
        raise CircusError(
            "error.shards.past_count", shards=shards[:40], count=total, last=total - 1
        )
    return ShardPlan(ids, total)


def ranges_text(ids: tuple[int, ...]) -> str:
    """(0, 1, 2, 3, 8) → `0-3,8`: the shard ids as an operator writes them."""
    parts: list[str] = []
    start = prev = ids[0]
    for n in (*ids[1:], None):
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(parts)
