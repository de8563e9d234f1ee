"""The walls between roles (DESIGN §2), proven on the exact prompts each model received."""

from __future__ import annotations

from pathlib import Path

from scenekit import ALL_WHISPER, CAST, PUBLIC_CONTEXT, SOUL_MARKER, WHISPER_MARKER

from engine import Actor, Rehearsal
from engine.providers.scripted import ScriptedRequest

DIRECTION = "DIRECTION-MARKER 拍桌子"


def thought_marker(actor: str, n: int) -> str:
    return f"THOUGHT-{CAST.index(actor)}-{n}"


def leaky_actor(request: ScriptedRequest) -> str:
    """Each actor thinks a marked thought; every third turn throws the ball to ANY."""
    shape = request.shape
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[request.index % len(shape.cast)]}\nREASON: 看誰被點名"
    me = shape.speaker
    others = [a for a in shape.cast if a != me]
    cue = "ANY" if request.index % 3 == 2 else others[request.index % len(others)]
    return (
        f"<thought>{thought_marker(me, request.index)} 我不能讓他們知道。</thought>"
        f"<action>{me}看向窗外。</action><dialogue>「第{request.index}句。」</dialogue>"
        f"<cue>{cue}</cue>"
    )


async def rehearse(scene: Path, scripted) -> list[ScriptedRequest]:
    scripted.register("improv", leaky_actor)
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(9, start=Actor("林小姐"))
    await rehearsal.cue(Actor("刑警"), DIRECTION)
    await rehearsal.run(3)
    return list(scripted.calls)


def thoughts_of(actor: str, calls: list[ScriptedRequest]) -> list[str]:
    n = sum(1 for c in calls if c.shape.kind == "actor")
    return [thought_marker(actor, i) for i in range(n)]


async def test_an_actor_never_sees_another_actors_soul_thoughts_or_whispers(scene, scripted):
    calls = await rehearse(scene, scripted)
    actor_calls = [c for c in calls if c.shape.kind == "actor"]
    assert {c.shape.speaker for c in actor_calls} == set(CAST)
    for call in actor_calls:
        me = call.shape.speaker
        for other in CAST:
            if other == me:
                continue
            assert SOUL_MARKER[other] not in call.prompt
            assert WHISPER_MARKER[other] not in call.prompt
            for marker in thoughts_of(other, calls):
                assert marker not in call.prompt, f"{me} saw {other}'s thought {marker}"


async def test_an_actor_sees_its_own_soul_whisper_public_context_and_past_thoughts(scene, scripted):
    calls = await rehearse(scene, scripted)
    thoughts = (scene / "backstage" / "林小姐.log").read_text(encoding="utf-8")
    later = [c for c in calls if c.shape.kind == "actor" and c.shape.speaker == "林小姐"][-1]
    for text in (SOUL_MARKER["林小姐"], WHISPER_MARKER["林小姐"], ALL_WHISPER, PUBLIC_CONTEXT):
        assert text in later.prompt
    first_thought = thoughts.split("\n")[1].split(" ")[0]
    assert first_thought.startswith("THOUGHT-0-") and first_thought in later.prompt


async def test_the_stage_manager_sees_only_public_information(scene, scripted):
    calls = await rehearse(scene, scripted)
    sm_calls = [c for c in calls if c.shape.kind == "stage_manager"]
    assert sm_calls, "the script throws to ANY, so the stage manager must have been asked"
    for call in sm_calls:
        assert PUBLIC_CONTEXT in call.prompt and ALL_WHISPER in call.prompt
        for actor in CAST:
            assert SOUL_MARKER[actor] not in call.prompt
            assert WHISPER_MARKER[actor] not in call.prompt
            for marker in thoughts_of(actor, calls):
                assert marker not in call.prompt
        assert DIRECTION not in call.prompt


async def test_a_cue_direction_reaches_only_that_actor_for_that_turn(scene, scripted):
    calls = await rehearse(scene, scripted)
    with_direction = [c for c in calls if DIRECTION in c.prompt]
    assert len(with_direction) == 1 and with_direction[0].shape.speaker == "刑警"
    transcript = (scene / "transcript.md").read_text(encoding="utf-8")
    assert DIRECTION not in transcript


async def test_the_public_record_holds_no_private_text(scene, scripted):
    calls = await rehearse(scene, scripted)
    transcript = (scene / "transcript.md").read_text(encoding="utf-8")
    for actor in CAST:
        assert SOUL_MARKER[actor] not in transcript
        assert WHISPER_MARKER[actor] not in transcript
        for marker in thoughts_of(actor, calls):
            assert marker not in transcript
    assert "看誰被點名" not in transcript  # the stage manager's reasoning is director-only
    assert "看誰被點名" in (scene / "stage_manager.log").read_text(encoding="utf-8")


async def test_thoughts_land_in_the_speakers_backstage_log_only(scene, scripted):
    calls = await rehearse(scene, scripted)
    for actor in CAST:
        log = (scene / "backstage" / f"{actor}.log").read_text(encoding="utf-8")
        for other in CAST:
            if other != actor:
                assert not any(m in log for m in thoughts_of(other, calls))
