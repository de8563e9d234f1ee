"""A scripted model behind litellm's real call path, for tests, benchmarks and offline demos.

`scripted/<name>` models answer from a registered script (a function of the request) or from a
built-in one, through litellm's custom-provider mechanism — the engine cannot tell them from a
hosted model. Every request is recorded with its exact messages, so tests can prove what each
role was shown.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from engine import llm


@dataclass(frozen=True)
class ScriptedRequest:
    model: str  # the part after "scripted/"
    messages: tuple[dict[str, str], ...]
    shape: llm.ReplyShape
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


_scripts: dict[str, Script] = {}
calls: list[ScriptedRequest] = []
_counts: dict[str, int] = {}
_lock = threading.Lock()


def register(name: str, script: Script) -> None:
    _scripts[name] = script


def reset() -> None:
    _scripts.clear()
    calls.clear()
    _counts.clear()


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


def _script_for(name: str) -> Script:
    return _scripts.get(name) or BUILTIN.get(name) or improv


async def answer(model: str, messages: list[dict[str, Any]]) -> str:
    name = model.split("/", 1)[1] if model.startswith("scripted/") else model
    current = llm.current_call()
    with _lock:
        index = _counts.get(name, 0)
        _counts[name] = index + 1
        request = ScriptedRequest(
            name,
            tuple({"role": m["role"], "content": m["content"]} for m in messages),
            current.shape if current else llm.ReplyShape("free"),
            index,
        )
        calls.append(request)
    latency = float(os.environ.get("CIRCUS_SCRIPTED_LATENCY", "0") or 0)
    if latency:
        await asyncio.sleep(latency)
    result = _script_for(name)(request)
    if inspect.isawaitable(result):
        result = await result
    return str(result)


def handler() -> Any:
    """The litellm CustomLLM instance serving `scripted/...` models."""
    import litellm
    from litellm import CustomLLM

    def response(model: str, text: str, messages: list[dict[str, Any]]) -> Any:
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4
        return litellm.ModelResponse(
            model=model,
            created=int(time.time()),
            choices=[
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            usage={
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(text) // 4,
                "total_tokens": prompt_tokens + len(text) // 4,
            },
        )

    def fail(exc: ScriptedFailure, model: str) -> Exception:
        from litellm.llms.custom_llm import CustomLLMError

        return CustomLLMError(status_code=exc.status_code, message=str(exc))

    class Scripted(CustomLLM):
        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            try:
                text = await answer(model, messages)
            except ScriptedFailure as exc:
                raise fail(exc, model) from exc
            return response(model, text, messages)

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            try:
                text = asyncio.run(answer(model, messages))
            except ScriptedFailure as exc:
                raise fail(exc, model) from exc
            return response(model, text, messages)

    return Scripted()
