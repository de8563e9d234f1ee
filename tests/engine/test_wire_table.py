"""The model table read without litellm (engine.door.table) answers as litellm does, name by name.

Before its first request, a wire model's prompt needs the model's context size and whether it
takes a JSON schema; the door reads both from litellm's own table file instead of importing
litellm. For every OpenAI model in that table (bare, `openai/` and `litellm_proxy/`), a sample
of every other provider's bare names, and the local servers' names, the answers must be
litellm's: get_model_info's context (max_input_tokens, else max_tokens) and
supports_response_schema.
"""

from __future__ import annotations

import pytest

from engine.door import table
from engine.door.boot import litellm_module

LOCAL_NAMES = [
    "hosted_vllm/qwen2.5-7b",
    "hosted_vllm/gpt-4o",
    "lm_studio/qwen2.5-7b-instruct",
    "lm_studio/gpt-4o",
    "litellm_proxy/writers-room",
    "litellm_proxy/claude",
    "openai/my-local-model",
    "writers-room",
    "stage-manager",
]


def names() -> list[str]:
    litellm = litellm_module()
    out = list(LOCAL_NAMES)
    others = []
    for key, entry in sorted(litellm.model_cost.items()):
        if not isinstance(entry, dict) or key == "sample_spec" or "/" in key:
            continue
        if entry.get("litellm_provider") == "openai":
            out += [key, f"openai/{key}", f"litellm_proxy/{key}"]
        else:
            others.append(key)
    return out + others[::7]  # every seventh bare name of the other providers


def litellm_context(litellm, model: str) -> int:
    try:
        info = litellm.get_model_info(model)
    except Exception:
        return 0
    return int(info.get("max_input_tokens") or info.get("max_tokens") or 0)


def test_the_table_answers_as_litellm_for_every_name_it_answers_for() -> None:
    litellm = litellm_module()
    checked = [n for n in names() if table.answers_for(n)]
    assert len(checked) > 500
    wrong = [
        (name, table.context_size(name), litellm_context(litellm, name))
        for name in checked
        if table.context_size(name) != litellm_context(litellm, name)
    ]
    assert wrong == []
    wrong = [
        name
        for name in checked
        if table.takes_schema(name) != bool(litellm.supports_response_schema(name))
    ]
    assert wrong == []


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"])
def test_other_providers_are_left_to_litellm(model: str) -> None:
    assert not table.answers_for(model)
