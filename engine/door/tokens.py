"""Token counts in the units of the model that will read the text.

The embedded model is counted with its own tokenizer (SmolLM2's vocabulary, loaded without its
weights); the scripted stand-in as litellm would count it, without litellm; hosted models with
litellm's `token_counter` (reached through engine.door.boot, the only module that imports
litellm) — loaded only once a prompt has to be cut to fit (engine.turn.prompts); anything either cannot count offline with `conservative`, an
estimate that over-counts every tokenizer we measured, so a budget built on it never overflows.
A counter is a pure function of the text; counts are cached per tokenizer and text.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

Counter = Callable[[str], int]

EMBEDDED_PREFIX = "circus-local/"
SCRIPTED_PREFIX = "scripted/"


def _is_wide(char: str) -> bool:
    return ord(char) > 0x2E7F  # CJK, kana, hangul, fullwidth forms, emoji


@lru_cache(maxsize=65536)
def conservative(text: str) -> int:
    """An upper estimate without a tokenizer: 3 tokens per CJK character, 1 per 3 others.

    Measured on the interrogation and wake scenes, real tokenizers spend 1.0 (o200k) to 2.3
    (SmolLM2) tokens per CJK character and about one per 4 Latin characters; byte-level ones
    spend at most 3 on a character of the Basic Multilingual Plane.
    """
    wide = sum(1 for ch in text if _is_wide(ch))
    return 3 * wide + (len(text) - wide + 2) // 3


def _cached(count: Callable[[str], int]) -> Counter:
    return lru_cache(maxsize=65536)(count)


_counters: dict[str, Counter] = {}
_lock = threading.Lock()


def counter(model: str) -> Counter:
    """The token counter for `model` (a litellm model string; "" = unknown: conservative)."""
    family = _family(model)
    found = _counters.get(family)
    if found is not None:
        return found
    with _lock:
        if family not in _counters:
            _counters[family] = _make(family, model)
        return _counters[family]


def loaded(model: str) -> Counter | None:
    """`model`'s own counter if it is made already (its tokenizer loaded), else None."""
    return _counters.get(_family(model))


def count(text: str, model: str) -> int:
    return counter(model)(text)


def _family(model: str) -> str:
    """Models that share a tokenizer share a counter (and its cache)."""
    if not model:
        return ""
    if model.startswith(SCRIPTED_PREFIX):
        return SCRIPTED_PREFIX
    if model.startswith(EMBEDDED_PREFIX):
        return model
    return "litellm:" + model


def _make(family: str, model: str) -> Counter:
    if not family:
        return conservative
    if model.startswith(EMBEDDED_PREFIX):
        vocab = _embedded_vocab()
        if vocab is None:
            return conservative
        return _cached(
            lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))
        )
    if model.startswith(SCRIPTED_PREFIX):
        return _cached(_stand_in_counter())
    hosted = _litellm_counter(model)
    return _cached(hosted) if hosted is not None else conservative


def _embedded_vocab() -> Any:
    """The embedded model's own vocabulary (its provider loads it), or None if not installed."""
    from engine.door.boot import local_tokenizer

    return local_tokenizer(EMBEDDED_PREFIX.rstrip("/"))


def _stand_in_counter() -> Callable[[str], int]:
    """How the scripted stand-in is counted: as litellm counts a model it knows nothing of —
    tiktoken's cl100k_base, from the encoding file litellm ships — without importing litellm
    (tests/engine/test_tokens_window.py compares the two)."""
    spec = importlib.util.find_spec("litellm")
    places = list(spec.submodule_search_locations or []) if spec else []
    bundled = [Path(p) / "litellm_core_utils" / "tokenizers" for p in places]
    # litellm points tiktoken at the same folder (unless CUSTOM_TIKTOKEN_CACHE_DIR says
    # otherwise) when it loads: no download, ever, from an offline machine.
    folder = os.environ.get("CUSTOM_TIKTOKEN_CACHE_DIR") or next(map(str, bundled), None)
    if folder:
        os.environ["TIKTOKEN_CACHE_DIR"] = folder
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base")
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def _litellm_counter(model: str) -> Callable[[str], int] | None:
    """litellm's count for `model`, if it can count it here (offline); else None."""
    from engine.door.boot import litellm_module

    try:
        token_counter = litellm_module().token_counter
        token_counter(model=model, text="測試 probe")
    except Exception:  # no tokenizer for this model offline (e.g. a hub download refused)
        return None

    def count_text(text: str) -> int:
        try:
            return int(token_counter(model=model, text=text))
        except Exception:  # a text this tokenizer rejects: count it the safe way
            return conservative(text)

    return count_text
