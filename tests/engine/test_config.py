"""The operator's configuration: every CIRCUS_* variable docs/operators-guide.md documents is read
into one Config, once, with today's defaults and today's answer to a mistyped value; nothing else
reads the environment."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from engine import MAX_TURNS, Config
from engine.errors import CircusError

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "operators-guide.md"  # its Configuration table

# A value for each variable that differs from its default.
SAMPLES = {
    "CIRCUS_MODEL": "openai/gpt-4o",
    "CIRCUS_STAGE_MANAGER_MODEL": "openai/gpt-4o-mini",
    "CIRCUS_API_BASE": "http://localhost:11434",
    "CIRCUS_TURN_TIMEOUT": "30",
    "CIRCUS_NUM_CTX": "16384",
    "CIRCUS_MAX_REPLY_TOKENS": "512",
    "CIRCUS_MODEL_RETRIES": "5",
    "CIRCUS_RETRY_BASE_SECONDS": "0.5",
    "CIRCUS_WAITING_SECONDS": "3",
    "CIRCUS_MODEL_PRICES": "/etc/circus/prices.json",
    "CIRCUS_ALLOWED_MODELS": "openai/*",
    "CIRCUS_DAILY_BUDGET_USD": "2.5",
    "CIRCUS_DAILY_BUDGET_TOKENS": "100000",
    "CIRCUS_SCENES_DIR": "/srv/scenes",
    "CIRCUS_TEMPLATES_DIR": "/srv/templates",
    "CIRCUS_EMBEDDED_THREADS": "4",
    "CIRCUS_EMBEDDED_CACHE_MB": "64",
    "CIRCUS_REPLY_FORMAT": "json",
    "CIRCUS_DIRECT_HTTP": "off",
    "DISCORD_TOKEN": "a-bot-token",
    "DISCORD_GUILD_ID": "1234567890",
    "DISCORD_API_BASE": "http://127.0.0.1:8080/api/v10",
    "DISCORD_GATEWAY_URL": "ws://127.0.0.1:8080/gateway",
    # --- scale: the model gateway and /metrics
    "CIRCUS_GATEWAY_URL": "http://localhost:4000",
    "CIRCUS_GATEWAY_KEY": "sk-circus",
    "CIRCUS_METRICS_PORT": "9464",
    "CIRCUS_METRICS_ADDR": "0.0.0.0",
    # --- shards
    "CIRCUS_SHARDS": "0-3",
    "CIRCUS_SHARD_COUNT": "16",
    "CIRCUS_TERMINAL_SCENE_SERVERS": "123456789012345678",
    # --- the table read
    "CIRCUS_TTS_MODEL": "openai/tts-1",
    "CIRCUS_TTS_API_BASE": "http://localhost:8880/v1",
    "CIRCUS_TTS_API_KEY": "sk-speech",
    "CIRCUS_VOICES": "alloy,nova,cmn+f3",
    "CIRCUS_READ_CACHE_MB": "50",
}


# Documented, but a test and demo knob rather than an operator's setting: read by
# engine.config.scripted_latency for the built-in scripted model, not a Config field.
TEST_KNOBS = {"CIRCUS_SCRIPTED_LATENCY"}
# Fields read from no single variable: the values of every credential variable, for redaction.
DERIVED = {"secrets"}


def documented() -> set[str]:
    found = re.findall(r"(?:CIRCUS|DISCORD)_[A-Z_]*[A-Z]", GUIDE.read_text("utf-8"))
    return set(found) - TEST_KNOBS


def field_of(variable: str) -> str:
    return variable.removeprefix("CIRCUS_").lower()  # DISCORD_TOKEN -> discord_token


def test_every_documented_variable_is_a_config_field_and_every_field_is_documented():
    fields = {f.name for f in dataclasses.fields(Config)}
    assert {field_of(v) for v in documented()} == fields - DERIVED
    assert set(SAMPLES) == documented()


@pytest.mark.parametrize("variable", sorted(SAMPLES))
def test_each_variable_sets_its_own_field_and_only_that(variable):
    config = Config.from_env({variable: SAMPLES[variable]})
    changed = {
        f.name
        for f in dataclasses.fields(Config)
        if getattr(config, f.name) != getattr(Config(), f.name)
    }
    assert changed - DERIVED == {field_of(variable)}


def test_the_secrets_are_every_credential_value_and_never_shown():
    config = Config.from_env(
        {"CIRCUS_GATEWAY_KEY": "gw-key-123456", "DISCORD_TOKEN": "tok.en.123456",
         "ANTHROPIC_API_KEY": "sk-ant-0000000000", "CIRCUS_MODEL": "openai/gpt-4o"}
    )  # fmt: skip
    assert set(config.secrets) == {"gw-key-123456", "tok.en.123456", "sk-ant-0000000000"}
    assert "123456" not in repr(config) and "sk-ant" not in repr(config)


def test_an_empty_environment_is_todays_defaults():
    config = Config.from_env({})
    assert config == Config()
    assert (config.model, config.num_ctx, config.max_reply_tokens) == (None, 8192, 2048)
    assert (config.model_retries, config.waiting_seconds) == (2, 10.0)
    assert config.scenes_dir == Path("scenes") and config.templates_dir is None
    assert (config.embedded_threads, config.embedded_cache_mb) == (2, 512)
    assert MAX_TURNS == 500


@pytest.mark.parametrize(
    "variable, text, field, value",
    [
        # a typo in a size or an interval falls back to the default, as it always did
        ("CIRCUS_NUM_CTX", "lots", "num_ctx", 8192),
        ("CIRCUS_NUM_CTX", "100", "num_ctx", 512),
        ("CIRCUS_MAX_REPLY_TOKENS", "many", "max_reply_tokens", 2048),
        ("CIRCUS_MAX_REPLY_TOKENS", "10", "max_reply_tokens", 64),
        ("CIRCUS_WAITING_SECONDS", "soon", "waiting_seconds", 10.0),
        ("CIRCUS_WAITING_SECONDS", "0", "waiting_seconds", 0.01),
        ("CIRCUS_EMBEDDED_CACHE_MB", "-5", "embedded_cache_mb", 0),
        ("CIRCUS_EMBEDDED_THREADS", "0", "embedded_threads", 1),
        ("CIRCUS_MODEL", "   ", "model", None),
        ("CIRCUS_SCENES_DIR", "", "scenes_dir", Path("scenes")),
        # the daily budgets stay text: engine.spend.budget refuses a typo when a run starts
        ("CIRCUS_DAILY_BUDGET_USD", "two dollars", "daily_budget_usd", "two dollars"),
        # a mistyped metrics port leaves the endpoint off (scale)
        ("CIRCUS_METRICS_PORT", "nine", "metrics_port", None),
        ("CIRCUS_METRICS_PORT", "70000", "metrics_port", None),
    ],
)
def test_mistyped_values_get_todays_answer(variable, text, field, value):
    assert getattr(Config.from_env({variable: text}), field) == value


@pytest.mark.parametrize(
    "variable, text",
    [
        ("CIRCUS_MODEL_RETRIES", "two"),
        ("CIRCUS_MODEL_RETRIES", "-1"),
        ("CIRCUS_RETRY_BASE_SECONDS", "fast"),
    ],
)
def test_a_mistyped_retry_setting_is_refused_naming_the_variable(variable, text):
    with pytest.raises(CircusError) as caught:
        Config.from_env({variable: text})
    assert variable in str(caught.value) and variable in caught.value.in_language("zh")


def test_the_bot_token_is_never_shown():
    config = Config.from_env({"DISCORD_TOKEN": "a-bot-token"})
    assert config.discord_token == "a-bot-token" and "a-bot-token" not in repr(config)


def test_nothing_but_engine_config_reads_a_circus_variable_from_the_environment():
    reads = re.compile(r"(os\.environ|getenv)[^\n]*(CIRCUS|DISCORD)_")
    offenders = [
        str(path.relative_to(REPO))
        for folder in ("engine", "bot", "circus")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path.name != "config.py" and reads.search(path.read_text("utf-8"))
    ]
    assert offenders == []
