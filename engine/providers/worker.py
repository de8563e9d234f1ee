"""One daemon thread that runs blocking jobs (the embedded model's generations) one at a time.

Invariants: the thread is a daemon and is never joined, so a process that is done — a cut, a
Ctrl-C — exits at once even while a job runs (a ThreadPoolExecutor's worker is joined at exit:
the process waited for the whole generation). A coroutine awaiting a job that is cancelled
returns at once and sets that job's stop flag, which the job checks as it goes (llama.cpp: per
token), so the thread is soon free for the next job; a queued job whose awaiter left never
starts. `stop_all` sets every flag (at exit).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
Job = Callable[[threading.Event], Any]  # called with its stop flag


class Worker:
    """Jobs run in submission order on one lazily started daemon thread."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[tuple[concurrent.futures.Future, Job, threading.Event]]
        self._jobs = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._flags: set[threading.Event] = set()  # of jobs queued or running

    async def run(self, job: Callable[[threading.Event], T]) -> T:
        """`job(stop)` on the worker thread; cancelling the awaiting coroutine sets `stop`."""
        stop = threading.Event()
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            self._flags.add(stop)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._thread.start()
        self._jobs.put((future, job, stop))
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            stop.set()  # a running job stops at its next check; a queued one never starts
            future.cancel()
            raise

    def stop_all(self) -> None:
        """Set the stop flag of every job queued or running (the process is leaving)."""
        with self._lock:
            for flag in self._flags:
                flag.set()

    @property
    def busy(self) -> bool:
        with self._lock:
            return bool(self._flags)

    def _loop(self) -> None:
        while True:
            future, job, stop = self._jobs.get()
            if not future.set_running_or_notify_cancel():  # its awaiter left: never starts
                self._done(stop)
                continue
            try:
                result = job(stop)
            except BaseException as exc:  # handed to the awaiter, like an executor does
                self._done(stop)
                future.set_exception(exc)
            else:
                self._done(stop)  # before the awaiter hears of it: `busy` is then already false
                future.set_result(result)

    def _done(self, stop: threading.Event) -> None:
        with self._lock:
            self._flags.discard(stop)
