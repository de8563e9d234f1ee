"""Discord's sharding rules for the fake gateway: which shard a guild's events go to, what an
IDENTIFY's `shard` must be, and the session start limit.

Invariant (Discord's docs, "Gateway > Sharding"): a guild's events reach only the sessions of
shard `(guild_id >> 22) % num_shards`; DMs reach only shard 0; an IDENTIFY whose shard is not
`[id, count]` with `0 <= id < count` is closed 4010, one without sharding when the bot is in
more guilds than one connection may hold is closed 4011; each `id % max_concurrency` bucket may
IDENTIFY once per 5 seconds (more: opcode 9), and every IDENTIFY spends one session start.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

IDENTIFY_WINDOW = 5.0  # seconds per rate-limit bucket between IDENTIFYs
DAY_MS = 86_400_000

# Events that name their guild by "id" (the guild object itself) rather than "guild_id".
GUILD_OBJECT_EVENTS = {"GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE"}


def shard_of(guild_id: int, count: int) -> int:
    """The shard Discord sends `guild_id`'s events to."""
    return (int(guild_id) >> 22) % count


def identify_shard(d: dict[str, Any]) -> tuple[int, int] | None:
    """The IDENTIFY's `shard` as (id, count); (0, 1) when absent; None when invalid (4010)."""
    shard = d.get("shard")
    if shard is None:
        return (0, 1)
    if (
        not isinstance(shard, list)
        or len(shard) != 2
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in shard)
    ):
        return None
    sid, count = shard
    if not 0 <= sid < count:
        return None
    return (sid, count)


def owns(shard: tuple[int, int], guild_id: int | None) -> bool:
    """Whether a session on `shard` receives an event of `guild_id` (None: a DM, shard 0)."""
    sid, count = shard
    if guild_id is None:
        return sid == 0
    return shard_of(guild_id, count) == sid


@dataclass
class SessionStarts:
    """The bot's session start budget and the IDENTIFY buckets (`GET /gateway/bot`)."""

    total: int = 1000
    max_concurrency: int = 16
    window: float = IDENTIFY_WINDOW
    used: int = 0
    last: dict[int, float] = field(default_factory=dict)
    refused: list[tuple[int, int]] = field(default_factory=list)  # (shard id, bucket) sent op 9

    def identify(self, shard_id: int, now: float | None = None) -> bool:
        """Spend a session start for `shard_id`; False (opcode 9) when its bucket identified
        less than `window` seconds ago or the day's starts are spent."""
        now = time.monotonic() if now is None else now
        bucket = shard_id % max(1, self.max_concurrency)
        if self.used >= self.total or now - self.last.get(bucket, -1e9) < self.window:
            self.refused.append((shard_id, bucket))
            return False
        self.last[bucket] = now
        self.used += 1
        return True

    def as_json(self) -> dict[str, int]:
        return {
            "total": self.total,
            "remaining": max(0, self.total - self.used),
            "reset_after": DAY_MS,
            "max_concurrency": self.max_concurrency,
        }
