"""Every model call that was made counts: against the scene's budget and the day's, whether or
not its turn lands.

The provider is a loopback OpenAI-compatible server that bills what it answers (budgetkit's
BillingServer), reached over the door's OpenAI-compatible wire; each test compares what it billed
with what `status`, the scene's call record and the daily ledger say. They must agree exactly.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from budgetkit import (
    BillingServer,
    calls,
    ledger_rows,
    left,
    set_context,
    transcript,
    usage,
    use_model,
)
from scenekit import write_scene

from engine import Actor, Rehearsal, Run
from engine.errors import BudgetExceeded
from engine.providers.scripted import ScriptedFailure
from engine.spend import budget

pytestmark = pytest.mark.usefixtures("no_operator_budgets")

MODEL = "openai/loopback"  # no price anywhere: bounded by token budgets


@pytest.fixture(autouse=True)
def openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")


def tokens(rows: list[dict]) -> int:
    return sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)


def scene_budget(status) -> budget.Budget:
    [found] = [b for b in status.budgets if b.scope == "scene"]
    return found


async def run_or_refusal(rehearsal: Rehearsal, turns: int) -> str:
    try:
        return (await rehearsal.run(turns)).reason
    except BudgetExceeded:  # refused before it started: nothing was called
        return "refused"


async def test_on_discord_a_run_then_five_more_spend_exactly_what_was_billed(tmp_path, monkeypatch):
    monkeypatch.setenv("CIRCUS_DAILY_BUDGET_TOKENS", "1000000")
    scenes = tmp_path / "scenes"
    scene = write_scene(scenes / "審訊室")
    server = BillingServer()  # 1,500 tokens a call; every actor throws the ball open
    with server as base:
        use_model(scene, MODEL, base)
        set_context(scene, budget_tokens=12000)
        rehearsal = Rehearsal(scene, account="discord-1")
        reasons = [await run_or_refusal(rehearsal, n) for n in (20, 1, 1, 1, 1, 1)]
        status = await rehearsal.status()

    assert reasons[0] == "budget" and set(reasons[1:]) <= {"budget", "refused"}
    billed = server.billed_tokens
    # Some calls were made for turns that never landed (a stage manager's pick, then the
    # actor's call refused): the landed turns alone say less than was billed.
    assert tokens(usage(scene)) < billed
    assert scene_budget(status).spent == billed <= 12000
    assert left(status, "day", "tokens") == 1000000 - billed
    assert status.prompt_tokens + status.completion_tokens == billed
    assert status.model_calls == len(server.billed)
    assert tokens(calls(scene)) == billed and len(calls(scene)) == len(server.billed)
    assert calls(scene) == ledger_rows(scenes, "discord-1")  # the same row, in both records
    assert {r["kind"] for r in calls(scene)} == {"actor", "stage_manager"}
    assert all(r["take"] == 1 and r["scene"] == "審訊室" for r in calls(scene))


def test_the_console_run_again_and_again_says_what_was_billed(tmp_path):
    from clikit import circus, cli_env

    scene = write_scene(tmp_path / "審訊室")
    server = BillingServer()
    env = cli_env(CIRCUS_MODEL=None, OPENAI_API_KEY="sk-loopback")
    with server as base:
        use_model(scene, MODEL, base)
        set_context(scene, budget_tokens=20000)
        # (the issue ran it six times; from the second run on, each only repeats the second)
        codes = [circus("run", str(scene), "-n", "10", cwd=tmp_path, env=env) for _ in range(3)]
        status = circus("status", str(scene), cwd=tmp_path, env=env)

    assert [c.returncode for c in codes] == [1] * 3, codes[0].stderr  # each stopped by the budget
    assert all("budget_tokens" in c.stderr and "Traceback" not in c.stderr for c in codes)
    billed = server.billed_tokens
    assert tokens(usage(scene)) < billed <= 20000
    [line] = [x for x in status.stdout.splitlines() if x.startswith("budget:")]
    assert f"{billed:,} tokens of 20,000 tokens spent · {20000 - billed:,} tokens left" in line
    assert f"{len(server.billed)} model calls" in status.stdout


async def test_a_cut_turn_counts_the_stage_managers_pick_and_the_cut_call_at_its_most(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("CIRCUS_MAX_REPLY_TOKENS", "300")
    scenes = tmp_path / "scenes"
    scene = write_scene(scenes / "審訊室")
    # The stage manager answers; the actor's call hangs until the director cuts it.
    server = BillingServer(hold=lambda body: "NEXT:" not in body["messages"][0]["content"])
    with server as base:
        use_model(scene, MODEL, base)
        set_context(scene, budget_tokens=50000)
        rehearsal = Rehearsal(scene, account="discord-1")
        task = await rehearsal.start_run(Run(1))
        await asyncio.to_thread(server.held.wait, 60)
        assert await rehearsal.cut()
        assert (await task).reason == "cut"
        status = await rehearsal.status()

    assert transcript(scene) == [] and usage(scene) == []  # nothing of the turn landed
    picked, cut = calls(scene)
    assert picked["kind"] == "stage_manager" and "estimated" not in picked
    assert tokens([picked]) == server.billed_tokens == 1500
    # The cut call may have been billed: counted as the most it may cost, its prompt counted
    # high plus a whole reply.
    sent = server.requests[-1]["messages"]
    assert cut["kind"] == "actor" and cut["estimated"] is True
    assert (cut["prompt_tokens"], cut["completion_tokens"]) == (budget.prompt_tokens(sent), 300)
    assert scene_budget(status).spent == 1500 + tokens([cut])
    assert ledger_rows(scenes, "discord-1") == [picked, cut]


async def test_a_refused_repair_still_counts_the_reply_that_needed_it(tmp_path):
    scenes = tmp_path / "scenes"
    scene = write_scene(scenes / "審訊室")
    server = BillingServer(
        answer=lambda body: "no tags today",
        usage=lambda body, n: {"prompt_tokens": 1000, "completion_tokens": 4500},
    )
    with server as base:
        use_model(scene, MODEL, base)
        set_context(scene, budget_tokens=6000)  # room for one call, not for its re-ask
        rehearsal = Rehearsal(scene, account="discord-1")
        first = await rehearsal.cue(Actor("林小姐"))
        again = await run_or_refusal(rehearsal, 1)
        status = await rehearsal.status()

    assert first.reason == "budget" and again in {"budget", "refused"}
    assert len(server.requests) == 1  # the re-ask was never sent
    assert transcript(scene) == [] and usage(scene) == []
    [row] = calls(scene)
    assert (row["kind"], row["role"]) == ("actor", "林小姐")
    assert scene_budget(status).spent == server.billed_tokens == 5500
    assert ledger_rows(scenes, "discord-1") == [row]


async def test_summarize_dry_runs_count_against_the_scene_budget(tmp_path):
    scenes = tmp_path / "scenes"
    scene = write_scene(scenes / "審訊室")
    server = BillingServer(answer=lambda body: "她知道的事。")
    refused = 0
    with server as base:
        use_model(scene, MODEL, base)
        set_context(scene, budget_tokens=12000)
        rehearsal = Rehearsal(scene, account="discord-1")
        for _ in range(10):
            try:
                await rehearsal.souls.summarize_for(Actor("林小姐"), "她的全部過去。", write=False)
            except BudgetExceeded:
                refused += 1
        status = await rehearsal.status()

    assert refused and len(server.billed) == 10 - refused  # the budget stopped them
    assert {r["kind"] for r in calls(scene)} == {"summarize"}
    assert scene_budget(status).spent == server.billed_tokens <= 12000
    assert tokens(ledger_rows(scenes, "discord-1")) == server.billed_tokens


async def test_a_fallback_models_call_is_recorded_and_counted(scene, scripted):
    soul = scene / "actors" / "林小姐" / "soul.md"
    soul.write_text(
        soul.read_text("utf-8").replace(
            "---\n", "---\nmodel: scripted/down\nfallback_model: scripted/improv\n", 1
        ),
        "utf-8",
    )
    set_context(scene, budget_tokens=100000)

    def down(request):
        raise ScriptedFailure(503, "provider down")

    scripted.register("down", down)
    result = await Rehearsal(scene, models=scripted).cue(Actor("林小姐"))
    assert result.reason == "completed"
    [row] = calls(scene)  # the failed attempts were not billed; the fallback's answer was
    assert (row["model"], row["fallback"], row["kind"]) == ("scripted/improv", True, "actor")
    status = await Rehearsal(scene, models=scripted).status()
    assert scene_budget(status).spent == tokens([row]) == tokens(usage(scene))


async def test_an_old_scenes_spend_carries_into_its_call_record(scene, scripted):
    old = {"turn": 1, "role": "刑警", "model": "m", "prompt_tokens": 4000, "completion_tokens": 1000,
           "cost_usd": None, "calls": 2}  # fmt: skip
    (scene / ".circus").mkdir()
    (scene / ".circus" / "usage.jsonl").write_text(json.dumps(old) + "\n", encoding="utf-8")
    set_context(scene, budget_tokens=100000)
    rehearsal = Rehearsal(scene, models=scripted)
    assert scene_budget(await rehearsal.status()).spent == 5000  # no call record yet

    await rehearsal.cue(Actor("林小姐"))
    earlier, new = calls(scene)
    assert earlier["kind"] == "earlier" and tokens([earlier]) == 5000 and earlier["calls"] == 2
    status = await rehearsal.status()
    assert scene_budget(status).spent == 5000 + tokens([new])
    assert status.model_calls == 3
