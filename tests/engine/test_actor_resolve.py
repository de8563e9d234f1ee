"""An actor's name is resolved once (`Rehearsal.resolve_actor`); commands take the `Actor` and
only check that they are still in the cast — they never match names or aliases again."""

from __future__ import annotations

import shutil

import pytest

from engine import Actor, Rehearsal
from engine.errors import UnknownActor
from engine.providers.scripted import ScriptedRequest

LINE = "<thought>想。</thought><dialogue>說吧。</dialogue><cue></cue>"


@pytest.mark.parametrize(
    "typed, meant",
    [("律師", "律師"), ("張律師", "律師"), ("@林曉雯", "林小姐"), (" 王警官 ", "刑警")],
)
async def test_a_name_or_an_alias_resolves_to_the_cast_member(scene, typed, meant):
    assert await Rehearsal(scene).resolve_actor(typed) == Actor(meant)


async def test_a_name_not_in_the_cast_is_refused_with_the_cast(scene):
    with pytest.raises(UnknownActor, match="the cast is 林小姐, 刑警, 律師"):
        await Rehearsal(scene).resolve_actor("王五")


async def test_from_a_typed_name_to_the_prompt_is_one_resolve_and_no_extra_reload(scene, scripted):
    """What /cue does: resolve the typed alias, then cue the Actor. Counted at the moment the
    model is asked: the resolve (1), the run's check before it starts (1), the take opened
    under the run lock (1), and the turn's own read of the scene (1)."""
    rehearsal = Rehearsal(scene, models=scripted)
    seen: list[int] = []

    def script(request: ScriptedRequest) -> str:
        seen.append(rehearsal.files.loads)
        return LINE

    scripted.register("improv", script)
    before = rehearsal.files.loads
    actor = await rehearsal.resolve_actor("張律師")
    await rehearsal.cue(actor, "拍桌子")
    assert [n - before for n in seen] == [4]
    assert "拍桌子" in scripted.calls[0].prompt and "律師" in scripted.calls[0].prompt


@pytest.mark.parametrize(
    "command",
    [
        lambda r, a: r.cue(a),
        lambda r, a: r.run(1, start=a),
        lambda r, a: r.notes.note("x", a),
        lambda r, a: r.stage.enter(a),
        lambda r, a: r.stage.exit(a),
        lambda r, a: r.stage.play(a),
        lambda r, a: r.stage.unplay(a),
        lambda r, a: r.stage.say(a, "說吧。"),
        lambda r, a: r.souls.text(a),
        lambda r, a: r.souls.set(a, "## 角色小傳\n新。\n"),
        lambda r, a: r.souls.summarize_for(a, "全知前情。"),
    ],
)
async def test_commands_never_match_names_again(scene, scripted, command):
    """An alias wrapped as an Actor without the resolve is nobody in the cast: refused, and
    nothing is written."""
    before = sorted(p.relative_to(scene) for p in scene.rglob("*"))
    with pytest.raises(UnknownActor, match="No actor called 張律師"):
        await command(Rehearsal(scene, models=scripted), Actor("張律師"))
    assert sorted(p.relative_to(scene) for p in scene.rglob("*")) == before
    assert scripted.calls == []


async def test_an_actor_removed_since_the_resolve_is_refused_with_todays_cast(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    lawyer = await rehearsal.resolve_actor("律師")
    shutil.rmtree(scene / "actors" / "律師")  # a writer deleted the folder meanwhile
    with pytest.raises(UnknownActor, match="the cast is 林小姐, 刑警"):
        await rehearsal.cue(lawyer)
    assert scripted.calls == []


async def test_a_plain_name_is_a_programming_error_not_a_lookup(scene):
    with pytest.raises(TypeError, match="resolve_actor"):
        await Rehearsal(scene).cue("律師")  # type: ignore[arg-type]
