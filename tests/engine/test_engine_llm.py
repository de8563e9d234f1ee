"""The model door: which model plays whom, and real HTTP to a loopback server.

The loopback server speaks the OpenAI chat-completions protocol, so an `openai/...` actor with
an `api_base` goes over the wire the door speaks itself (engine.door.wire, held to litellm's own
requests and error mapping by tests/engine/test_wire.py).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web
from fakeproviders import chat_completion, serve
from scenekit import write_scene

from engine import Actor, Rehearsal
from engine.config import Config
from engine.door import llm
from engine.errors import ModelError
from engine.folder.role_models import actor_model, api_base, extra_params, stage_manager_model
from engine.folder.soul import Soul
from engine.folder.turns import parse_transcript


@pytest.mark.parametrize(
    "soul, scene, env, expected",
    [
        (
            {"model": "anthropic/claude-x"},
            {"model": "gemini/g"},
            {"CIRCUS_MODEL": "openai/o"},
            "anthropic/claude-x",
        ),
        ({}, {"model": "gemini/g"}, {"CIRCUS_MODEL": "openai/o"}, "gemini/g"),
        ({}, {}, {"CIRCUS_MODEL": "ollama_chat/qwen"}, "ollama_chat/qwen"),
        ({}, {}, {}, llm.EMBEDDED_MODEL),
        ({"model": "  "}, {}, {}, llm.EMBEDDED_MODEL),
    ],
)
def test_actor_model_precedence(soul, scene, env, expected):
    assert actor_model(Soul("x", "", soul), scene, Config.from_env(env)) == expected


@pytest.mark.parametrize(
    "scene, env, expected",
    [
        ({"stage_manager_model": "openai/mini", "model": "gemini/g"}, {}, "openai/mini"),
        ({"model": "gemini/g"}, {"CIRCUS_STAGE_MANAGER_MODEL": "openai/sm"}, "openai/sm"),
        ({"model": "gemini/g"}, {"CIRCUS_MODEL": "openai/o"}, "gemini/g"),
        ({}, {"CIRCUS_MODEL": "openai/o"}, "openai/o"),
        ({}, {}, llm.EMBEDDED_MODEL),
    ],
)
def test_stage_manager_model_precedence(scene, env, expected):
    assert stage_manager_model(scene, Config.from_env(env)) == expected


def test_api_base_and_ollama_context_size():
    soul = Soul("x", "", {"api_base": "http://gpu-box:11434"})
    assert api_base(soul, {"api_base": "http://other"}, Config()) == "http://gpu-box:11434"
    ollama = Config.from_env({"CIRCUS_API_BASE": "http://ollama:11434"})
    assert api_base(None, {}, ollama) == "http://ollama:11434"
    assert extra_params("ollama_chat/qwen2.5:7b", Config()) == {"num_ctx": 8192}
    big = Config.from_env({"CIRCUS_NUM_CTX": "16384"})
    assert extra_params("ollama_chat/qwen2.5:7b", big) == {"num_ctx": 16384}
    assert extra_params("openai/gpt-4o", Config()) == {}


class LoopbackOpenAI:
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 with scripted failures."""

    def __init__(self, failures: list[int] | None = None, delay: float = 0.0) -> None:
        self.failures = list(failures or [])
        self.delay = delay
        self.requests: list[dict] = []
        self.answered = 0  # replies actually sent (a slow reply counts once it is sent)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if self.failures:
            status = self.failures.pop(0)
            return web.json_response(
                {"error": {"message": f"scripted {status}", "type": "server_error"}},
                status=status,
                headers={"Retry-After": "0"} if status == 429 else {},
            )
        await asyncio.sleep(self.delay)
        self.answered += 1
        speaker = "律師" if "律師" in body["messages"][0]["content"][:200] else "林小姐"
        text = f"<thought>HTTP-THOUGHT</thought><dialogue>「經由 HTTP 的台詞」</dialogue><cue>{'刑警' if speaker else ''}</cue>"
        usage = {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333}
        return web.json_response(chat_completion(body["model"], text, usage))

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.handle)
        self.runner, base = await serve(app)
        return base + "/v1"

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()


@pytest.fixture(autouse=True)
def openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")


@pytest.fixture
def http_scene(tmp_path):
    return write_scene(tmp_path / "http", model="openai/gpt-4o-mini")


async def test_an_openai_compatible_server_gets_the_exact_prompt_and_usage_is_counted(http_scene):
    server = LoopbackOpenAI()
    async with server as base:
        (http_scene / "context.md").write_text(
            (http_scene / "context.md")
            .read_text("utf-8")
            .replace("---\n", f"---\napi_base: {base}\n", 1),
            encoding="utf-8",
        )
        rehearsal = Rehearsal(http_scene)
        await rehearsal.cue(Actor("林小姐"), "看著他")
        status = await rehearsal.status()
    sent = server.requests[0]
    assert sent["model"] == "gpt-4o-mini"
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert "SOUL-SECRET-0" in sent["messages"][0]["content"]
    assert "看著他" in sent["messages"][1]["content"]
    turn = parse_transcript((http_scene / "transcript.md").read_text("utf-8"))[0]
    assert turn.dialogue == "「經由 HTTP 的台詞」"
    assert status.prompt_tokens == 321 and status.completion_tokens == 12
    assert status.cost_usd is not None and status.cost_usd > 0  # litellm knows gpt-4o-mini's price


async def test_429_and_5xx_over_http_are_retried_with_backoff():
    server = LoopbackOpenAI(failures=[429, 503])
    async with server as base:
        reply = await llm.LiteLLMModels().complete(
            llm.ModelCall("openai/gpt-4o-mini", ({"role": "user", "content": "hi"},), api_base=base)
        )
    assert "經由 HTTP" in reply.text and len(server.requests) == 3


async def test_a_client_error_is_not_retried_and_reads_for_people():
    server = LoopbackOpenAI(failures=[400])
    async with server as base:
        with pytest.raises(ModelError, match="openai/gpt-4o-mini failed.*scripted 400"):
            await llm.LiteLLMModels().complete(
                llm.ModelCall(
                    "openai/gpt-4o-mini", ({"role": "user", "content": "hi"},), api_base=base
                )
            )
    assert len(server.requests) == 1


async def test_a_model_that_hangs_times_out_per_turn():
    server = LoopbackOpenAI(delay=30)
    async with server as base:
        with pytest.raises(ModelError, match="did not answer in time"):
            await llm.LiteLLMModels().complete(
                llm.ModelCall(
                    "openai/gpt-4o-mini",
                    ({"role": "user", "content": "hi"},),
                    api_base=base,
                    timeout=0.3,
                    retries=0,
                )
            )
        # The call gave up on its own timeout, long before the server would have answered.
        assert server.answered == 0


def test_litellm_is_not_imported_by_the_engine_until_a_model_is_called():
    import subprocess
    import sys

    code = "import sys, engine, engine.rehearsal.facade, engine.folder.templates; print(json.dumps('litellm' in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", "import json;" + code], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) is False
