"""Importing litellm: once, lazily (it costs seconds), offline-safe, with Circus's in-process
providers registered under their prefixes; and finding those providers without litellm.

Invariant: the only place litellm is imported for the engine; the in-process providers are
named here as "module:function" strings and loaded on their first call, so neither litellm nor a
provider module (engine.providers.scripted, engine.providers.embedded) is imported before a model
is asked. The door calls an in-process provider directly (`local_call`): litellm is loaded only
for a call that goes through it, and then it knows these providers too (a bare litellm call).
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

from engine.door import prices

# Providers that live in this process, registered with litellm's custom-provider mechanism so
# the engine calls them exactly like any hosted model. Value: "module:function" returning a
# litellm CustomLLM instance.
LOCAL_PROVIDERS: dict[str, str] = {
    "scripted": "engine.providers.scripted:handler",
    "circus-local": "engine.providers.embedded_handler:handler",
}
# The same providers called by the door itself, with no litellm: "module:function" returning
# an async `complete(model, messages, params) -> dict` that answers as OpenAI's chat
# completions do (`choices[0].message.content`, `usage`).
LOCAL_CALLS: dict[str, str] = {
    "scripted": "engine.providers.scripted:complete",
    "circus-local": "engine.providers.embedded:complete",
}
# Their tokenizers, by provider, the same way: "module:function" returning an object whose
# ``tokenize(bytes, add_bos, special)`` counts as the model does, or None when not installed.
LOCAL_TOKENIZERS: dict[str, str] = {
    "circus-local": "engine.providers.vocab:vocab",
}


_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
}

_lock = threading.Lock()
_litellm: Any = None

# What litellm's import reaches that our own code may be importing in another thread at the
# same time: packages with an import cycle inside (importlib.abc ↔ importlib.resources) and
# httpx (the wire's, and litellm's).
SHARED_IMPORTS = (
    "importlib.abc",
    "importlib.machinery",
    "importlib.util",
    "importlib.resources",
    "importlib.resources.abc",
    "importlib.metadata",
    "httpx",
)


def settle_imports() -> None:
    """Import SHARED_IMPORTS in the calling thread: call it before starting a thread that may
    import litellm. Python's per-module import locks take two threads entering one import
    cycle from opposite ends for a deadlock and fail one of them ("deadlock detected by
    _ModuleLock('importlib.resources.abc')") — a model call lost to an import race. Cheap once
    done (a dict lookup each)."""
    for name in SHARED_IMPORTS:
        importlib.import_module(name)


_loading: list[threading.Thread] = []  # the import started ahead of need, once


def load_soon() -> None:
    """Start importing litellm in a thread of its own, unless it is loaded or loading: for a
    call whose reply litellm will price, so the seconds of the import pass while the model
    thinks instead of after it has answered. A daemon thread: a process that ends before it
    needed litellm (a refused call, Ctrl-C) does not wait for the import. Never waits itself
    (a lock held means another thread is importing litellm already) and never raises."""
    if not _lock.acquire(blocking=False):
        return
    try:
        if _litellm is not None or _loading:
            return
        settle_imports()  # before the thread: an import race would fail it or another
        thread = threading.Thread(target=_load_quietly, name="circus-litellm-import", daemon=True)
        thread.start()
        _loading.append(thread)  # only once started: a thread that could not start is retried
    except Exception:  # the call that needs litellm imports it itself, and says why it fails
        return
    finally:
        _lock.release()


def _load_quietly() -> None:
    try:
        litellm_module()
    except Exception:  # the call that needs litellm imports it again, and says why it fails
        pass


def litellm_module() -> Any:
    """Import litellm once, offline-safe, with Circus's local providers registered."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _lock:
        if _litellm is None:
            for key, value in _OFFLINE_ENV.items():
                os.environ.setdefault(key, value)
            import litellm

            litellm.telemetry = False
            litellm.suppress_debug_info = True
            litellm.custom_provider_map = [
                {"provider": name, "custom_handler": _lazy_handler(litellm, target)}
                for name, target in LOCAL_PROVIDERS.items()
            ]
            _register_custom_providers(litellm)
            prices.attach(litellm)  # the operator's prices, registered before it was loaded
            _litellm = litellm
    return _litellm


def local_call(provider: str) -> Any:
    """The in-process `provider`'s `complete` (its module imported on first use)."""
    module_name, func = LOCAL_CALLS[provider].split(":")
    return getattr(importlib.import_module(module_name), func)


def local_tokenizer(provider: str) -> Any:
    """The tokenizer of the in-process `provider` (imported on first use), or None if it has
    none or it is not installed here."""
    target = LOCAL_TOKENIZERS.get(provider)
    if target is None:
        return None
    module_name, func = target.split(":")
    return getattr(importlib.import_module(module_name), func)()


def _register_custom_providers(litellm: Any) -> None:
    try:
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
    except ImportError:  # older litellm registers lazily on first call
        pass


def _lazy_handler(litellm: Any, target: str) -> Any:
    """A CustomLLM that builds the real provider (and imports llama_cpp) on first use."""

    class LazyHandler(litellm.CustomLLM):
        _real: Any = None

        def _get(self) -> Any:
            if self._real is None:
                module_name, func = target.split(":")
                self._real = getattr(importlib.import_module(module_name), func)()
            return self._real

        def completion(self, *args: Any, **kwargs: Any) -> Any:
            return self._get().completion(*args, **kwargs)

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            return await self._get().acompletion(*args, **kwargs)

    return LazyHandler()
