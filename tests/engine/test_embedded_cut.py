"""The embedded model's thread (engine.providers.worker): a cut stops the generation in flight and the
process exits at once (a Ctrl-C on the embedded model printed the cut within a
second, then the process waited 20–75 s for llama.cpp; a second Ctrl-C printed a `threading`
traceback). Tested with a fake slow thread-based job, never the model itself: a job that
"generates" until its stop flag is set, and one that never ends."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from engine.providers.worker import Worker

REPO = Path(__file__).resolve().parents[2]


def generating(started: threading.Event, tokens: list[int]):
    """A job that makes a token at a time until it is told to stop (like llama.cpp with a
    stopping criterion checked per token)."""

    def job(stop: threading.Event) -> str:
        started.set()
        while not stop.wait(0.001):
            tokens.append(len(tokens))
        return "stopped"

    return job


async def test_a_cancelled_call_returns_at_once_and_stops_its_generation():
    worker = Worker("test-model")
    started, tokens = threading.Event(), []
    call = asyncio.create_task(worker.run(generating(started, tokens)))
    await asyncio.to_thread(started.wait)
    call.cancel()
    try:
        await call
    except asyncio.CancelledError:
        pass
    assert call.cancelled()
    # The thread is soon free: the next call runs (it would queue forever behind a
    # generation that ignored the cut).
    assert await worker.run(lambda stop: "next") == "next"
    assert not worker.busy
    settled = len(tokens)
    assert await worker.run(lambda stop: len(tokens)) == settled  # nothing generates any more


async def test_a_queued_call_whose_caller_left_never_starts():
    worker = Worker("test-model")
    started, release, ran = threading.Event(), threading.Event(), []

    def first(stop: threading.Event) -> None:
        started.set()
        release.wait()

    running = asyncio.create_task(worker.run(first))
    await asyncio.to_thread(started.wait)
    queued = asyncio.create_task(worker.run(lambda stop: ran.append("queued")))
    await asyncio.sleep(0)  # it is in the queue now
    queued.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await queued  # its caller has left ...
    release.set()  # ... before the thread is free for it
    await running
    assert await worker.run(lambda stop: "after") == "after"
    assert ran == [] and queued.cancelled()


async def test_an_error_in_a_job_reaches_its_caller():
    worker = Worker("test-model")

    def broken(stop: threading.Event) -> None:
        raise ValueError("the model broke")

    try:
        await worker.run(broken)
    except ValueError as exc:
        assert str(exc) == "the model broke"
    else:
        raise AssertionError("the error was lost")


def test_stop_all_tells_every_job_in_flight():
    async def scenario() -> list[str]:
        worker = Worker("test-model")
        started, tokens = threading.Event(), []
        call = asyncio.create_task(worker.run(generating(started, tokens)))
        await asyncio.to_thread(started.wait)
        worker.stop_all()  # the process is leaving
        return [await call]

    assert asyncio.run(scenario()) == ["stopped"]


LEAVING = """
import asyncio, threading
from engine.providers.worker import Worker

async def main():
    worker = Worker("circus-embedded")
    started = threading.Event()

    def forever(stop):  # a prompt being read: no stop flag reaches it
        started.set()
        threading.Event().wait()

    call = asyncio.create_task(worker.run(forever))
    await asyncio.to_thread(started.wait)
    call.cancel()
    try:
        await call
    except asyncio.CancelledError:
        print("cut", flush=True)

asyncio.run(main())
"""


def test_a_process_that_is_done_never_waits_for_the_model_thread():
    """With a thread pool, interpreter exit joins its worker: this process would never end."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", LEAVING],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,  # a guard against hanging forever, not a margin
    )
    print(f"exit after a cut with the job still running: {time.perf_counter() - started:.2f}s")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "cut\n" and result.stderr == ""


def test_ctrl_c_twice_ends_the_run_without_a_traceback(tmp_path: Path):
    from clikit import Live, circus, cli_env, turns_of

    assert circus("new", "wake", "--template", "wake", cwd=tmp_path).returncode == 0
    live = Live("run", "wake", "-n", "40", cwd=tmp_path, env=cli_env(CIRCUS_SCRIPTED_LATENCY="0.3"))
    live.wait_for("[2] ")
    live.proc.send_signal(signal.SIGINT)
    live.wait_for("cut", stream="err")
    if live.proc.poll() is None:
        live.proc.send_signal(signal.SIGINT)  # impatient: it ends at once, as a signal does
    code = live.finish()
    assert code in (130, -signal.SIGINT), live.seen
    assert "Traceback" not in live.seen["err"] and "KeyboardInterrupt" not in live.seen["err"]
    assert 2 <= len(turns_of(tmp_path / "wake")) < 40
