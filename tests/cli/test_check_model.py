"""`circus check-model MODEL`: a short fixed rehearsal, in memory, through the real door — and
what it says about the model (the verdict, a 40-turn projection), against the scripted model and
a loopback OpenAI-compatible server that answers well, answers garbage, hangs, or is not there."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest
from clikit import circus, cli_env, listing
from fakeproviders import chat_completion

from engine.catalog import say
from engine.config import Config
from engine.door.llm import ModelCall, ModelReply, Price
from engine.probe.check import (
    CallSample,
    Failure,
    ProbeResult,
    TurnSample,
    check_model,
    structured_used,
)
from engine.probe.report import Projection, cache_seen, probe_lines, project, verdict
from engine.providers.scripted import (
    ScriptedFailure,
    ScriptedModels,
    ScriptedRequest,
    garbage,
    improv,
)

RUTH_SECRET = "sold the family house"  # in Ruth's soul only (engine/catalog/en.py)


# ----------------------------------------------------------------------------- pure decisions
def turns(*reads: str) -> tuple[TurnSample, ...]:
    return tuple(TurnSample("en", "Ruth", read, 1) for read in reads)


def probed(failure: Failure | None = None, reads=(), sm: str | None = "picked") -> ProbeResult:
    return ProbeResult(
        "openai/x", None, 5.0, turns=turns(*reads), stage_manager=sm, failure=failure
    )


CLEAN = ("clean",) * 6


@pytest.mark.parametrize(
    "result, usable, kind, says",
    [
        (probed(reads=CLEAN), True, "ok", "usable — every reply read as written"),
        (probed(reads=("repaired",) + CLEAN[1:]), True, "shaky", "5 of 6 replies read as written, 1 after a re-ask"),
        (probed(reads=CLEAN, sm="fallback"), True, "shaky", "6 of 6 replies read as written"),
        (probed(reads=("unreadable",) * 3 + CLEAN[3:]), True, "shaky", "3 not at all"),
        (probed(reads=("unreadable",) * 4 + CLEAN[4:]), False, "unreadable", "4 of 6 replies could not be read"),
        (probed(Failure("timeout", "the model did not answer in time")), False, "timeout", "no answer within 5 s"),
        (probed(Failure("unreachable", "Connection error.")), False, "unreachable", "nothing answered (Connection error.)"),
        (probed(Failure("auth", "401")), False, "auth", "refused the credentials"),
        (probed(Failure("unroutable", "scripted/improv")), False, "unroutable", "closest known names are scripted/improv"),
        (probed(Failure("unroutable", "")), False, "unroutable", "litellm can route: write provider/model"),
        (probed(), False, "error", "the probe played no turn"),
    ],
)  # fmt: skip
def test_the_verdict_follows_from_what_the_probe_found(result, usable, kind, says):
    v = verdict(result)
    assert (v.usable, v.kind) == (usable, kind)
    assert says in v.reason.render("en") and "\n" not in v.reason.render("en")
    assert v.reason.render("zh")  # said in Chinese too


def call(language: str, prompt: int, completion: int = 20, role: str = "actor", **kw) -> CallSample:
    values = dict(cost_usd=None, cached_tokens=None, structured=None, repeat=False)
    return CallSample(role, language, 0.1, prompt, completion, **(values | kw))


STEADY = (
    call("en", 80, 10, role="stage_manager"),
    *(call("en", p) for p in (100, 150, 200)),
    *(call("zh", p) for p in (100, 150, 200)),
)


@pytest.mark.parametrize(
    "calls, reads, price, expected",
    [
        # 40 turns, the record growing 50 tokens a turn; the stage manager asked on 1 in 4.
        (STEADY, CLEAN, Price(1e-6, 2e-6), Projection(40, 4, 50, 53_550, 900, 0.05535)),
        # one re-ask in six turns: 7/6 calls a turn
        (STEADY + (call("zh", 400, retry=True, repeat=True),), ("repaired",) + CLEAN[1:],
         None, Projection(40, 4, 57, 60_717, 1_033, None)),
        # a fast-growing record stops growing at HISTORY_BUDGET tokens
        ((call("en", 100), call("en", 1100), call("en", 2100)), ("clean",) * 3,
         None, Projection(40, 4, 40, 4_000 + 15_000 + 6_000 * 34, 800, None)),
        # no price known, but every call had a cost: the probe's own cost per token
        (tuple(call("en", 100, 0, cost_usd=0.001) for _ in range(3)), ("clean",) * 3,
         None, Projection(40, 4, 40, 4_000, 0, 0.04)),
        ((), (), None, None),  # nothing answered: nothing to project
    ],
)  # fmt: skip
def test_the_projection_grows_the_probes_prompts_to_a_40_turn_take(calls, reads, price, expected):
    result = ProbeResult("openai/x", None, 5.0, calls=calls, turns=turns(*reads), price=price)
    got = project(result)
    if expected is None:
        assert got is None
        return
    assert got is not None and got.cost_usd == pytest.approx(expected.cost_usd)
    assert got == Projection(**{**expected.__dict__, "cost_usd": got.cost_usd})


PLAIN = ModelReply("<thought>t</thought>", "openai/x")
# A reply as the door gives it once it reports cache reads and structured output (branch `cache`).
CACHING = SimpleNamespace(text="{}", model="openai/x", cached_tokens=1024, structured=True)


@pytest.mark.parametrize(
    "reply, extra, structured",
    [
        (PLAIN, {}, False),  # nothing was asked: tags
        (PLAIN, {"response_format": {"type": "json_schema"}}, True),  # asked for a schema
        (PLAIN, {"format": {"type": "object"}}, True),  # Ollama's way
        (CACHING, {}, True),
        (SimpleNamespace(structured=False), {"response_format": {}}, False),  # the door knows
    ],
)
def test_structured_output_is_what_the_door_says_or_what_was_asked(reply, extra, structured):
    asked = ModelCall("openai/x", (), extra=extra)
    assert structured_used(reply, asked) is structured  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "cached, shown",
    [
        ((None, None), None),  # not reported
        ((None, 0), (0, 2000)),  # reported, nothing cached
        ((None, 1024), (1024, 2000)),
    ],
)
def test_cached_tokens_are_read_from_the_repeat_call(cached, shown):
    first, repeat = cached
    calls = (
        call("en", 2000, cached_tokens=first),
        call("en", 2000, cached_tokens=repeat, repeat=True),
    )
    result = ProbeResult("openai/x", None, 5.0, calls=calls, turns=turns("clean"))
    assert cache_seen(result) == shown
    line = next(line for line in probe_lines(result) if line.startswith("prompt caching"))
    assert (
        line
        == {
            None: "prompt caching: not reported",
            0: "prompt caching: no cached tokens on the repeat calls",
            1024: "prompt caching: 1,024 of 2,000 prompt tokens read from the cache on a repeat call",
        }[repeat]
    )


# ----------------------------------------------------------------------------- the probe, in process
async def test_the_probe_plays_both_scenes_through_the_real_prompts_and_keeps_the_walls():
    door = ScriptedModels()
    result = await check_model("scripted/improv", models=door, config=Config())
    assert verdict(result).kind == "ok" and result.failure is None
    assert [(c.role, c.language) for c in result.calls] == [("stage_manager", "en")] + [
        ("actor", "en")
    ] * 3 + [("actor", "zh")] * 3
    assert [c.repeat for c in result.calls if c.role == "actor"] == [False, False, True] * 2
    assert [t.read for t in result.turns] == ["clean"] * 6
    asked = [r.shape.kind for r in door.calls]
    assert asked == ["stage_manager"] + ["actor"] * 6
    assert {r.shape.speaker for r in door.calls[1:]} == {"Ruth", "Danny", "林小姐", "刑警"}

    def rules(name: str, lang: str) -> str:  # the scripted model is asked in tags
        fmt, own = say("prompt.format.tags", lang), say("prompt.own_turn.tags", lang)
        return say("prompt.rules", lang, name=name, format=fmt, own_turn=own)

    ruth, lin = rules("Ruth", "en"), rules("林小姐", "zh")
    assert any(r.messages[0]["content"].startswith(ruth) for r in door.calls)
    assert any(r.messages[0]["content"].startswith(lin) for r in door.calls)
    for request in door.calls:
        if request.shape.speaker != "Ruth":
            assert RUTH_SECRET not in request.prompt  # an actor never sees another's soul
    third = [r for r in door.calls if r.shape.speaker == "Ruth"][1]
    assert "from Ruth." in third.prompt and "from Danny." in third.prompt  # the record grew


def half_garbage(request: ScriptedRequest) -> str:
    """The first actor's first reply is prose; its re-ask and everything else read well."""
    return garbage(request) if request.index == 1 else improv(request)


async def hangs(request: ScriptedRequest) -> str:
    await asyncio.Event().wait()
    return ""


def refuses(request: ScriptedRequest) -> str:
    raise ScriptedFailure(401, "invalid api key")


@pytest.mark.parametrize(
    "script, kind, calls",
    [
        (garbage, "unreadable", 1 * 2 + 6 * 2),  # every turn re-asked once; the SM too
        (half_garbage, "shaky", None),
        (refuses, "auth", 0),
        (hangs, "timeout", 0),
    ],
)
async def test_how_a_model_answers_decides_the_verdict(script, kind, calls):
    door = ScriptedModels({"probe": script})
    timeout = 0.2 if script is hangs else 60.0  # only the hang waits for it
    result = await check_model("scripted/probe", models=door, config=Config(), timeout=timeout)
    assert verdict(result).kind == kind
    if calls is not None:
        assert len(result.calls) == calls
    if kind in ("auth", "timeout"):
        assert len(door.calls) == 1  # the first failure ends the probe, with no retry


@pytest.mark.parametrize(
    "model, kind, says",
    [
        ("scripted", "unroutable", "closest known names are scripted/improv"),
        ("llama3.1", "unroutable", "ollama/llama3.1"),
        ("huggingface/http://127.0.0.1:9/v1", "refused", "`model` must be one model's name"),
    ],
)
async def test_a_model_string_that_cannot_be_sent_is_refused_before_any_call(model, kind, says):
    door = ScriptedModels()
    result = await check_model(model, models=door, config=Config())
    v = verdict(result)
    assert (v.usable, v.kind) == (False, kind) and says in v.reason.render("en")
    assert door.calls == [] and result.calls == ()


# ----------------------------------------------------------------------------- the command line
def test_check_model_passes_the_scripted_model_and_writes_nothing(tmp_path: Path):
    (tmp_path / "scenes").mkdir()
    result = circus("check-model", "scripted/improv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("check-model scripted/improv — a short fixed rehearsal")
    for line in (
        "reachable: yes",
        "latency per call: stage manager",
        "replies read without a re-ask: 6/6 (0 after a re-ask, 0 unreadable); stage manager: named an actor on stage",
        "structured output: no (tagged replies)",
        "prompt caching: no cached tokens on the repeat calls",
        "per turn: ",
        "a 40-turn take with 4 actors: about 50 calls",
        "verdict: usable — every reply read as written",
    ):  # fmt: skip
        assert line in out
    assert result.stderr == ""
    assert listing(tmp_path) == [("scenes", 0, (tmp_path / "scenes").stat().st_mtime_ns)]


class FakeOpenAI:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1, in a thread: `good` replies in
    tags (the stage manager names Ruth), `garbage` in prose, `hang` never answers."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.release = threading.Event()
        self.requests: list[dict] = []

    def handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                if fake.mode == "hang":
                    fake.release.wait(60)
                    return
                system = body["messages"][0]["content"]
                text = "I would rather not use any tags today."
                if fake.mode == "good":
                    sm = system.startswith(say("prompt.sm.system", "en")[:30])
                    text = "NEXT: Ruth\nREASON: she opens" if sm else (
                        "<thought>Careful.</thought><dialogue>You came back.</dialogue><cue></cue>"
                    )  # fmt: skip
                usage = {"prompt_tokens": 400, "completion_tokens": 20, "total_tokens": 420}
                data = json.dumps(chat_completion(body["model"], text, usage)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    @contextmanager
    def serving(self) -> Iterator[str]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/v1"
        finally:
            self.release.set()
            server.shutdown()
            server.server_close()


def check(tmp_path: Path, base: str, *extra: str):
    env = cli_env(OPENAI_API_KEY="sk-loopback-test")
    return circus("check-model", "openai/x", "--api-base", base, *extra, cwd=tmp_path, env=env)


def one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and stderr.startswith("circus: unusable — "), stderr
    assert "Traceback" not in stderr
    return stderr


def test_a_model_that_answers_in_tags_over_http_passes_with_json_findings(tmp_path: Path):
    fake = FakeOpenAI("good")
    with fake.serving() as base:
        result = check(tmp_path, base, "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert (found["usable"], found["verdict"], found["reachable"]) == (True, "ok", True)
    assert (found["turns"], found["clean"], found["stage_manager"]) == (6, 6, "picked")
    assert [c["prompt_tokens"] for c in found["calls"]] == [400] * 7
    assert found["per_turn"] == {
        "prompt_tokens": 400.0,
        "completion_tokens": 20.0,
        "cost_usd": None,
    }
    assert found["projection"]["turns"] == 40 and found["projection"]["cost_usd"] is None
    assert len(fake.requests) == 7 and all(r["model"] == "x" for r in fake.requests)
    assert list(tmp_path.iterdir()) == []  # no scene folder, nothing at all


def test_a_model_that_answers_garbage_is_unusable_in_one_line(tmp_path: Path):
    with FakeOpenAI("garbage").serving() as base:
        result = check(tmp_path, base)
    assert result.returncode == 1
    assert "6 of 6 replies could not be read even after a re-ask" in one_line(result.stderr)
    assert "replies read without a re-ask: 0/6" in result.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_model_that_hangs_times_out_quickly_in_one_line(tmp_path: Path):
    fake = FakeOpenAI("hang")
    with fake.serving() as base:
        result = check(tmp_path, base, "--timeout", "1")
    assert result.returncode == 1
    assert "no answer within 1 s" in one_line(result.stderr)
    assert "reachable: no" in result.stdout
    assert len(fake.requests) == 1  # one call, no retries: it finishes soon after --timeout


def test_nothing_listening_is_a_clear_verdict(tmp_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    result = check(tmp_path, f"http://127.0.0.1:{port}/v1", "--timeout", "20")
    assert result.returncode == 1
    line = one_line(result.stderr)
    assert "nothing answered" in line and "--api-base" in line


@pytest.mark.parametrize("value", ["0", "-3", "soon", "4000"])
def test_a_timeout_that_is_not_a_number_of_seconds_is_a_usage_error(tmp_path: Path, value):
    result = circus("check-model", "scripted/improv", "--timeout", value, cwd=tmp_path)
    assert result.returncode == 2 and "timeout" in result.stderr
