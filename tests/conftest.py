"""Shared fixtures: a small three-actor scene on disk whose private texts carry unique markers,
and a clean scripted model for every test (answers through litellm's real call path)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The fake Discord's own fixtures (`fake`, `bot`), for tests/test_fakediscord_*.py.
pytest_plugins = ["fakediscord.fixtures"]

CAST = ("林小姐", "刑警", "律師")

# Every private text in the fixture scene carries a marker, so a test can grep any prompt or
# message for text that crossed a wall.
SOUL_MARKER = {a: f"SOUL-SECRET-{i}" for i, a in enumerate(CAST)}
WHISPER_MARKER = {a: f"PRIVATE-WHISPER-{i}" for i, a in enumerate(CAST)}
PUBLIC_CONTEXT = "PUBLIC-CONTEXT 深夜十一點，警局二樓的審訊室。"
ALL_WHISPER = "ALL-WHISPER 節奏放慢。"


def write_scene(root: Path, model: str = "scripted/improv", language: str = "zh") -> Path:
    (root / "actors").mkdir(parents=True)
    (root / "context.md").write_text(
        f"---\nmodel: {model}\nstage_manager_model: {model}\nlanguage: {language}\n"
        f"neglect_turns: 3\ncast: [林小姐, 刑警, 律師]\n---\n{PUBLIC_CONTEXT}\n",
        encoding="utf-8",
    )
    for actor in CAST:
        folder = root / "actors" / actor
        folder.mkdir()
        aliases = {"林小姐": "[林, 林曉雯]", "刑警": "[王警官]", "律師": "[張律師]"}[actor]
        (folder / "soul.md").write_text(
            f"---\naliases: {aliases}\n---\n## 角色小傳\n{actor}。{SOUL_MARKER[actor]}\n\n"
            f"## 前期劇本\n{actor}知道的事。\n\n## 導戲筆記\n目標。\n",
            encoding="utf-8",
        )
    notes = [f"## 全體\n- {ALL_WHISPER}\n"] + [f"## {a}\n- {WHISPER_MARKER[a]}\n" for a in CAST]
    (root / "director_notes.md").write_text("# 導演耳語\n\n" + "\n".join(notes), encoding="utf-8")
    return root


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
    """Give scripted models a price in litellm's cost map; removed again after the test."""
    from engine.door import llm

    litellm = llm.litellm_module()
    added: list[str] = []

    def register(model: str, input_per_m: float, output_per_m: float) -> str:
        litellm.register_model(
            {
                model: {
                    "input_cost_per_token": input_per_m * 1e-6,
                    "output_cost_per_token": output_per_m * 1e-6,
                    "mode": "chat",
                }
            }
        )
        added.append(model)
        return model

    yield register
    for model in added:
        litellm.model_cost.pop(model, None)


@pytest.fixture
def no_operator_budgets(monkeypatch):
    """No budget, reply cap or price file from the operator's environment (budget tests)."""
    from engine.spend import budget

    for key in (*budget.DAILY_ENV.values(), "CIRCUS_MAX_REPLY_TOKENS", "CIRCUS_MODEL_PRICES"):
        monkeypatch.delenv(key, raising=False)
