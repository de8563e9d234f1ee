"""The reader in a real rehearsal: a drifted reply lands with one model call, and a line written
for another character never reaches the record, another prompt or the thread's transcript — it
is counted in the take report instead. Proven on files on disk and the prompts models received."""

from __future__ import annotations

import json

import pytest
from scenekit import write_scene

from engine import Actor, Rehearsal
from engine.folder.turns import parse_transcript
from engine.providers.scripted import ScriptedRequest

LABELLED = {
    "zh": "**想法：** 他在套我的話。LABEL-THOUGHT\n**動作：** 把杯子推開。\n**台詞：** 「我那天不在。」\n**丟球：** 刑警",
    "en": '**Thought:** He is fishing. LABEL-THOUGHT\n**Action:** She pushes the cup away.\n**Dialogue:** "I wasn\'t there."\n**Cue:** 刑警',
}
PUBLIC = {
    "zh": ("把杯子推開。", "「我那天不在。」"),
    "en": ("She pushes the cup away.", "I wasn't there."),
}
FOR_OTHERS = (
    "<thought>讓他們以為刑警認了。</thought>\n"
    "<dialogue>「你說啊。」\n王警官：「好，我認罪。」OTHER-LINE\n林小姐：「果然。」</dialogue>\n"
    "<cue>刑警</cue>"
)


def actor_calls(scripted, actor: str | None = None) -> list[ScriptedRequest]:
    return [
        c
        for c in scripted.calls
        if c.shape.kind == "actor" and (actor is None or c.shape.speaker == actor)
    ]


def first_reply(reply: str):
    def script(request: ScriptedRequest) -> str:
        if request.shape.kind == "stage_manager":
            return f"NEXT: {request.shape.cast[0]}\nREASON: ok"
        if request.shape.speaker == "林小姐" and request.index == 0:
            return reply
        me = request.shape.speaker
        return f"<thought>{me} 想。</thought><dialogue>{me} 說。</dialogue><cue>林小姐</cue>"

    return script


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_a_markdown_label_reply_lands_with_one_call_and_its_thought_backstage(
    tmp_path, scripted, language
):
    scene = write_scene(tmp_path / "s", language=language)
    scripted.register("improv", first_reply(LABELLED[language]))
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.cue(Actor("林小姐"))
    assert len(actor_calls(scripted)) == 1, "read without a repair call"
    (turn,) = parse_transcript((scene / "transcript.md").read_text(encoding="utf-8"))
    assert (turn.actor, turn.action, turn.dialogue, turn.cue) == (
        "林小姐",
        *PUBLIC[language],
        "刑警",
    )
    backstage = (scene / "backstage" / "林小姐.log").read_text(encoding="utf-8")
    assert "LABEL-THOUGHT" in backstage
    assert "LABEL-THOUGHT" not in (scene / "transcript.md").read_text(encoding="utf-8")
    (row,) = [json.loads(x) for x in (scene / ".circus/usage.jsonl").read_text().splitlines()]
    assert (row["repaired"], row["fallback"], row["wrote_for_others"]) == (False, False, False)


async def test_a_line_written_for_another_character_is_never_published(scene, scripted):
    scripted.register("improv", first_reply(FOR_OTHERS))
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(2, start=Actor("林小姐"))
    transcript = (scene / "transcript.md").read_text(encoding="utf-8")
    turns = parse_transcript(transcript)
    assert [t.actor for t in turns] == ["林小姐", "刑警"]
    assert (turns[0].dialogue, turns[0].cue) == ("「你說啊。」", "刑警")
    assert "OTHER-LINE" not in transcript and "果然" not in transcript
    assert len(actor_calls(scripted, "林小姐")) == 1, "what came before was a whole turn"
    (detective,) = actor_calls(scripted, "刑警")
    assert "OTHER-LINE" not in detective.prompt and "「你說啊。」" in detective.prompt

    rows = [json.loads(x) for x in (scene / ".circus/usage.jsonl").read_text().splitlines()]
    assert [r["wrote_for_others"] for r in rows if r["role"] != "stage_manager"] == [True, False]
    report = await rehearsal.harvest.report()
    assert "⚠ 替別人寫戲" in report and "scripted/improv × 1" in report


async def test_a_take_where_nobody_wrote_for_others_has_no_such_line(scene, scripted):
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(2, start=Actor("林小姐"))
    assert "替別人寫戲" not in await rehearsal.harvest.report()
