"""Director commands on a scene folder, asserted on the files a writer would open."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from scenekit import CAST

from engine import Actor, Rehearsal, Run
from engine.errors import (
    BadName,
    BadRequest,
    BadSceneFile,
    SceneBusy,
    SceneNotFound,
    TakeNotFound,
    UnknownActor,
)
from engine.events import (
    Cut,
    ErrorEvent,
    NoteAdded,
    RunFinished,
    StageManagerDecided,
    TurnCompleted,
    TurnStarted,
)
from engine.folder.turns import parse_backstage, parse_transcript
from engine.providers.scripted import ScriptedFailure, ScriptedRequest


def transcript(scene: Path):
    path = scene / "transcript.md"  # absent until the first turn lands (a cut may come first)
    return parse_transcript(path.read_text(encoding="utf-8")) if path.exists() else []


def backstage(scene: Path, actor: str) -> dict[int, str]:
    path = scene / "backstage" / f"{actor}.log"
    return parse_backstage(path.read_text(encoding="utf-8")) if path.exists() else {}


def collect(rehearsal: Rehearsal) -> list:
    events: list = []
    rehearsal.events.listen(events.append)
    return events


def replies(*texts: str):
    """A script that plays back fixed replies (the last one repeats)."""

    def script(request: ScriptedRequest) -> str:
        return texts[min(request.index, len(texts) - 1)]

    return script


def line(actor_cue: str, n: int = 0) -> str:
    return f"<thought>想法{n}</thought><dialogue>台詞{n}</dialogue><cue>{actor_cue}</cue>"


async def test_a_run_writes_the_transcript_and_each_actors_backstage(scene):
    rehearsal = Rehearsal(scene)
    events = collect(rehearsal)
    result = await rehearsal.run(6, start=Actor("律師"))
    assert (result.turns_done, result.reason, result.last_turn) == (6, "completed", 6)
    turns = transcript(scene)
    assert [t.number for t in turns] == [1, 2, 3, 4, 5, 6]
    assert turns[0].actor == "律師"
    for turn in turns:
        assert turn.number in backstage(scene, turn.actor)
    completed = [e for e in events if isinstance(e, TurnCompleted)]
    assert [e.turn for e in completed] == [1, 2, 3, 4, 5, 6]
    assert completed[0].thought == backstage(scene, "律師")[1]
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"
    started = [e for e in events if isinstance(e, TurnStarted)]
    assert started[0].reason == "start" and started[1].reason in {"cue", "neglect"}


async def test_actors_throw_the_ball_to_each_other_without_the_stage_manager(scene, scripted):
    order = {"林小姐": "刑警", "刑警": "律師", "律師": "林小姐"}
    scripted.register("improv", lambda r: line(order[r.shape.speaker], r.index))
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(6, start=Actor("林小姐"))
    assert [t.actor for t in transcript(scene)] == ["林小姐", "刑警", "律師"] * 2
    assert all(c.shape.kind == "actor" for c in scripted.calls)


async def test_an_open_cue_goes_to_the_stage_manager_whose_choice_is_director_only(scene, scripted):
    def script(request: ScriptedRequest) -> str:
        if request.shape.kind == "stage_manager":
            return "NEXT: 律師\nREASON: 她剛被提到"
        return line("ANY")

    scripted.register("improv", script)
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    await rehearsal.run(2, start=Actor("林小姐"))
    assert [t.actor for t in transcript(scene)] == ["林小姐", "律師"]
    decision = next(e for e in events if isinstance(e, StageManagerDecided))
    assert decision.actor == "律師" and "她剛被提到" in decision.reason
    assert "她剛被提到" in (scene / "stage_manager.log").read_text(encoding="utf-8")


async def test_an_invalid_stage_manager_answer_is_reasked_once_then_falls_back(scene, scripted):
    def script(request: ScriptedRequest) -> str:
        if request.shape.kind == "stage_manager":
            return "NEXT: 王五"  # nobody by that name, twice
        return line("")

    scripted.register("improv", script)
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    await rehearsal.run(2, start=Actor("林小姐"))
    sm_calls = [c for c in scripted.calls if c.shape.kind == "stage_manager"]
    assert len(sm_calls) == 2
    reask = sm_calls[1].messages[-1]["content"]
    assert "王五" in reask and "刑警" in reask and "律師" in reask
    assert "林小姐" not in reask  # she just threw the ball open: someone else answers
    decision = next(e for e in events if isinstance(e, StageManagerDecided))
    assert decision.fallback and decision.actor != "林小姐"  # longest silent, not who just spoke
    assert transcript(scene)[1].actor == decision.actor


async def test_neglect_protection_gives_the_silent_actor_the_floor_with_a_note(scene, scripted):
    ping = {"林小姐": "刑警", "刑警": "林小姐", "律師": "林小姐"}
    scripted.register("improv", lambda r: line(ping[r.shape.speaker], r.index))
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    await rehearsal.run(4, start=Actor("林小姐"))
    assert [t.actor for t in transcript(scene)] == ["林小姐", "刑警", "林小姐", "律師"]
    assert [e.reason for e in events if isinstance(e, TurnStarted)][-1] == "neglect"
    lawyer_prompt = [c for c in scripted.calls if c.shape.speaker == "律師"][0].prompt
    assert "你已經沉默很久了" in lawyer_prompt


async def test_a_malformed_reply_is_repaired_once_naming_the_problem(scene, scripted):
    scripted.register("improv", replies("<action>只有動作</action><cue>刑警</cue>", line("刑警")))
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    await rehearsal.cue(Actor("林小姐"))
    assert len(scripted.calls) == 2
    assert "<thought> is missing" in scripted.calls[1].messages[-1]["content"]
    done = next(e for e in events if isinstance(e, TurnCompleted))
    assert done.repaired and not done.fallback and done.dialogue == "台詞0"


async def test_a_reply_that_stays_broken_falls_back_to_silence_and_never_publishes_prose(
    scene, scripted
):
    scripted.register("improv", replies("I secretly know the lawyer lied. No tags for you."))
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.cue(Actor("林小姐"))
    turn = transcript(scene)[0]
    assert (turn.actor, turn.action, turn.dialogue) == ("林小姐", "（沉默）", "")
    assert "secretly" in backstage(scene, "林小姐")[1]  # the director can still read it
    assert len(scripted.calls) == 2


async def test_rate_limits_are_retried_and_a_dead_model_skips_the_turn_intact(scene, scripted):
    failures = iter([429, 503])

    def flaky(request: ScriptedRequest) -> str:
        code = next(failures, None)
        if code:
            raise ScriptedFailure(code, "busy")
        return line("刑警")

    scripted.register("improv", flaky)
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.cue(Actor("林小姐"))
    assert len(transcript(scene)) == 1 and len(scripted.calls) == 3

    def dead(request: ScriptedRequest) -> str:
        raise ScriptedFailure(500, "model is down")

    scripted.register("improv", dead)
    events = collect(rehearsal)
    result = await rehearsal.run(3)
    assert result.reason == "error" and result.turns_done < 3
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert "model is down" in error.message and error.actor
    assert len(transcript(scene)) == 1  # nothing half-made landed


async def test_a_fallback_model_takes_over_when_the_actors_model_fails(scene, scripted):
    soul = scene / "actors" / "林小姐" / "soul.md"
    soul.write_text(
        soul.read_text(encoding="utf-8").replace(
            "---\n", "---\nmodel: scripted/down\nfallback_model: scripted/backup\n", 1
        ),
        encoding="utf-8",
    )

    def down(request: ScriptedRequest) -> str:
        raise ScriptedFailure(401, "bad key")

    scripted.register("down", down)
    scripted.register("backup", lambda r: line("刑警"))
    await Rehearsal(scene, models=scripted).cue(Actor("林小姐"))
    assert [c.model for c in scripted.calls] == ["down", "backup"]  # 401 is not retried
    assert transcript(scene)[0].dialogue == "台詞0"


async def test_cue_gives_one_turn_with_a_private_direction(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.cue(await rehearsal.resolve_actor("張律師"), "動作：拍桌子")  # an alias works
    assert [t.actor for t in transcript(scene)] == ["律師"]
    assert "動作：拍桌子" in scripted.calls[0].prompt


async def test_a_note_is_used_from_the_next_turn(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    await rehearsal.cue(Actor("林小姐"))
    await rehearsal.notes.note("NEW-PRIVATE-NOTE 你開始懷疑律師", Actor("林小姐"))
    await rehearsal.notes.note("NEW-ALL-NOTE 加快節奏")
    await rehearsal.cue(Actor("林小姐"))
    await rehearsal.cue(Actor("刑警"))
    first, second, third = (c.prompt for c in scripted.calls)
    assert "NEW-PRIVATE-NOTE" not in first and "NEW-PRIVATE-NOTE" in second
    assert "NEW-PRIVATE-NOTE" not in third and "NEW-ALL-NOTE" in third
    notes = (scene / "director_notes.md").read_text(encoding="utf-8")
    assert "## 林小姐\n- PRIVATE-WHISPER-0\n- NEW-PRIVATE-NOTE" in notes
    assert [e.actor for e in events if isinstance(e, NoteAdded)] == ["林小姐", None]


async def test_a_writers_edits_between_turns_are_honoured(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.cue(Actor("林小姐"))
    soul = scene / "actors" / "刑警" / "soul.md"
    soul.write_text(
        soul.read_text(encoding="utf-8") + "\nEDITED-SOUL 他其實很累。\n", encoding="utf-8"
    )
    path = scene / "transcript.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("台詞", "改過的台詞"), encoding="utf-8"
    )
    await rehearsal.cue(Actor("刑警"))
    prompt = scripted.calls[-1].prompt
    assert "EDITED-SOUL" in prompt and "改過的台詞" in prompt


async def test_a_restarted_engine_continues_numbering_and_silence_from_the_files(scene, scripted):
    ping = {"林小姐": "刑警", "刑警": "林小姐", "律師": "林小姐"}
    scripted.register("improv", lambda r: line(ping[r.shape.speaker], r.index))
    await Rehearsal(scene, models=scripted).run(2, start=Actor("林小姐"))
    again = Rehearsal(scene, models=scripted)  # a new process would build exactly this
    events = collect(again)
    await again.resume(2)
    assert [t.number for t in transcript(scene)] == [1, 2, 3, 4]
    # 律師 had been silent for 3 turns when turn 4 was chosen: neglect survived the restart
    assert [t.actor for t in transcript(scene)] == ["林小姐", "刑警", "林小姐", "律師"]
    assert [e.reason for e in events if isinstance(e, TurnStarted)] == ["cue", "neglect"]


async def test_cut_mid_call_stops_the_run_and_nothing_half_made_lands(scene, scripted):
    scripted.latency = 0.3
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    two_landed = asyncio.Event()
    third_started = asyncio.Event()

    def watch(event) -> None:
        if isinstance(event, TurnCompleted) and event.turn == 2:
            two_landed.set()
        if isinstance(event, TurnStarted) and event.turn == 3:
            third_started.set()

    rehearsal.events.listen(watch)
    task = await rehearsal.start_run(Run(50, Actor("林小姐")))
    await two_landed.wait()
    await third_started.wait()  # turn 3's model call is in flight (it takes 0.3 s)
    assert await rehearsal.cut()
    # How fast a cut lands is measured in bench/bench_engine.py, not asserted here.
    result = await task
    assert result.reason == "cut"
    turns = transcript(scene)
    for turn in turns:
        assert turn.number in backstage(scene, turn.actor)
    assert sum(len(backstage(scene, a)) for a in CAST) == len(turns)
    assert any(isinstance(e, Cut) for e in events)
    assert not rehearsal.running and not await rehearsal.cut()


async def test_one_run_per_scene_and_many_scenes_at_once(scene, tmp_path, scripted):
    scripted.latency = 0.05
    rehearsal = Rehearsal(scene, models=scripted)
    task = await rehearsal.start_run(Run(3, Actor("林小姐")))
    with pytest.raises(SceneBusy, match="already running"):
        await rehearsal.start_run(Run(1))
    with pytest.raises(SceneBusy):
        await Rehearsal(scene, models=scripted).run(
            1
        )  # another process-level holder of the same folder
    other = tmp_path / "second"
    shutil.copytree(
        scene, other, ignore=shutil.ignore_patterns(".circus", "transcript.md", "backstage")
    )
    await asyncio.gather(task, Rehearsal(other, models=scripted).run(3, start=Actor("刑警")))
    assert len(transcript(scene)) == 3 and len(transcript(other)) == 3


async def test_takes_are_snapshots_and_replay_starts_over_with_current_souls(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(4, start=Actor("林小姐"))
    assert await rehearsal.takes.save() == 1
    assert (scene / "takes" / "take_1" / "actors" / "林小姐" / "soul.md").exists()
    assert not (scene / "takes" / "take_1" / "takes").exists()
    assert [t.number for t in await rehearsal.takes.saved()] == [1]
    assert "## 4 ·" in await rehearsal.takes.show("take_1")

    await rehearsal.run(2)  # unsaved work on top of take 1
    soul = scene / "actors" / "刑警" / "soul.md"
    soul.write_text(soul.read_text(encoding="utf-8") + "\nREVISED-SOUL\n", encoding="utf-8")
    result = await rehearsal.takes.replay("1", until=2)
    assert result.autosaved == 2 and result.kept_turns == 2 and result.take == 3
    assert len(parse_transcript((scene / "takes/take_2/transcript.md").read_text("utf-8"))) == 6
    assert [t.number for t in transcript(scene)] == [1, 2]
    assert all(n <= 2 for a in CAST for n in backstage(scene, a))
    await rehearsal.cue(Actor("刑警"))
    assert [t.number for t in transcript(scene)] == [1, 2, 3]
    assert "REVISED-SOUL" in scripted.calls[-1].prompt
    assert (await rehearsal.status()).take == 3


async def test_status_reports_turns_takes_tokens_and_cost(scene):
    rehearsal = Rehearsal(scene)
    await rehearsal.run(3, start=Actor("林小姐"))
    status = await rehearsal.status()
    assert (status.turns, status.take, status.mode) == (3, 1, "idle")
    assert status.cast == CAST
    assert status.prompt_tokens > 0 and status.model_calls >= 3
    assert status.cost_usd == 0.0  # in-process models are free; hosted ones use litellm's prices


async def test_summarize_for_drafts_only_the_prior_story(scene, scripted):
    scripted.register("improv", lambda r: "林小姐親眼看見刑警收下信封。")
    rehearsal = Rehearsal(scene, models=scripted)
    story = await rehearsal.souls.summarize_for(
        Actor("林小姐"), "全知前情：刑警收賄，林小姐看見了，律師不知情。"
    )
    assert story == "林小姐親眼看見刑警收下信封。"
    soul = (scene / "actors" / "林小姐" / "soul.md").read_text(encoding="utf-8")
    assert soul.startswith("---\naliases:")
    assert "## 前期劇本\n\n林小姐親眼看見刑警收下信封。\n\n## 導戲筆記" in soul
    prompt = scripted.calls[0].prompt
    assert "全知前情" in prompt and "林小姐知道的事" not in prompt  # old story not re-fed


@pytest.mark.parametrize(
    "command, error, says",
    [
        (lambda r: r.cue(Actor("王五")), UnknownActor, "the cast is 林小姐, 刑警, 律師"),
        (lambda r: r.notes.note("x", Actor("王五")), UnknownActor, "王五"),
        (lambda r: r.notes.note("   "), BadRequest, "needs some text"),
        (lambda r: r.run(0), BadRequest, "between 1 and"),
        (lambda r: r.run(1, start=Actor("王五")), UnknownActor, "王五"),
        (lambda r: r.takes.replay("take_9"), TakeNotFound, "none yet"),
        (
            lambda r: r.souls.set(Actor("林小姐"), "---\nmodel: [\n---\nx"),
            BadSceneFile,
            "soul.md",
        ),
    ],
)
async def test_refused_commands_say_why_and_change_nothing(scene, command, error, says):
    before = {p: p.read_bytes() if p.is_file() else None for p in scene.rglob("*")}
    with pytest.raises(error, match=says):
        await command(Rehearsal(scene))
    after = {p: p.read_bytes() if p.is_file() else None for p in scene.rglob("*")}
    assert after == before


async def test_broken_files_are_named_in_the_error(scene, tmp_path):
    (scene / "actors" / "律師" / "soul.md").unlink()
    with pytest.raises(BadSceneFile, match="律師/soul.md.*missing"):
        await Rehearsal(scene).run(1)
    with pytest.raises(SceneNotFound, match="circus new"):
        await Rehearsal(tmp_path / "nowhere").run(1)
    assert not (tmp_path / "nowhere").exists()  # a typo'd scene path creates nothing
    (scene / "actors" / "律師" / "soul.md").write_text("x", encoding="utf-8")
    (scene / "context.md").write_text("---\nneglect_turns: many\n---\nx", encoding="utf-8")
    with pytest.raises(BadSceneFile, match="context.md.*neglect_turns"):
        await Rehearsal(scene).run(1)
    (scene / "context.md").write_text("x", encoding="utf-8")
    (scene / "actors" / "bad?name").mkdir()  # hidden folders (.obsidian) are not actors
    with pytest.raises(BadName):
        await Rehearsal(scene).run(1)


async def test_every_cut_lands_even_when_many_scenes_are_cut_at_once(scene, tmp_path, scripted):
    scripted.latency = 0.01
    scenes = [scene]
    for i in range(7):
        copy = tmp_path / f"copy{i}"
        shutil.copytree(scene, copy, ignore=shutil.ignore_patterns(".circus"))
        scenes.append(copy)
    rehearsals = [Rehearsal(s, models=scripted) for s in scenes]
    tasks = [await r.start_run(Run(200, Actor("林小姐"))) for r in rehearsals]
    for round_ in range(3):
        await asyncio.sleep(0.05 + 0.013 * round_)
        await asyncio.gather(*(r.cut() for r in rehearsals))
        results = await asyncio.gather(*tasks)
        assert {r.reason for r in results} == {"cut"}
        assert not any(r.running for r in rehearsals)
        for s in scenes:
            # a cut may land before a scene's first turn (the first prompt of a process loads
            # its model's tokenizer): then there is no transcript yet, and no backstage either
            turns = transcript(s) if (s / "transcript.md").exists() else []
            assert sum(len(backstage(s, a)) for a in CAST) == len(turns)
        tasks = [await r.start_run(Run(200)) for r in rehearsals]
    for r in rehearsals:
        await r.cut()
    await asyncio.gather(*tasks)


async def test_an_open_cue_in_a_two_hander_needs_no_stage_manager(scene, scripted):
    shutil.rmtree(scene / "actors" / "律師")
    scripted.register("improv", lambda r: line("ANY", r.index))
    await Rehearsal(scene, models=scripted).run(4, start=Actor("林小姐"))
    assert [t.actor for t in transcript(scene)] == ["林小姐", "刑警"] * 2
    assert all(c.shape.kind == "actor" for c in scripted.calls)


async def test_a_soul_broken_mid_run_ends_the_run_with_a_message_naming_the_file(scene, scripted):
    soul = scene / "actors" / "刑警" / "soul.md"

    def break_a_soul(request: ScriptedRequest) -> str:
        soul.write_text("---\nmodel: [unclosed\n---\n", encoding="utf-8")  # the writer's typo
        return line("刑警", request.index)

    scripted.register("improv", break_a_soul)
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    result = await rehearsal.run(5, start=Actor("林小姐"))
    assert (result.reason, result.turns_done, result.last_turn) == ("error", 1, 1)
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert "刑警/soul.md" in error.message and "YAML" in error.message
    assert isinstance(events[-1], RunFinished) and not rehearsal.running
    assert len(transcript(scene)) == 1


async def test_an_edit_made_while_a_model_is_thinking_is_honoured_next_turn(scene, scripted):
    path = scene / "transcript.md"

    def edit_while_thinking(request: ScriptedRequest) -> str:
        if request.index == 1:  # the writer fixes turn 1's line in Obsidian meanwhile
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("台詞0", "改寫過的台詞"), encoding="utf-8")
        return line("刑警" if request.shape.speaker != "刑警" else "林小姐", request.index)

    scripted.register("improv", edit_while_thinking)
    await Rehearsal(scene, models=scripted).run(3, start=Actor("林小姐"))
    assert "改寫過的台詞" in scripted.calls[2].prompt
    assert [t.number for t in transcript(scene)] == [1, 2, 3]


async def test_a_turn_has_one_deadline_across_retries_and_fallbacks(scene, scripted):
    context = scene / "context.md"
    context.write_text(
        context.read_text("utf-8").replace("---\n", "---\nturn_timeout: 0.1\n", 1), "utf-8"
    )
    soul = scene / "actors" / "林小姐" / "soul.md"
    soul.write_text(
        soul.read_text("utf-8").replace("---\n", "---\nfallback_model: scripted/improv\n", 1),
        "utf-8",
    )

    async def slow_failure(request: ScriptedRequest) -> str:
        await asyncio.sleep(0.09)  # each call stays inside its own timeout...
        raise ScriptedFailure(503, "overloaded")

    scripted.register("improv", slow_failure)
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    result = await rehearsal.cue(Actor("林小姐"))
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert "the turn took longer than" in error.message
    assert result.reason == "error" and len(scripted.calls) < 6  # ...but not the whole turn
    assert not (scene / "transcript.md").exists()
