"""Actor options and the director check, as people in a scene thread meet them: the director
check refuses before a typed name is even looked up; a name or alias is resolved once, by the
engine, and the actor it means is who performs; a name nobody has is refused with the cast, in
the scene's language."""

from __future__ import annotations

import pytest
from botkit import finished, room


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def transcript(r, scene: str) -> str:
    return (r.home / scene / "transcript.md").read_text(encoding="utf-8")


async def test_a_cue_by_alias_is_performed_by_the_actor_it_means(tmp_path, scripted):
    async with room(tmp_path, models=scripted) as r:
        thread = await r.new_scene("審訊室")
        answer = await r.ask("cue", {"actor": "張律師", "direction": "慢一點"}, channel=thread)
        assert "律師" in answer and "張律師" not in answer
        await finished(r, thread)
        assert r.lines(thread)[-1].startswith("律師:")
        (call,) = [c for c in scripted.calls if c.shape.kind == "actor"]
        assert call.shape.speaker == "律師" and "慢一點" in call.prompt


async def test_someone_who_may_not_direct_is_refused_before_the_name_is_looked_up(
    tmp_path, scripted
):
    async with room(tmp_path, models=scripted) as r:
        thread = await r.new_scene("審訊室")
        before = transcript(r, "審訊室")
        for command, options in [
            ("cue", {"actor": "王五"}),  # nobody: still "not a director", not "no such actor"
            ("enter", {"actor": "張律師"}),
            ("soul show", {"actor": "律師"}),
            ("unplay", {"actor": "刑警"}),
        ]:
            refusal = await r.ask(command, options, user="bob", channel=thread)
            assert refusal.startswith("只有這場戲的導演"), (command, refusal)
            assert "王五" not in refusal and "角色小傳" not in refusal
        assert transcript(r, "審訊室") == before
        assert scripted.calls == []


async def test_an_unknown_actor_is_refused_with_the_cast_in_the_scenes_language(tmp_path, scripted):
    async with room(tmp_path, models=scripted) as r:
        thread = await r.new_scene("審訊室")
        before = transcript(r, "審訊室")
        for command in ("cue", "enter", "exit", "play", "soul show", "soul edit", "note"):
            options = {"actor": "王五"} | ({"text": "小聲點"} if command == "note" else {})
            refusal = await r.ask(command, options, channel=thread)
            assert refusal == "這場戲沒有叫 王五 的演員——演員有：林小姐, 刑警, 律師。", command
        refusal = await r.ask("run", {"turns": 1, "start": "王五"}, channel=thread)
        assert "王五" in refusal and "林小姐, 刑警, 律師" in refusal
        assert transcript(r, "審訊室") == before
        assert scripted.calls == []


async def test_a_director_command_outside_a_scene_thread_says_where_it_works(tmp_path, scripted):
    async with room(tmp_path, models=scripted) as r:
        await r.new_scene("審訊室")
        for command, options in [("cue", {"actor": "律師"}), ("take save", {})]:
            text = await r.ask(command, options)  # in the channel, not the scene's thread
            assert "/scene new" in text and "/scene open" in text, command
