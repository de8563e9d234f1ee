"""One model gateway: with CIRCUS_GATEWAY_URL set, every hosted model call goes to the
LiteLLM proxy under the proxy's own model names, with the operator's key; what the proxy says a
call used and cost lands in the scene's usage rows; Circus's allow-list and budgets still apply
on top. A loopback fake proxy (tests/fakeproviders/litellm_proxy.py) answers over real HTTP."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from budgetkit import calls, set_context, transcript, usage
from fakeproviders.litellm_proxy import FakeLiteLLMProxy
from scenekit import operator_config

from engine import Config, Rehearsal
from engine.door import gateway, llm
from engine.errors import Refused
from engine.folder.settings import SoulSettings, check_untrusted_soul
from engine.folder.templates import new_scene
from engine.turn.routing import check_models, litellm_routable, run_models

ON = Config(gateway_url="http://gateway:4000", gateway_key="sk-circus")
OFF = Config()


@pytest.mark.parametrize(
    "model, config, sent, base",
    [
        ("writers-room", ON, "litellm_proxy/writers-room", "http://gateway:4000"),
        ("openai/gpt-4o", ON, "litellm_proxy/openai/gpt-4o", "http://gateway:4000"),
        ("litellm_proxy/fast", ON, "litellm_proxy/fast", "http://gateway:4000"),
        ("scripted/improv", ON, "scripted/improv", "http://own"),  # ours: never sent anywhere
        ("circus-local/smollm2", ON, "circus-local/smollm2", "http://own"),
        ("openai/gpt-4o", OFF, "openai/gpt-4o", "http://own"),  # no gateway: as today
    ],
)
def test_which_models_go_through_the_gateway_and_where(model, config, sent, base):
    assert gateway.proxied(model, config) == sent
    assert gateway.base_for(model, "http://own", config) == base


def test_a_call_is_sent_with_the_gateways_address_and_key_its_fallback_too():
    call = llm.ModelCall(
        "writers-room",
        ({"role": "user", "content": "hi"},),
        api_base="http://a-souls-own-server",
        fallback_model="cheap",
        fallback_extra={"num_ctx": 4096},
    )
    sent = gateway.routed(call, ON)
    assert (sent.model, sent.fallback_model) == (
        "litellm_proxy/writers-room",
        "litellm_proxy/cheap",
    )
    assert sent.api_base == "http://gateway:4000"
    assert sent.extra == {"api_key": "sk-circus"}
    assert sent.fallback_extra == {"num_ctx": 4096, "api_key": "sk-circus"}
    assert gateway.routed(call, OFF) is call
    scripted = llm.ModelCall("scripted/improv", call.messages)
    assert gateway.routed(scripted, ON) is scripted


def test_the_gateway_key_is_never_shown_with_the_config():
    assert "sk-circus" not in repr(ON) and "http://gateway:4000" in repr(ON)


@pytest.mark.parametrize(
    "header, cost",
    [
        ("0.00042", 0.00042),
        ("0", 0.0),
        (1.5e-05, 1.5e-05),
        ("NaN", None),  # not a cost: the call is priced from its tokens instead
        ("-0.5", None),  # a proxy cannot refund a budget
        ("inf", None),
        ("a lot", None),
        (True, None),
        (None, None),
    ],
)
def test_the_proxys_cost_header_is_read_as_data(header, cost):
    headers = {} if header is None else {gateway.COST_HEADER: header}
    response = SimpleNamespace(_hidden_params={"additional_headers": headers})
    got = gateway.header_cost(response)
    assert got == cost if cost is None else math.isclose(got, cost)


def test_a_response_without_hidden_params_has_no_proxy_cost():
    assert gateway.header_cost(SimpleNamespace()) is None


@pytest.mark.parametrize(
    "model, priced_as",
    [
        ("litellm_proxy/gpt-4o", "gpt-4o"),
        ("litellm_proxy/openai/gpt-4o-mini", "openai/gpt-4o-mini"),
        ("litellm_proxy/", None),
        ("openai/gpt-4o", None),
    ],
)
def test_a_gateway_model_is_estimated_at_its_list_price(model, priced_as):
    assert gateway.priced_as(model) == priced_as


def test_a_budget_estimates_a_gateway_model_at_the_price_of_the_model_it_names():
    assert llm.price("litellm_proxy/gpt-4o-mini") == llm.price("gpt-4o-mini") is not None
    assert llm.price("litellm_proxy/writers-room") is None  # only the proxy knows: tokens only


@pytest.mark.parametrize(
    "config, allowed",
    [
        (Config(gateway_url="http://gateway:4000", allowed_models="litellm_proxy/*"), True),
        (Config(gateway_url="http://gateway:4000", allowed_models="writers-room"), True),
        (Config(gateway_url="http://gateway:4000", allowed_models="litellm_proxy/fast"), False),
        (Config(allowed_models="litellm_proxy/*"), False),  # no gateway: not a proxy's model
    ],
)
def test_the_allow_list_knows_a_model_by_its_gateway_name(config, allowed):
    soul = SoulSettings(model="writers-room")
    if allowed:
        check_untrusted_soul(soul, None, config)
    else:
        with pytest.raises(Refused):
            check_untrusted_soul(soul, None, config)


async def test_a_run_checks_the_proxys_names_as_routable(tmp_path):
    scene = new_scene(tmp_path / "s", "interrogation", config=operator_config())
    state = await Rehearsal(scene).state()
    config = Config(model="writers-room", gateway_url="http://gateway:4000")
    models = run_models(state, config)
    assert {m.model for m in models} == {"litellm_proxy/writers-room"}
    assert {m.api_base for m in models} == {"http://gateway:4000"}
    check_models(models, litellm_routable)  # a name only the proxy knows is not refused


def scene_with_cast(tmp_path):
    scene = new_scene(tmp_path / "gw", "interrogation", config=operator_config())
    return scene, sorted(p.name for p in (scene / "actors").iterdir())


async def test_a_whole_rehearsal_goes_through_the_proxy_and_its_costs_reach_the_ledger(
    tmp_path, no_operator_budgets
):
    scene, cast = scene_with_cast(tmp_path)
    fake = FakeLiteLLMProxy(cast, {"writers-room": 2e-06, "stage-manager": 1e-06})
    async with fake as base:
        config = Config(
            model="writers-room",
            stage_manager_model="stage-manager",
            api_base="http://127.0.0.1:9/never-asked",  # the gateway wins over any other base
            gateway_url=base,
            gateway_key="sk-circus",
            reply_format="tags",
        )
        result = await Rehearsal(scene, config=config).run(4)
    assert result.turns_done == 4 and len(transcript(scene)) == 4
    assert {b["model"] for b in fake.requests} == {"writers-room", "stage-manager"}
    assert set(fake.keys) == {"sk-circus"}
    rows = usage(scene)
    assert {r["model"] for r in rows} == {
        "litellm_proxy/writers-room",
        "litellm_proxy/stage-manager",
    }
    assert len(rows) == len(fake.requests)
    assert math.isclose(sum(r["cost_usd"] for r in rows), sum(fake.costs))
    assert all(r["cost_usd"] > 0 for r in rows)


async def test_a_scene_budget_still_stops_a_run_through_the_proxy(tmp_path, no_operator_budgets):
    scene, cast = scene_with_cast(tmp_path)
    set_context(scene, budget_usd=0.001)
    fake = FakeLiteLLMProxy(cast, {"writers-room": 1e-04})  # each call costs cents
    async with fake as base:
        config = Config(model="writers-room", gateway_url=base, reply_format="tags")
        result = await Rehearsal(scene, config=config).run(20)
    assert result.reason == "budget" and result.turns_done < 20
    # every call the proxy billed is in the scene's record, at the proxy's price
    spent = sum(r["cost_usd"] for r in calls(scene))
    assert len(calls(scene)) == len(fake.costs) and math.isclose(spent, sum(fake.costs))


async def test_a_proxy_cost_that_is_not_a_number_is_priced_from_the_tokens(
    tmp_path, no_operator_budgets
):
    scene, cast = scene_with_cast(tmp_path)
    fake = FakeLiteLLMProxy(cast, {"gpt-4o-mini": 1.0}, cost_header="NaN")
    async with fake as base:
        config = Config(model="gpt-4o-mini", gateway_url=base, reply_format="tags")
        await Rehearsal(scene, config=config).run(1)
    listed = llm.price("gpt-4o-mini")
    assert listed is not None
    for row in usage(scene):
        expected = row["prompt_tokens"] * listed.input + row["completion_tokens"] * listed.output
        assert math.isclose(row["cost_usd"], expected)
