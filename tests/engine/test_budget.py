"""Spend is bounded: a budget (the scene's, or a server's for the day) is never crossed.

Prices come from litellm's own cost map: a test gives a scripted model a price the way an
operator would for a model litellm does not know (litellm.register_model, or the
CIRCUS_MODEL_PRICES file), and the engine reads it back through litellm like any hosted model.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from budgetkit import (
    at,
    cheap_input_costly_output,
    collect,
    left,
    set_context,
    transcript,
    usage,
)
from scenekit import CAST, write_scene

from bot.render import render_status
from engine import Actor, Rehearsal
from engine.config import Config
from engine.door import llm
from engine.errors import BadSceneFile, BudgetExceeded, CircusError
from engine.events import ErrorEvent, RunFinished, TurnCompleted
from engine.providers.scripted import ScriptedRequest
from engine.spend import budget, call_log
from engine.spend.budget import Budget, Limit, Spend

pytestmark = pytest.mark.usefixtures("no_operator_budgets")


# ----------------------------------------------------------------------------- pure decisions
@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("abc", 1),
        ("abcd", 2),  # 4 ASCII characters: tokenizers say ~1, we say 2 (rounded up)
        ("Hello there, detective.", 8),
        ("林", 2),
        ("林小姐", 5),  # 1.5 a CJK character, rounded up
        ("你好 world", 3 + 2),  # 2 wide → 3, 6 narrow → 2
        ("é", 2),  # any non-ASCII character counts wide
    ],
)
def test_the_token_estimate_errs_high(text, tokens):
    assert budget.estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    ("messages", "cap", "price", "usd", "tokens"),
    [
        # prompt: 8 + (content + 8) per message; reply: the whole cap
        ([{"role": "user", "content": "abc"}], 100, None, 0.0, 8 + 9 + 100),
        ([{"role": "user", "content": "abc"}], 100, llm.Price(1e-6, 2e-6), 17e-6 + 200e-6, 117),
        (
            [{"role": "system", "content": "林小姐"}, {"role": "user", "content": "abcdef"}],
            10,
            llm.Price(0.0, 1e-3),
            0.01,
            8 + 13 + 10 + 10,
        ),
        ([], 0, llm.Price(1.0, 1.0), 8.0, 8),
    ],
)
def test_a_calls_estimate_is_its_prompt_plus_a_full_reply(messages, cap, price, usd, tokens):
    got = budget.estimate(messages, cap, price)
    assert got.tokens == tokens
    assert got.usd == pytest.approx(usd)


@pytest.mark.parametrize(
    ("spent", "cost", "refused"),
    [
        (0.0, 0.5, False),
        (0.5, 0.5, False),  # exactly reaching the limit is allowed: it is not crossed
        (0.5, 0.5000001, True),
        (1.0, 0.0, False),  # a free call may still go when the budget is exactly used
        (1.0, None, True),  # at start: a used-up budget refuses
        (0.99, None, False),
    ],
)
def test_check_refuses_only_what_would_cross(spent, cost, refused):
    current = [Budget("scene", "usd", 1.0, spent)]
    got = budget.check(current, None if cost is None else Spend(cost, 0))
    assert (got is not None) == refused
    if refused:
        assert isinstance(got, BudgetExceeded) and got.setting == "budget_usd"


def test_check_names_the_first_budget_crossed_and_counts_each_unit():
    current = [Budget("scene", "usd", 1.0, 0.1), Budget("day", "tokens", 1000, 900)]
    refusal = budget.check(current, Spend(0.01, 101))
    assert refusal is not None and (refusal.scope, refusal.unit) == ("day", "tokens")
    assert refusal.setting == "CIRCUS_DAILY_BUDGET_TOKENS"
    assert budget.check(current, Spend(0.01, 100)) is None


NOON = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "rows", "usd"),
    [
        (NOON, [], 0.0),
        (NOON, [at("2026-11-30T00:00:00+00:00"), at("2026-11-30T23:59:59+00:00")], 2.0),
        (NOON, [at("2026-11-29T23:59:59+00:00"), at("2026-11-30T00:00:00+00:00")], 1.0),
        # a new UTC day starts from nothing
        (datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC), [at("2026-11-30T23:59:59+00:00")], 0.0),
        # the day is UTC's, wherever the clock or the row was written
        (
            datetime(2026, 12, 1, 7, 0, tzinfo=timezone(timedelta(hours=8))),
            [at("2026-11-30T22:00:00+00:00")],
            1.0,
        ),
        (NOON, [at("2026-12-01T01:00:00+02:00")], 1.0),  # 23:00 UTC on the 30th
        (NOON, [at("2026-11-30T10:00:00")], 1.0),  # no zone: read as UTC
        (NOON, [{"cost_usd": 0.5}], 0.5),  # no time at all: counted (caution)
        (NOON, [at("2026-11-30T10:00:00+00:00", cost=None)], 0.0),  # unknown price: $0
    ],
)
def test_a_days_spend_is_the_rows_of_that_utc_day(now, rows, usd):
    assert call_log.day_spend(rows, now).usd == pytest.approx(usd)


def test_a_days_spend_counts_tokens_of_every_row():
    rows = [at("2026-11-30T01:00:00+00:00", tokens=7), at("2026-11-30T02:00:00+00:00", tokens=5)]
    assert call_log.day_spend(rows, NOON) == Spend(2.0, 12)


@pytest.mark.parametrize(
    ("settings", "limits"),
    [
        ({}, ()),
        ({"budget_usd": 0.5}, (Limit("scene", "usd", 0.5),)),
        (
            {"budget_usd": 2, "budget_tokens": 9000},
            (Limit("scene", "usd", 2.0), Limit("scene", "tokens", 9000.0)),
        ),
        ({"budget_usd": 0}, (Limit("scene", "usd", 0.0),)),
    ],
)
def test_scene_budgets_come_from_context_md(settings, limits):
    assert budget.scene_limits(settings) == limits


@pytest.mark.parametrize("value", [-1, "five dollars", True, [1]])
def test_a_broken_scene_budget_is_refused_naming_the_key(value):
    with pytest.raises(BadSceneFile) as err:
        budget.scene_limits({"budget_usd": value}, "context.md")
    assert "budget_usd" in str(err.value) and "budget_usd" in err.value.in_language("zh")


@pytest.mark.parametrize(
    ("env", "limits"),
    [
        ({}, ()),
        ({"CIRCUS_DAILY_BUDGET_USD": "5"}, (Limit("day", "usd", 5.0),)),
        ({"CIRCUS_DAILY_BUDGET_TOKENS": " 200000 "}, (Limit("day", "tokens", 200000.0),)),
        ({"CIRCUS_DAILY_BUDGET_USD": ""}, ()),
    ],
)
def test_daily_budgets_come_from_the_environment(env, limits):
    assert budget.daily_limits(Config.from_env(env)) == limits


@pytest.mark.parametrize("value", ["five", "-1", "nan"])
def test_a_daily_budget_typo_never_lifts_the_budget(value):
    with pytest.raises(CircusError, match="CIRCUS_DAILY_BUDGET_USD"):
        budget.daily_limits(Config.from_env({"CIRCUS_DAILY_BUDGET_USD": value}))


def test_the_refusal_says_which_budget_what_is_spent_what_is_left_and_what_to_do():
    scene = BudgetExceeded("scene", "usd", 0.05, 0.048, 0.0031, "budget_usd")
    assert str(scene) == (
        "The run stopped before the next model call: this scene's budget (budget_usd: $0.0500 "
        "in context.md) would be crossed — $0.0480 spent, $0.0020 left, and the call may cost "
        "up to $0.0031. To go on, raise budget_usd: in the scene's context.md."
    )
    zh = scene.in_language("zh")
    assert "預算" in zh and "已花 $0.0480" in zh and "剩 $0.0020" in zh and "調高" in zh
    day = BudgetExceeded("day", "tokens", 10000, 9990, 100, "CIRCUS_DAILY_BUDGET_TOKENS")
    assert "9,990 tokens spent today, 10 tokens left" in str(day)
    assert "tomorrow (00:00 UTC)" in str(day) and "operator" in str(day)
    assert "今天已花 9,990 個 token" in day.in_language("zh")
    assert "明天" in day.in_language("zh") and "管理者" in day.in_language("zh")
    used = BudgetExceeded("day", "usd", 1, 1.25, None, "CIRCUS_DAILY_BUDGET_USD")
    assert str(used).startswith(
        "The run cannot start"
    ) and "is used up — $1.2500 spent today" in str(used)


# ----------------------------------------------------------------------------- runs
async def test_a_run_stops_before_the_call_that_would_cross_the_scene_budget(
    scene, scripted, priced
):
    model = cheap_input_costly_output(priced)
    set_context(scene, budget_usd=0.021)
    (scene / "context.md").write_text(
        (scene / "context.md").read_text("utf-8").replace("scripted/improv", model), "utf-8"
    )
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    result = await rehearsal.run(10, start=Actor("林小姐"))

    assert result.reason == "budget"
    landed = transcript(scene)
    assert 1 <= len(landed) < 10
    # the refused call never reached the model: every call made is a turn that landed
    assert len(scripted.calls) == len(landed)
    rows = usage(scene)
    spent = sum(r["cost_usd"] for r in rows)
    assert 0 < spent <= 0.021  # never crossed
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.turn == len(landed) + 1
    assert "budget_usd" in error.message and "預算" in error.message  # the scene speaks zh
    assert f"${spent:.4f}" in error.message
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "budget"

    # the spend stays on disk: a new run stops before its first call, writing nothing
    before = (scene / "transcript.md").read_text("utf-8")
    again = await Rehearsal(scene, models=scripted).run(1)
    assert (again.reason, again.turns_done) == ("budget", 0)
    assert (scene / "transcript.md").read_text("utf-8") == before
    status = await Rehearsal(scene, models=scripted).status()
    assert left(status, "scene", "usd") == pytest.approx(0.021 - spent)
    assert left(status, "day", "usd") is None and left(status, "scene", "tokens") is None


async def test_a_stage_manager_call_that_would_cross_stops_the_run_before_it(
    scene, scripted, priced
):
    sm = priced("scripted/pricey-sm", 0.0, 1000.0)  # a 512-token answer may cost $0.51
    text = (scene / "context.md").read_text("utf-8")
    (scene / "context.md").write_text(
        text.replace("stage_manager_model: scripted/improv", f"stage_manager_model: {sm}"),
        "utf-8",
    )
    set_context(scene, budget_usd=0.5)
    scripted.register(
        "improv", lambda r: "<thought>想</thought><dialogue>誰來？</dialogue><cue></cue>"
    )
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    result = await rehearsal.run(3, start=Actor("律師"))

    assert result.reason == "budget" and result.turns_done == 1
    assert [t.actor for t in transcript(scene)] == ["律師"]
    assert [c.model for c in scripted.calls] == ["improv"]  # the stage manager was never asked
    assert not (scene / "stage_manager.log").exists()
    assert not any(isinstance(e, TurnCompleted) and e.turn == 2 for e in events)
    assert "budget_usd" in next(e for e in events if isinstance(e, ErrorEvent)).message


async def test_a_repair_reask_that_would_cross_drops_the_whole_turn(scene, scripted, priced):
    model = cheap_input_costly_output(priced, "scripted/mumbler")
    set_context(scene, budget_usd=0.0205)  # room for one full reply (≈ $0.02048), not two
    scripted.register("mumbler", lambda r: "no tags today")
    text = (
        (scene / "context.md")
        .read_text("utf-8")
        .replace("model: scripted/improv", f"model: {model}", 1)
    )
    (scene / "context.md").write_text(text, "utf-8")
    result = await Rehearsal(scene, models=scripted).cue(Actor("林小姐"))

    assert result.reason == "budget"
    assert len(scripted.calls) == 1  # the first answer came; the re-ask was never sent
    assert transcript(scene) == [] and usage(scene) == []  # nothing half-made landed
    assert not (scene / "backstage" / "林小姐.log").exists()


async def test_a_fallback_model_that_would_cross_is_never_called(scene, scripted, priced):
    from engine.providers.scripted import ScriptedFailure

    fallback = priced("scripted/pricey-fallback", 0.0, 1000.0)  # a full reply may cost $2
    soul = scene / "actors" / "林小姐" / "soul.md"
    soul.write_text(
        soul.read_text("utf-8").replace(
            "---\n", f"---\nmodel: scripted/down\nfallback_model: {fallback}\n", 1
        ),
        "utf-8",
    )
    set_context(scene, budget_usd=1)

    def down(request: ScriptedRequest) -> str:
        raise ScriptedFailure(503, "provider down")

    scripted.register("down", down)
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    result = await rehearsal.cue(Actor("林小姐"))
    assert result.reason == "budget"
    assert [c.model for c in scripted.calls] == ["down"] * 3  # retried, then no fallback call
    assert "budget_usd" in next(e for e in events if isinstance(e, ErrorEvent)).message
    assert transcript(scene) == []


async def test_a_token_budget_bounds_models_without_a_price(scene, scripted, monkeypatch):
    monkeypatch.setenv("CIRCUS_MAX_REPLY_TOKENS", "100")
    set_context(scene, budget_tokens=3000)
    result = await Rehearsal(scene, models=scripted).run(20, start=Actor("刑警"))
    assert result.reason == "budget"
    rows = usage(scene)
    assert sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows) <= 3000
    assert 1 <= len(transcript(scene)) < 20
    status = await Rehearsal(scene, models=scripted).status()
    assert left(status, "scene", "tokens") is not None and left(status, "scene", "tokens") >= 0
    assert left(status, "scene", "usd") is None


async def test_a_used_up_budget_refuses_a_run_before_it_starts(scene, scripted):
    set_context(scene, budget_usd=0)
    rehearsal = Rehearsal(scene, models=scripted)
    events = collect(rehearsal)
    with pytest.raises(BudgetExceeded) as err:
        await rehearsal.run(3)
    assert "cannot start" in str(err.value) and "已經用完" in err.value.in_language("zh")
    assert events == [] and scripted.calls == [] and not rehearsal.running
    assert not (scene / "transcript.md").exists()


async def test_a_scene_without_a_budget_runs_as_before(scene, scripted):
    result = await Rehearsal(scene, models=scripted).run(3, start=Actor("刑警"))
    assert result.reason == "completed"
    status = await Rehearsal(scene, models=scripted).status()
    assert status.budgets == () and left(status, "scene", "usd") is None


# ----------------------------------------------------------------------------- usage rows
async def test_usage_rows_say_take_time_reason_and_whether_a_turn_was_repaired(scene, scripted):
    good = "<thought>想</thought><dialogue>好。</dialogue><cue>刑警</cue>"
    actor_answers = iter(["亂講", good, "亂講", "還是亂講", good])

    def script(request: ScriptedRequest) -> str:
        if request.shape.kind == "stage_manager":
            return "NEXT: 律師\nREASON: 輪到律師"
        return next(actor_answers)

    scripted.register("improv", script)
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.run(3, start=Actor("林小姐"))

    rows = usage(scene)
    assert [r["role"] for r in rows] == ["林小姐", "刑警", "律師", "stage_manager"]
    actors = rows[:3]
    assert [r["reason"] for r in actors] == ["start", "cue", "stage_manager"]
    assert [(r["repaired"], r["fallback"]) for r in actors] == [
        (True, False),
        (True, True),
        (False, False),
    ]
    assert [r["calls"] for r in actors] == [2, 2, 1]
    assert [r["turn"] for r in rows] == [1, 2, 3, 3]
    assert {r["take"] for r in rows} == {1}
    for row in rows:
        when = datetime.fromisoformat(row["at"])
        assert when.utcoffset() == timedelta(0)
        assert {"model", "prompt_tokens", "completion_tokens", "cost_usd", "calls"} <= set(row)
    assert "reason" not in rows[3]  # the stage manager's row is not a turn

    status = await rehearsal.status()
    assert (status.repairs, status.fallbacks) == (1, 1)
    assert "代演的輪：1" in render_status(status, "zh")


async def test_status_reads_old_usage_rows_without_the_new_keys(scene):
    old = {"turn": 1, "role": "刑警", "model": "m", "prompt_tokens": 5, "completion_tokens": 2,
           "cost_usd": 0.5, "calls": 1}  # fmt: skip
    (scene / ".circus").mkdir()
    (scene / ".circus" / "usage.jsonl").write_text(
        json.dumps(old) + "\n" + "{torn\n", encoding="utf-8"
    )
    set_context(scene, budget_usd=2)
    status = await Rehearsal(scene).status()
    assert (status.repairs, status.fallbacks, status.model_calls) == (0, 0, 1)
    assert left(status, "scene", "usd") == pytest.approx(1.5)


async def test_the_stage_managers_row_carries_take_and_time(scene, scripted):
    scripted.register("improv", lambda r: (
        "NEXT: 律師\nREASON: x" if r.shape.kind == "stage_manager"
        else "<thought>想</thought><dialogue>嗯。</dialogue><cue>ANY</cue>"
    ))  # fmt: skip
    await Rehearsal(scene, models=scripted).run(2, start=Actor("刑警"))
    sm = [r for r in usage(scene) if r["role"] == "stage_manager"]
    assert sm and sm[0]["take"] == 1 and "at" in sm[0]
    actor = [r for r in usage(scene) if r["role"] == "律師"]
    assert actor[0]["reason"] == "stage_manager"


# ----------------------------------------------------------------------------- frontends
def test_the_console_honours_budget_usd_and_exits_1_with_the_message(tmp_path):
    from clikit import circus, cli_env

    scene = write_scene(tmp_path / "審訊室", model="scripted/priced")
    set_context(scene, budget_usd=0.021)
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"scripted/priced": {"input_cost_per_token": 0, "output_cost_per_token": 1e-5}}),
        encoding="utf-8",
    )
    env = cli_env(CIRCUS_MODEL=None, CIRCUS_MODEL_PRICES=str(prices))
    out = circus("run", str(scene), "-n", "10", cwd=tmp_path, env=env)
    assert out.returncode == 1, out.stderr
    assert "budget_usd" in out.stderr and "預算" in out.stderr
    assert 1 <= len(transcript(scene)) < 10
    assert "Traceback" not in out.stderr

    status = circus("status", str(scene), cwd=tmp_path, env=env)
    assert status.returncode == 0
    [line] = [x for x in status.stdout.splitlines() if x.startswith("budget:")]
    assert "scene, budget_usd:" in line and "of $0.0210 spent" in line and "left" in line


def test_discord_status_shows_what_is_left_of_each_budget():
    from engine.rehearsal.results import Status

    status = Status(
        "審訊室", 1, 3, CAST, "idle", "", 10, 5, 0.01, 3, (), 1, 2,
        (Budget("scene", "usd", 0.5, 0.125), Budget("day", "tokens", 10000, 2500)),
    )  # fmt: skip
    zh = render_status(status, "zh")
    assert "budget_usd" in zh and "剩 $0.3750" in zh
    assert "CIRCUS_DAILY_BUDGET_TOKENS" in zh and "剩 7,500 token" in zh
    en = render_status(status, "en")
    assert "$0.3750 left" in en and "7,500 tokens left" in en and "today (UTC" in en
    plain = Status("審訊室", 1, 3, CAST, "idle", "", 10, 5, 0.01, 3, ())
    assert "budget" not in render_status(plain, "en").lower()
