"""`status` shows a scene another process is running: the run lock's holder writes
who it is (pid and host) and clears it when it lets go, so `circus status` in a second terminal
says "running (in another process: pid … on …)" instead of "idle" — without probing the lock,
which would make a real run's start fail as busy."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket

import pytest
from botkit import Gate
from clikit import Live, circus, cli_env

from engine import Rehearsal, Run

HOST = socket.gethostname()


async def test_a_second_rehearsal_on_the_folder_sees_the_first_ones_run(scene, scripted):
    gate = Gate()
    scripted.register("improv", gate)
    running = Rehearsal(scene, models=scripted)
    task = await running.start_run(Run(3))
    await gate.waiting.wait()  # the second turn is in flight: the run holds the lock

    status = await Rehearsal(scene, models=scripted).status()
    assert status.mode == "running" and status.held_by == (os.getpid(), HOST)

    gate.release.set()
    await task
    status = await Rehearsal(scene, models=scripted).status()
    assert status.mode == "idle" and status.held_by is None
    assert (scene / ".circus" / "run.lock").read_bytes() == b""  # cleared when let go


def dead_pid() -> int:
    """A pid no process has (the kernel's limit is far below it)."""
    return 2**22 + 12345


@pytest.mark.parametrize(
    "content, held_by",
    [
        ("", None),  # nobody
        (json.dumps({"pid": dead_pid(), "host": HOST}), None),  # a crashed holder here
        (json.dumps({"pid": 4242, "host": "far-away"}), (4242, "far-away")),  # a shared folder
        ("{torn", None),
        ('{"pid": "9" , "host": "x"}', None),
        ('{"pid": true, "host": "x"}', None),
        ("[1, 2]", None),
    ],
)
async def test_what_a_held_lock_says_about_who_runs_the_scene(scene, content, held_by):
    (scene / ".circus").mkdir(exist_ok=True)
    lock = scene / ".circus" / "run.lock"
    lock.write_text(content, encoding="utf-8")
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as a holder elsewhere would
    try:
        status = await Rehearsal(scene).status()
    finally:
        os.close(fd)
    assert status.held_by == held_by
    assert status.mode == ("running" if held_by else "idle")


async def test_a_lock_nobody_holds_is_idle_whatever_a_crashed_holder_wrote(scene):
    (scene / ".circus").mkdir(exist_ok=True)
    lock = scene / ".circus" / "run.lock"
    lock.write_text(json.dumps({"pid": 4242, "host": "far-away"}), encoding="utf-8")
    status = await Rehearsal(scene).status()
    assert status.mode == "idle" and status.held_by is None


def test_circus_status_in_a_second_terminal_names_the_running_process(scene):
    env = cli_env(CIRCUS_SCRIPTED_LATENCY="0.3")
    live = Live("run", str(scene), "-n", "40", cwd=scene.parent, env=env)
    try:
        live.wait_for("[1] ")
        result = circus("status", str(scene), cwd=scene.parent, env=env)
        assert result.returncode == 0, result.stderr
        assert f"mode: running (in another process: pid {live.proc.pid} on {HOST})" in (
            result.stdout
        )
    finally:
        live.proc.send_signal(signal.SIGINT)
        live.finish()
    result = circus("status", str(scene), cwd=scene.parent, env=env)
    assert "mode: idle" in result.stdout and "another process" not in result.stdout


@pytest.mark.parametrize(
    "lang, expected",
    [
        ("zh", "正在另一個程序裡排練（far 上的 pid 4242）"),
        ("en", "running in another process (pid 4242 on far)"),
    ],
)
async def test_the_bots_status_says_which_process_runs_the_scene(scene, lang, expected):
    from dataclasses import replace

    from bot.render import render_status

    status = replace(await Rehearsal(scene).status(), mode="running", held_by=(4242, "far"))
    assert expected in render_status(status, lang)
