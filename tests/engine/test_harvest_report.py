"""The take report, checked on takes with known answers: counts, how each speaker was chosen,
repairs and fallbacks per model, tokens per role, picks, voice signals and the cue graph."""

from __future__ import annotations

from pathlib import Path

from engine import Actor, Rehearsal
from engine.folder.turns import Turn
from engine.harvest.picks import Pick
from engine.harvest.repeats import near_repeats
from engine.harvest.report import ReportInput, build_report
from engine.providers.scripted import ScriptedRequest

ALIASES = {"林小姐": ("林",), "刑警": (), "律師": ()}
TURNS = [
    Turn(1, "林小姐", "", "你好嗎？", "刑警"),
    Turn(2, "刑警", "點菸。", "", "林"),
    Turn(3, "林小姐", "", "我很好。", "林小姐"),
    Turn(4, "林小姐", "", "真的很好。", "ANY"),
    Turn(5, "律師", "", "Objection, your honour.", ""),
    Turn(6, "刑警", "", "說。", "律師"),
]


def row(turn: int, role: str, model: str, reason: str | None = None, **extra) -> dict:
    out = {"turn": turn, "role": role, "model": model, "prompt_tokens": 100 * turn,
           "completion_tokens": 10, "cost_usd": 0.01, "calls": 1, "take": 1}  # fmt: skip
    if reason:
        out |= {"reason": reason, "repaired": False, "fallback": False}
    return out | extra


ROWS = [
    row(1, "林小姐", "m1", "start"),
    row(2, "刑警", "m2", "cue"),
    row(3, "林小姐", "m1", "cue", repaired=True),
    row(4, "林小姐", "m1", "self_cue"),
    {k: v for k, v in row(5, "律師", "m1").items() if k != "take"},  # an old row: no new keys
    row(6, "stage_manager", "sm"),
    row(6, "刑警", "m2", "stage_manager", repaired=True, fallback=True),
]


def report(turns=TURNS, rows=ROWS, picks=(), language="zh", aliases=ALIASES) -> str:
    return build_report(ReportInput("審訊室", 1, True, turns, rows, picks, aliases, language))


def table_row(text: str, first: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.startswith(f"| {first} |"))
    return [c.strip() for c in line.strip("|").split("|")][1:]


def test_counts_per_actor() -> None:
    text = report()
    # turns, lines, words (Chinese: characters), longest silence (turns by others in a row)
    assert table_row(text, "林小姐")[:4] == ["3", "3", "10", "2"]
    assert table_row(text, "刑警")[:4] == ["2", "1", "1", "3"]
    assert table_row(text, "律師")[:4] == ["1", "1", "3", "4"]
    assert "6 輪 · 5 句台詞 · 14 字" in text


def test_how_each_speaker_was_chosen_repairs_fallbacks_tokens() -> None:
    text = report(language="en")
    chosen = text.split("## How each speaker was chosen")[1]
    header = table_row(chosen, "Actor")
    assert header == ["actor cue", "self cue", "stage manager", "run start", "not recorded"]
    assert table_row(chosen, "林小姐") == ["1", "1", "0", "1", "0"]
    assert table_row(chosen, "刑警") == ["1", "0", "1", "0", "0"]
    assert table_row(chosen, "律師") == ["0", "0", "0", "0", "1"]
    # model: calls, repairs, fallbacks, prompt, completion, cost
    assert table_row(text, "m1") == ["4", "1", "0", "1300", "40", "$0.0400"]
    assert table_row(text, "m2") == ["2", "0", "1", "800", "20", "$0.0200"]
    assert table_row(text, "sm") == ["1", "0", "0", "600", "10", "$0.0100"]
    assert table_row(text, "stage manager") == ["sm", "600", "10", "$0.0100"]
    per_role = text.split("### Tokens and cost per role")[1]
    assert table_row(per_role, "林小姐") == ["m1", "800", "30", "$0.0300"]


def test_picks_and_the_cue_graph() -> None:
    picks = (Pick(1, 3, "林小姐", "", "我很好。", ("alice", "bob"), "keep this"),)
    text = report(picks=picks, language="en")
    assert "- turn 3 · 林小姐: “我很好。” — ⭐ 2 (alice, bob) — keep this" in text
    graph = text.split("```mermaid\n")[1].split("```")[0].splitlines()
    assert graph[0] == "flowchart LR"
    assert set(graph[1:4]) == {'  a0["林小姐"]', '  a1["刑警"]', '  a2["律師"]'}
    # 林小姐→刑警, 刑警→林小姐 (by alias), 林小姐→林小姐, 刑警→律師; ANY and empty cues are not edges
    assert sorted(graph[4:]) == sorted(
        ["  a0 -->|1| a1", "  a1 -->|1| a0", "  a0 -->|1| a0", "  a1 -->|1| a2"]
    )


DISTINCT = [
    Turn(1, "Ruth", "", "You were at the harbour that night, and you lied to the inspector.", "Danny"),
    Turn(2, "Danny", "", "Harbour? I sold fish on Tuesdays. Ask my cousin about the nets.", "Ruth"),
    Turn(3, "Ruth", "", "Your cousin drowned two winters ago, so try a better alibi.", "Danny"),
    Turn(4, "Danny", "", "Then ask the gulls. They never forget a face or a debt.", "Ruth"),
]  # fmt: skip
CONVERGING = [
    Turn(1, "Ruth", "", "I think we should all calm down and talk about this honestly.", "Danny"),
    Turn(2, "Danny", "", "I think we should all calm down and talk about this honestly too.", "Ruth"),
    Turn(3, "Ruth", "", "I really feel we need to be honest with each other right now.", "Danny"),
    Turn(4, "Danny", "", "I really feel we need to be honest with each other right now, yes.", "Ruth"),
]  # fmt: skip
EN = {"Ruth": (), "Danny": ()}


def warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("⚠")]


def test_distinct_voices_raise_no_warning() -> None:
    text = report(DISTINCT, [], language="en", aliases=EN)
    assert "⚠" not in text
    voices = text.split("## Voices")[1]
    assert table_row(voices, "Ruth") == ["100%", "0%"]  # distinct-2, shared 4-grams


def test_converging_voices_are_warned_about_with_what_to_try() -> None:
    text = report(CONVERGING, [], language="en", aliases=EN)
    found = warnings(text)
    assert any("Ruth" in w and "Danny" in w and "model" in w and "whisper" in w for w in found)
    assert any("nearly repeat" in w for w in found)
    assert [(a.number, b.number) for a, b, _ in near_repeats(CONVERGING)] == [(2, 1), (4, 3)]
    zh = report(CONVERGING, [], language="zh", aliases=EN)
    assert any("越來越像" in w for w in warnings(zh))


def test_chinese_lines_converge_by_characters() -> None:
    same = "我們都冷靜一下好好談談這件事吧"
    turns = [Turn(1, "林小姐", "", same, "刑警"), Turn(2, "刑警", "", same + "，好嗎", "林小姐")]
    assert any("林小姐" in w and "刑警" in w for w in warnings(report(turns, [])))


# ----------------------------------------------------------------------------- on disk


def flaky(request: ScriptedRequest) -> str:
    """Answers without tags the first time (the engine re-asks), well afterwards."""
    if request.index == 0:
        return "I refuse to use tags."
    return "<thought>想好了。</thought><dialogue>我反對。</dialogue><cue>林小姐</cue>"


async def test_a_saved_take_carries_its_report_and_a_replay_its_metadata(
    scene: Path, scripted
) -> None:
    soul = scene / "actors" / "律師" / "soul.md"
    soul.write_text("---\nmodel: scripted/flaky\n" + soul.read_text(encoding="utf-8")[4:], "utf-8")
    scripted.register("flaky", flaky)
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(3, start=Actor("律師"))
    await rehearsal.harvest.pick(2, by="alice")

    current = await rehearsal.harvest.report()
    assert not (scene / "takes").exists()  # the current take's report is printed, not written
    assert table_row(current, "scripted/flaky")[:3] == ["2", "1", "0"]

    assert await rehearsal.takes.save() == 1
    saved = (scene / "takes" / "take_1" / "report.md").read_text(encoding="utf-8")
    assert saved.startswith("# 排演 1 · 審訊室") and "⭐ 1 (alice)" in saved
    assert table_row(saved, "scripted/flaky")[:3] == ["2", "1", "0"]
    assert (scene / "takes" / "take_1" / "turns.jsonl").is_file()
    assert not (scene / "takes" / "take_1" / "picks.md").exists()

    await rehearsal.takes.replay(1, until=1)
    replayed = await rehearsal.harvest.report()
    assert replayed.startswith("# 排演 2 · 審訊室")
    chosen = replayed.split("## 誰怎麼拿到發言權")[1].split("##")[0]
    assert table_row(chosen, "律師") == ["1"]  # the kept turn still knows it opened the run
    assert table_row(replayed, "scripted/flaky")[:5] == ["0", "1", "0", "0", "0"]  # not re-spent
    status = await rehearsal.status()  # the scene's totals count the kept turn once
    assert (status.repairs, status.model_calls) == (1, 4)
    # a later report of take_1 is rebuilt from its own folder, with today's picks
    await rehearsal.harvest.pick(3, take=1, by="bob")
    again = await rehearsal.harvest.report(1)
    assert "(bob)" in again and again == (scene / "takes/take_1/report.md").read_text("utf-8")


async def test_a_players_turns_are_the_players_not_a_models(scene: Path, scripted) -> None:
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.stage.say(Actor("林小姐"), "我那天晚上在家。")
    alone = await rehearsal.harvest.report()
    models = alone.split("## 模型")[1].split("\n## ")[0]
    assert "?" not in models and "| 林小姐 |" not in models
    assert "（這次排演沒有模型呼叫紀錄）" in models
    assert "真人演出，沒有呼叫模型：林小姐 × 1" in models

    await rehearsal.cue(Actor("刑警"))
    await rehearsal.stage.say(Actor("林小姐"), "一個人。")
    both = (await rehearsal.harvest.report()).split("## 模型")[1].split("\n## ")[0]
    assert "?" not in both and "| 林小姐 |" not in both
    assert table_row(both, "scripted/improv")[0] == "1"  # the one model call: 刑警's turn
    assert "真人演出，沒有呼叫模型：林小姐 × 2" in both
