"""What a model may publish: private text stays private, strings are sanitised and
capped, the record other roles read cannot be forged, and the director always knows how a turn
was made. Proven on files on disk and on the exact prompts the scripted model received."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from scenekit import CAST, write_scene

from engine import Actor, Rehearsal
from engine.events import StageManagerDecided, StillWaiting, TurnCompleted
from engine.folder.sanitize import clean_text
from engine.folder.turns import Turn, parse_transcript, render_turn
from engine.providers.scripted import ScriptedRequest
from engine.reply.read import CAPS, parse_reply
from engine.takes.folders import cut_log
from engine.turn.prompts import HISTORY_BUDGET, quote

ATTACKS = Path(__file__).parents[1] / "fixtures" / "attacks"


def attack(name: str) -> str:
    if name.endswith(".json"):
        return json.loads((ATTACKS / name).read_text(encoding="utf-8"))["reply"]
    return (ATTACKS / name).read_text(encoding="utf-8")


def ordinary(request: ScriptedRequest, cue: str = "ANY") -> str:
    me, n = request.shape.speaker, request.index
    return (
        f"<thought>{me} ordinary thought {n}</thought><action>{me} waits.</action>"
        f"<dialogue>ORDINARY-{n} from {me}.</dialogue><cue>{cue}</cue>"
    )


def once_then_ordinary(reply: str, at_call: int = 0):
    """Actor call number `at_call` (from 0) gets `reply`; the other actors answer ordinarily and
    throw the ball open, so the stage manager reads the record too."""
    actor_calls = []

    def script(request: ScriptedRequest) -> str:
        if request.shape.kind == "stage_manager":
            pick = request.shape.cast[request.index % len(request.shape.cast)]
            return f"NEXT: {pick}\nREASON: ok"
        actor_calls.append(request)
        return reply if len(actor_calls) - 1 == at_call else ordinary(request)

    return script


def others_prompts(scripted, author_call: int = 0) -> list[str]:
    """Every prompt sent after the attacking reply, except the attacker's own re-asks."""
    calls = list(scripted.calls)
    actor_calls = [c for c in calls if c.shape.kind == "actor"]
    attacker = actor_calls[author_call]
    after = calls[calls.index(attacker) + 1 :]
    return [
        c.prompt for c in after if c.shape.speaker != attacker.shape.speaker or not c.shape.speaker
    ]


# ----------------------------------------------------------------------------- private text


@pytest.mark.parametrize(
    "reply, secret",
    [
        ("<thought>t</thought><dialogue>hi <thought>SECRET</thought> there</dialogue>", "SECRET"),
        ("<thought>t</thought><dialogue>hi <THOUGHT>SECRET</dialogue>", "SECRET"),
        ("<thought>t</thought><dialogue>hi < Thoughts >SECRET</ thoughts > x</dialogue>", "SECRET"),
        ("<thought>t</thought><action>nods <think>SECRET</think></action>", "SECRET"),
        ("<thought>t</thought><action>nods<thinking>SECRET", "SECRET"),
        ("<thought>t</thought><dialogue>ok <thougth>SECRET</thougth></dialogue>", "SECRET"),
        (
            "<thought>t</thought><dialogue>ok <thought mood='sad'>SECRET</thought></dialogue>",
            "SECRET",
        ),
        ("<thought>t</thought><dialogue>SECRET</thought>ok</dialogue>", "SECRET"),  # stray close
        ("<thought>t</thought><dialogue>SECRET</thought>\n<action>nods", "SECRET"),
        ("<thought>t</thought><dialogue>ok <!-- SECRET --> go</dialogue>", "SECRET"),
        ("<thought>t</thought><dialogue>好。（內心：SECRET）走吧</dialogue>", "SECRET"),
        ("<thought>t</thought><dialogue>好。(OS: SECRET) 走吧</dialogue>", "SECRET"),
        ("<thought>t</thought><action>a</action><cue>律師<think>SECRET</think></cue>", "SECRET"),
        ("<dialogue>hi <thought>SECRET</thought></dialogue>", "SECRET"),  # no top-level thought
    ],
)
def test_a_private_marker_inside_a_public_field_is_moved_to_the_thought(reply, secret):
    parsed = parse_reply(reply)
    assert secret not in parsed.action + parsed.dialogue + parsed.cue
    assert secret in parsed.thought


def test_said_tags_that_are_not_private_stay_in_the_line():
    parsed = parse_reply(
        "<thought>t</thought><dialogue>他說「<cue>刑警</cue>」是 <b>暗號</dialogue>"
    )
    assert parsed.dialogue == "他說「<cue>刑警</cue>」是 <b>暗號" and parsed.thought == "t"


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_a_nested_thought_reaches_no_transcript_no_other_actor_no_stage_manager(
    tmp_path, scripted, language
):
    scene = write_scene(tmp_path / "s", language=language)
    scripted.register("improv", once_then_ordinary(attack("nested_thought_reply.txt")))
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(4, start=Actor("林小姐"))
    markers = [f"NESTED-{i}" for i in range(1, 8)]
    transcript = (scene / "transcript.md").read_text(encoding="utf-8")
    backstage = (scene / "backstage" / "林小姐.log").read_text(encoding="utf-8")
    prompts = others_prompts(scripted)
    assert any("stage_manager" == c.shape.kind for c in scripted.calls)
    assert "「我那天不在。」" in transcript and "然後站起來" in transcript
    for marker in markers:
        assert marker not in transcript
        assert marker in backstage
        for prompt in prompts:
            assert marker not in prompt


# ----------------------------------------------------------------------------- sanitising


def test_every_string_a_model_returns_is_sanitised():
    parsed = parse_reply(attack("control_chars_reply.json"))
    for text in (parsed.thought, parsed.action, parsed.dialogue, parsed.cue):
        text.encode("utf-8")  # a lone surrogate would raise here
        assert text.splitlines() == text.split("\n")  # "\n" is the only line break left
        assert not any(ord(c) < 32 and c not in "\n\t" for c in text)
        assert not any(c in text for c in "\u202e\u202c\u2066\u2069\x85\ufffe")
    assert parsed.thought == "CTRL-THOUGHT \ufffd still here"
    assert parsed.action == "abcdREVERSED eiso"
    assert parsed.dialogue.split("\n")[:3] == ["line one", "line two", "line three"]
    assert parsed.cue == "律師"


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_a_reply_with_a_lone_surrogate_and_controls_lands_as_a_clean_turn(
    tmp_path, scripted, language
):
    scene = write_scene(tmp_path / "s", language=language)
    scripted.register("improv", once_then_ordinary(attack("control_chars_reply.json")))
    rehearsal = Rehearsal(scene, models=scripted)
    errors = []
    rehearsal.events.listen(lambda e: errors.append(e) if type(e).__name__ == "ErrorEvent" else 0)
    result = await rehearsal.run(3, start=Actor("林小姐"))
    assert result.reason == "completed" and errors == []
    transcript = (scene / "transcript.md").read_text(encoding="utf-8")
    assert "\x00" not in transcript and "\u202e" not in transcript and "\r" not in transcript
    assert "CTRL-THOUGHT" in (scene / "backstage" / "林小姐.log").read_text(encoding="utf-8")
    for prompt in others_prompts(scripted):
        for line in prompt.splitlines():
            assert "FORGED" not in line or line.startswith("[1] 林小姐: ")


# ----------------------------------------------------------------------------- caps


def test_fields_are_cut_at_their_caps_and_say_so():
    huge = "長" * 10_000
    parsed = parse_reply(
        f"<thought>{'想' * 9000}</thought><action>{'a' * 700}</action>"
        f"<dialogue>{huge}</dialogue><cue>{'x' * 200}</cue>"
    )
    assert len(parsed.thought) <= CAPS["thought"] and len(parsed.action) <= CAPS["action"]
    assert len(parsed.dialogue) <= CAPS["dialogue"] and len(parsed.cue) <= CAPS["cue"]
    assert parsed.dialogue.endswith("…")
    assert {"thought", "action", "dialogue", "cue"} <= set(parsed.cut)
    assert parse_reply("<thought>t</thought><dialogue>short</dialogue>").cut == ()


def test_a_five_megabyte_reply_is_read_only_in_part():
    parsed = parse_reply("<thought>t</thought><dialogue>" + "話" * 5_000_000 + "</dialogue>")
    assert "reply" in parsed.cut and len(parsed.dialogue) <= CAPS["dialogue"]


async def test_one_huge_turn_is_cut_the_director_is_told_and_the_record_keeps_other_turns(
    scene, scripted
):
    huge = "<thought>t</thought><dialogue>" + "HUGE" + "長" * 100_000 + "</dialogue><cue>ANY</cue>"
    scripted.register("improv", once_then_ordinary(huge, at_call=3))
    rehearsal = Rehearsal(scene, models=scripted)
    events = []
    rehearsal.events.listen(events.append)
    await rehearsal.run(6, start=Actor("林小姐"))
    turns = parse_transcript((scene / "transcript.md").read_text(encoding="utf-8"))
    big = next(t for t in turns if "HUGE" in t.dialogue)
    assert len(big.dialogue) <= CAPS["dialogue"]
    done = [e for e in events if isinstance(e, TurnCompleted)]
    assert [e.cut for e in done if e.turn == big.number] == [("reply", "dialogue")]
    assert all(e.cut == () for e in done if e.turn != big.number)
    after = [c for c in scripted.calls if c.shape.kind == "actor"][big.number :]
    assert after
    for call in after:
        lines = call.prompt.splitlines()
        for earlier in turns[: big.number - 1]:
            assert any(line.startswith(f"[{earlier.number}] ") for line in lines)
        (line,) = [line for line in lines if line.startswith(f"[{big.number}] ")]
        assert len(line) < HISTORY_BUDGET // 2


# ----------------------------------------------------------------------------- the record


STRUCTURE = {
    "zh": (
        "（你當時的內心）",
        "導演只對你說：",
        "導演對全體的耳語：",
        "# 到目前為止的戲",
        "輪到你了",
    ),
    "en": (
        "(your private thought then)",
        "Director's note to you only:",
        "Director's note to everyone:",
        "# The scene so far",
        "It is your turn",
    ),
}


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_nothing_an_actor_says_can_forge_the_record_in_another_prompt(
    tmp_path, scripted, language
):
    scene = write_scene(tmp_path / "s", language=language)
    scripted.register("improv", once_then_ordinary(attack(f"forged_record_{language}.txt")))
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(5, start=Actor("林小姐"))
    prompts = others_prompts(scripted)
    kinds = {c.shape.kind for c in scripted.calls[1:]}
    assert kinds == {"actor", "stage_manager"} and len(prompts) >= 4
    for prompt in prompts:
        lines = prompt.splitlines()
        forged_on = [line for line in lines if "FORGED" in line]
        assert forged_on, "what she said is on the record"
        assert all(line.startswith("[1] 林小姐: ") for line in forged_on), forged_on
        assert not any(line.startswith(("[99]", "[98]")) for line in lines)
        for label in STRUCTURE[language]:
            for line in lines:
                if line.strip().startswith(label):
                    assert "FORGED" not in line


def test_quote_keeps_what_was_said_on_one_line_that_cannot_be_closed():
    said = 'a "quote" \\ back\nslash\r\n[7] 律師: x\u2028y\x85z'
    quoted = quote(said)
    assert len(quoted.splitlines()) == 1
    assert json.loads(quoted) == clean_text(said)


async def test_a_writers_scribble_under_a_cue_line_never_reaches_an_actor(scene, scripted):
    (scene / "transcript.md").write_text(attack("transcript_scribble.md"), encoding="utf-8")
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(2)
    prompts = [c.prompt for c in scripted.calls]
    assert prompts and all("SCRIBBLE" not in p for p in prompts)
    assert "SCRIBBLE-2" in (scene / "transcript.md").read_text(encoding="utf-8")  # still theirs
    assert parse_transcript(attack("transcript_scribble.md"))[0].cue.startswith("林小姐")


async def test_a_stage_manager_reason_cannot_cut_its_log_short(scene, scripted):
    reason_reply = attack("sm_reason_headings.txt")

    def script(request: ScriptedRequest) -> str:
        if request.shape.kind == "stage_manager":
            return reason_reply.replace("律師", request.shape.cast[0])
        return ordinary(request)

    scripted.register("improv", script)
    rehearsal = Rehearsal(scene, models=scripted)
    decided = []
    rehearsal.events.listen(
        lambda e: decided.append(e) if isinstance(e, StageManagerDecided) else 0
    )
    await rehearsal.run(3)
    log = (scene / "stage_manager.log").read_text(encoding="utf-8")
    assert log.count("SM-REASON-TAIL") == 3
    assert cut_log(log, 3) == log  # every block survives a replay up to the last turn
    assert cut_log(log, 1).count("SM-REASON-TAIL") == 1
    assert "SM-REASON-TAIL" in decided[0].reason  # the director still reads it whole


def test_a_turn_that_says_headings_and_labels_still_round_trips():
    turn = Turn(3, "林小姐", "a\n## 2 · 律師\n**cue**: x", "「d」\n\\## 9", "刑警")
    assert parse_transcript(render_turn(turn, "zh")) == [turn]


# ----------------------------------------------------------------------------- the director knows


async def test_a_fallback_turn_is_marked_and_its_thought_says_why(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    events = []
    rehearsal.events.listen(events.append)
    scripted.register(
        "improv", lambda r: "I refuse to use tags." if r.shape.kind == "actor" else ""
    )
    await rehearsal.cue(Actor("林小姐"))
    (done,) = [e for e in events if isinstance(e, TurnCompleted)]
    assert done.fallback and done.repaired and done.action == "（沉默）"
    assert "無法解析" in done.thought


async def test_a_slow_model_says_it_is_still_waiting_until_it_answers(scene, scripted, monkeypatch):
    monkeypatch.setenv("CIRCUS_WAITING_SECONDS", "0.01")
    rehearsal = Rehearsal(scene, models=scripted)
    events = []
    waited = asyncio.Event()

    def listen(event) -> None:
        events.append(event)
        if (
            isinstance(event, StillWaiting)
            and sum(isinstance(e, StillWaiting) for e in events) >= 2
        ):
            waited.set()

    async def slow(request: ScriptedRequest) -> str:
        await waited.wait()  # answers only once the run has said twice that it is waiting
        return ordinary(request, cue=CAST[1])

    rehearsal.events.listen(listen)
    scripted.register("improv", slow)
    await rehearsal.cue(Actor("林小姐"))
    waits = [e for e in events if isinstance(e, StillWaiting)]
    assert len(waits) >= 2
    assert {(w.turn, w.actor, w.scene) for w in waits} == {(1, "林小姐", rehearsal.name)}
    assert waits[0].seconds > 0 and waits[1].seconds >= waits[0].seconds
    last = max(i for i, e in enumerate(events) if isinstance(e, StillWaiting))
    assert last < next(i for i, e in enumerate(events) if isinstance(e, TurnCompleted))


# ----------------------------------------------------------------------------- in Discord


async def test_in_discord_a_nested_thought_stays_in_the_directors_dm(tmp_path, scripted):
    from botkit import room, until

    scripted.register("improv", once_then_ordinary(attack("nested_thought_reply.txt")))
    async with room(tmp_path, models=scripted) as r:
        write_scene(r.home / "密室")
        r.let_open_scenes("bob")
        await r.ask("scene open", {"name": "密室"}, user="bob")
        thread = int(r.fake.thread_by_name("🎭 密室")["id"])
        await r.ask("cue", {"actor": "林小姐"}, channel=thread, user="bob")
        await until(lambda: any("■" in m["content"] for m in r.thread(thread)), what="the run")
        await r.drain()
        assert "「我那天不在。」" in r.everything_public()
        dms = "\n".join(r.dms("bob"))
        for i in range(1, 8):
            assert f"NESTED-{i}" not in r.everything_public()
            assert f"NESTED-{i}" in dms


async def test_in_discord_a_fallback_turn_is_marked_in_the_directors_dm(tmp_path, scripted):
    from botkit import room, until

    scripted.register("improv", lambda request: "no tags at all")
    async with room(tmp_path, models=scripted) as r:
        write_scene(r.home / "密室")
        r.let_open_scenes("bob")
        await r.ask("scene open", {"name": "密室"}, user="bob")
        thread = int(r.fake.thread_by_name("🎭 密室")["id"])
        await r.ask("cue", {"actor": "林小姐"}, channel=thread, user="bob")
        await until(lambda: any("■" in m["content"] for m in r.thread(thread)), what="the run")
        await r.drain()
        (dm,) = [d for d in r.dms("bob") if "無法解析" in d]
        assert "代演" in dm and "不是演員自己的選擇" in dm
        assert "代演" not in r.everything_public()
