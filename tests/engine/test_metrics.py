"""Prometheus metrics: /metrics, scraped during a real rehearsal through the fake LiteLLM
proxy and parsed with prometheus_client's own parser, counts turns, model calls and their
latency, tokens and cost by model, and the scenes running; no label ever carries a scene's or
an actor's name, their text or a secret; metrics are off unless CIRCUS_METRICS_PORT is set."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import urllib.request

import pytest
from fakeproviders.litellm_proxy import FakeLiteLLMProxy
from prometheus_client.parser import text_string_to_metric_families
from scenekit import operator_config

from engine import Config, LiteLLMModels, Rehearsal
from engine.door import metrics
from engine.door.llm import ModelCall, ModelReply
from engine.door.metrics import (
    MeteredModels,
    Metrics,
    configured_models,
    model_label,
    status_class,
)
from engine.errors import ModelError
from engine.events import TurnCompleted
from engine.folder.templates import new_scene

SECRET = "sk-circus-very-secret"
HELLO = ({"role": "user", "content": "hi"},)


GATEWAY = Config(
    model="writers-room",
    stage_manager_model="stage-manager",
    gateway_url="http://127.0.0.1:4000",
    allowed_models="litellm_proxy/*, litellm_proxy/big-room, ollama_chat/qwen2.5:7b",
)
DIRECT = Config(model="ollama_chat/qwen2.5:7b", allowed_models="*")


@pytest.mark.parametrize(
    "config, models",
    [
        (Config(), ("circus-local/smollm2",)),  # every role falls back to the embedded model
        (Config(stage_manager_model="sm"), ("circus-local/smollm2", "sm")),
        (Config(model="a", stage_manager_model="a"), ("a",)),
        (Config(model="a", allowed_models=" b , c/*, *, a,, d"), ("a", "b", "d")),
        (GATEWAY, ("writers-room", "stage-manager", "litellm_proxy/big-room", "ollama_chat/qwen2.5:7b")),
    ],
)  # fmt: skip
def test_the_configured_models_are_the_operators_and_the_exact_names_allowed(config, models):
    assert configured_models(config) == models


@pytest.mark.parametrize(
    "model, config, label",
    [
        ("writers-room", GATEWAY, "writers-room"),  # a failed call: the name asked for
        ("litellm_proxy/writers-room", GATEWAY, "writers-room"),  # an ok call: as sent
        (" writers-room ", GATEWAY, "writers-room"),
        ("stage-manager", GATEWAY, "stage-manager"),
        ("big-room", GATEWAY, "litellm_proxy/big-room"),  # the allow-list's one spelling
        ("litellm_proxy/big-room", GATEWAY, "litellm_proxy/big-room"),
        ("ollama_chat/qwen2.5:7b", GATEWAY, "ollama_chat/qwen2.5:7b"),
        ("litellm_proxy/directors-pick", GATEWAY, "other"),  # allowed by a pattern, not named
        ("directors-pick", GATEWAY, "other"),
        ("circus-local/smollm2", GATEWAY, "other"),  # the operator named other models
        ("ollama_chat/qwen2.5:7b", DIRECT, "ollama_chat/qwen2.5:7b"),
        ("ollama_chat/llama3", DIRECT, "other"),  # a director's pick under `*`
        ("circus-local/smollm2", Config(), "circus-local/smollm2"),
        ("scripted/improv", Config(model="scripted/improv"), "scripted/improv"),
        ("scripted/improv", Config(), "other"),
        # a configured name that is not plain is never shown
        ("huggingface/http://10.0.0.1/model", Config(model="huggingface/http://10.0.0.1/model"), "other"),
        ("openai/user:pass@host", Config(model="openai/user:pass@host"), "other"),
        ("林小姐的模型", Config(allowed_models="林小姐的模型"), "other"),
        ("openai/gpt 4o", Config(model="openai/gpt 4o"), "other"),
        ("x" * 81, Config(model="x" * 81), "other"),  # bounded
        ("", GATEWAY, "other"),
    ],
)  # fmt: skip
def test_a_model_is_labelled_by_its_configured_name_or_as_other(model, config, label):
    assert model_label(model, config) == label


@pytest.mark.parametrize(
    "status, label",
    [
        (101, None),  # the gateway's WebSocket upgrade: not a REST reply
        (100, None),
        (200, "2xx"),
        (204, "2xx"),
        (404, "4xx"),
        (429, "429"),
        (503, "5xx"),
    ],
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


def models_labelled(got: dict) -> set[str]:
    return {dict(labels)["model"] for _name, labels in got if "model" in dict(labels)}


def promtool_passes(text: str) -> None:
    """Prometheus's own linter on a scrape, where promtool is installed (Debian's prometheus)."""
    promtool = shutil.which("promtool")
    if promtool is None:
        return
    checked = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_metrics_scraped_during_and_after_a_rehearsal_through_the_proxy(
    tmp_path, no_operator_budgets
):
    scene = new_scene(tmp_path / "秘密的場景", "interrogation", config=operator_config())
    cast = sorted(p.name for p in (scene / "actors").iterdir())
    fake = FakeLiteLLMProxy(cast, {"writers-room": 2e-06, "stage-manager": 1e-06})
    during: list[str] = []
    async with fake as base:
        config = Config(
            model="writers-room",
            stage_manager_model="stage-manager",
            gateway_url=base,
            gateway_key=SECRET,
            reply_format="tags",
        )
        meter = Metrics(config)
        server = meter.serve(0, "127.0.0.1")
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        try:
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
    actor, sm = "writers-room", "stage-manager"  # as configured, though sent as litellm_proxy/…
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
                if key == "model":
                    assert label in {actor, sm}, label


def test_discord_replies_and_queue_depths_are_numbers_under_fixed_labels():
    meter = Metrics(Config())
    for status in (101, 200, 200, 429, 500):
        meter.discord_reply(status)
    meter.queue_depth("personas", 3)
    meter.queue_depth("a scene's name", 7)  # not one of ours: never a label
    got = samples(meter.text())
    assert value(got, "circus_discord_requests_total", status="2xx") == 2
    assert value(got, "circus_discord_requests_total", status="429") == 1
    assert not [k for k in got if ("status", "1xx") in k[1]]  # the upgrade is not REST
    assert value(got, "circus_queue_depth", queue="personas") == 3
    assert value(got, "circus_queue_depth", queue="other") == 7
    assert "a scene's name" not in meter.text()


async def test_an_ok_and_a_failed_call_to_one_gateway_model_share_its_label():
    fake = FakeLiteLLMProxy(["A", "B"], {"writers-room": 1e-06})
    async with fake as base:
        config = Config(model="writers-room", gateway_url=base, model_retries=0)
        meter = Metrics(config)
        door = MeteredModels(LiteLLMModels(config), meter)
        call = ModelCall("writers-room", HELLO, retries=0)
        await door.complete(call)
        del fake.model_list["writers-room"]  # the proxy's config.yaml drops it: a 400 from now
        with pytest.raises(ModelError):
            await door.complete(call)
    got = samples(meter.text())
    assert models_labelled(got) == {"writers-room"}  # so `sum by (model)` counts one model
    assert value(got, "circus_model_calls_total", model="writers-room", outcome="ok") == 1
    assert value(got, "circus_model_calls_total", model="writers-room", outcome="error") == 1
    assert value(got, "circus_model_call_duration_seconds_count", model="writers-room") == 2


def test_two_thousand_models_chosen_under_a_wildcard_allow_list_are_a_few_series():
    meter = Metrics(
        Config(model="writers-room", gateway_url=GATEWAY.gateway_url, allowed_models="*")
    )
    for i in range(2000):  # each director's soul names a model of its own, as the door reports
        model = f"litellm_proxy/pick-{i}"
        meter.model_call(model, 0.2, ModelReply("…", model, 10, 5, cost_usd=1e-05), "ok")
        meter.model_call(f"pick-{i}", 0.1, None, "error")
    meter.model_call("writers-room", 0.3, None, "error")
    text = meter.text()
    got = samples(text)
    assert models_labelled(got) == {"writers-room", "other"}
    assert value(got, "circus_model_calls_total", model="other", outcome="ok") == 2000
    assert value(got, "circus_model_calls_total", model="other", outcome="error") == 2000
    assert value(got, "circus_model_call_duration_seconds_count", model="other") == 4000
    assert value(got, "circus_model_tokens_total", model="other", kind="prompt") == 20_000
    assert math.isclose(value(got, "circus_model_cost_usd_total", model="other"), 0.02)
    assert value(got, "circus_model_calls_total", model="writers-room", outcome="error") == 1
    assert len(got) < 100 and len(text) < 16_000, (len(got), len(text))
    promtool_passes(text)


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
            metrics.Metrics(Config()).serve(port)
    said = str(refused.value)
    assert f"CIRCUS_METRICS_PORT {port}" in said and "\n" not in said
