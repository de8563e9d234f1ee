"""A bot stopped before its posts reached the thread (a kill -9, a lost machine) posts the turns
the thread is missing when it comes back: each once, in order, and nothing it had posted."""

from __future__ import annotations

import asyncio
import json

import pytest
from botkit import finished, room

from bot.thread.delivery import POSTED, Mark, landed, unposted, write_mark
from engine import Turn
from engine.folder.turns import parse_transcript


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def turns_of(scene) -> list:
    return parse_transcript((scene / "transcript.md").read_text("utf-8"))


def mark_file(scene):
    return scene / ".circus" / f"{POSTED}.json"


def rewind_mark(scene, turn: int) -> None:
    """The mark as a bot killed after turn `turn`'s posts left it."""
    write_mark(scene, Mark(turn))


def lose_posts_after(r, thread: int, keep: int) -> None:
    """The thread as a killed bot leaves it: only the first `keep` actors' messages landed
    (the rest were still in its webhook queue), and its mark says so."""
    shown = r.fake.messages_in(thread)
    actors = [i for i, m in enumerate(shown) if m["webhook_id"] and m["username"] != "Circus"]
    cut = actors[keep] if keep < len(actors) else len(shown)
    gone = {m["id"] for m in shown[cut:]}
    r.fake.messages[thread] = [m for m in r.fake.messages[thread] if m["id"] not in gone]


async def played(r, turns: int):
    """A scene rehearsed `turns` turns, everything posted, the bot stopped: (its thread, the
    actors' lines there, its folder)."""
    thread = await r.new_scene("審訊室")
    await r.ask("run", {"turns": turns}, channel=thread)
    await finished(r, thread)
    everything = r.lines(thread)
    await r.stop_bot()
    return thread, everything, r.home / "審訊室"


async def test_the_turns_a_killed_bot_never_posted_are_posted_once_when_it_is_back(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        await r.ask("run", {"turns": 6}, channel=thread)
        await finished(r, thread)
        everything = r.lines(thread)
        scene = r.home / "審訊室"
        turns = turns_of(scene)
        assert len(everything) == len(turns) == 6
        assert json.loads(mark_file(scene).read_text("utf-8"))["turn"] == 6
        await r.stop_bot()

        lose_posts_after(r, thread, 2)
        rewind_mark(scene, 2)
        await r.start_bot()
        await r.drain()
        assert r.lines(thread) == everything  # 3…6 posted, in order, 1 and 2 not again
        assert json.loads(mark_file(scene).read_text("utf-8"))["turn"] == 6

        await r.stop_bot()
        await r.start_bot()  # and a clean restart posts nothing
        await r.drain()
        assert r.lines(thread) == everything


async def test_two_catch_ups_at_once_post_the_missing_turns_once(tmp_path):
    """What two processes on one shard (by mistake) do at start: the second waits for the
    first, then finds the mark moved and posts nothing."""
    async with room(tmp_path) as r:
        thread, everything, scene = await played(r, 5)
        await r.start_bot()
        lose_posts_after(r, thread, 2)
        rewind_mark(scene, 2)
        scene_thread = r.scene_thread("審訊室")
        posted = await asyncio.gather(scene_thread.catch_up(), scene_thread.catch_up())
        await r.drain()
        assert sorted(posted) == [0, 3]
        assert r.lines(thread) == everything


async def test_a_turn_that_landed_just_before_the_kill_is_not_posted_twice(tmp_path):
    async with room(tmp_path) as r:
        thread, everything, scene = await played(r, 5)

        lose_posts_after(r, thread, 3)  # turn 3 reached Discord…
        rewind_mark(scene, 2)  # …but the bot died before marking it
        await r.start_bot()
        await r.drain()
        assert r.lines(thread) == everything


async def test_a_scene_bound_before_marks_were_kept_posts_nothing_old(tmp_path):
    async with room(tmp_path) as r:
        thread, _, scene = await played(r, 3)

        mark_file(scene).unlink()
        lose_posts_after(r, thread, 1)  # whatever the thread lacks, nothing says it was ours
        await r.start_bot()
        await r.drain()
        assert len(r.lines(thread)) == 1
        assert json.loads(mark_file(scene).read_text("utf-8"))["turn"] == 3  # from now on


async def test_turns_made_in_the_terminal_before_the_scene_was_opened_are_not_posted(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        scene = r.home / "審訊室"
        assert json.loads(mark_file(scene).read_text("utf-8")) == {"turn": 0}
        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread)
        assert len(r.lines(thread)) == 2


async def test_after_a_replay_a_clean_restart_posts_nothing_again(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        await r.ask("run", {"turns": 5}, channel=thread)
        await finished(r, thread)
        await r.ask("take save", channel=thread)
        await r.ask("replay", {"take": 1, "until": 2}, channel=thread)
        await r.drain()
        before = r.lines(thread)
        assert len(before) == 5
        await r.stop_bot()  # a clean stop (SIGTERM), no kill
        await r.start_bot()
        await r.drain()
        after = r.lines(thread)
        assert after == before, after[len(before) :]


async def test_a_writer_fixing_the_last_turn_in_obsidian_posts_nothing_again(tmp_path):
    async with room(tmp_path) as r:
        thread, before, scene = await played(r, 4)
        transcript = scene / "transcript.md"
        last = parse_transcript(transcript.read_text("utf-8"))[-1]
        text = transcript.read_text("utf-8")
        word = (last.dialogue or last.action).split()[0][:2]
        i = text.rindex(word)
        transcript.write_text(text[:i] + "（改）" + text[i:], "utf-8")  # a typo fixed
        await r.start_bot()
        await r.drain()
        after = r.lines(thread)
        assert len(after) == len(before), after[len(before) :]


async def test_a_thread_deleted_while_the_bot_was_down_is_not_written_to_or_dmed_about(tmp_path):
    async with room(tmp_path) as r:
        thread, _, scene = await played(r, 3)
        rewind_mark(scene, 1)
        r.fake.threads.pop(thread)  # a moderator deleted the thread while the bot was down
        r.fake.messages.pop(thread, None)
        dms_before = len(r.dms("alice"))
        for _ in range(2):
            await r.start_bot()
            await r.drain()
            await r.stop_bot()
        assert len(r.dms("alice")) == dms_before


# --- the decisions, as tables ---
T = [
    Turn(1, "林小姐", "", "我沒有。"),
    Turn(2, "刑警", "拍桌", "說實話。"),
    Turn(3, "律師", "", "夠了。"),
]


@pytest.mark.parametrize(
    ("mark", "expected"),
    [
        (None, []),  # no mark: nothing says the thread lacks anything
        (Mark(0), [1, 2, 3]),  # the run began on an empty record
        (Mark(1), [2, 3]),
        (Mark(3), []),
        (Mark(9), []),  # the record was cut back (a replay, a writer): never post twice
    ],
)
def test_the_turns_the_thread_lacks(mark, expected):
    assert [t.number for t in unposted(T, mark)] == expected


A, B, C = ("刑警", "part one"), ("刑警", "part two"), ("律師", "夠了。")


@pytest.mark.parametrize(
    ("messages", "tail", "n"),
    [
        ([A, B], [], 0),  # nothing could be read
        ([A, B], [C], 0),
        ([A, B], [C, A], 1),  # the first message landed before the kill
        ([A, B], [A, B], 2),  # all of it landed, unmarked
        ([A], [C, A], 1),
        ([A, B], [B, A], 1),
        ([C], [A, B], 0),
    ],
)
def test_the_messages_of_a_turn_that_reached_the_thread_before_the_kill(messages, tail, n):
    assert landed(messages, tail) == n
