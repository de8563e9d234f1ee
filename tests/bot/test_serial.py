"""bot.serial: the per-key FIFO worker under the webhook posts, the directors' DM inboxes and each
scene's event rendering — order per key, keys independent, drain, discard and cancel."""

from __future__ import annotations

import asyncio
import contextvars
from collections import defaultdict

from bot.serial import Serial


class Recorder:
    """A handler that records what it got, and can be held at a key until released."""

    def __init__(self) -> None:
        self.handled: list[tuple[str, list[int]]] = []
        self.entered: dict[str, asyncio.Event] = {}
        self.gates: dict[str, asyncio.Event] = {}
        self.seen: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)

    def hold(self, key: str) -> asyncio.Event:
        self.entered[key] = asyncio.Event()
        self.gates[key] = asyncio.Event()
        return self.gates[key]

    async def __call__(self, key: str, items: list[int]) -> None:
        if key in self.gates:
            self.entered[key].set()
            await self.gates[key].wait()
        if -1 in items:
            raise ValueError("a bad item")
        self.handled.append((key, items))
        self.seen[key].set()


async def test_items_of_one_key_are_handled_in_order_one_at_a_time():
    got = Recorder()
    serial: Serial[str, int] = Serial(got, name="t")
    for i in range(50):
        serial.put("a", i)
    await serial.drain()
    assert got.handled == [("a", [i]) for i in range(50)]


async def test_a_held_key_does_not_hold_up_another():
    got = Recorder()
    gate = got.hold("slow")
    serial: Serial[str, int] = Serial(got, name="t")
    serial.put("slow", 1)
    await got.entered["slow"].wait()
    serial.put("slow", 2)  # queued behind the held one
    serial.put("fast", 3)
    await got.seen["fast"].wait()
    assert got.handled == [("fast", [3])]
    gate.set()
    await serial.drain()
    assert got.handled == [("fast", [3]), ("slow", [1]), ("slow", [2])]


async def test_batch_mode_hands_over_what_queued_meanwhile_in_one_go():
    got = Recorder()
    gate = got.hold("dm")
    serial: Serial[str, int] = Serial(got, name="t", batch=True)
    serial.put("dm", 1)
    await got.entered["dm"].wait()
    for i in (2, 3, 4):
        serial.put("dm", i)
    gate.set()
    await serial.drain()
    assert got.handled == [("dm", [1]), ("dm", [2, 3, 4])]


async def test_drain_waits_for_items_put_while_draining():
    got = Recorder()
    gate = got.hold("a")
    serial: Serial[str, int] = Serial(got, name="t")
    serial.put("a", 1)
    draining = asyncio.create_task(serial.drain())
    await got.entered["a"].wait()
    serial.put("b", 2)
    assert not draining.done()
    gate.set()
    await draining
    assert sorted(got.handled) == [("a", [1]), ("b", [2])]


async def test_drain_returns_at_once_when_nothing_is_queued():
    serial: Serial[str, int] = Serial(Recorder(), name="t")
    await serial.drain()


async def test_a_failing_item_is_logged_and_the_queue_goes_on(caplog):
    got = Recorder()
    serial: Serial[str, int] = Serial(got, name="t")
    for i in (1, -1, 2):
        serial.put("a", i)
    await serial.drain()
    assert got.handled == [("a", [1]), ("a", [2])]
    assert "handling [-1] failed" in caplog.text


async def test_discard_drops_what_no_worker_has_taken():
    got = Recorder()
    gate = got.hold("a")
    serial: Serial[str, int] = Serial(got, name="t")
    serial.put("a", 1)
    await got.entered["a"].wait()
    serial.put("a", 2)
    serial.put("a", 3)
    assert serial.discard("a") == 2
    assert serial.discard("nobody") == 0
    gate.set()
    await serial.drain()
    assert got.handled == [("a", [1])]


async def test_close_cancels_the_item_in_hand_and_drops_the_rest():
    got = Recorder()
    got.hold("a")  # never released
    serial: Serial[str, int] = Serial(got, name="t")
    serial.put("a", 1)
    serial.put("a", 2)
    serial.put("b", 3)  # its worker may not have started yet
    await got.entered["a"].wait()
    await serial.close()
    await serial.drain()  # nothing is left counted as pending
    assert ("a", [1]) not in got.handled and ("a", [2]) not in got.handled
    serial.put("c", 4)  # still usable: a new worker starts
    await serial.drain()
    assert got.handled[-1] == ("c", [4])


async def test_a_worker_does_not_carry_the_callers_context():
    gate: contextvars.ContextVar[str] = contextvars.ContextVar("gate", default="none")
    seen: list[str] = []

    async def handle(key: str, items: list[int]) -> None:
        seen.append(gate.get())

    serial: Serial[str, int] = Serial(handle, name="t")

    async def a_run() -> None:  # like a rehearsal's run task, with its spend gate set
        gate.set("the run's")
        serial.put("a", 1)

    await asyncio.create_task(a_run())
    await serial.drain()
    assert seen == ["none"]
