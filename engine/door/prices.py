"""The operator's own prices (CIRCUS_MODEL_PRICES), kept by the door whether litellm is loaded or not.

Invariant: a price registered here is the price of that model everywhere — the in-process models
read it without litellm, and litellm is handed every one when it loads (engine.door.boot), so a
model priced by the operator costs the same whichever way its call went.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any

from engine.catalog import Phrase
from engine.door.values import Price
from engine.errors import CircusError

_lock = threading.Lock()
_entries: dict[str, dict[str, Any]] = {}  # model -> its litellm cost-map entry
_loaded_files: set[str] = set()
_litellm: list[Any] = []  # litellm, once engine.door.boot has imported it


def register(entries: Mapping[str, Mapping[str, Any]]) -> None:
    """Add prices in litellm's cost-map format (`{"model": {"input_cost_per_token": …,
    "output_cost_per_token": …}}`), here and in litellm when it is loaded."""
    added = {model: {"mode": "chat", **dict(entry)} for model, entry in entries.items()}
    with _lock:
        _entries.update(added)
        loaded = list(_litellm)
    for litellm in loaded:
        _into(litellm, added)


def forget(model: str) -> None:
    """Drop a registered price (tests)."""
    with _lock:
        _entries.pop(model, None)
        loaded = list(_litellm)
    for litellm in loaded:
        litellm.model_cost.pop(model, None)


def registered(model: str) -> Price | None:
    """The operator's price of `model`, or None when it registered none."""
    entry = _entries.get(model)
    if entry is None:
        return None
    try:
        return Price(float(entry["input_cost_per_token"]), float(entry["output_cost_per_token"]))
    except (KeyError, TypeError, ValueError):
        return None


def snapshot() -> dict[str, Any]:
    """What is registered now (a caller that runs a command in process restores it after)."""
    with _lock:
        return {"entries": dict(_entries), "files": set(_loaded_files)}


def restore(saved: dict[str, Any]) -> None:
    """Back to a `snapshot`: prices registered since are forgotten (here and in litellm)."""
    with _lock:
        added = set(_entries) - set(saved["entries"])
    for model in added:
        forget(model)
    with _lock:
        _entries.update(saved["entries"])
        _loaded_files.clear()
        _loaded_files.update(saved["files"])


def attach(litellm: Any) -> None:
    """litellm was just imported: hand it every price registered so far, and later ones."""
    with _lock:
        _litellm.append(litellm)
        known = dict(_entries)
    if known:
        _into(litellm, known)


def _into(litellm: Any, entries: Mapping[str, Any]) -> None:
    # litellm warns about cache prices it cannot guess for a custom entry: not news to anyone.
    quiet = logging.getLogger("LiteLLM")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        litellm.register_model(dict(entries))
    finally:
        quiet.setLevel(level)


def load_file(path: str | None) -> None:
    """Register the operator's price file once (CIRCUS_MODEL_PRICES: a JSON file in litellm's
    cost-map format), for models litellm has no price for (self-hosted, brand new), so a dollar
    budget can bound them. A file that is not such a map is refused in one line."""
    if not path or path in _loaded_files:
        return
    why = ""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        data, why = None, str(exc)
    entries = data if isinstance(data, dict) else {}
    for model, entry in entries.items():
        try:
            ok = all(
                float(entry[k]) >= 0 for k in ("input_cost_per_token", "output_cost_per_token")
            )
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            why = f"{model!r} needs input_cost_per_token and output_cost_per_token (numbers ≥ 0)"
    if why or not isinstance(data, dict):
        raise CircusError("error.prices", path=path, why=why or Phrase("error.prices.not_object"))
    register(entries)
    _loaded_files.add(path)
