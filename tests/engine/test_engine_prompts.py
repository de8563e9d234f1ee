"""What a prompt looks like: stable part first, append-only record, bounded for long scenes."""

from __future__ import annotations

from engine.door.tokens import conservative
from engine.folder.turns import Turn
from engine.turn.prompts import (
    HISTORY_BUDGET,
    ActorBrief,
    StageBrief,
    actor_messages,
    stage_manager_prompt,
)
from engine.turn.record_memo import window_start

CAST = ("林小姐", "刑警", "律師")


def turns(n: int) -> tuple[Turn, ...]:
    return tuple(
        Turn(
            i,
            CAST[i % 3],
            f"第{i}個動作，手指敲著桌面。",
            f"「第{i}句台詞，你到底在哪裡？」",
            CAST[(i + 1) % 3],
        )
        for i in range(1, n + 1)
    )


def brief(n: int, **kw) -> ActorBrief:
    return ActorBrief(
        name="林小姐",
        soul="SOUL",
        context="CONTEXT",
        cast=CAST,
        turns=turns(n),
        own_thoughts={i: f"THOUGHT{i}" for i in range(1, n + 1)},
        **kw,
    )


def test_the_unchanging_part_comes_first_and_the_record_grows_at_the_end():
    system, user = actor_messages(
        brief(6, whisper_all="ALL", whisper_private="MINE", direction="DIR")
    )
    assert (
        system["role"] == "system"
        and "SOUL" in system["content"]
        and "CONTEXT" in system["content"]
    )
    body = user["content"]
    assert body.index("[6] 林小姐") < body.index("ALL") < body.index("MINE") < body.index("DIR")
    later = actor_messages(brief(7))[1]["content"]
    record = body[: body.index("\n\n")]
    assert later.startswith(record)  # turn 7 only appends


def test_an_actor_sees_its_own_thoughts_beside_its_own_turns_only():
    body = actor_messages(brief(6))[1]["content"]
    own = [t.number for t in turns(6) if t.actor == "林小姐"]
    for i in range(1, 7):
        assert (f"THOUGHT{i}" in body) == (i in own)


def test_a_long_scene_keeps_a_bounded_window_that_moves_in_large_blocks():
    short = actor_messages(brief(40))[1]["content"]
    assert "omitted" not in short and "省略" not in short
    long = actor_messages(brief(400))[1]["content"]
    assert "前 " in long and "輪已省略" in long
    assert conservative(long) <= HISTORY_BUDGET + 600
    assert "[400] " in long and "[1] 刑警" not in long
    costs = [100] * 200
    starts = {window_start(costs[:n]) for n in range(1, 201)}
    assert len(starts) <= 5  # 200 turns of 100 tokens: a handful of trims, each ≥ 36 turns
    ordered = sorted(starts)
    assert all(b - a >= 36 for a, b in zip(ordered, ordered[1:], strict=False))


def test_the_stage_manager_prompt_lists_the_cast_with_silence_and_no_private_fields():
    system, user = stage_manager_prompt(StageBrief("CONTEXT", CAST, turns(4), "ALL")).messages
    body = user["content"]
    assert "CONTEXT" in body and "ALL" in body
    assert "- 林小姐（已 1 輪沒說話）\n- 刑警（已 0 輪沒說話）\n- 律師（已 2 輪沒說話）" in body
    assert "THOUGHT" not in body and "SOUL" not in body
    assert "NEXT:" in system["content"]
