"""A bot stopped before its posts reached the thread (a kill -9, a lost machine) posts the turns
the thread is missing when it comes back: each once, in order, and nothing it had posted."""

from __future__ import annotations

import json

import pytest

from bot.delivery import POSTED, Mark, already_there, fingerprint, mark_of, unposted
from engine import Turn
from engine.turns import parse_transcript
from tests.botkit import finished, room

pytestmark = pytest.mark.asyncio


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def turns_of(scene) -> list:
    return parse_transcript((scene / "transcript.md").read_text("utf-8"))


def mark_file(scene):
    return scene / ".circus" / f"{POSTED}.json"


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
        mark_file(scene).write_text(json.dumps(mark_of(turns[:2]).__dict__), "utf-8")
        await r.start_bot()
        await r.drain()
        assert r.lines(thread) == everything  # 3…6 posted, in order, 1 and 2 not again
        assert json.loads(mark_file(scene).read_text("utf-8"))["turn"] == 6

        await r.stop_bot()
        await r.start_bot()  # and a clean restart posts nothing
        await r.drain()
        assert r.lines(thread) == everything


async def test_a_turn_that_landed_just_before_the_kill_is_not_posted_twice(tmp_path):
    async with room(tmp_path) as r:
        thread, everything, scene = await played(r, 5)

        lose_posts_after(r, thread, 3)  # turn 3 reached Discord…
        marked = mark_of(turns_of(scene)[:2])  # …but the bot died before marking it
        mark_file(scene).write_text(json.dumps(marked.__dict__), "utf-8")
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
        assert json.loads(mark_file(scene).read_text("utf-8")) == {"turn": 0, "print": ""}
        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread)
        assert len(r.lines(thread)) == 2


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
        (Mark(0), [1, 2, 3]),  # bound before any of these: all of them
        (mark_of(T[:1]), [2, 3]),
        (mark_of(T), []),
        (Mark(2, fingerprint("刑警", "拍桌", "說實話。")), [3]),
        (Mark(2, fingerprint("刑警", "拍桌", "別的話。")), [1, 2, 3]),  # a take begun since
        (Mark(9, "0" * 16), [1, 2, 3]),
    ],
)
def test_the_turns_the_thread_lacks(mark, expected):
    assert [t.number for t in unposted(T, mark)] == expected


def test_a_fingerprint_ignores_spacing_but_not_words():
    assert fingerprint("刑警", " 拍桌 ", "說\n實話。") == fingerprint("刑警", "拍桌", "說 實話。")
    assert fingerprint("刑警", "拍桌", "說實話。") != fingerprint("律師", "拍桌", "說實話。")


@pytest.mark.parametrize(
    ("last", "skip"),
    [
        (None, 0),
        (("刑警", "說實話。"), 1),  # it landed before the kill
        (("林小姐", "我沒有。"), 0),  # the marked turn itself: the next one is still missing
        (("刑警", "說實話"), 0),
    ],
)
def test_the_turn_that_landed_unmarked_is_skipped(last, skip):
    def render(turn):
        return [(turn.actor, turn.dialogue)]

    assert already_there(T[1:], last, render) == skip
