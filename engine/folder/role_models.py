"""Which model plays whom: soul.md, then context.md, then the operator's Config, then embedded.

Pure functions of settings and a Config (engine.config), so the precedence is tested by a
table; also how many tokens each model's context holds (so prompts are built to fit it).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from engine.config import DEFAULT_TURN_TIMEOUT, Config
from engine.door import table
from engine.door.boot import litellm_module
from engine.door.structured import IN_PROCESS, Format, chosen_format
from engine.door.values import EMBEDDED_MODEL
from engine.folder.soul import Soul

EMBEDDED_CONTEXT = 8192  # SmolLM2's trained context; engine.providers.embedded runs it at this size
UNKNOWN_CONTEXT = 8192  # a model whose context neither we nor litellm's model table know


def _first(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def actor_model(soul: Soul, scene: Mapping[str, Any], config: Config) -> str:
    return _first(soul.model, scene.get("model"), config.model) or EMBEDDED_MODEL


def stage_manager_model(scene: Mapping[str, Any], config: Config) -> str:
    return (
        _first(
            scene.get("stage_manager_model"),
            config.stage_manager_model,
            scene.get("model"),
            config.model,
        )
        or EMBEDDED_MODEL
    )


def api_base(soul: Soul | None, scene: Mapping[str, Any], config: Config) -> str | None:
    return _first(soul.api_base if soul else None, scene.get("api_base"), config.api_base)


def turn_timeout(scene: Mapping[str, Any], config: Config) -> float:
    value = scene.get("turn_timeout") or config.turn_timeout
    try:
        return float(value) if value else DEFAULT_TURN_TIMEOUT
    except ValueError:
        return DEFAULT_TURN_TIMEOUT


def _is_ollama(model: str) -> bool:
    return model.startswith(("ollama/", "ollama_chat/"))


def extra_params(model: str, config: Config) -> dict[str, Any]:
    """Provider options: Ollama silently truncates prompts at its default context size."""
    if _is_ollama(model):
        return {"num_ctx": config.num_ctx}
    return {}


def reply_format(
    model: str,
    soul: Soul | None,
    scene: Mapping[str, Any],
    config: Config,
    schema: bool = False,
) -> Format:
    """JSON or tags for `model`: soul.md's `reply_format`, then context.md's, then
    CIRCUS_REPLY_FORMAT, then auto (JSON where the provider holds replies to a schema: `schema`)."""
    setting = _first(
        soul.settings.get("reply_format") if soul else None,
        scene.get("reply_format"),
        config.reply_format,
    )
    return chosen_format(model, setting, schema)


@functools.lru_cache(maxsize=256)
def schema_support(model: str) -> bool:
    """Whether `model`'s provider can hold a reply to a JSON schema: Ollama's `format`, or what
    litellm's model table says (read offline); never the in-process models."""
    if model.startswith(IN_PROCESS):
        return False
    if _is_ollama(model):
        return True
    if table.answers_for(model):
        return table.takes_schema(model)  # litellm's own answer, read without loading it
    try:
        return bool(litellm_module().supports_response_schema(model))
    except Exception:  # a model litellm cannot place: ask for tags
        return False


def reply_cap(kind: str, config: Config) -> int:
    """The most tokens one reply may have (max_tokens): it bounds every call's cost.

    CIRCUS_MAX_REPLY_TOKENS (default 2048) for an actor's turn or a drafted backstory; a quarter
    of it for the stage manager, who answers with a name and one reason. Generous on purpose:
    "thinking" models count their hidden reasoning against it.
    """
    cap = config.max_reply_tokens
    return max(cap // 4, 64) if kind == "stage_manager" else cap


def sent_reply_cap(model: str, kind: str, config: Config) -> int | None:
    """The max_tokens to send: none for the embedded model, which sizes its replies to fit its
    small context (and costs nothing); the reply cap for everything else."""
    return None if model.startswith(EMBEDDED_MODEL.split("/")[0] + "/") else reply_cap(kind, config)


def context_tokens(model: str, config: Config) -> int:
    """How many tokens `model`'s context holds, prompt and reply together.

    The embedded model: EMBEDDED_CONTEXT. Ollama: the num_ctx Circus sends ($CIRCUS_NUM_CTX,
    default 8192), whatever the model could do. Hosted models: litellm's model table
    (max_input_tokens, read offline). Anything else: UNKNOWN_CONTEXT.
    """
    if model.startswith("circus-local/"):
        return EMBEDDED_CONTEXT
    if _is_ollama(model):
        return config.num_ctx
    return _table_context(model)


@functools.lru_cache(maxsize=256)
def _table_context(model: str) -> int:
    if model.split("/", 1)[0] in ("scripted",):
        return UNKNOWN_CONTEXT
    if table.answers_for(model):
        return table.context_size(model) or UNKNOWN_CONTEXT  # litellm's answer, without it
    try:
        info = litellm_module().get_model_info(model)
        size = int(info.get("max_input_tokens") or info.get("max_tokens") or 0)
    except Exception:  # not in litellm's table: a custom or local model
        return UNKNOWN_CONTEXT
    return size if size > 0 else UNKNOWN_CONTEXT
