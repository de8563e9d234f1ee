"""What litellm's model table says of a wire model, read from its file without importing litellm.

Invariant: for the OpenAI-compatible providers the door sends itself (engine.door.wire), the
context size and schema support answered here are litellm's own answers (get_model_info,
supports_response_schema) — tests/engine/test_wire_table.py compares them name by name over the
whole table; for any other model the caller asks litellm. The file is read once, when first
needed (about 3 MB of JSON: ~0.05 s).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from engine.door.wire import OPENAI_LIKE

TABLE_FILE = "model_prices_and_context_window_backup.json"  # litellm's local cost map
SCHEMA_ALWAYS = frozenset({"lm_studio"})  # litellm: every model of these takes a schema


@functools.cache
def _table() -> dict[str, Any]:
    """litellm's live table once it is loaded (it holds what was registered since), else its
    file, found beside litellm's package without running it."""
    loaded = sys.modules.get("litellm")
    cost = getattr(loaded, "model_cost", None)
    if isinstance(cost, dict) and cost:
        return cost
    spec = importlib.util.find_spec("litellm")
    places = list(spec.submodule_search_locations or []) if spec else []
    for place in places:
        path = Path(place) / TABLE_FILE
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
    return {}


def entry(model: str) -> dict[str, Any] | None:
    """The table's entry for `provider/name`, looked up as litellm does for these providers:
    the prefixed key first, then the bare name when its provider matches (a LiteLLM proxy
    serves any provider's model under that model's own name)."""
    provider, slash, name = model.partition("/")
    table = _table()
    if not slash:  # a bare name (a gateway's model, or one litellm maps to its provider)
        found = table.get(model)
        return found if isinstance(found, dict) and model != "sample_spec" else None
    for key in (model, name):
        found = table.get(key)
        if not isinstance(found, dict):
            continue
        owner = found.get("litellm_provider")
        if key == model or owner is None or owner == provider or provider == "litellm_proxy":
            return found
    return None


def context_size(model: str) -> int:
    """max_input_tokens (else max_output_tokens) of `model`; 0 when the table does not say."""
    found = entry(model) or {}
    size = found.get("max_input_tokens") or found.get("max_output_tokens") or 0
    try:
        return max(0, int(size))
    except (TypeError, ValueError):
        return 0


def answers_for(model: str) -> bool:
    """Whether this table answers for `model` as litellm would: a model of a provider the door
    sends over the wire itself, or a bare name — one the table lacks (a gateway's own name:
    unknown to litellm too) or an OpenAI model's."""
    provider, slash, name = model.partition("/")
    if (name if slash else model).startswith("ft:"):
        return False  # a fine-tuned model: litellm reads its base model's entry its own way
    if slash:
        return provider in OPENAI_LIKE
    found = _table().get(model)
    return not isinstance(found, dict) or found.get("litellm_provider") == "openai"


def takes_schema(model: str) -> bool:
    """Whether litellm holds `model`'s replies to a JSON schema."""
    if model.partition("/")[0] in SCHEMA_ALWAYS:
        return True
    return (entry(model) or {}).get("supports_response_schema") is True
