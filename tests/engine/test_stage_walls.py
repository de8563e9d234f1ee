"""Knowledge follows witnessing (DESIGN §2): proven on the exact prompts each model received,
across exits, re-entries, stage events, takes, replays and a restart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scenekit import PUBLIC_CONTEXT

from engine import Actor, Rehearsal
from engine.errors import NobodyOnStage, OffStage, OnStage
from engine.folder.stage import parse_blocks
from engine.folder.turns import parse_transcript
from engine.providers.scripted import ScriptedRequest

EVENT_MARKER = "EVENT-MARKER 電話響了"
_LINE = re.compile(r"L\d{3}X")


def marked_actor(request: ScriptedRequest) -> str:
    """Every line carries a unique marker; everyone throws the ball to 律師."""
    shape = request.shape
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[request.index % len(shape.cast)]}\nREASON: 看誰在場"
    me = shape.speaker
    cue = "林小姐" if me == "律師" else "律師"
    return (
        f"<thought>{me} 想。</thought><action>{me}抬頭。</action>"
        f"<dialogue>L{request.index:03d}X</dialogue><cue>{cue}</cue>"
    )


def lines_of(scene: Path, turns: range) -> set[str]:
    text = (scene / "transcript.md").read_text(encoding="utf-8")
    return {t.dialogue for t in parse_transcript(text) if t.number in turns}


def prompts_of(scripted, actor: str, since: int = 0) -> list[str]:
    return [
        c.prompt
        for c in scripted.calls[since:]
        if c.shape.kind == "actor" and c.shape.speaker == actor
    ]


async def test_an_actor_never_hears_what_was_said_while_it_was_off_stage(scene, scripted):
    scripted.register("improv", marked_actor)
    r = Rehearsal(scene, models=scripted)
    await r.run(3, start=Actor("林小姐"))
    await r.stage.exit(Actor("律師"))
    await r.run(4)
    await r.stage.event(EVENT_MARKER)
    after_event = len(scripted.calls)
    await r.run(1)
    missed = lines_of(scene, range(4, 9))
    assert len(missed) == 5

    # While 律師 was out, the others saw the exit and the event; the stage manager (asked
    # after the event, and for every cue to 律師) saw only who was on stage.
    assert any("（律師 退場）" in p for p in prompts_of(scripted, "刑警"))
    sm = [c for c in scripted.calls[after_event:] if c.shape.kind == "stage_manager"]
    assert sm and EVENT_MARKER in sm[0].prompt and "誰先反應" in sm[0].prompt
    assert "- 律師" not in sm[0].prompt.split("# 在場角色")[1]
    assert set(sm[0].shape.cast) <= {"林小姐", "刑警"}

    before = len(scripted.calls)
    await r.stage.enter(Actor("律師"))
    await r.run(3)
    mine = prompts_of(scripted, "律師", before)
    assert mine, "律師 is cued by everyone, so 律師 must have played after coming back"
    for prompt in mine:
        assert not (missed & set(_LINE.findall(prompt))), "律師 heard a line said while out"
        assert EVENT_MARKER not in prompt
        assert "（你不在場的時候，過了 5 輪。）" in prompt
        assert "（律師 進場）" in prompt and "（律師 退場）" in prompt  # its own comings/goings
        assert lines_of(scene, range(1, 4)) <= set(_LINE.findall(prompt))  # what it witnessed
        assert PUBLIC_CONTEXT in prompt
    # Nobody else was ever in the dark: 刑警 heard everything, including the event.
    await r.cue(Actor("刑警"))
    assert missed <= set(_LINE.findall(prompts_of(scripted, "刑警")[-1]))
    assert EVENT_MARKER in prompts_of(scripted, "刑警")[-1]


async def test_an_off_stage_actor_is_never_scheduled_and_cannot_be_cued(scene, scripted):
    scripted.register("improv", marked_actor)
    r = Rehearsal(scene, models=scripted)
    await r.stage.exit(Actor("律師"))
    before = (scene / "transcript.md").read_text(encoding="utf-8")
    for refused in (
        r.cue(Actor("律師")),
        r.run(2, start=Actor("律師")),
        r.stage.exit(Actor("律師")),
        r.stage.say(Actor("律師"), "我在。"),
    ):
        with pytest.raises(OffStage):
            await refused
    with pytest.raises(OnStage):
        await r.stage.enter(Actor("刑警"))
    assert (scene / "transcript.md").read_text(encoding="utf-8") == before  # nothing written
    await r.run(6, start=Actor("林小姐"))
    state = await r.state()
    assert {t.actor for t in state.turns} == {"林小姐", "刑警"}
    # Every cue went to 律師 (off stage) and only one other could answer: no model call.
    assert not [c for c in scripted.calls if c.shape.kind == "stage_manager"]


async def test_nobody_on_stage_refuses_a_run(scene, scripted):
    r = Rehearsal(scene, models=scripted)
    for actor in ("林小姐", "刑警", "律師"):
        await r.stage.exit(Actor(actor))
    with pytest.raises(NobodyOnStage):
        await r.run(1)


async def test_on_stage_in_context_md_seeds_the_take_and_the_record_remembers_it(scene, scripted):
    context = scene / "context.md"
    context.write_text(
        context.read_text(encoding="utf-8").replace("cast:", "on_stage: [林小姐, 刑警]\ncast:"),
        encoding="utf-8",
    )
    scripted.register("improv", marked_actor)
    r = Rehearsal(scene, models=scripted)
    assert await r.stage.on_stage() == ["林小姐", "刑警"]
    await r.run(2, start=Actor("林小姐"))
    text = (scene / "transcript.md").read_text(encoding="utf-8")
    assert text.startswith("## 0.1 · 在場\n林小姐\n刑警\n\n## 1 · 林小姐")
    # Today's on_stage no longer matters for this take: the record says who was there.
    context.write_text(
        context.read_text(encoding="utf-8").replace("on_stage: [林小姐, 刑警]\n", ""),
        encoding="utf-8",
    )
    assert await Rehearsal(scene, models=scripted).stage.on_stage() == ["林小姐", "刑警"]


async def test_takes_replay_and_a_restart_keep_who_was_on_stage_when(scene, scripted):
    scripted.register("improv", marked_actor)
    r = Rehearsal(scene, models=scripted)
    await r.run(2, start=Actor("林小姐"))
    await r.stage.exit(Actor("律師"))
    await r.run(3)  # turns 3-5 without 律師
    await r.stage.enter(Actor("律師"))
    await r.run(2)  # turns 6-7
    await r.takes.save()
    missed = lines_of(scene, range(3, 6))

    # Replay until turn 4: 律師 had left and not come back yet.
    result = await r.takes.replay(1, until=4)
    assert result.kept_turns == 4
    text = (scene / "transcript.md").read_text(encoding="utf-8")
    assert [b.kind for b in parse_blocks(text)] == ["exit"]
    assert await r.stage.on_stage() == ["林小姐", "刑警"]
    with pytest.raises(OffStage):
        await r.cue(Actor("律師"))

    # Replay until turn 5 keeps the entrance recorded before turn 6.
    await r.takes.replay(1, until=5)
    assert await r.stage.on_stage() == ["林小姐", "刑警", "律師"]

    # A restart (a new Rehearsal on the same folder) derives the same stage from the files.
    before = len(scripted.calls)
    fresh = Rehearsal(scene, models=scripted)
    assert await fresh.stage.on_stage() == ["林小姐", "刑警", "律師"]
    await fresh.cue(Actor("律師"))
    prompt = prompts_of(scripted, "律師", before)[0]
    assert not (missed & set(_LINE.findall(prompt)))
    assert "（你不在場的時候，過了 3 輪。）" in prompt


async def test_an_entrance_after_missing_the_start_tells_only_that_time_passed(scene, scripted):
    scripted.register("improv", marked_actor)
    r = Rehearsal(scene, models=scripted)
    await r.stage.exit(Actor("律師"))
    await r.run(2, start=Actor("林小姐"))
    await r.stage.enter(Actor("律師"))
    await r.cue(Actor("律師"))
    prompt = prompts_of(scripted, "律師")[-1]
    assert "（你不在場的時候，過了 2 輪。）" in prompt
    assert not (lines_of(scene, range(1, 3)) & set(_LINE.findall(prompt)))
    # The system prompt names who is on stage now.
    assert "# 在場角色\n林小姐、刑警、律師" in prompt
