"""Prometheus metrics: /metrics, scraped during a real rehearsal through the fake LiteLLM
proxy and parsed with prometheus_client's own parser, counts turns, model calls and their
latency, tokens and cost by model, and the scenes running; no label ever carries a scene's or
an actor's name, their text or a secret; metrics are off unless CIRCUS_METRICS_PORT is set."""

from __future__ import annotations

import math
import re
import urllib.request

import pytest
from fakeproviders.litellm_proxy import FakeLiteLLMProxy
from prometheus_client.parser import text_string_to_metric_families
from scenekit import operator_config

from engine import Config, LiteLLMModels, Rehearsal
from engine.door import metrics
from engine.door.metrics import MeteredModels, Metrics, model_label, status_class
from engine.events import TurnCompleted
from engine.folder.templates import new_scene

SECRET = "sk-circus-very-secret"


@pytest.mark.parametrize(
    "model, label",
    [
        ("litellm_proxy/writers-room", "litellm_proxy/writers-room"),
        ("ollama_chat/qwen2.5:7b", "ollama_chat/qwen2.5:7b"),
        ("scripted/improv", "scripted/improv"),
        ("huggingface/http://10.0.0.1/model", "other"),  # an address is never a label
        ("openai/user:pass@host", "other"),
        ("林小姐的模型", "other"),  # not a model name: text
        ("openai/gpt 4o", "other"),
        ("x" * 81, "other"),  # bounded
        ("", "other"),
    ],
)
def test_a_model_is_labelled_by_its_plain_name_or_not_at_all(model, label):
    assert model_label(model) == label


@pytest.mark.parametrize(
    "status, label", [(200, "2xx"), (204, "2xx"), (404, "4xx"), (429, "429"), (503, "5xx")]
)
def test_discord_replies_are_counted_by_status_class_and_429_apart(status, label):
    assert status_class(status) == label


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read().decode("utf-8")


def value(got: dict, name: str, **labels: str) -> float:
    return got.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_metrics_scraped_during_and_after_a_rehearsal_through_the_proxy(
    tmp_path, no_operator_budgets
):
    scene = new_scene(tmp_path / "秘密的場景", "interrogation", config=operator_config())
    cast = sorted(p.name for p in (scene / "actors").iterdir())
    fake = FakeLiteLLMProxy(cast, {"writers-room": 2e-06, "stage-manager": 1e-06})
    meter = Metrics()
    server = meter.serve(0, "127.0.0.1")
    url = f"http://127.0.0.1:{server.server_port}/metrics"
    during: list[str] = []
    try:
        async with fake as base:
            config = Config(
                model="writers-room",
                stage_manager_model="stage-manager",
                gateway_url=base,
                gateway_key=SECRET,
                reply_format="tags",
            )
            door = MeteredModels(LiteLLMModels(config), meter)
            rehearsal = Rehearsal(scene, models=door, config=config)
            rehearsal.events.listen(meter.on_event)
            texts: list[str] = []

            def mid_run(event) -> None:
                if isinstance(event, TurnCompleted):
                    texts.extend((event.dialogue, event.action, event.thought))
                    if event.index == 2:  # the server answers from its own thread
                        during.append(scrape(url))

            rehearsal.events.listen(mid_run)
            result = await rehearsal.run(4)
        after = scrape(url)
    finally:
        server.shutdown()
    assert result.turns_done == 4
    mid = samples(during[0])
    assert value(mid, "circus_scenes_running") == 1
    assert value(mid, "circus_turns_total", kind="model") >= 1
    got = samples(after)
    assert value(got, "circus_scenes_running") == 0
    assert value(got, "circus_turns_total", kind="model") == 4
    assert value(got, "circus_runs_total", reason="completed") == 1
    actor, sm = "litellm_proxy/writers-room", "litellm_proxy/stage-manager"
    calls = value(got, "circus_model_calls_total", model=actor, outcome="ok") + value(
        got, "circus_model_calls_total", model=sm, outcome="ok"
    )
    assert calls == len(fake.requests)
    assert value(got, "circus_model_call_duration_seconds_count", model=actor) == value(
        got, "circus_model_calls_total", model=actor, outcome="ok"
    )
    cost = value(got, "circus_model_cost_usd_total", model=actor) + value(
        got, "circus_model_cost_usd_total", model=sm
    )
    assert math.isclose(cost, sum(fake.costs))
    assert value(got, "circus_model_tokens_total", model=actor, kind="completion") > 0
    # no scene name, actor name, scene text or secret anywhere in what /metrics shows
    for secret in [SECRET, scene.name, *cast, *(t for t in texts if t)]:
        assert secret not in after and secret not in during[0]
    for family in text_string_to_metric_families(after):
        assert re.fullmatch(r"circus_[a-z_]+", family.name)
        for s in family.samples:
            for key, label in s.labels.items():
                assert key in {"kind", "reason", "model", "outcome", "status", "queue", "le"}
                assert label == model_label(label) or key == "le", (key, label)


def test_discord_replies_and_queue_depths_are_numbers_under_fixed_labels():
    meter = Metrics()
    for status in (200, 200, 429, 500):
        meter.discord_reply(status)
    meter.queue_depth("personas", 3)
    meter.queue_depth("a scene's name", 7)  # not one of ours: never a label
    got = samples(meter.text())
    assert value(got, "circus_discord_requests_total", status="2xx") == 2
    assert value(got, "circus_discord_requests_total", status="429") == 1
    assert value(got, "circus_queue_depth", queue="personas") == 3
    assert value(got, "circus_queue_depth", queue="other") == 7
    assert "a scene's name" not in meter.text()


async def test_a_call_the_proxy_refuses_is_counted_as_an_error():
    from engine.door.llm import ModelCall
    from engine.errors import ModelError

    meter = Metrics()
    async with FakeLiteLLMProxy(["A", "B"], {"writers-room": 1e-06}) as base:
        door = MeteredModels(LiteLLMModels(Config(gateway_url=base, model_retries=0)), meter)
        call = ModelCall("not-served", ({"role": "user", "content": "hi"},), retries=0)
        with pytest.raises(ModelError):
            await door.complete(call)
    got = samples(meter.text())
    assert value(got, "circus_model_calls_total", model="not-served", outcome="error") == 1
    assert value(got, "circus_model_call_duration_seconds_count", model="not-served") == 1


def test_metrics_are_off_unless_a_port_is_set(models):
    assert metrics.process_metrics(Config()) is None
    assert metrics.metered(models, Config()) is models


def test_a_metrics_port_already_taken_is_one_line_for_the_operator():
    import socket

    from engine import CircusError

    with socket.socket() as held:
        held.bind(("0.0.0.0", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(CircusError) as refused:
            metrics.Metrics().serve(port)
    said = str(refused.value)
    assert f"CIRCUS_METRICS_PORT {port}" in said and "\n" not in said
