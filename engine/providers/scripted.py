"""A scripted model door, for tests, benchmarks and demos.

`ScriptedModels(scripts)` is a `Models` door (engine.door.llm) whose `scripted/<name>` models answer
from its own scripts (a function of the request) or a built-in one. The door calls them in
process, like the embedded model (`complete`, engine.door.boot's LOCAL_CALLS), through the same
retries, spend gate and usage reading as a hosted model, and never loads litellm; a bare litellm
call reaches them too, through litellm's custom-provider mechanism (`handler`). The door rides
along on each call, so two doors in one process never share scripts or requests. Every request is recorded with its exact messages, so tests can prove what
each role was shown. `CIRCUS_MODEL=scripted/improv` under the default door uses the built-ins.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.config import Config, scripted_latency
from engine.door import llm
from engine.door.values import ReplyShape


@dataclass(frozen=True)
class ScriptedRequest:
    model: str  # the part after "scripted/"
    messages: tuple[dict[str, str], ...]
    shape: ReplyShape
    index: int  # how many calls this model had before this one

    @property
    def prompt(self) -> str:
        return "\n".join(m["content"] for m in self.messages)


Script = Callable[[ScriptedRequest], "str | Awaitable[str]"]


class ScriptedFailure(Exception):
    """Raise from a script to make the provider fail like an HTTP API (429, 500, ...)."""

    def __init__(self, status_code: int, message: str = "scripted failure") -> None:
        super().__init__(message)
        self.status_code = status_code


def improv(request: ScriptedRequest) -> str:
    """A deterministic, well-formed performer: speaks, then cues the next actor in the cast."""
    shape = request.shape
    cast = list(shape.cast)
    if shape.kind == "stage_manager":
        pick = cast[request.index % len(cast)] if cast else "ANY"
        return f"NEXT: {pick}\nREASON: scripted choice"
    if shape.kind != "actor" or not cast:
        return "A scripted answer."
    me = shape.speaker
    others = [a for a in cast if a != me] or cast
    nxt = others[request.index % len(others)]
    n = request.index + 1
    return (
        f"<thought>{me} weighs what was said ({n}).</thought>\n"
        f"<action>{me} shifts in the chair.</action>\n"
        f"<dialogue>This is line {n} from {me}.</dialogue>\n"
        f"<cue>{nxt}</cue>"
    )


def garbage(request: ScriptedRequest) -> str:
    return "I would rather not use any tags today."


BUILTIN: dict[str, Script] = {"improv": improv, "garbage": garbage}
PROVIDER = "scripted"  # the prefix of the models it answers (engine.door.boot)


class ScriptedModels(llm.LiteLLMModels):
    """A model door whose `scripted/<name>` models answer from this door's scripts.

    `calls` lists every request it answered, in order. Other models (hosted, embedded) still
    go through litellm as under the default door.
    """

    def __init__(
        self,
        scripts: Mapping[str, Script] | None = None,
        *,
        config: Config | None = None,
        latency: float = 0.0,
    ) -> None:
        """`latency`: seconds each call waits before its script answers (a slow model)."""
        super().__init__(config)
        self.local[PROVIDER] = self  # this door's `scripted/...` models answer from its scripts
        self.scripts: dict[str, Script] = dict(scripts or {})
        self.calls: list[ScriptedRequest] = []
        self.latency = latency
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def register(self, name: str, script: Script) -> None:
        """`scripted/<name>` answers with `script` from now on."""
        self.scripts[name] = script

    def reset(self) -> None:
        self.scripts.clear()
        self.calls.clear()
        self._counts.clear()

    async def answer(self, model: str, messages: list[dict[str, Any]], shape: ReplyShape) -> str:
        name = model.split("/", 1)[1] if model.startswith("scripted/") else model
        with self._lock:
            index = self._counts.get(name, 0)
            self._counts[name] = index + 1
            request = ScriptedRequest(
                name,
                tuple({"role": m["role"], "content": m["content"]} for m in messages),
                shape,
                index,
            )
            self.calls.append(request)
        if self.latency:
            await asyncio.sleep(self.latency)
        script = self.scripts.get(name) or BUILTIN.get(name) or improv
        result = script(request)
        if inspect.isawaitable(result):
            result = await result
        return str(result)


def scripts_of(door: llm.LiteLLMModels) -> ScriptedModels:
    """Who answers `scripted/...` models through `door` (CIRCUS_MODEL=scripted/improv): the
    door itself if it is a ScriptedModels, else the built-in scripts, kept with that door (so
    its counts go on call to call) and slowed by CIRCUS_SCRIPTED_LATENCY."""
    found = door.local.get(PROVIDER)
    if not isinstance(found, ScriptedModels):
        built = ScriptedModels(config=door.config, latency=scripted_latency(os.environ))
        found = door.local.setdefault(PROVIDER, built)
    return found


_bare: list[llm.LiteLLMModels] = []  # the door of bare litellm calls (outside any door)


def _door(params: Mapping[str, Any]) -> tuple[ScriptedModels, ReplyShape]:
    """The scripts and reply shape the engine sent along with this call (engine.door.llm)."""
    door = params.get("circus_door")
    if not isinstance(door, llm.LiteLLMModels):  # a bare litellm call, outside any door
        if not _bare:
            _bare.append(llm.LiteLLMModels())
        door = _bare[0]
    scripts = scripts_of(door)
    shape = params.get("circus_shape")
    return scripts, shape if isinstance(shape, ReplyShape) else ReplyShape("free")


def _response(model: str, text: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A chat completion as OpenAI's API answers one (about four characters to a token)."""
    prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4
    return {
        "model": model,
        "created": int(time.time()),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text) // 4,
            "total_tokens": prompt_tokens + len(text) // 4,
        },
    }


async def complete(
    model: str, messages: list[dict[str, Any]], params: Mapping[str, Any]
) -> dict[str, Any]:
    """Answer one call of the door (engine.door.llm) from the scripts of the door asking; a
    script's ScriptedFailure fails the call as an HTTP API would (its status_code)."""
    door, shape = _door(params)
    text = await door.answer(model, messages, shape)
    return _response(model, text, messages)


def handler() -> Any:
    """The litellm CustomLLM instance serving `scripted/...` models to a bare litellm call."""
    import litellm
    from litellm import CustomLLM

    def response(model: str, text: str, messages: list[dict[str, Any]]) -> Any:
        return litellm.ModelResponse(**_response(model, text, messages))

    def fail(exc: ScriptedFailure, model: str) -> Exception:
        from litellm.llms.custom_llm import CustomLLMError

        return CustomLLMError(status_code=exc.status_code, message=str(exc))

    class Scripted(CustomLLM):
        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            door, shape = _door(kwargs.get("optional_params") or {})
            try:
                text = await door.answer(model, messages, shape)
            except ScriptedFailure as exc:
                raise fail(exc, model) from exc
            return response(model, text, messages)

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            door, shape = _door(kwargs.get("optional_params") or {})
            try:
                text = asyncio.run(door.answer(model, messages, shape))
            except ScriptedFailure as exc:
                raise fail(exc, model) from exc
            return response(model, text, messages)

    return Scripted()
