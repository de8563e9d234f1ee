"""The door's own wire (engine.door.wire) against litellm, call for call, on the same loopback server.

Each case is asked twice through the real door — once over the wire the door speaks itself
(the default), once through litellm (`CIRCUS_DIRECT_HTTP=off`) — of one recording server that
answers both alike. What the server was sent (its path, key and JSON body) and what the door
handed back (the reply with its usage, cost and cache figures, or the failure's kind and how
many tries it took) must be the same both ways: the wire is litellm's behaviour, minus its import.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from aiohttp import web
from fakeproviders import serve

from engine.config import Config
from engine.door import llm, prices, wire
from engine.door.llm import LiteLLMModels, ModelCall
from engine.errors import ModelError

SYSTEM = "You are Ruth. Answer in tags."
MESSAGES = ({"role": "system", "content": SYSTEM}, {"role": "user", "content": "Your turn, Ruth."})
TAGS = "<thought>t</thought><dialogue>Tomorrow.</dialogue><cue>Danny</cue>"
SCHEMA = {
    "response_format": {
        "type": "json_schema",
        "json_schema": {
            "name": "actor_turn",
            "schema": {"type": "object", "properties": {"dialogue": {"type": "string"}}},
            "strict": True,
        },
    }
}


def completion(text: str = TAGS, usage: Any = "default") -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
    }
    if usage == "default":
        usage = {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230}
    if usage is not None:
        body["usage"] = usage
    return body


def ollama(text: str = TAGS) -> dict[str, Any]:
    return {
        "model": "qwen2.5:7b",
        "created_at": "2026-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": text},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 900,
        "eval_count": 25,
    }


@dataclass
class Answer:
    status: int = 200
    body: Any = field(default_factory=completion)
    headers: dict[str, str] = field(default_factory=dict)


class Recorder:
    """Answers every POST with `answers` in turn (the last one again once they run out) and
    records what it was sent; answers /api/show as an Ollama server does."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers) or [Answer()]
        self.seen: list[tuple[str, str, Any]] = []
        self.peers: list[Any] = []  # the client's address of each request (its connection)

    async def handle(self, request: web.Request) -> web.Response:
        if request.path.endswith("/api/show"):
            return web.json_response({"model_info": {"qwen2.context_length": 32768}})
        raw = await request.read()
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.peers.append(peer)
        self.seen.append((request.path, request.headers.get("Authorization", ""), json.loads(raw)))
        answer = self.answers[min(len(self.seen), len(self.answers)) - 1]
        text = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
        return web.Response(
            status=answer.status, text=text, content_type="application/json", headers=answer.headers
        )

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner, base = await serve(app)
        return base

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()


@dataclass(frozen=True)
class Case:
    model: str
    answers: tuple[Answer, ...] = (Answer(),)
    extra: dict[str, Any] = field(default_factory=dict)
    path: str = "/v1"  # what api_base ends with
    retries: int = 0
    temperature: float | None = 0.7
    max_tokens: int | None = 512
    gateway: bool = False
    key: str | None = "sk-test-key"


CASES = {
    "openai, cached prefix": Case(
        "openai/gpt-4o-mini",
        (
            Answer(
                body=completion(
                    usage={
                        "prompt_tokens": 2048,
                        "completion_tokens": 40,
                        "total_tokens": 2088,
                        "prompt_tokens_details": {"cached_tokens": 1024},
                    }
                )
            ),
        ),
    ),
    "openai, a schema": Case("openai/gpt-4o", extra=SCHEMA),
    "openai, no temperature nor cap": Case("openai/gpt-4o-mini", temperature=None, max_tokens=None),
    "a model litellm has no price for": Case("openai/my-local-model"),
    "vLLM, no usage reported": Case("hosted_vllm/qwen", (Answer(body=completion(usage=None)),)),
    "LM Studio": Case("lm_studio/qwen", extra=SCHEMA),
    "a gateway's cost header": Case(
        "writers-room",
        (Answer(headers={"x-litellm-response-cost": "0.0042"}),),
        gateway=True,
        path="",
    ),
    "a gateway's broken cost header": Case(
        "writers-room", (Answer(headers={"x-litellm-response-cost": "-1"}),), gateway=True, path=""
    ),
    "Ollama": Case(
        "ollama_chat/qwen2.5:7b", (Answer(body=ollama()),), extra={"num_ctx": 8192}, path=""
    ),
    "Ollama, a schema": Case(
        "ollama_chat/qwen2.5:7b",
        (Answer(body=ollama('{"dialogue": "Tomorrow."}')),),
        extra={"num_ctx": 8192, **SCHEMA},
        path="",
    ),
    "Ollama, a reasoning model's thinking": Case(
        "ollama_chat/qwen3:8b",
        (Answer(body=ollama("<think>She lies.</think>" + TAGS)),),
        extra={"num_ctx": 8192},
        path="",
    ),
    "a key the server refuses": Case(
        "openai/gpt-4o-mini",
        (Answer(401, {"error": {"message": "Invalid API key", "type": "invalid_request_error"}}),),
        retries=2,
    ),
    "a gateway without a database": Case(
        "writers-room",
        (Answer(400, {"error": {"message": "No connected db.", "type": "no_db_connection"}}),),
        gateway=True,
        path="",
        retries=2,
    ),
    "rate limited, then an answer": Case(
        "openai/gpt-4o-mini",
        (Answer(429, {"error": {"message": "slow down"}}, {"retry-after": "0"}), Answer()),
        retries=2,
    ),
    "a server error every time": Case(
        "hosted_vllm/qwen", (Answer(500, {"error": {"message": "boom"}}),), retries=2
    ),
    "a model it does not have": Case(
        "openai/gpt-9", (Answer(404, {"error": {"message": "no such model"}}),), retries=2
    ),
    "a reply that is not JSON": Case(
        "openai/gpt-4o-mini", (Answer(body="<html>gateway timeout</html>"),), retries=2
    ),
    "OpenAI without a key": Case("openai/gpt-4o-mini", key=None, retries=1),
    "a LiteLLM proxy without a key": Case("litellm_proxy/writers-room", key=None, path=""),
    "vLLM without a key": Case("hosted_vllm/qwen", key=None),
    "LM Studio without a key": Case("lm_studio/qwen", key=None),
    "Ollama without a key": Case(
        "ollama_chat/qwen2.5:7b", (Answer(body=ollama()),), key=None, path=""
    ),
    "usage that is not a count": Case(
        "openai/gpt-4o-mini",
        (Answer(body=completion(usage={"prompt_tokens": "many", "completion_tokens": 3})),),
        retries=2,
    ),
}


async def outcome(case: Case, direct: bool) -> tuple[Any, list[tuple[str, str, Any]]]:
    recorder = Recorder(*case.answers)
    async with recorder as root:
        base = root + case.path
        config = Config(
            direct_http=direct,
            retry_base_seconds=0.001,
            gateway_url=base if case.gateway else None,
            gateway_key="circus-gw-key" if case.gateway else None,
        )
        door = LiteLLMModels(config)
        call = ModelCall(
            case.model,
            MESSAGES,
            temperature=case.temperature,
            api_base=None if case.gateway else base,
            max_tokens=case.max_tokens,
            extra={
                **case.extra,
                **({"api_key": case.key} if case.key and not case.gateway else {}),
            },
            retries=case.retries,
        )
        try:
            result: Any = await door.complete(call)
        except ModelError as exc:
            result = (exc.kind, type(exc).__name__)
    return result, recorder.seen


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)
    return bool(a == b)


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in (
        "OPENAI_API_KEY",
        "LITELLM_PROXY_API_KEY",
        "HOSTED_VLLM_API_KEY",
        "LM_STUDIO_API_KEY",
    ):
        monkeypatch.delenv(key, raising=False)
    for key in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OLLAMA_API_KEY"):
        monkeypatch.delenv(key, raising=False)


@pytest.mark.parametrize("name", list(CASES))
async def test_the_wire_sends_and_reads_what_litellm_does(name: str) -> None:
    case = CASES[name]
    wired, wired_seen = await outcome(case, direct=True)
    via_litellm, litellm_seen = await outcome(case, direct=False)
    assert wired_seen == litellm_seen  # path, key and body, request for request
    if isinstance(via_litellm, tuple):
        assert wired == via_litellm
        return
    assert isinstance(wired, llm.ModelReply)
    if name == "vLLM, no usage reported":
        # The one difference, on purpose: litellm fills a missing usage with zeros, so such a
        # call would count as free; the wire sees none was sent and counts the tokens itself
        # (engine.door.metering), as the door means to.
        assert (via_litellm.prompt_tokens, via_litellm.completion_tokens) == (0, 0)
        assert wired.prompt_tokens > 0 and wired.completion_tokens > 0
        wired = replace(wired, prompt_tokens=0, completion_tokens=0)
    for name_ in ("text", "model", "prompt_tokens", "completion_tokens", "cached_tokens"):
        assert getattr(wired, name_) == getattr(via_litellm, name_), name_
    for name_ in ("cost_usd", "cache_saved_usd"):
        assert same(getattr(wired, name_), getattr(via_litellm, name_)), name_


async def test_an_operators_price_counts_the_same_both_ways() -> None:
    prices.register(
        {"openai/house-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}
    )
    try:
        wired, _ = await outcome(Case("openai/house-model"), direct=True)
        via_litellm, _ = await outcome(Case("openai/house-model"), direct=False)
    finally:
        prices.forget("openai/house-model")
    assert wired.cost_usd == pytest.approx(1200 * 1e-6 + 30 * 2e-6)
    assert same(wired.cost_usd, via_litellm.cost_usd)


async def test_nothing_answering_is_unreachable_both_ways() -> None:
    recorder = Recorder()
    async with recorder as base:
        pass  # the port is closed again: nothing answers there
    for direct in (True, False):
        door = LiteLLMModels(Config(direct_http=direct, retry_base_seconds=0.001))
        call = ModelCall(
            "openai/gpt-4o-mini",
            MESSAGES,
            api_base=base + "/v1",
            retries=1,
            extra={"api_key": "sk-test-key"},
        )
        with pytest.raises(ModelError) as caught:
            await door.complete(call)
        assert caught.value.kind == "unreachable"


def test_a_scripted_rehearsal_never_loads_litellm(tmp_path) -> None:
    """The scripted stand-in is called in process and counted without litellm: a whole run
    (run, a cue, the stage manager) leaves litellm unimported, in a process of its own."""
    import subprocess
    import sys
    import textwrap

    from scenekit import write_scene

    root = write_scene(tmp_path / "scene")
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        from engine import Config, Cue, Rehearsal, Run

        async def main():
            r = Rehearsal({str(root)!r}, config=Config(model="scripted/improv"))
            await (await r.start_run(Run(6)))
            actor = await r.resolve_actor("律師")
            await (await r.start_run(Cue(actor, "打斷他")))

        asyncio.run(main())
        print("litellm" in sys.modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr[-2000:]


def test_a_door_that_will_load_litellm_in_a_thread_first_imports_what_both_reach() -> None:
    """litellm loads in a worker thread (to price a wire reply, to route, to warm). What it
    shares with this thread's own later imports — an import cycle inside importlib, httpx —
    is imported here first, when the door is made: two threads entering one cycle from its two
    ends fail one of them ("deadlock detected by _ModuleLock"). A scripted door imports none."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from engine import Config, LiteLLMModels\n"
        "from engine.door.boot import SHARED_IMPORTS\n"
        "LiteLLMModels(Config(model=sys.argv[1]))\n"
        "print(sorted(set(SHARED_IMPORTS) - set(sys.modules)), 'litellm' in sys.modules)\n"
    )
    for model, missing in (("openai/gpt-4o-mini", "[]"), ("anthropic/claude-sonnet-4-5", "[]")):
        done = subprocess.run([sys.executable, "-c", code, model], capture_output=True, text=True)
        assert done.stdout.split() == [missing, "False"], done.stderr[-2000:]
    done = subprocess.run(
        [sys.executable, "-c", code, "scripted/improv"], capture_output=True, text=True
    )
    assert "'httpx'" in done.stdout, done.stderr[-2000:]


def test_litellm_starts_loading_once_a_request_whose_reply_it_will_price_is_out() -> None:
    """A hosted model's reply is priced by litellm (seconds to import): the import starts in a
    thread of its own once the request is sent, so it passes while the model thinks. A proxy
    bills its replies itself: its calls start none (litellm still loads to price a reply that
    came without a bill, after it). In a fresh process, where litellm is not yet loaded."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import asyncio, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent.parent)!r})\n"
        "from fakeproviders import FakeOpenAI\n"
        "from engine.config import Config\n"
        "from engine.door import boot\n"
        "from engine.door.llm import LiteLLMModels, ModelCall\n"
        "async def main(model):\n"
        "    async with FakeOpenAI(['Ruth']) as base:\n"
        "        door = LiteLLMModels(Config())\n"
        "        messages = ({'role': 'user', 'content': 'Your turn, Ruth.'},)\n"
        "        call = ModelCall(model, messages, api_base=base, extra={'api_key': 'k'})\n"
        "        reply = await door.complete(call)\n"
        "    print(bool(boot._loading), 'litellm' in sys.modules, reply.text != '')\n"
        "asyncio.run(main(sys.argv[1]))\n"
    )
    for model, expected in (
        ("openai/gpt-4o-mini", "True True True"),
        ("litellm_proxy/gpt-4o-mini", "False True True"),
    ):
        done = subprocess.run([sys.executable, "-c", code, model], capture_output=True, text=True)
        assert done.stdout.strip() == expected, (model, done.stderr[-2000:])


async def test_the_wire_says_when_its_request_is_out_once_and_before_the_answer() -> None:
    said: list[str] = []

    async def answer(request: web.Request) -> web.Response:
        said.append("request read")
        await request.read()
        return web.json_response({"choices": [{"message": {"content": "Hi."}}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner, base = await serve(app)
    try:
        req = wire.request(
            "openai/gpt-4o-mini", MESSAGES, api_base=base + "/v1", extra={"api_key": "k"}
        )
        status, _, _ = await wire.send(req, 10.0, on_sent=lambda: said.append("sent"))
        said.append("answered")

        def broken() -> None:
            raise RuntimeError("can't start new thread")

        again, _, _ = await wire.send(req, 10.0, on_sent=broken)  # the answer is not lost
        assert again == 200
    finally:
        await runner.cleanup()  # nothing listens there now: no request can go out
    assert status == 200 and said.count("sent") == 1 and "answered" in said
    with pytest.raises(wire.APIConnectionError):
        await wire.send(req, 10.0, on_sent=lambda: said.append("sent to nobody"))
    assert "sent to nobody" not in said


async def test_a_hosted_models_next_call_reuses_the_connection() -> None:
    """One HTTP client per event loop: the second call of a turn loop skips the handshakes."""
    recorder = Recorder()
    async with recorder as base:
        door = LiteLLMModels(Config(retry_base_seconds=0.001))
        call = ModelCall(
            "hosted_vllm/qwen", MESSAGES, api_base=base + "/v1", extra={"api_key": "k"}
        )
        for _ in range(3):
            await door.complete(call)
    # (the first reply loads litellm to price it; the calls after it share one connection)
    assert len(recorder.peers) == 3 and recorder.peers[1] == recorder.peers[2]
