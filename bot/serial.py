"""Per-key FIFO workers: each key's items are handled in the order they were put, one batch at a
time, while different keys go on concurrently; `put` never waits.

Why it exists: discord.py serialises single requests per rate-limit bucket, but not a sequence
of our own steps for one item (recreate a webhook, revive a thread, then post) and its callers
wait for Discord; this keeps a webhook's posts and a director's DMs in order without the engine
ever waiting, and gives the bot one drain and one cancel.
Invariant: `drain()` returns once every item put so far was handled (or failed, or was dropped);
`close()` cancels every worker and drops what they had not taken.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

log = logging.getLogger("circus.bot.serial")

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Serial(Generic[K, T]):
    """`handle(key, items)` for each key's items, in order: one item at a time, or (batch) all
    the items that queued up while the previous batch was being handled."""

    def __init__(
        self,
        handle: Callable[[K, list[T]], Awaitable[None]],
        *,
        name: str,
        batch: bool = False,
    ) -> None:
        self._handle = handle
        self._name = name
        self._batch = batch
        self._items: dict[K, deque[T]] = {}
        self._workers: dict[K, asyncio.Task[None]] = {}
        self._unfinished = 0  # put and not yet handled or dropped
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def depth(self) -> int:
        """Items put and not yet handled or dropped (scale: /metrics' queue depth)."""
        return self._unfinished

    def put(self, key: K, item: T) -> None:
        """Queue `item` after everything already queued under `key`."""
        self._items.setdefault(key, deque()).append(item)
        self._count(1)
        worker = self._workers.get(key)
        if worker is None or worker.done():
            # A fresh context: the caller may be a run's task, and its context variables (the
            # run's spend gate) must never follow a post or a DM.
            self._workers[key] = asyncio.create_task(
                self._work(key), name=f"{self._name}-{key}", context=contextvars.Context()
            )

    def discard(self, key: K) -> int:
        """Drop `key`'s items that no worker has taken yet; returns how many."""
        items = self._items.get(key)
        dropped = len(items) if items else 0
        if items:
            items.clear()
            self._count(-dropped)
        return dropped

    async def drain(self) -> None:
        """Wait until every item put so far has been handled, has failed or was dropped."""
        await self._idle.wait()

    async def close(self) -> None:
        """Cancel every worker (an item in hand is abandoned) and drop what is still queued."""
        workers = list(self._workers.values())
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        self._workers.clear()
        for key in list(self._items):
            self.discard(key)

    async def _work(self, key: K) -> None:
        items = self._items[key]
        while items:  # the worker ends with its queue; the next put starts another
            taken = list(items) if self._batch else [items[0]]
            for _ in taken:
                items.popleft()
            try:
                await self._handle(key, taken)
            except Exception:  # one bad item must not stop the ones behind it
                log.exception("%s: handling %r failed", self._name, taken)
            finally:
                self._count(-len(taken))

    def _count(self, delta: int) -> None:
        self._unfinished = max(0, self._unfinished + delta)
        if self._unfinished:
            self._idle.clear()
        else:
            self._idle.set()
