"""The quick settings check says what the pydantic schema says, or stays out of it.

Reading a scene checks its settings with engine/folder/setting_rules.py and loads the schema
(engine/folder/setting_schemas.py) only for settings the quick check cannot vouch for. For
every case below, the quick check either returns exactly the schema's `as_dict()` (values and
types, in the schema's order) or None; the plainly valid settings of a real scene never need
the schema; and a refusal is worded by the schema, the same through either door.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from engine.errors import BadSceneFile
from engine.folder.setting_rules import (
    CONTEXT_KEYS,
    CONTEXT_RULES,
    SOUL_KEYS,
    SOUL_RULES,
    quick_settings,
)
from engine.folder.setting_schemas import ContextSettings, SoulSettings
from engine.folder.settings import (
    context_settings,
    context_settings_dict,
    soul_settings,
    soul_settings_dict,
)

S = "\u3000"  # an ideographic space: whitespace to both Python and the schema
SOUL_CASES: list[dict[str, Any]] = [
    {},
    {"model": "openai/gpt-4o-mini", "temperature": 0.7},
    {"model": None, "temperature": None},
    {"temperature": 1},
    {"temperature": 2},
    {"temperature": 0},
    {"temperature": 2.0000001},
    {"temperature": -0.0},
    {"temperature": True},
    {"temperature": float("nan")},
    {"temperature": float("inf")},
    {"temperature": "0.7"},
    {"temperature": 10**400},
    {"model": " openai/gpt-4o "},
    {"model": "openai/gpt 4o"},
    {"model": "openai/gpt-4o\x1c"},
    {"model": "huggingface/http://host/v1"},
    {"model": "a//b"},
    {"model": ""},
    {"model": "m" * 200},
    {"model": "m" * 201},
    {"model": "模型/大"},
    {"model": "a\u200bb"},
    {"model": 47},
    {"fallback_model": "ollama_chat/llama3"},
    {"aliases": "Ann"},
    {"aliases": ["Ann", 47, "小安"]},
    {"aliases": [" Ann "]},
    {"aliases": ["Ann", True]},
    {"aliases": ["everyone"]},
    {"aliases": ["大家"]},
    {"aliases": ["Ann"] * 16},
    {"aliases": ["Ann"] * 17},
    {"aliases": ["x" * 64]},
    {"aliases": ["x" * 65]},
    {"aliases": ["a\tb"]},
    {"aliases": [""]},
    {"aliases": [None]},
    {"aliases": ("Ann",)},
    {"aliases": {"Ann": 1}},
    {"aliases": [f"Ann{S}"]},
    {"avatar_url": "https://example.com/a.png"},
    {"avatar_url": "http://example.com/a.png"},
    {"avatar_url": "https://"},
    {"avatar_url": "https://[::1"},
    {"avatar_url": " https://example.com/a.png"},
    {"avatar_url": "HTTPS://EXAMPLE.COM/x"},
    {"api_base": "http://127.0.0.1:4000/v1"},
    {"api_base": "ftp://host"},
    {"api_base": "http://" + "h" * 2000},
    {"reply_format": "json"},
    {"reply_format": "tags"},
    {"reply_format": "auto"},
    {"reply_format": "JSON"},
    {"reply_format": " json"},
    {"voice": "alloy"},
    {"voice": "en-us+f3"},
    {"voice": "-bad"},
    {"voice": " alloy"},
    {"voice": {"name": "en-us+f3", "pitch": 60, "rate": 170}},
    {"voice": {"name": "alloy", "pitch": None}},
    {"voice": {"rate": 170, "name": "alloy"}},
    {"voice": {"name": "alloy", "pitch": 100}},
    {"voice": {"name": "alloy", "rate": 79}},
    {"voice": {"name": "alloy", "rate": 450}},
    {"voice": {"name": "alloy", "pitch": True}},
    {"voice": {"name": "alloy", "pitch": 60.0}},
    {"voice": {"name": "alloy", "volume": 3}},
    {"voice": {"pitch": 3}},
    {"voice": 47},
    {"secrets": "the letter"},
    {"secrets": ["the letter", 1987, "監視器"]},
    {"secrets": 47},
    {"secrets": ["x" * 80]},
    {"secrets": ["x" * 81]},
    {"secrets": ["s"] * 12},
    {"secrets": ["s"] * 13},
    {"secrets": [" padded "]},
    {"secrets": ["a\nb"]},
    {"temprature": 0.7},
    {"model": "openai/gpt-4o", "voice": "alloy", "aliases": ["Ann"], "secrets": ["x"]},
]
CONTEXT_CASES: list[dict[str, Any]] = [
    {},
    {"language": "zh"},
    {"language": "zh-TW"},
    {"language": "en_US"},
    {"language": "zh-Hant-TW-x"},
    {"language": "zh-Hant-TW-x-y"},
    {"language": " en"},
    {"language": "en\n"},
    {"language": "e"},
    {"language": "english"},
    {"language": 47},
    {"neglect_turns": 0},
    {"neglect_turns": 1000},
    {"neglect_turns": 1001},
    {"neglect_turns": 3.0},
    {"neglect_turns": False},
    {"cast": ["林小姐", "刑警", "律師"]},
    {"cast": "林小姐"},
    {"cast": ["A"] * 32},
    {"cast": ["A"] * 33},
    {"cast": [1, 2]},
    {"cast": [" A"]},
    {"on_stage": []},
    {"on_stage": ["everyone"]},
    {"opening": True},
    {"opening": "yes"},
    {"opening": 1},
    {"stage_manager_model": "scripted/improv"},
    {"read_model": "openai/tts-1"},
    {"turn_timeout": 30},
    {"turn_timeout": 0},
    {"turn_timeout": 0.001},
    {"turn_timeout": 3600},
    {"turn_timeout": 3600.5},
    {"budget_usd": 0},
    {"budget_usd": 1_000_000},
    {"budget_usd": 1_000_000.01},
    {"budget_usd": -1},
    {"budget_tokens": 10_000_000_000},
    {"budget_tokens": 10_000_000_001},
    {"budget_tokens": 5.0},
    {"narrator_voice": "en+m3"},
    {"thoughts_voice": {"name": "en+f2", "rate": 120}},
    {"spectators_read": False},
    {"spectators_read": None},
    {"reply_format": "tags"},
    {"api_base": "https://gateway.example/v1"},
    {"line_notes": "crew"},
    {"line_notes": "everyone"},
    {"line_notes": "Crew"},
    {"line_notes": True},
    {"captains_cue": True},
    {"captains_cue": "no"},
    {"cats": ["A"]},
    {"language": "en", "cast": ["A", "B"], "opening": True, "budget_usd": 1.5},
]


def schema_says(schema: Any, raw: dict[str, Any]) -> dict[str, Any] | None:
    from pydantic import ValidationError

    try:
        return schema.model_validate(dict(raw)).as_dict()
    except ValidationError:
        return None


def typed(value: Any) -> Any:
    """A value with every type spelt out, so 1 and 1.0 and True differ."""
    if isinstance(value, dict):
        return [(k, typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


@pytest.mark.parametrize(
    ("rules", "schema", "raw"),
    [(SOUL_RULES, SoulSettings, raw) for raw in SOUL_CASES]
    + [(CONTEXT_RULES, ContextSettings, raw) for raw in CONTEXT_CASES],
)
def test_the_quick_check_says_what_the_schema_says_or_nothing(rules, schema, raw) -> None:
    quick = quick_settings(rules, raw)
    if quick is not None:
        assert typed(quick) == typed(schema_says(schema, raw))


@pytest.mark.parametrize(
    ("rules", "schema", "raw"),
    [
        (SOUL_RULES, SoulSettings, {"model": "openai/gpt-4o-mini", "temperature": 1}),
        (SOUL_RULES, SoulSettings, {"aliases": ["Ann", 47], "voice": {"name": "a", "pitch": 9}}),
        (SOUL_RULES, SoulSettings, {"avatar_url": "https://x.org/a.png", "secrets": "letter"}),
        (CONTEXT_RULES, ContextSettings, CONTEXT_CASES[-1]),
        (CONTEXT_RULES, ContextSettings, {"turn_timeout": 30, "budget_tokens": 5000}),
    ],
)
def test_plainly_valid_settings_never_need_the_schema(rules, schema, raw) -> None:
    assert quick_settings(rules, raw) is not None
    assert typed(quick_settings(rules, raw)) == typed(schema_says(schema, raw))


def test_the_quick_check_knows_the_schemas_keys_in_their_order() -> None:
    assert SOUL_KEYS == tuple(SoulSettings.model_fields)
    assert CONTEXT_KEYS == tuple(ContextSettings.model_fields)


@pytest.mark.parametrize("raw", [{"temprature": 0.7}, {"temperature": 3}, {"model": "a b"}])
def test_a_refusal_reads_the_same_through_either_door(raw) -> None:
    with pytest.raises(BadSceneFile) as quick:
        soul_settings_dict(raw, "soul.md", "actors/A/soul.md")
    with pytest.raises(BadSceneFile) as schema:
        soul_settings(raw, "soul.md", "actors/A/soul.md")
    assert str(quick.value) == str(schema.value)
    with pytest.raises(BadSceneFile) as both:
        context_settings_dict({"langauge": "en"}, "context.md", "context.md")
    assert "language" in str(both.value)


def test_reading_a_plain_scene_leaves_pydantic_unloaded(tmp_path) -> None:
    from scenekit import write_scene

    root = write_scene(tmp_path / "scene")
    code = (
        "import asyncio, sys\n"
        "from engine import Config, Rehearsal\n"
        f"r = Rehearsal({str(root)!r}, config=Config(model='scripted/improv'))\n"
        "asyncio.run(r.view())\n"
        "print('pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr[-2000:]
    assert context_settings_dict({"language": "en"}, "c") == {"language": "en"}
    assert context_settings({"language": "en"}, "c").as_dict() == {"language": "en"}
