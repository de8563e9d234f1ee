"""A director's /report on a long take leaves no other scene waiting.

The report is built in a worker thread. To prove it without a clock, the event loop's worker
threads are a ThreadPoolExecutor that holds a report build in its thread until released: while
it is held, /status pings in another scene must all be answered (Discord's 3 s deadline is the
fake's, checked when the room closes). Were the report built on the event loop, it would never
reach a worker thread and the test would say so.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from concurrent.futures import ThreadPoolExecutor

from botkit import WAIT, room, until

from engine.folder.turns import Turn, render_turn
from engine.harvest.report import build_report

CAST = ("林小姐", "刑警", "律師")
PHRASES = ["你那天晚上到底在哪裡", "我已經說過三次了", "監視器拍到你的車", "信封裡面是什麼",
           "我不記得了", "你在說謊", "十一點我在家", "律師來之前我不說話"]  # fmt: skip


def long_take(n: int) -> str:
    """A take going round in circles: lines recombined from a few phrases."""
    turns = [
        Turn(i, CAST[i % 3], "", "，".join(PHRASES[(i * k) % 8] for k in (1, 3, 5)), CAST[i % 2])
        for i in range(1, n + 1)
    ]
    return "".join(render_turn(t, "zh") for t in turns)


class HeldReports(ThreadPoolExecutor):
    """The loop's worker threads; a job that builds a take report waits until `release`."""

    def __init__(self) -> None:
        super().__init__(max_workers=8)
        self.arrived = threading.Event()
        self.release = threading.Event()

    def submit(self, fn, /, *args, **kwargs):
        # asyncio.to_thread submits functools.partial(context.run, function, *arguments)
        if isinstance(fn, functools.partial) and build_report in fn.args:

            def held():
                self.arrived.set()
                assert self.release.wait(WAIT), "the test never released the report"
                return fn(*args, **kwargs)

            return super().submit(held)
        return super().submit(fn, *args, **kwargs)


async def test_status_pings_elsewhere_are_answered_while_a_long_report_is_built(tmp_path):
    held = HeldReports()
    asyncio.get_running_loop().set_default_executor(held)
    try:
        async with room(tmp_path) as r:
            big = await r.new_scene("長戲")
            other = await r.new_scene("密室")
            transcript = r.home / "長戲" / "transcript.md"
            transcript.write_text(long_take(1000), encoding="utf-8")

            report = await r.slash("report", {}, user="alice", channel=big)
            await until(held.arrived.is_set, what="the report to be built in a worker thread")
            for _ in range(24):
                status = await r.ask("status", user="alice", channel=other)
                assert status.strip()  # answered, privately (r.ask checks)
            assert report.followups == []  # still being built

            held.release.set()
            await r.answer(report)
            [attachment] = [a for m in report.messages for a in m.get("attachments") or []]
            markdown = r.fake.attachments_data[int(attachment["id"])].decode("utf-8")
            assert "1000 輪" in markdown and "⚠" in markdown  # the take goes round in circles
    finally:
        held.release.set()
        held.shutdown(wait=True)
