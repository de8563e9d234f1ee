"""A server's daily budget: one append-only ledger per account and UTC day, shared by its
scenes and processes, surviving restarts and torn lines; and where prices come from.

Split from test_budget.py (the scene budget and the gate).

Prices come from litellm's own cost map: a test gives a scripted model a price the way an
operator would for a model litellm does not know (litellm.register_model, or the
CIRCUS_MODEL_PRICES file), and the engine reads it back through litellm like any hosted model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta

import pytest
from budgetkit import (
    REPO,
    at,
    cheap_input_costly_output,
    collect,
    left,
    transcript,
)
from scenekit import operator_config, write_scene

from engine import Actor, Rehearsal
from engine.door import llm, prices
from engine.errors import BudgetExceeded, CircusError
from engine.events import ErrorEvent
from engine.spend import budget
from engine.spend.budget import Limit, Spend, SpendGuard
from engine.spend.ledger import Ledger

pytestmark = pytest.mark.usefixtures("no_operator_budgets")


# ----------------------------------------------------------------------------- the daily ledger
async def test_a_servers_daily_budget_is_shared_by_its_scenes_and_survives_a_restart(
    tmp_path, scripted, priced, monkeypatch
):
    model = cheap_input_costly_output(priced)
    monkeypatch.setenv("CIRCUS_DAILY_BUDGET_USD", "0.0215")
    first = write_scene(tmp_path / "scenes" / "一", model=model)
    second = write_scene(tmp_path / "scenes" / "二", model=model)
    other_server = write_scene(tmp_path / "scenes" / "三", model=model)

    result = await Rehearsal(first, models=scripted, account="discord-1").run(
        10, start=Actor("林小姐")
    )
    assert result.reason == "budget"
    ledger = tmp_path / "scenes" / ".circus" / "spend" / "discord-1"
    files = list(ledger.iterdir())
    assert [f.name for f in files] == [f"{datetime.now(UTC).date().isoformat()}.jsonl"]
    rows = [json.loads(line) for line in files[0].read_text("utf-8").splitlines()]
    assert len(rows) == len(scripted.calls) == len(transcript(first))
    assert {r["scene"] for r in rows} == {"一"} and all(r["model"] == model for r in rows)
    spent = sum(r["cost_usd"] for r in rows)
    assert spent <= 0.0215

    # A restarted bot builds new Rehearsals: the day's spend is read back from disk.
    again = Rehearsal(second, models=scripted, account="discord-1")
    status = await again.status()
    assert left(status, "day", "usd") == pytest.approx(0.0215 - spent)
    assert left(status, "scene", "usd") is None
    events = collect(again)
    result = await again.run(5, start=Actor("刑警"))
    assert result.reason == "budget" and transcript(second) == []
    message = next(e for e in events if isinstance(e, ErrorEvent)).message
    assert "CIRCUS_DAILY_BUDGET_USD" in message and "明天" in message

    # Another server has its own day.
    assert (
        await Rehearsal(other_server, models=scripted, account="discord-2").run(1)
    ).reason == "completed"
    # The console (no account) is bound only by the scene's own budget.
    assert (await Rehearsal(second, models=scripted).run(1)).reason == "completed"


async def test_yesterdays_spend_does_not_count_today(tmp_path, scripted, monkeypatch):
    monkeypatch.setenv("CIRCUS_DAILY_BUDGET_TOKENS", "100000")
    scene = write_scene(tmp_path / "scenes" / "審訊室")
    ledger = Ledger(tmp_path / "scenes", "discord-7")
    yesterday = datetime.now(UTC) - timedelta(days=1)
    ledger.append(yesterday.date(), {**at(yesterday.isoformat()), "prompt_tokens": 10**9})
    rehearsal = Rehearsal(scene, models=scripted, account="discord-7")
    assert left((await rehearsal.status()), "day", "tokens") == 100000
    assert (await rehearsal.run(1)).reason == "completed"


def guard_call(text: str = "hello") -> llm.ModelCall:
    return llm.ModelCall("scripted/x", ({"role": "user", "content": text},), max_tokens=10)


def test_the_guard_writes_each_call_to_its_utc_days_file(tmp_path):
    clock = [datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)]
    ledger = Ledger(tmp_path, "discord-9")
    guard = SpendGuard("s", ledger, clock=lambda: clock[0], config=operator_config())
    guard.begin_turn((Limit("day", "tokens", 100),), Spend())
    reply = llm.ModelReply("ok", "scripted/x", 40, 10, None)

    guard.settle(guard.admit(guard_call(), "scripted/x"), reply, False)
    assert guard.day_spent(clock[0]) == Spend(0.0, 50)
    with pytest.raises(BudgetExceeded):  # 50 spent + a prompt of 83 and a reply of 10 > 100
        guard.admit(guard_call("x" * 200), "scripted/x")

    clock[0] = datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC)  # midnight UTC passed
    assert guard.day_spent(clock[0]) == Spend()
    guard.settle(guard.admit(guard_call(), "scripted/x"), reply, False)
    assert [p.name for p in sorted(ledger.folder.iterdir())] == [
        "2026-11-30.jsonl",
        "2026-12-01.jsonl",
    ]
    assert json.loads(ledger.path(date(2026, 12, 1)).read_text("utf-8"))["at"].startswith(
        "2026-12-01T00:00:01"
    )


def test_a_cut_call_counts_the_most_it_may_cost_a_failed_one_nothing(tmp_path):
    ledger = Ledger(tmp_path, "discord-9")
    guard = SpendGuard("s", ledger, config=operator_config())
    guard.begin_turn((Limit("day", "tokens", 10**6),), Spend())
    guard.settle(guard.admit(guard_call(), "scripted/x"), None, False)  # e.g. a 500: not billed
    assert ledger.rows(datetime.now(UTC).date()) == []
    guard.settle(guard.admit(guard_call(), "scripted/x"), None, True)  # cut mid-call
    [row] = ledger.rows(datetime.now(UTC).date())
    # its prompt (counted high) and a whole reply: the provider may have billed both
    assert row["estimated"] is True and row["prompt_tokens"] == budget.prompt_tokens(
        guard_call().messages
    )
    assert row["completion_tokens"] == 10  # the call's max_tokens
    assert guard.pending.tokens == row["prompt_tokens"] + 10


def test_calls_in_flight_hold_their_share_of_a_shared_daily_budget(tmp_path):
    ledger = Ledger(tmp_path, "discord-3")
    a, b = (
        SpendGuard("a", ledger, config=operator_config()),
        SpendGuard("b", Ledger(tmp_path, "discord-3"), config=operator_config()),
    )
    limits = (Limit("day", "tokens", 60),)
    a.begin_turn(limits, Spend())
    b.begin_turn(limits, Spend())
    ticket = a.admit(guard_call(), "scripted/x")  # holds 28 (a prompt of 18, a reply of 10)
    with pytest.raises(BudgetExceeded):
        b.admit(guard_call("x" * 30), "scripted/x")  # 28 held + 36 wanted > 60
    a.settle(ticket, llm.ModelReply("ok", "scripted/x", 5, 5), False)  # 10 actually spent
    b.settle(b.admit(guard_call("x" * 30), "scripted/x"), None, False)  # 10 + 36 ≤ 60


APPENDER = """
import sys
from datetime import date
from engine.spend.ledger import Ledger
ledger = Ledger(sys.argv[1], "discord-5")
for i in range(int(sys.argv[3])):
    ledger.append(date(2026, 11, 30), {"who": sys.argv[2], "i": i, "cost_usd": 0.001,
                                       "pad": "林" * 300})
"""


def test_two_processes_append_to_one_ledger_without_losing_a_row(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(tmp_path), who, "300"], env=env)
        for who in ("a", "b")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    ledger = Ledger(tmp_path, "discord-5")
    lines = ledger.path(date(2026, 11, 30)).read_text("utf-8").splitlines()
    rows = [json.loads(line) for line in lines]  # every line whole
    assert sorted((r["who"], r["i"]) for r in rows) == sorted(
        (w, i) for w in ("a", "b") for i in range(300)
    )
    assert len(ledger.rows(date(2026, 11, 30))) == 600


def test_a_torn_line_left_by_a_crash_costs_only_itself(tmp_path):
    ledger = Ledger(tmp_path, "discord-5")
    day = date(2026, 11, 30)
    ledger.append(day, {"i": 1})
    with open(ledger.path(day), "a", encoding="utf-8") as f:
        f.write('{"i": 2, "cost')  # the process died mid-row
    assert [r["i"] for r in Ledger(tmp_path, "discord-5").rows(day)] == [1]
    ledger.append(day, {"i": 3})
    assert [r["i"] for r in Ledger(tmp_path, "discord-5").rows(day)] == [1, 3]
    assert [r["i"] for r in ledger.rows(day)] == [1, 3]  # incremental read agrees


@pytest.mark.parametrize("account", ["../up", "a/b", "", "x" * 65, "discord 1"])
def test_an_account_cannot_name_a_path(tmp_path, account):
    with pytest.raises(ValueError):
        Ledger(tmp_path, account)


LAZY = """
import asyncio, sys
from engine import Config, Rehearsal
from engine.door import llm, prices
from engine.spend.budget import Limit, Spend, SpendGuard
scene = sys.argv[1]
asyncio.run(Rehearsal(scene, account="discord-1").status())
guard = SpendGuard("s", None, config=Config())
guard.begin_turn((), Spend())
guard.admit(llm.ModelCall("openai/gpt-4o", ({"role": "user", "content": "hi"},)), "openai/gpt-4o")
print("litellm" in sys.modules)
guard.begin_turn((Limit("scene", "usd", 1.0),), Spend())
guard.admit(llm.ModelCall("openai/gpt-4o", ({"role": "user", "content": "hi"},)), "openai/gpt-4o")
print("litellm" in sys.modules)
"""


def test_prices_are_looked_up_only_when_a_dollar_budget_applies(scene):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIRCUS_")}
    env.update(PYTHONPATH=str(REPO), CIRCUS_DAILY_BUDGET_TOKENS="1000")
    out = subprocess.run(
        [sys.executable, "-c", LAZY, str(scene)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_litellms_own_prices_reach_the_estimate():
    gpt = llm.price("openai/gpt-4o")
    assert gpt is not None and gpt.input > 0 and gpt.output > gpt.input
    assert llm.price("scripted/free") == llm.Price(0.0, 0.0)
    assert llm.price("nobody/knows-this-model") is None


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[1, 2]",
        '{"my/model": {"input_cost_per_token": 1e-6}}',
        '{"my/model": {"input_cost_per_token": -1, "output_cost_per_token": 1e-6}}',
    ],
)
def test_a_broken_prices_file_is_refused_naming_the_variable(tmp_path, content):
    path = tmp_path / "prices.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CircusError, match="CIRCUS_MODEL_PRICES"):
        prices.load_file(str(path))
    with pytest.raises(CircusError, match="CIRCUS_MODEL_PRICES"):
        prices.load_file(str(tmp_path / "missing.json"))
