"""Whispers are bounded in prompts: a note has a length cap (refused in one line),
and whispers take a bounded share of the reading model's context — the oldest notes dropped
first, and the director told so by the note command and in status. 40 long notes once made
a 204,446-character actor prompt."""

from __future__ import annotations

import pytest
from consolekit import console, prompts_of

from engine import Actor, CircusError, Rehearsal
from engine.door.tokens import conservative
from engine.folder.whispers import (
    NOTE_MOST_CHARS,
    fit_whisper,
    may_fit_anywhere,
    note_items,
    whisper_budget,
)
from engine.turn.prompts import ActorBrief, actor_messages


def chars(text: str) -> int:  # a counter for the tables: one token per character
    return len(text)


@pytest.mark.parametrize(
    "text, budget, expected",
    [
        ("- a\n- b", 100, ("- a\n- b", 0)),  # fits: untouched
        ("- old\n- new", 6, ("- new", 1)),  # the oldest goes first
        ("- 1\n- 2\n- 3\n- 4", 8, ("- 3\n- 4", 2)),
        ("- old\n  more of old\n- new", 6, ("- new", 1)),  # a note's continuation goes with it
        ("- aaaaaaaaaa", 5, ("- aa…", 0)),  # the newest alone is too long: cut and marked
        ("- x\n- aaaaaaaaaa", 5, ("- aa…", 1)),
        ("", 5, ("", 0)),
        ("prose line\nsecond line", 12, ("second line", 1)),  # a hand-written line is a note
    ],
)
def test_fit_whisper_keeps_the_newest_notes_that_fit(text, budget, expected):
    assert fit_whisper(text, budget, chars) == expected


def test_note_items_follow_how_add_note_writes_them():
    assert note_items("- a\n  a2\n\n- b\n") == ["- a\n  a2", "- b"]


@pytest.mark.parametrize(
    "context, expected", [(8192, 1024), (4096, 512), (128_000, 2048), (2048, 256), (0, 0)]
)
def test_each_whisper_section_gets_a_share_of_the_context_with_a_ceiling(context, expected):
    assert whisper_budget(context) == expected


@pytest.mark.parametrize(
    "text, expected",
    [("- 慢一點。", True), ("- " + "x" * 700, True), ("- " + "x" * 800, False), ("很" * 90, False)],
)
def test_small_whispers_are_known_to_fit_without_a_tokenizer(text, expected):
    """So `status` need not load a tokenizer (or litellm) to say nothing was dropped."""
    assert may_fit_anywhere(text) is expected


def test_an_actors_prompt_stays_bounded_however_many_whispers_it_has():
    notes = "\n".join(f"- NOTE{i:02d} " + "x" * 4990 for i in range(40))
    brief = ActorBrief(
        name="林小姐",
        soul="她。",
        context="夜。",
        cast=("林小姐", "刑警"),
        turns=(),
        own_thoughts={},
        whisper_all=notes,
        whisper_private=notes,
        direction="拍桌子。" * 2000,
    )
    prompt = "\n".join(m["content"] for m in actor_messages(brief))
    assert conservative(prompt) < 8192  # the model's context (none stated: 8192)
    assert "NOTE39" in prompt and "NOTE00" not in prompt


async def test_forty_long_notes_keep_the_prompt_bounded_and_the_director_is_told(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    dropped = [
        await rehearsal.notes.note(f"NOTE{i:02d} " + "很長的耳語。" * 20, None) for i in range(40)
    ]
    assert dropped[0] == 0 and dropped[-1] > 0  # the note command says when old ones fall out
    private = [
        await rehearsal.notes.note(f"PRIV{i:02d} " + "y" * 1990, Actor("律師")) for i in range(40)
    ]
    assert private[-1] > 0
    status = await rehearsal.status()
    assert dict(status.notes_dropped) == {"": dropped[-1], "律師": private[-1]}

    await rehearsal.cue(Actor("律師"))
    prompt = prompts_of(scripted, "律師")[-1]
    assert len(prompt) < 30_000  # was 204,446 characters
    assert conservative(prompt) < 8192
    assert "NOTE39" in prompt and "NOTE00" not in prompt  # the newest kept, the oldest dropped
    assert "PRIV39" in prompt and "PRIV00" not in prompt
    text = (scene / "director_notes.md").read_text(encoding="utf-8")
    assert "NOTE00" in text and "PRIV00" in text  # nothing is lost from the file


async def test_a_note_or_direction_longer_than_the_cap_is_refused_in_one_line(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    before = (
        (scene / "director_notes.md").read_bytes()
        if (scene / "director_notes.md").exists()
        else None
    )
    with pytest.raises(CircusError, match=f"at most {NOTE_MOST_CHARS:,} characters"):
        await rehearsal.notes.note("x" * 5000)
    with pytest.raises(CircusError, match="direction is at most"):
        await rehearsal.cue(Actor("律師"), "拍桌子" * 2000)
    after = (
        (scene / "director_notes.md").read_bytes()
        if (scene / "director_notes.md").exists()
        else None
    )
    assert before == after and scripted.calls == []


async def test_the_console_warns_when_old_notes_fall_out_and_status_says_so(scene, scripted):
    notes = [f"NOTE 律師: N{i:02d} " + "z" * 1990 for i in range(12)]
    out, err, _ = await console(
        scene, *notes, "NOTE 律師: " + "x" * 5000, "STATUS", models=scripted
    )
    warning = "律師's whispers no longer all fit in the prompt"  # the console speaks English
    assert warning in err  # from the note that pushed the oldest out ...
    assert warning in out.split("scene:", 1)[1]  # ... and in STATUS
    assert "A note is at most 2,000 characters (this one has 5,000)" in err
    assert "Traceback" not in err + out
