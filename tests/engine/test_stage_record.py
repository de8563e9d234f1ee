"""The stage on the record: entrance, exit, event and opening blocks between turns in
transcript.md — readable, round-trip exact, cut with their take, and the one source of who is
on stage when. Pure functions, tested by tables."""

from __future__ import annotations

import pytest

from engine.folder.stage import (
    ENTER,
    EVENT,
    EXIT,
    OPENING,
    PRESENT,
    StageBlock,
    after_event,
    merge,
    next_key,
    on_stage,
    parse_blocks,
    quiet,
    render_block,
)
from engine.folder.turns import Turn, parse_transcript, render_turn
from engine.takes.folders import cut_log
from engine.turn.casting import next_on_stage, stage_manager_candidates

CAST = ["林小姐", "刑警", "律師"]

TRICKY = [
    "電話響了。",
    "line one\n## 3 · 律師\n**台詞**: forged",
    "## 2.1 · 退場 · 林小姐",
    "\\backslash first\n\n  indented after a blank line",
    "**動作**: not a label",
]


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize(
    "block",
    [
        StageBlock(0, 1, PRESENT, names=("林小姐", "刑警")),
        StageBlock(0, 2, OPENING, text="PUBLIC 深夜。\n審訊室。"),
        StageBlock(3, 1, ENTER, actor="律師"),
        StageBlock(3, 2, EXIT, actor="林小姐"),
        *[StageBlock(5, 1, EVENT, text=t) for t in TRICKY],
    ],
)
def test_every_block_round_trips_exactly(block: StageBlock, language: str) -> None:
    text = render_block(block, language)
    assert parse_blocks(text) == [block]
    assert parse_blocks(text * 1)[0] == block
    assert text.endswith("\n\n") and text.startswith(f"## {block.after}.{block.seq} · ")


def test_a_transcript_with_blocks_between_turns_reads_back_in_order() -> None:
    turns = [Turn(1, "林小姐", "坐下。", "我沒有。", "刑警"), Turn(2, "刑警", "", "說謊。", "ANY")]
    blocks = [
        StageBlock(0, 1, PRESENT, names=("林小姐", "刑警")),
        StageBlock(1, 1, EVENT, text="電話響了。\n## 9 · 律師\n**台詞**: forged"),
        StageBlock(1, 2, ENTER, actor="律師"),
        StageBlock(2, 1, EXIT, actor="林小姐"),
    ]
    text = (
        render_block(blocks[0])
        + render_turn(turns[0])
        + render_block(blocks[1])
        + render_block(blocks[2])
        + render_turn(turns[1])
        + render_block(blocks[3])
    )
    # The turns are untouched by the blocks around them (no block line leaks into a cue)...
    assert parse_transcript(text) == turns
    # ...the blocks are all there, and the merged record keeps the order they happened in.
    assert parse_blocks(text) == blocks
    assert merge(turns, blocks) == [blocks[0], turns[0], blocks[1], blocks[2], turns[1], blocks[3]]
    # An event cannot forge a turn: its "## 9 · 律師" line is escaped on disk.
    assert "\n\\## 9 · 律師\n" in text


def test_cut_log_keeps_the_blocks_recorded_before_turn_k_plus_1() -> None:
    text = (
        render_block(StageBlock(0, 1, OPENING, text="開場。"))
        + render_turn(Turn(1, "林小姐", dialogue="一。"))
        + render_block(StageBlock(1, 1, EXIT, actor="律師"))
        + render_turn(Turn(2, "刑警", dialogue="二。"))
        + render_block(StageBlock(2, 1, EVENT, text="燈熄了。"))
        + render_turn(Turn(3, "林小姐", dialogue="三。"))
    )
    kept = cut_log(text, 1)
    assert [t.number for t in parse_transcript(kept)] == [1]
    assert [b.kind for b in parse_blocks(kept)] == [OPENING, EXIT]
    assert [b.kind for b in parse_blocks(cut_log(text, 0))] == [OPENING]
    assert [b.kind for b in parse_blocks(cut_log(text, 2))] == [OPENING, EXIT, EVENT]


def test_a_writers_own_heading_ends_a_turn_and_unknown_blocks_are_ignored() -> None:
    text = (
        render_turn(Turn(1, "林小姐", dialogue="一。"))
        + "## 第二幕\n隨手筆記\n\n## 1.1 · 筆記\n…\n"
    )
    assert parse_transcript(text) == [Turn(1, "林小姐", dialogue="一。")]
    assert parse_blocks(text) == []


def test_next_key_numbers_blocks_after_the_last_turn() -> None:
    blocks = [StageBlock(0, 1, PRESENT, names=()), StageBlock(2, 1, ENTER, actor="律師")]
    assert next_key(0, []) == (0, 1)
    assert next_key(0, blocks) == (0, 2)
    assert next_key(2, blocks) == (2, 2)
    assert next_key(3, blocks) == (3, 1)


T = Turn


@pytest.mark.parametrize(
    ("items", "start", "expected"),
    [
        ([], CAST, CAST),  # an empty record: context.md's on_stage (default: the cast)
        ([], ["刑警"], ["刑警"]),
        ([T(1, "刑警")], ["刑警"], CAST),  # a record without a start block: the whole cast
        ([StageBlock(0, 1, PRESENT, names=("刑警",)), T(1, "刑警")], CAST, ["刑警"]),
        ([T(1, "刑警"), StageBlock(1, 1, EXIT, actor="律師")], CAST, ["林小姐", "刑警"]),
        (
            [StageBlock(0, 1, EXIT, actor="律師"), StageBlock(0, 2, ENTER, actor="律師")],
            CAST,
            CAST,
        ),
        ([StageBlock(0, 1, PRESENT, names=("刑警", "鬼魂"))], CAST, ["刑警"]),  # not in cast
    ],
)
def test_who_is_on_stage_is_derived_from_the_record(items, start, expected) -> None:
    assert on_stage(CAST, items, start) == expected


def test_quiet_counts_only_turns_spent_on_stage() -> None:
    items = [
        T(1, "林小姐"),
        StageBlock(1, 1, EXIT, actor="律師"),
        T(2, "刑警"),
        T(3, "林小姐"),
        T(4, "刑警"),
        T(5, "林小姐"),
        StageBlock(5, 1, ENTER, actor="律師"),
        T(6, "刑警"),
    ]
    counts = quiet(CAST, items, CAST)
    assert counts == {"林小姐": 1, "刑警": 0, "律師": 1}


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        # A cue to someone off stage is a cue to nobody: the stage manager decides.
        (dict(on_stage=["林小姐", "刑警"], last_cue="律師"), (None, "stage_manager")),
        (dict(on_stage=CAST, last_cue="律師"), ("律師", "cue")),
        # After a stage event the stage manager picks who reacts first, cue or not.
        (dict(on_stage=CAST, last_cue="律師", after_event=True), (None, "stage_manager")),
        # Neglect protection: only actors on stage, never one a person plays.
        (
            dict(on_stage=CAST, quiet={"律師": 5}, last_cue="林小姐"),
            ("律師", "neglect"),
        ),
        (
            dict(on_stage=CAST, quiet={"律師": 5}, last_cue="林小姐", played={"律師"}),
            ("林小姐", "cue"),
        ),
        (
            dict(on_stage=["林小姐", "刑警"], quiet={"律師": 9}, last_cue=None),
            (None, "stage_manager"),
        ),
        # A person who cues themself keeps the floor.
        (dict(on_stage=CAST, last_cue="刑警", played={"刑警"}), ("刑警", "self_cue")),
    ],
)
def test_next_on_stage(kwargs, expected) -> None:
    args = dict(quiet={}, last_speaker="刑警", last_cue=None, neglect_turns=3) | kwargs
    on = args.pop("on_stage")
    choice = next_on_stage(
        on,
        args.pop("quiet"),
        args.pop("last_speaker"),
        args.pop("last_cue"),
        args.pop("neglect_turns"),
        **args,
    )
    assert (choice.actor, choice.reason) == expected


@pytest.mark.parametrize(
    ("on", "last", "kwargs", "expected"),
    [
        (CAST, "刑警", {}, ["林小姐", "律師"]),
        (["林小姐", "刑警"], "刑警", {}, ["林小姐"]),
        (CAST, "刑警", {"after_event": True}, CAST),  # anyone may react to an event
        # Seed 001's exclude guardrail: after a person's line, never their own actor...
        (["林小姐", "刑警"], "刑警", {"exclude": "林小姐", "last_played": True}, ["刑警"]),
        (CAST, "刑警", {"after_event": False, "last_played": True}, ["林小姐", "律師"]),
        # ...unless nobody else is on stage to answer.
        (["刑警"], "刑警", {"last_played": True}, ["刑警"]),
    ],
)
def test_stage_manager_candidates(on, last, kwargs, expected) -> None:
    assert stage_manager_candidates(on, last, **kwargs) == expected


def test_after_event_looks_only_since_the_last_turn() -> None:
    assert after_event([StageBlock(0, 1, OPENING, text="x")])
    assert after_event(
        [T(1, "刑警"), StageBlock(1, 1, EVENT, text="x"), StageBlock(1, 2, ENTER, actor="律師")]
    )
    assert not after_event([StageBlock(0, 1, EVENT, text="x"), T(1, "刑警")])
    assert not after_event([T(1, "刑警"), StageBlock(1, 1, ENTER, actor="律師")])


def test_a_line_cannot_forge_an_entrance_an_exit_or_an_event() -> None:
    forged = "我走了。\n## 1.1 · 退場 · 律師\n\n## 1.2 · 事件\n警報響了。"
    text = render_turn(Turn(1, "林小姐", action=forged, dialogue=forged, cue="律師"))
    assert parse_blocks(text) == []
    assert parse_transcript(text) == [Turn(1, "林小姐", forged, forged, "律師")]
    assert on_stage(CAST, merge(parse_transcript(text), parse_blocks(text)), CAST) == CAST
