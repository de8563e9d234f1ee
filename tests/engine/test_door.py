"""The model door is handed to each scene (`Rehearsal(root, models=...)`), not found in a global:
two scenes in one process with two scripted doors never see each other's scripts or prompts,
and the reply shape and spend gate travel with each call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scenekit import write_scene

from engine import Actor, Config, Rehearsal
from engine.folder.turns import parse_transcript
from engine.providers.scripted import ScriptedFailure, ScriptedModels, ScriptedRequest


def speaks(marker: str):
    def script(request: ScriptedRequest) -> str:
        shape = request.shape
        if shape.kind == "stage_manager":
            return f"NEXT: {shape.cast[0]}\nREASON: {marker}"
        others = [a for a in shape.cast if a != shape.speaker]
        return (
            f"<thought>{marker} thinks</thought>\n<action>{marker} waits.</action>\n"
            f"<dialogue>{marker} line {request.index}</dialogue>\n<cue>{others[0]}</cue>"
        )

    return script


def own_context(root: Path, marker: str) -> Path:
    context = root / "context.md"
    context.write_text(context.read_text("utf-8") + f"\nCONTEXT-OF-{marker}\n", "utf-8")
    return root


async def test_two_scenes_with_two_doors_never_see_each_others_scripts_or_prompts(tmp_path):
    a_door = ScriptedModels({"improv": speaks("DOOR-A")}, latency=0.01)
    b_door = ScriptedModels({"improv": speaks("DOOR-B")}, latency=0.01)
    a = Rehearsal(own_context(write_scene(tmp_path / "a"), "A"), models=a_door)
    b = Rehearsal(own_context(write_scene(tmp_path / "b"), "B"), models=b_door)

    results = await asyncio.gather(a.run(4, start=Actor("刑警")), b.run(4, start=Actor("律師")))

    assert [r.reason for r in results] == ["completed", "completed"]
    for door, mine, theirs in ((a_door, "A", "B"), (b_door, "B", "A")):
        assert door.calls, "each door answered its own scene"
        for call in door.calls:
            assert f"CONTEXT-OF-{mine}" in call.prompt
            assert f"CONTEXT-OF-{theirs}" not in call.prompt
            assert f"DOOR-{theirs}" not in call.prompt
    for root, mine in ((a.root, "A"), (b.root, "B")):
        lines = [t.dialogue for t in parse_transcript((root / "transcript.md").read_text("utf-8"))]
        assert len(lines) == 4 and all(line.startswith(f"DOOR-{mine} ") for line in lines)
    # each door counts its own calls: both scenes' first lines are line 0 of their script
    assert [c.index for c in a_door.calls][:1] == [c.index for c in b_door.calls][:1] == [0]


async def test_a_scene_without_a_door_uses_the_built_in_scripts_and_no_test_door(scene, scripted):
    scripted.register("improv", speaks("NOT-ME"))
    result = await Rehearsal(scene).run(2, start=Actor("刑警"))  # the default door, as `circus run`
    assert result.reason == "completed"
    assert scripted.calls == []
    lines = parse_transcript((scene / "transcript.md").read_text("utf-8"))
    assert [t.dialogue.startswith("This is line ") for t in lines] == [True, True]


async def test_the_reply_shape_reaches_the_provider_with_each_call(scene, scripted):
    await Rehearsal(scene, models=scripted).cue(Actor("律師"))
    (call,) = scripted.calls
    assert (call.shape.kind, call.shape.speaker) == ("actor", "律師")
    assert set(call.shape.cast) == {"林小姐", "刑警", "律師"}


async def test_a_config_handed_to_a_scene_is_the_one_it_uses(scene, monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL_RETRIES", "5")  # the environment now: not read again
    config = Config(model_retries=0)
    door = ScriptedModels({"improv": down}, config=config)
    result = await Rehearsal(scene, models=door, config=config).cue(Actor("刑警"))
    assert result.reason == "error"
    assert len(door.calls) == 1  # no retry: the scene's own config said so


def down(request: ScriptedRequest) -> str:
    raise ScriptedFailure(503, "overloaded")
