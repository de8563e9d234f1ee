"""Shared fixtures: a small three-actor scene on disk whose private texts carry unique markers,
and a clean scripted model for every test (answers through the door's real call path)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scenekit import write_scene

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    return write_scene(tmp_path / "審訊室")


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries back off in milliseconds, not seconds; scripted models answer at once."""
    monkeypatch.setenv("CIRCUS_RETRY_BASE_SECONDS", "0.01")
    monkeypatch.delenv("CIRCUS_SCRIPTED_LATENCY", raising=False)


@pytest.fixture
def models():
    """A fresh scripted model door (engine.providers.scripted.ScriptedModels) for this test alone: pass
    it as `Rehearsal(root, models=models)`; `register` scripts on it, read its `calls`."""
    from engine.providers.scripted import ScriptedModels

    return ScriptedModels()


@pytest.fixture
def scripted(models):
    """The same door under the name most tests use (`scripted.register`, `scripted.calls`)."""
    return models


@pytest.fixture
def priced():
    """Give scripted models a price, as the operator's CIRCUS_MODEL_PRICES does (the door's
    registry, engine.door.prices: litellm gets it too once loaded); removed after the test."""
    from engine.door import prices

    added: list[str] = []

    def register(model: str, input_per_m: float, output_per_m: float) -> str:
        prices.register(
            {
                model: {
                    "input_cost_per_token": input_per_m * 1e-6,
                    "output_cost_per_token": output_per_m * 1e-6,
                }
            }
        )
        added.append(model)
        return model

    yield register
    for model in added:
        prices.forget(model)


@pytest.fixture
def no_operator_budgets(monkeypatch):
    """No budget, reply cap or price file from the operator's environment (budget tests)."""
    from engine.spend import budget

    for key in (*budget.DAILY_ENV.values(), "CIRCUS_MAX_REPLY_TOKENS", "CIRCUS_MODEL_PRICES"):
        monkeypatch.delenv(key, raising=False)
