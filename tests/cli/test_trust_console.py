"""The director always knows: how the console and the bot's DMs mark a repaired,
fallback or cut turn and a model still being waited for; and the console's parsing — a cue keeps
its direction, a note never reaches everyone by accident, a strange number is one line."""

from __future__ import annotations

import asyncio
import io

import pytest
from clikit import circus
from consolekit import FORMS, console, prompts_of

from bot.render import thought_dm, turn_marks
from circus.console import Console, split_actor
from circus.render import Renderer, format_turn
from circus.render import turn_marks as console_marks
from engine import Rehearsal
from engine.errors import TakeNotFound
from engine.events import RunStarted, StillWaiting, TurnCompleted
from engine.folder.whispers import parse_notes
from engine.providers.scripted import ScriptedRequest

# ----------------------------------------------------------------------------- cues


@pytest.mark.parametrize(
    "line, expected",
    [
        ("林小姐 拍桌子", ("林小姐", "拍桌子")),
        ("林小姐拍桌子", ("林小姐", "拍桌子")),
        ("林小姐 動作：拍桌子", ("林小姐", "動作：拍桌子")),
        ("林小姐: 慢一點", ("林小姐", "慢一點")),
        ("@林曉雯 看著他", ("林小姐", "看著他")),
        ("林 看著他", ("林小姐", "看著他")),
        ("王警官", ("刑警", "")),
        ("Al sits", ("Al", "sits")),
        ("Alice sits", None),
        ("律師 慢一點", None),
    ],
)
def test_an_exact_name_or_alias_opens_the_line_and_the_rest_is_kept(line, expected):
    assert split_actor(line, FORMS) == expected


@pytest.mark.parametrize(
    "line, actor, direction",
    [
        ("CUE 林小姐 DIR-1 拍桌子", "林小姐", "DIR-1 拍桌子"),
        ("@律師 DIR-2 慢一點說", "律師", "DIR-2 慢一點說"),
        ("cue 刑警 動作：DIR-3", "刑警", "動作：DIR-3"),
        ("CUE 張律師 DIR-4", "律師", "DIR-4"),
        ("CUE 林小姐DIR-5", "林小姐", "DIR-5"),
    ],
)
async def test_a_console_cue_keeps_its_direction(scene, scripted, line, actor, direction):
    out, err, _ = await console(scene, line, models=scripted)
    (prompt,) = prompts_of(scripted, actor)
    assert f"導演指示你這一輪：{direction}" in prompt
    assert "circus:" not in err


# ----------------------------------------------------------------------------- notes


async def test_note_to_everyone_needs_an_everyone_word_and_a_private_note_stays_private(scene):
    out, err, _ = await console(
        scene,
        "NOTE 大家: EVERY-1",
        "NOTE 全體：EVERY-2",
        "NOTE 律師: PRIVATE-A",
        "NOTE 大家們: REFUSED-1",  # neither everyone nor an actor: refused, not sent to all
        "NOTE 律師 PRIVATE-B",
        "NOTE 林小姐你其實 REFUSED-2",  # ambiguous: refused
        "NOTE 律師:",
    )
    notes = parse_notes((scene / "director_notes.md").read_text(encoding="utf-8"), ["律師"])
    assert "EVERY-1" in notes.everyone and "EVERY-2" in notes.everyone
    assert "PRIVATE-A" in notes.for_actor("律師") and "PRIVATE-B" in notes.for_actor("律師")
    assert "PRIVATE" not in notes.everyone
    assert "REFUSED" not in (scene / "director_notes.md").read_text(encoding="utf-8")
    assert err.count("circus:") == 3


# ----------------------------------------------------------------------------- numbers


async def test_a_strange_take_or_turn_number_is_one_line_and_the_console_goes_on(scene, scripted):
    huge = "9" * 5000
    out, err, _ = await console(
        scene,
        "TAKE SHOW ²",
        f"TAKE SHOW {huge}",
        f"REPLAY {huge}",
        "REPLAY take_² until 3",
        "REPLAY 1 until ²",
        "RUN ²",
        f"RUN {huge}",
        "CUE 律師 STILL-HERE",
        models=scripted,
    )
    errors = [line for line in err.splitlines() if line.startswith("circus:")]
    assert len(errors) == 7, err
    assert all(len(line) < 200 for line in errors)
    assert "Traceback" not in err + out
    assert any("STILL-HERE" in p for p in prompts_of(scripted, "律師"))


@pytest.mark.parametrize("ref", ["²", "take_²", "9" * 5000, "٣"])
async def test_the_engine_refuses_a_take_it_cannot_read(scene, ref):
    with pytest.raises(TakeNotFound) as caught:
        await Rehearsal(scene).takes.show(ref)
    assert len(str(caught.value)) < 200


# ----------------------------------------------------------------------------- marks


def test_the_console_marks_how_a_turn_was_made():
    plain = format_turn(3, "林小姐", "（沉默）", "", "", marks=console_marks(False, False))
    assert "[circus]" not in plain
    fallback = format_turn(3, "林小姐", "（沉默）", "", "", marks=console_marks(True, True))
    assert "[circus] fallback" in fallback and "did not choose" in fallback
    assert "[circus] repaired" in format_turn(3, "a", "x", "", "", marks=console_marks(True, False))
    cut = console_marks(False, False, ("reply", "dialogue"))
    assert cut == ["cut: the reply was too long and read only in part; dialogue at 1500 characters"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_directors_dm_marks_a_fallback_repair_or_cut(lang):
    marks = turn_marks(True, True, ("dialogue",), lang)
    dm = thought_dm("審訊室", 1, 4, "林小姐", "想", lang, marks)
    assert ("代演" if lang == "zh" else "fallback") in dm
    assert "1500" in dm and dm.endswith("> 想")
    assert ("修復" if lang == "zh" else "repaired") in turn_marks(True, False, (), lang)[0]
    assert turn_marks(False, False, (), lang) == []
    assert thought_dm("審訊室", 1, 4, "林小姐", "想", lang) == thought_dm(
        "審訊室", 1, 4, "林小姐", "想", lang, []
    )


async def test_circus_shows_a_fallback_turn_as_circus_made_never_as_the_actors_silence(
    scene, scripted
):
    scripted.register("improv", lambda r: "no tags at all")
    out, err, _ = await console(scene, "CUE 林小姐", models=scripted)
    turn = out[out.index("[1] 林小姐") :]
    assert "（沉默）" in turn and "[circus] fallback" in turn


def test_a_model_still_being_waited_for_is_shown_on_stderr():
    out, err = io.StringIO(), io.StringIO()
    renderer = Renderer(out=out, err=err, live=False)
    renderer(RunStarted("s", 1, 1, "run"))
    renderer(StillWaiting("s", 1, 4, "林小姐", 20.04))
    assert "turn 4: still waiting for 林小姐's model (20 s so far)" in err.getvalue()
    assert out.getvalue() == ""
    renderer(
        TurnCompleted(
            "s",
            take=1,
            turn=4,
            actor="林小姐",
            action="a",
            dialogue="",
            cue="",
            thought="t",
            cut=("action",),
        )
    )
    assert "[circus] cut: action at 600 characters" in out.getvalue()


async def test_the_console_prints_waiting_while_a_model_is_slow(scene, scripted, monkeypatch):
    monkeypatch.setenv("CIRCUS_WAITING_SECONDS", "0.01")
    rehearsal, err, waiting = Rehearsal(scene, models=scripted), io.StringIO(), asyncio.Event()
    rehearsal.events.listen(lambda e: waiting.set() if isinstance(e, StillWaiting) else None)

    async def slow(request: ScriptedRequest) -> str:
        await waiting.wait()  # the console renders the event in the same emit, before this wakes
        return "<thought>t</thought><action>a</action><cue>ANY</cue>"

    scripted.register("improv", slow)
    stdin = io.StringIO("CUE 林小姐\nWAIT\nQUIT\n")
    assert await Console(rehearsal, stdin=stdin, out=io.StringIO(), err=err).run() == 0
    assert "turn 1: still waiting for 林小姐's model" in err.getvalue()


def test_circus_soul_set_refuses_an_alias_clash_and_the_scene_still_runs(scene, tmp_path):
    soul = tmp_path / "bob.md"
    soul.write_text("---\naliases: [刑警]\n---\n## 角色小傳\n律師。\n", encoding="utf-8")
    before = (scene / "actors" / "律師" / "soul.md").read_bytes()
    result = circus("soul", str(scene), "set", "律師", str(soul), cwd=tmp_path)
    assert result.returncode != 0 and "刑警" in result.stderr
    assert (scene / "actors" / "律師" / "soul.md").read_bytes() == before
    assert circus("status", str(scene), cwd=tmp_path).returncode == 0
