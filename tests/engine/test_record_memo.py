"""The memoised record (issue #31) answers as a walk from scratch does, and files stay the truth.

Who is on stage, who was quiet and the record's order, kept incrementally
(engine.folder.record_walk), match engine.folder.stage's full re-walk across entrances, exits,
`present` blocks, a take cut back, a writer's edit and a block typed in mid-record; and a
writer's edit of an earlier turn or thought on disk reaches the very next prompt.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine import Actor, Rehearsal
from engine.folder.record_walk import merged, on_stage_now, quiet_now, walked
from engine.folder.stage import (
    ENTER,
    EVENT,
    EXIT,
    PRESENT,
    StageBlock,
    merge,
    on_stage,
    quiet,
    since_last_turn,
    walk,
)
from engine.folder.turns import Turn
from engine.turn.prompts import ActorBrief, actor_prompt

CAST = ("林小姐", "刑警", "律師", "Ann")
START = ("刑警",)


def scene(n: int) -> tuple[list[Turn], list[StageBlock]]:
    """`n` turns with a stage change after every few, including names outside the cast."""
    changes = [
        StageBlock(0, 1, PRESENT, names=("林小姐", "刑警", "nobody")),
        StageBlock(3, 1, ENTER, actor="律師"),
        StageBlock(3, 2, EVENT, text="電話響了。"),
        StageBlock(5, 1, EXIT, actor="林小姐"),
        StageBlock(5, 2, ENTER, actor="stranger"),
        StageBlock(8, 1, ENTER, actor="Ann"),
        StageBlock(8, 2, EXIT, actor="刑警"),
        StageBlock(11, 1, PRESENT, names=("刑警",)),
        StageBlock(12, 1, ENTER, actor="林小姐"),
        StageBlock(14, 1, EXIT, actor="林小姐"),
        StageBlock(14, 2, EXIT, actor="刑警"),
    ]
    turns = [
        Turn(i, CAST[i % 4], f"動作{i}", f"台詞{i}", CAST[(i + 1) % 4]) for i in range(1, n + 1)
    ]
    return turns, [b for b in changes if b.after <= n]


def assert_as_rewalked(turns: list[Turn], blocks: list[StageBlock]) -> None:
    items = merge(turns, blocks)
    seen = walked(CAST, turns, blocks)
    assert merged(CAST, turns, blocks) == items
    assert list(seen.steps()) == list(walk(CAST, items))
    assert seen.since_last_turn() == since_last_turn(items)
    assert on_stage_now(CAST, turns, blocks, START) == on_stage(CAST, items, START)
    assert quiet_now(CAST, turns, blocks) == quiet(CAST, items, START)


def test_the_record_kept_turn_by_turn_is_the_record_walked_afresh() -> None:
    turns, blocks = scene(16)
    for n in range(17):  # as a run grows it: each answer extends the memo
        assert_as_rewalked(turns[:n], [b for b in blocks if b.after <= n])
        assert_as_rewalked(turns[:n], [b for b in blocks if b.after < n])  # blocks still to come
    for n in range(16, -1, -3):  # a take cut back
        assert_as_rewalked(turns[:n], [b for b in blocks if b.after <= n])


@pytest.mark.parametrize(
    "change",
    [
        "edit an early turn",
        "edit an early block",
        "block typed in mid-record",
        "turn renumbered into the past",
        "block removed",
        "the cast changes",
    ],
)
def test_an_edit_anywhere_is_walked_afresh(change: str) -> None:
    turns, blocks = scene(16)
    assert_as_rewalked(turns, blocks)  # the memo now holds the whole record
    cast = CAST
    if change == "edit an early turn":
        turns[1] = replace(turns[1], actor="律師", dialogue="WRITER-EDIT")
    elif change == "edit an early block":
        blocks[1] = replace(blocks[1], actor="Ann")
    elif change == "block typed in mid-record":
        blocks.append(StageBlock(6, 1, EXIT, actor="律師"))
    elif change == "turn renumbered into the past":
        turns.append(Turn(4, "Ann", "", "遲來的一句。", ""))
    elif change == "block removed":
        del blocks[3]
    else:
        cast = CAST[:3]
    items = merge(turns, blocks)
    assert merged(cast, turns, blocks) == items
    assert list(walked(cast, turns, blocks).steps()) == list(walk(cast, items))
    assert on_stage_now(cast, turns, blocks, START) == on_stage(cast, items, START)
    assert quiet_now(cast, turns, blocks) == quiet(cast, items, START)


def brief(turns: list[Turn], thoughts: dict[int, str]) -> ActorBrief:
    return ActorBrief("林小姐", "小傳。", "審訊室。", CAST[:3], tuple(turns), thoughts)


def test_an_edited_earlier_thought_reaches_the_next_prompt() -> None:
    turns = [Turn(i, ("林小姐", "刑警")[i % 2], "", f"台詞{i}", "") for i in range(1, 9)]
    thoughts = {i: f"想法{i}。" for i in range(2, 9, 2)}
    first = actor_prompt(brief(turns, thoughts)).messages[1]["content"]
    assert "想法4。" in first
    edited = {**thoughts, 4: "WRITER-THOUGHT"}
    again = actor_prompt(brief(turns, edited)).messages[1]["content"]
    assert "WRITER-THOUGHT" in again and "想法4。" not in again
    added = {**edited, 6: "想法6。", 2: "想法2。", 8: "NEW"}
    assert '"NEW"' in actor_prompt(brief(turns, added)).messages[1]["content"]


async def test_a_writers_edit_of_an_earlier_turn_on_disk_is_in_the_next_prompt(
    scene, scripted
) -> None:
    r = Rehearsal(scene, models=scripted)
    await r.run(6, start=Actor("林小姐"))
    transcript = scene / "transcript.md"
    text = transcript.read_text(encoding="utf-8")
    said = "This is line 2 "
    assert said in text
    transcript.write_text(text.replace(said, "WRITER-EDIT 2 ", 1), encoding="utf-8")
    await r.run(1)
    last = scripted.calls[-1]
    assert "WRITER-EDIT 2 " in last.prompt and said not in last.prompt
    # The same length, typed again: still re-read, still in the next prompt.
    text = transcript.read_text(encoding="utf-8")
    transcript.write_text(text.replace("WRITER-EDIT 2 ", "WRITER-EDIT 3 ", 1), encoding="utf-8")
    await r.run(1)
    assert "WRITER-EDIT 3 " in scripted.calls[-1].prompt


async def test_a_writers_edit_of_an_own_thought_is_in_that_actors_next_prompt(
    scene, scripted
) -> None:
    r = Rehearsal(scene, models=scripted)
    await r.run(3, start=Actor("林小姐"))
    log = scene / "backstage" / "林小姐.log"
    log.write_text(log.read_text(encoding="utf-8").replace("weighs", "WRITER-THOUGHT", 1), "utf-8")
    await r.cue(Actor("林小姐"))
    prompt = scripted.calls[-1].prompt
    assert scripted.calls[-1].shape.speaker == "林小姐"
    assert "WRITER-THOUGHT" in prompt
