"""What a provider reports and what a file says are data: a budget never goes up because of
either.

A server's usage that is not a count ≥ 0 (negative, NaN, infinite, text) is replaced by our own
count (engine.door.tokens) with a warning; a spend row on disk (usage.jsonl, calls.jsonl, the daily
ledger) that is not finite numbers ≥ 0 is skipped with a warning naming its file and line.
Attack files live in tests/fixtures/attacks/.
"""

from __future__ import annotations

import logging
import math
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from budgetkit import (
    BillingServer,
    calls,
    cheap_input_costly_output,
    ledger_rows,
    left,
    set_context,
    transcript,
    use_model,
)
from scenekit import write_scene

from engine import Actor, Rehearsal
from engine.door import llm, metering, tokens
from engine.spend import call_log
from engine.takes.meta import parse_rows

pytestmark = pytest.mark.usefixtures("no_operator_budgets")

ATTACKS = Path(__file__).parents[1] / "fixtures" / "attacks"
NAN, INF = float("nan"), float("inf")
GPT = "openai/gpt-4o-mini"  # litellm knows its price


@pytest.fixture(autouse=True)
def openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")


def tokens_of(rows: list[dict]) -> int:
    return sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)


def own_prompt_count(body: dict, model: str) -> int:
    return sum(tokens.count(m["content"], model) for m in body["messages"])


# ----------------------------------------------------------------------------- pure decisions
@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ((1000, 500), (1000, 500, False)),
        ((0, 0), (0, 0, False)),
        ((12.0, 3), (12, 3, False)),
        ((-2_000_000, 500), (77, 500, True)),  # a refund: our own count instead
        ((1000, -50_000), (1000, 11, True)),
        ((NAN, 5), (77, 5, True)),
        ((INF, 5), (77, 5, True)),
        ((-INF, 5), (77, 5, True)),
        (("1000", 5), (77, 5, True)),  # text is not a count
        ((True, 5), (77, 5, True)),
        ((None, None), (77, 11, True)),  # a server that reports no usage at all
    ],
)
def test_a_providers_usage_counts_only_where_it_is_a_count(reported, expected):
    assert metering.usage_numbers(reported, lambda: 77, lambda: 11) == expected


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"prompt_tokens": 5, "completion_tokens": 2, "cost_usd": 0.5, "calls": 1}, None),
        ({"prompt_tokens": 5, "cost_usd": None}, None),  # a price nobody knows
        ({}, None),
        ({"prompt_tokens": -1_000_000}, "prompt_tokens"),
        ({"prompt_tokens": 5, "completion_tokens": -1}, "completion_tokens"),
        ({"cost_usd": NAN}, "cost_usd"),
        ({"cost_usd": INF}, "cost_usd"),
        ({"cost_usd": -2.7}, "cost_usd"),
        ({"cost_usd": "lots"}, "cost_usd"),
        ({"prompt_tokens": "12"}, "prompt_tokens"),
        ({"prompt_tokens": True}, "prompt_tokens"),
        ({"calls": -3}, "calls"),
    ],
)
def test_a_spend_row_counts_only_with_finite_numbers_at_least_zero(row, problem):
    assert call_log.spend_problem(row) == problem


def test_a_row_that_does_not_count_is_named_by_file_and_line(tmp_path, caplog):
    # a torn line in the middle is named; one still being written at the end is not (yet)
    text = '{"prompt_tokens": 5}\n{torn\n\n{"cost_usd": NaN}\n["x"]\n{"prompt_tokens": 7}\n{"pro'
    where = tmp_path / "calls.jsonl"
    with caplog.at_level(logging.WARNING, logger="circus.engine"):
        rows = call_log.read_rows(text, where)
    assert [r["prompt_tokens"] for r in rows] == [5, 7]
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        f"ignoring line 2 of {where}: not a JSON row",
        f"ignoring line 4 of {where}: cost_usd is nan, not a number ≥ 0",
        f"ignoring line 5 of {where}: not a JSON object",
    ]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="circus.engine"):
        call_log.read_rows(text, where)  # read again every turn: said once
    assert caplog.records == []


# ----------------------------------------------------------------------------- a server's usage
async def test_a_negative_usage_never_refunds_the_scenes_dollar_budget(tmp_path, caplog):
    scene = write_scene(tmp_path / "scenes" / "審訊室")
    server = BillingServer(
        usage=lambda body, n: {"prompt_tokens": -2_000_000, "completion_tokens": 500}
    )
    with server as base, caplog.at_level(logging.WARNING, logger="circus.engine"):
        use_model(scene, GPT, base)
        set_context(scene, budget_usd=0.005)
        rehearsal = Rehearsal(scene)
        result = await rehearsal.run(10)
        status = await rehearsal.status()

    assert result.reason == "budget"
    price = llm.price(GPT)
    assert price is not None
    rows = calls(scene)
    assert len(rows) == len(server.requests)
    for row, body in zip(rows, server.requests, strict=True):
        assert row["prompt_tokens"] == own_prompt_count(body, GPT) > 0
        assert row["completion_tokens"] == 500
        assert row["cost_usd"] == pytest.approx(
            row["prompt_tokens"] * price.input + 500 * price.output
        )
    [scene_budget] = status.budgets
    assert 0 < scene_budget.spent == pytest.approx(sum(r["cost_usd"] for r in rows))
    assert scene_budget.spent <= 0.005 and status.cost_usd == pytest.approx(scene_budget.spent)
    assert any("-2000000" in r.getMessage() for r in caplog.records)


async def test_one_reply_reporting_minus_50000_does_not_raise_the_days_budget(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("CIRCUS_DAILY_BUDGET_TOKENS", "60000")
    scenes = tmp_path / "scenes"
    scene = write_scene(scenes / "審訊室")

    def usage(body, n):
        if n == 2:
            return {"prompt_tokens": -50_000, "completion_tokens": 500}
        return {"prompt_tokens": 1000, "completion_tokens": 500}

    server = BillingServer(usage=usage)
    with server as base:
        use_model(scene, "openai/loopback", base)
        rehearsal = Rehearsal(scene, account="discord-1")
        result = await rehearsal.run(60)
        status = await rehearsal.status()

    assert result.reason == "budget"
    rows = ledger_rows(scenes, "discord-1")
    assert all(r["prompt_tokens"] >= 0 and r["completion_tokens"] >= 0 for r in rows)
    bad = rows[2]
    assert bad["prompt_tokens"] == own_prompt_count(server.requests[2], "openai/loopback")
    honest = [u for i, u in enumerate(server.billed) if i != 2]
    assert tokens_of(rows) == tokens_of(honest) + tokens_of([bad]) <= 60000
    assert left(status, "day", "tokens") == 60000 - tokens_of(rows)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("value", [NAN, INF, "many"])
async def test_a_reply_whose_usage_is_not_numbers_is_counted_at_its_most(tmp_path, caplog, value):
    scenes = tmp_path / "scenes"
    scene = write_scene(scenes / "審訊室")
    server = BillingServer(usage=lambda body, n: {"prompt_tokens": value, "completion_tokens": 5})
    with server as base, caplog.at_level(logging.WARNING, logger="circus.engine"):
        use_model(scene, "openai/loopback", base)
        set_context(scene, budget_tokens=100000)
        rehearsal = Rehearsal(scene, account="discord-1")
        result = await rehearsal.cue(Actor("林小姐"))
        status = await rehearsal.status()

    # litellm cannot read such a reply at all: the call fails, is not asked again (it would
    # be billed again), and counts as the most it may cost.
    assert result.reason == "error" and transcript(scene) == []
    assert len(server.requests) == 1
    [row] = calls(scene)
    assert row["estimated"] is True and row["prompt_tokens"] > 0
    assert status.budgets[0].spent == tokens_of([row])
    assert ledger_rows(scenes, "discord-1") == [row]
    assert any("cannot read" in r.getMessage() for r in caplog.records)


# ----------------------------------------------------------------------------- tampered files
@pytest.mark.parametrize("record", ["usage.jsonl", "calls.jsonl"])
async def test_a_nan_cost_in_the_scenes_record_does_not_switch_budget_usd_off(
    tmp_path, scripted, priced, caplog, record
):
    model = cheap_input_costly_output(priced)
    scene = write_scene(tmp_path / "審訊室", model=model)
    set_context(scene, budget_usd=0.021)
    (scene / ".circus").mkdir()
    shutil.copy(ATTACKS / "usage_nan_cost.jsonl", scene / ".circus" / record)
    with caplog.at_level(logging.WARNING, logger="circus.engine"):
        rehearsal = Rehearsal(scene, models=scripted)
        result = await rehearsal.run(10, start=Actor("林小姐"))
        status = await rehearsal.status()

    assert result.reason == "budget" and len(transcript(scene)) < 10
    [scene_budget] = status.budgets
    assert math.isfinite(scene_budget.spent) and 0 < scene_budget.spent <= 0.021
    assert status.cost_usd is not None and math.isfinite(status.cost_usd)
    where = scene / ".circus" / record
    assert f"ignoring line 2 of {where}: cost_usd is nan, not a number ≥ 0" in caplog.messages


async def test_a_hand_written_refund_in_the_daily_ledger_is_ignored(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("CIRCUS_DAILY_BUDGET_TOKENS", "60000")
    scenes = tmp_path / "scenes"
    scene = write_scene(scenes / "審訊室")
    day = scenes / ".circus" / "spend" / "discord-1" / f"{datetime.now(UTC).date()}.jsonl"
    day.parent.mkdir(parents=True)
    shutil.copy(ATTACKS / "ledger_refund.jsonl", day)
    server = BillingServer()
    with server as base, caplog.at_level(logging.WARNING, logger="circus.engine"):
        use_model(scene, "openai/loopback", base)
        rehearsal = Rehearsal(scene, account="discord-1")
        assert left((await rehearsal.status()), "day", "tokens") == 60000  # not 1,060,000
        result = await rehearsal.run(60)
        status = await rehearsal.status()

    assert result.reason == "budget"
    assert server.billed_tokens <= 60000
    assert left(status, "day", "tokens") == 60000 - server.billed_tokens
    assert any(
        m.startswith(f"ignoring line 1 of {day}: prompt_tokens is -1000000")
        for m in caplog.messages
    )


def test_the_take_report_reads_only_rows_whose_spend_is_finite_numbers():
    """A tampered usage.jsonl never reaches the take report as "$nan" or a refund."""
    text = (ATTACKS / "usage_nan_cost.jsonl").read_text("utf-8")
    text += '{"turn": 3, "role": "刑警", "prompt_tokens": -5, "completion_tokens": 1, "take": 1}\n'
    assert [row["turn"] for row in parse_rows(text)] == [1]
