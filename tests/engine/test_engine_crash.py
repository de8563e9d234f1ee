"""kill -9 at any moment: the scene still loads, transcript and backstage agree, numbering goes on.

A real process rehearses as fast as it can (an instant scripted model, so most of its time
is spent committing turns) and is killed with SIGKILL at random moments, again and again. Each
rehearsing process is forked from one that imported the engine and litellm once, so the five
kills pay litellm's seconds-long import once instead of five times.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scenekit import CAST

from engine import Actor, Rehearsal
from engine.folder.turns import parse_backstage, parse_transcript

ROOT = Path(__file__).resolve().parents[2]
# Warm up on a copy of the scene (argv[2]: litellm's import and its first call's lazy imports),
# then for each line it reads: fork a process that rehearses the scene, print its pid, and once
# it is gone (killed) print "reaped".
RUNNER = """
import asyncio, os, shutil, sys
from engine import Rehearsal
shutil.copytree(sys.argv[1], sys.argv[2])
asyncio.run(Rehearsal(sys.argv[2]).run(1))
for _line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        asyncio.run(Rehearsal(sys.argv[1]).run(500))
        os._exit(0)
    print(pid, flush=True)
    os.waitpid(pid, 0)
    print("reaped", flush=True)
"""


def check_consistent(scene: Path) -> int:
    text = (
        (scene / "transcript.md").read_text(encoding="utf-8")
        if (scene / "transcript.md").exists()
        else ""
    )
    turns = parse_transcript(text)
    assert [t.number for t in turns] == list(range(1, len(turns) + 1))
    assert text == "" or text.endswith("\n\n"), "a torn turn block was left at the end"
    thoughts = {}
    for actor in CAST:
        path = scene / "backstage" / f"{actor}.log"
        log = parse_backstage(path.read_text(encoding="utf-8")) if path.exists() else {}
        thoughts.update({n: actor for n in log})
    assert thoughts == {t.number: t.actor for t in turns}, "backstage and transcript disagree"
    return len(turns)


@pytest.mark.slow
def test_kill_9_mid_run_never_leaves_half_a_turn(scene):
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    landed = 0
    forks = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(scene), str(scene.parent / "warm-up")],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert forks.stdin is not None and forks.stdout is not None
    try:
        for _ in range(5):
            forks.stdin.write("run\n")
            forks.stdin.flush()
            pid = int(forks.stdout.readline())
            deadline = time.monotonic() + 120  # bounds a hang; a loaded machine imports slowly
            # wait until it is committing turns, then kill it at a random moment
            while check_size(scene) <= landed and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.4))
            os.kill(pid, signal.SIGKILL)
            assert forks.stdout.readline() == "reaped\n"
            Rehearsal(scene)  # opening the scene recovers an interrupted turn
            now = check_consistent(scene)
            assert now > landed, "the rehearsal made progress between kills"
            landed = now
    finally:
        forks.stdin.close()
        forks.wait(timeout=60)
    asyncio.run(Rehearsal(scene).run(2))
    assert check_consistent(scene) == landed + 2


def check_size(scene: Path) -> int:
    path = scene / "transcript.md"
    if not path.exists():
        return 0
    return len(parse_transcript(path.read_text(encoding="utf-8")))


async def test_a_turn_torn_mid_append_is_completed_from_the_journal(scene):
    """The exact state a kill between two appends leaves behind, recovered on open."""
    await Rehearsal(scene).run(1, start=Actor("林小姐"))
    good = (scene / "transcript.md").read_text(encoding="utf-8")
    store = Rehearsal(scene).files.store
    block = "## 2 · 刑警\n**台詞**: 「說吧。」\n**cue**: 律師\n\n"
    thought = "## 2\n他在拖時間。\n\n"
    entries = [
        {"path": "backstage/刑警.log", "offset": 0, "text": thought},
        {"path": "transcript.md", "offset": len(good.encode()), "text": block},
    ]
    (scene / ".circus" / "pending.json").write_text(__import__("json").dumps(entries), "utf-8")
    (scene / "backstage" / "刑警.log").write_text(thought[:5], encoding="utf-8")  # torn
    (scene / "transcript.md").write_text(good + block[:9], encoding="utf-8")  # torn
    assert Rehearsal(scene).recovered
    assert check_consistent(scene) == 2
    assert not store.recover()  # nothing left to do


def test_a_torn_journal_means_the_turn_never_started(scene):
    asyncio.run(Rehearsal(scene).run(1, start=Actor("林小姐")))
    (scene / ".circus" / "pending.json.tmp").write_text('[{"path": "transc', encoding="utf-8")
    assert not Rehearsal(scene).recovered
    assert check_consistent(scene) == 1


async def test_a_long_lived_engine_finishes_another_processs_crashed_turn_before_its_own(scene):
    bot = Rehearsal(scene)  # e.g. the Discord bot, open for days
    await bot.run(1, start=Actor("林小姐"))
    good = (scene / "transcript.md").read_text(encoding="utf-8")
    block, thought = (
        "## 2 · 刑警\n**台詞**: 「說吧。」\n**cue**: 律師\n\n",
        "## 2\n他在拖時間。\n\n",
    )
    entries = [
        {"path": "backstage/刑警.log", "offset": 0, "text": thought},
        {"path": "transcript.md", "offset": len(good.encode()), "text": block},
    ]
    # a terminal's `circus run` was killed mid-commit of turn 2
    (scene / ".circus" / "pending.json").write_text(__import__("json").dumps(entries), "utf-8")
    (scene / "transcript.md").write_text(good + block[:9], encoding="utf-8")
    await bot.run(1)
    assert check_consistent(scene) == 3
