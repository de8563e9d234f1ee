"""Page me when…: the conditions' text forms, the one decision of which alerts an event meets
(a secret surfaces exactly when the secrets ledger says so), the alerts kept in the scene folder,
the facts a run announces for them (voices converging, a budget's share) and `run --until`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from budgetkit import set_context
from scenekit import CAST

from engine import (
    Actor,
    BadSceneFile,
    CircusError,
    Rehearsal,
    Resume,
    Run,
    RunFinished,
    Turn,
    TurnCompleted,
    UntilMet,
)
from engine.events import BudgetUsed, StageChanged, VoicesConverged
from engine.providers.scripted import ScriptedRequest, improv
from engine.rehearsal.alerts import Condition, Facts, fired, parse_condition, parse_conditions
from engine.takes.secrets import ledger

SECRET = "收了錢"
SECRETS = {"林小姐": [SECRET], "刑警": ["the green ledger"], "律師": []}


# ---------------------------------------------------------------------- the text forms
@pytest.mark.parametrize(
    "text, condition",
    [
        ("secret", Condition("secret")),
        ("secret:林小姐", Condition("secret", actor="林小姐")),
        (" Secret : 林小姐 ", Condition("secret", actor="林小姐")),
        ("exit", Condition("exit")),
        ("exit:律師", Condition("exit", actor="律師")),
        ("enter:刑警", Condition("enter", actor="刑警")),
        ("turn:12", Condition("turn", turn=12)),
        ("converge", Condition("converge")),
        ("budget:80%", Condition("budget", share=0.8)),
        ("budget:0.5", Condition("budget", share=0.5)),
        ("stop", Condition("stop")),
    ],
)
def test_each_text_form_reads_as_its_condition_and_back(text, condition):
    assert parse_condition(text) == condition
    assert parse_condition(condition.text) == condition


@pytest.mark.parametrize(
    "text",
    ["", "secrets", "turn", "turn:0", "turn:x", "budget", "budget:0%", "budget:150%", "stop:now",
     "converge:林小姐", "exit!", "turn:-3"],
)  # fmt: skip
def test_anything_else_is_refused_naming_the_forms(text):
    with pytest.raises(CircusError) as caught:
        parse_condition(text)
    assert "turn:N" in str(caught.value)


def test_a_comma_list_and_repeats_are_several_conditions():
    assert parse_conditions(["secret,exit:律師", "turn:40"]) == (
        Condition("secret"),
        Condition("exit", actor="律師"),
        Condition("turn", turn=40),
    )


# ---------------------------------------------------------------------- which alerts fire
def turn_event(number: int, actor: str, dialogue: str, **extra) -> TurnCompleted:
    return TurnCompleted(
        "s", take=1, turn=number, actor=actor, action="", dialogue=dialogue, cue="", thought="",
        **extra,
    )  # fmt: skip


LINES = ["我什麼都不知道。", "妳十一點十四分走的。", "好，我承認，我收了、錢！", "收了錢又怎樣？"]
TURNS = [Turn(i + 1, CAST[i % 3], dialogue=line) for i, line in enumerate(LINES)]
FACTS = Facts(SECRETS, TURNS)
ALL = [
    Condition("secret"),
    Condition("secret", actor="林小姐"),
    Condition("secret", actor="刑警"),
    Condition("enter"),
    Condition("exit"),
    Condition("exit", actor="律師"),
    Condition("turn", turn=3),
    Condition("converge"),
    Condition("budget", share=0.8),
    Condition("stop"),
]


@pytest.mark.parametrize(
    "event, fires",
    [
        (turn_event(1, "林小姐", LINES[0]), []),
        (turn_event(3, "律師", LINES[2]), ["secret", "secret:林小姐", "turn:3"]),
        (turn_event(4, "林小姐", LINES[3]), []),  # said again: it surfaced at 3, not here
        (turn_event(2, "刑警", "x", fallback=True), ["stop"]),
        (StageChanged("s", 1, 8, 1, "exit", actor="律師"), ["exit", "exit:律師"]),
        (StageChanged("s", 1, 8, 1, "exit", actor="刑警"), ["exit"]),
        (StageChanged("s", 1, 2, 1, "enter", actor="刑警"), ["enter"]),
        (StageChanged("s", 1, 2, 1, "event", text="a phone rings"), []),
        (VoicesConverged("s", 1, 4, "刑警", "律師", 0.4), ["converge"]),
        (BudgetUsed("s", 1, 4, "scene", "tokens", 0.7, 0.85), ["budget:80%"]),
        (BudgetUsed("s", 1, 5, "scene", "tokens", 0.85, 0.9), []),  # passed already
        (BudgetUsed("s", 1, 4, "day", "usd", 0.1, 0.79), []),
        (RunFinished("s", 1, 4, "error"), ["stop"]),
        (RunFinished("s", 1, 4, "budget"), ["stop"]),
        (RunFinished("s", 1, 4, "completed"), []),
        (RunFinished("s", 1, 4, "cut"), []),
    ],
)
def test_fired_says_which_armed_conditions_an_event_meets(event, fires):
    assert [ALL[m.index].text for m in fired(ALL, event, FACTS)] == fires


def test_a_secret_fires_on_the_turn_the_ledger_says_it_surfaced_and_no_other():
    turns = [
        Turn(1, "林小姐", dialogue="我什麼都不知道。"),
        Turn(2, "刑警", action="He taps the green ledgers."),  # 刑警's own, in an action
        Turn(3, "律師", dialogue="她收了、錢？"),  # 林小姐's, said by another: surfaced
        Turn(4, "林小姐", dialogue="我收了錢。"),
    ]
    [first, second, *_] = ledger(SECRETS, turns, {})
    conditions = [Condition("secret", actor="林小姐"), Condition("secret", actor="刑警")]
    at = {0: [], 1: []}
    for turn in turns:
        event = turn_event(turn.number, turn.actor, turn.dialogue)
        event = TurnCompleted(**{**event.__dict__, "action": turn.action})
        for m in fired(conditions, event, Facts(SECRETS, turns)):
            at[m.index].append((m.turn, m.actor, m.secret))
    assert first.surfaced is not None and second.surfaced is not None
    assert at[0] == [(first.surfaced.number, "林小姐", SECRET)] == [(3, "林小姐", SECRET)]
    assert at[1] == [(second.surfaced.number, "刑警", "the green ledger")]


def test_a_secret_match_says_whose_in_public_words_and_keeps_the_secret_apart():
    [m] = fired([Condition("secret")], turn_event(3, "律師", LINES[2]), FACTS)
    assert (m.code, dict(m.fields)) == (
        "alert.trigger.secret",
        {"turn": 3, "actor": "律師", "owner": "林小姐"},
    )
    assert m.secret == SECRET and SECRET not in str(m.fields)


# ---------------------------------------------------------------------- kept in the folder
async def test_alerts_are_armed_listed_and_cleared_in_the_scene_folder(scene):
    r = Rehearsal(scene)
    mine = await r.alerts.arm(parse_condition("secret:林曉雯"), "discord:42")  # an alias
    assert mine.condition == Condition("secret", actor="林小姐") and mine.id == "a1"
    assert await r.alerts.arm(parse_condition("secret:林小姐"), "discord:42") == mine
    theirs = await r.alerts.arm(parse_condition("exit"), "console")
    assert await Rehearsal(scene).alerts.all() == (mine, theirs)  # a restart reads them back
    rows = json.loads((scene / ".circus" / "alerts.json").read_text("utf-8"))["alerts"]
    assert [(a["id"], a["by"], a["condition"], a["actor"]) for a in rows] == [
        ("a1", "discord:42", "secret:林小姐", "林小姐"),
        ("a2", "console", "exit", ""),
    ]
    assert await r.alerts.clear("discord:42") == (mine,)
    assert await r.alerts.all() == (theirs,)
    assert await r.alerts.clear() == (theirs,) and await r.alerts.all() == ()


async def test_an_unknown_actor_is_refused_and_nothing_is_armed(scene):
    r = Rehearsal(scene)
    with pytest.raises(CircusError):
        await r.alerts.arm(parse_condition("exit:nobody"), "console")
    assert await r.alerts.all() == ()


@pytest.mark.parametrize("text", ["{", "[]", '{"alerts": 3}', '{"alerts": [{"id": "a1"}]}',
                                  '{"alerts": [{"id": "a1", "by": "x", "created": "", "condition": "soon"}]}'])  # fmt: skip
async def test_a_broken_alerts_file_is_named_never_read_as_no_alerts(scene, text):
    (scene / ".circus").mkdir(exist_ok=True)
    (scene / ".circus" / "alerts.json").write_text(text, "utf-8")
    r = Rehearsal(scene)
    for attempt in (r.alerts.all(), r.alerts.arm(Condition("stop"), "console")):
        with pytest.raises(BadSceneFile) as caught:
            await attempt
        assert caught.value.rel == ".circus/alerts.json"
    assert (scene / ".circus" / "alerts.json").read_text("utf-8") == text


# ---------------------------------------------------------------------- a run
def with_secrets(root: Path) -> Path:
    soul = root / "actors" / "林小姐" / "soul.md"
    text = soul.read_text("utf-8").replace(
        "---\n## 角色小傳", f"secrets: [{SECRET}]\n---\n## 角色小傳"
    )
    soul.write_text(text, "utf-8")
    return root


def says_secret_at(turn: int):
    """improv, but the actor playing turn `turn` lets 林小姐's secret out."""

    def script(request: ScriptedRequest) -> str:
        reply = improv(request)
        if request.shape.kind == "actor" and request.index + 1 == turn:
            reply = reply.replace("<dialogue>", f"<dialogue>好，我{SECRET}。")
        return reply

    return script


async def test_run_until_a_secret_stops_after_the_line_that_surfaced_it(scene, scripted):
    scripted.register("improv", says_secret_at(5))
    r = Rehearsal(with_secrets(scene), models=scripted)
    events: list = []
    r.events.listen(events.append)
    task = await r.start_run(Run(40, Actor("林小姐"), until=parse_conditions(["secret"])))
    result = await task
    assert (result.turns_done, result.reason, result.last_turn) == (5, "completed", 5)
    assert len(await r.record()) == 5
    [met] = [e for e in events if isinstance(e, UntilMet)]
    assert (met.turn, met.condition, met.code) == (5, "secret", "alert.trigger.secret")
    assert met.fields["owner"] == "林小姐" and SECRET not in str(met.fields)
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"


async def test_run_until_turn_n_and_resume_until(scene, scripted):
    r = Rehearsal(scene, models=scripted)
    assert (await (await r.start_run(Run(40, until=(Condition("turn", turn=3),))))).last_turn == 3
    resumed = await (await r.start_run(Resume(40, until=(Condition("turn", turn=6),))))
    assert (resumed.turns_done, resumed.last_turn) == (3, 6)


async def test_converging_voices_are_announced_once_as_they_first_converge(scene, scripted):
    same = "我們都知道那天晚上發生了什麼事情而且誰也不想再提起"

    def echo(request: ScriptedRequest) -> str:
        reply = improv(request)
        if request.shape.kind == "actor" and request.shape.speaker in ("刑警", "律師"):
            if request.index >= 3:
                return reply.replace("<dialogue>", f"<dialogue>{same}")
        return reply

    scripted.register("improv", echo)
    r = Rehearsal(scene, models=scripted)
    events: list = []
    r.events.listen(events.append)
    await r.run(9, start=Actor("林小姐"))
    converged = [e for e in events if isinstance(e, VoicesConverged)]
    assert len(converged) == 1
    [c] = converged
    assert {c.actor, c.other} == {"刑警", "律師"} and c.share >= 0.3
    turns = {t.number: t for t in await r.record()}
    assert same in turns[c.turn].dialogue
    assert sum(1 for n in range(1, c.turn) if same in turns[n].dialogue) == 1  # the 2nd says it


async def test_a_budgets_share_is_announced_after_each_turn(scene, scripted):
    set_context(scene, budget_tokens=100000)
    r = Rehearsal(scene, models=scripted)
    events: list = []
    r.events.listen(events.append)
    await r.run(3)
    used = [e for e in events if isinstance(e, BudgetUsed)]
    assert [e.turn for e in used] == [1, 2, 3]
    assert used[0].before == 0.0 and all(e.scope == "scene" for e in used)
    assert all(
        a.share == b.before and a.share < b.share for a, b in zip(used, used[1:], strict=False)
    )


def test_voices_kept_turn_by_turn_agree_with_the_take_reports_own_test():
    import random

    from engine.folder.turns import Turn
    from engine.harvest.report import converging_pairs
    from engine.rehearsal.run_watch import Voices

    rng = random.Random(7)
    words = "the ledger was in the green drawer all along and nobody knew it".split()
    cast = ["林小姐", "刑警", "律師"]
    for trial in range(30):
        voices, turns, said = Voices(), [], {a: [] for a in cast}
        announced: set[frozenset[str]] = set()
        for number in range(1, 40):
            actor = rng.choice(cast)
            line = " ".join(rng.choice(words) for _ in range(rng.randint(0, 9)))
            turns.append(Turn(number, actor, "", line, ""))
            said[actor].append(line)
            fresh = voices.new_pairs(1, turns)
            whole = {frozenset((a, b)): (a, b, s) for a, b, s in converging_pairs(said)}
            assert voices._pairs() == {(a, b): s for a, b, s in whole.values()}, (trial, number)
            announced |= {frozenset((a, b)) for a, b, _ in fresh}
            assert announced >= set(whole), (trial, number)
        # A record cut back (a replay) is counted afresh, from its own turns alone.
        voices.new_pairs(2, turns[:5])
        assert voices.count == 5 and voices.take == 2
        assert not voices.follows(2, turns[10:11]) and voices.follows(2, turns[5:7])
