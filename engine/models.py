"""Which model plays whom: soul.md, then context.md, then the environment, then embedded.

Pure functions of settings and an environment mapping, so the precedence is tested by a table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from engine.llm import EMBEDDED_MODEL
from engine.soul import Soul

DEFAULT_TURN_TIMEOUT = 120.0


def _first(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def actor_model(soul: Soul, scene: Mapping[str, Any], env: Mapping[str, str] = os.environ) -> str:
    return _first(soul.model, scene.get("model"), env.get("CIRCUS_MODEL")) or EMBEDDED_MODEL


def stage_manager_model(scene: Mapping[str, Any], env: Mapping[str, str] = os.environ) -> str:
    return (
        _first(
            scene.get("stage_manager_model"),
            env.get("CIRCUS_STAGE_MANAGER_MODEL"),
            scene.get("model"),
            env.get("CIRCUS_MODEL"),
        )
        or EMBEDDED_MODEL
    )


def api_base(
    soul: Soul | None, scene: Mapping[str, Any], env: Mapping[str, str] = os.environ
) -> str | None:
    return _first(
        soul.api_base if soul else None, scene.get("api_base"), env.get("CIRCUS_API_BASE")
    )


def turn_timeout(scene: Mapping[str, Any], env: Mapping[str, str] = os.environ) -> float:
    value = scene.get("turn_timeout") or env.get("CIRCUS_TURN_TIMEOUT")
    try:
        return float(value) if value else DEFAULT_TURN_TIMEOUT
    except ValueError:
        return DEFAULT_TURN_TIMEOUT


def extra_params(model: str, env: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """Provider options: Ollama silently truncates prompts at its default context size."""
    if model.startswith(("ollama/", "ollama_chat/")):
        return {"num_ctx": int(env.get("CIRCUS_NUM_CTX", "8192"))}
    return {}


DEFAULT_REPLY_CAP = 2048


def reply_cap(kind: str, env: Mapping[str, str] = os.environ) -> int:
    """The most tokens one reply may have (max_tokens): it bounds every call's cost.

    CIRCUS_MAX_REPLY_TOKENS (default 2048) for an actor's turn or a drafted backstory; a quarter
    of it for the stage manager, who answers with a name and one reason. Generous on purpose:
    "thinking" models count their hidden reasoning against it.
    """
    try:
        cap = int(env.get("CIRCUS_MAX_REPLY_TOKENS") or DEFAULT_REPLY_CAP)
    except ValueError:
        cap = DEFAULT_REPLY_CAP
    cap = max(cap, 64)
    return max(cap // 4, 64) if kind == "stage_manager" else cap


def sent_reply_cap(model: str, kind: str, env: Mapping[str, str] = os.environ) -> int | None:
    """The max_tokens to send: none for the embedded model, which sizes its replies to fit its
    small context (and costs nothing); the reply cap for everything else."""
    return None if model.startswith(EMBEDDED_MODEL.split("/")[0] + "/") else reply_cap(kind, env)
