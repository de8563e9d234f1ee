"""The operator's configuration: every CIRCUS_* (and DISCORD_*) variable, read once into a `Config`.

Invariant: nothing else in the engine reads CIRCUS_* from the environment. A frontend builds
one `Config.from_env(os.environ)` at startup and passes it down; a `Rehearsal` or a model door
built without one reads the environment once, when it is built; `default_config()` is left
only for the embedded provider, which litellm loads by name with no Config to hand. Values that
fell back to a default when mistyped still do; those whose typo stops a run (the daily budgets) stay text here and are
checked where they are used, so the error arrives where it did before.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import CircusError
from engine.redact import secret_values

MAX_TURNS = 500  # the most turns one run may ask for (engine, console and CLI alike)
DEFAULT_TURNS = 5  # a run or resume without a count (engine and Discord)
DEFAULT_NUM_CTX = 8192  # Ollama: what Circus asks for (its own default silently cuts prompts)
DEFAULT_REPLY_CAP = 2048
DEFAULT_RETRIES = 2
DEFAULT_TURN_TIMEOUT = 120.0  # seconds one model call may take
RETRY_BASE_SECONDS = 1.0
WAITING_SECONDS = 10.0  # how often a slow turn says it is still waiting
EMBEDDED_THREADS = 2
EMBEDDED_CACHE_MB = 512  # 0 switches the embedded model's saved prompts off
READ_CACHE_MB = 200  # a scene's cache of rendered lines (engine.voice.cache); 0: no cache


def _text(env: Mapping[str, str], key: str) -> str | None:
    value = env.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _int(env: Mapping[str, str], key: str, default: int, minimum: int) -> int:
    try:
        return max(minimum, int(env.get(key, default)))
    except ValueError:
        return default


def _float(env: Mapping[str, str], key: str, default: float) -> float:
    try:
        return float(env.get(key) or default)
    except ValueError:
        return default


def _choice(env: Mapping[str, str], key: str, choices: tuple[str, ...]) -> str | None:
    """One of `choices` (any case), or None — a mistyped value falls back to the default."""
    value = (_text(env, key) or "").lower()
    return value if value in choices else None


def _port(env: Mapping[str, str], key: str) -> int | None:
    """A TCP port (1-65535), or None: unset or mistyped leaves the endpoint off."""
    try:
        value = int(env.get(key) or 0)
    except ValueError:
        return None
    return value if 0 < value < 65536 else None


def _strict(env: Mapping[str, str], key: str, default: float, whole: bool) -> float:
    """A number whose typo must not be guessed around (retry counts and their pacing)."""
    text = (env.get(key) or "").strip()
    if not text:
        return default
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        value = -1
    if value < 0 or value != value:
        raise CircusError("error.config.whole" if whole else "error.budget.env", key=key, text=text)
    return value


@dataclass(frozen=True)
class Config:
    """What the operator set. Empty or absent variables are None (or their default)."""

    model: str | None = None  # CIRCUS_MODEL
    stage_manager_model: str | None = None  # CIRCUS_STAGE_MANAGER_MODEL
    api_base: str | None = None  # CIRCUS_API_BASE
    turn_timeout: str | None = None  # CIRCUS_TURN_TIMEOUT (read with context.md's turn_timeout)
    num_ctx: int = DEFAULT_NUM_CTX  # CIRCUS_NUM_CTX (at least 512)
    max_reply_tokens: int = DEFAULT_REPLY_CAP  # CIRCUS_MAX_REPLY_TOKENS (at least 64)
    model_retries: int = DEFAULT_RETRIES  # CIRCUS_MODEL_RETRIES
    retry_base_seconds: float = RETRY_BASE_SECONDS  # CIRCUS_RETRY_BASE_SECONDS
    waiting_seconds: float = WAITING_SECONDS  # CIRCUS_WAITING_SECONDS (at least 0.01)
    model_prices: str | None = None  # CIRCUS_MODEL_PRICES: a JSON file, read with litellm
    allowed_models: str | None = None  # CIRCUS_ALLOWED_MODELS, comma-separated
    daily_budget_usd: str | None = None  # CIRCUS_DAILY_BUDGET_USD (checked by engine.spend.budget)
    daily_budget_tokens: str | None = None  # CIRCUS_DAILY_BUDGET_TOKENS
    scenes_dir: Path = Path("scenes")  # CIRCUS_SCENES_DIR
    templates_dir: Path | None = None  # CIRCUS_TEMPLATES_DIR (None: engine/scene_templates)
    embedded_threads: int = EMBEDDED_THREADS  # CIRCUS_EMBEDDED_THREADS (at least 1)
    embedded_cache_mb: int = EMBEDDED_CACHE_MB  # CIRCUS_EMBEDDED_CACHE_MB (0: off)
    reply_format: str | None = None  # CIRCUS_REPLY_FORMAT: auto, json or tags (else: auto)
    # CIRCUS_DIRECT_HTTP: the door speaks the OpenAI-compatible wire itself (engine.door.wire)
    # for the providers it can; `off` sends every hosted call through litellm instead
    direct_http: bool = True
    # --- bothouse: the Discord bot's settings (`circus bot`); the token is never shown
    discord_token: str | None = field(default=None, repr=False)  # DISCORD_TOKEN
    discord_guild_id: str | None = None  # DISCORD_GUILD_ID: text, checked by `circus bot`
    discord_api_base: str | None = None  # DISCORD_API_BASE: a Discord-compatible server
    discord_gateway_url: str | None = None  # DISCORD_GATEWAY_URL
    # --- scale: the model gateway (engine.door.gateway) and the metrics endpoint
    gateway_url: str | None = None  # CIRCUS_GATEWAY_URL: a LiteLLM proxy for every hosted model
    gateway_key: str | None = field(default=None, repr=False)  # CIRCUS_GATEWAY_KEY (a secret)
    metrics_port: int | None = None  # CIRCUS_METRICS_PORT: serve /metrics here (None: off)
    metrics_addr: str = "127.0.0.1"  # CIRCUS_METRICS_ADDR: the address /metrics listens on
    # --- shards: which Discord shards this `circus bot` connects (text, checked by the bot)
    shards: str | None = None  # CIRCUS_SHARDS: "0-3" or "0,2,5-7" (None: every shard)
    shard_count: str | None = None  # CIRCUS_SHARD_COUNT (None: Discord's recommended count)
    # CIRCUS_TERMINAL_SCENE_SERVERS: the server ids that may list and open scenes made in the
    # terminal (text, checked by the bot; None: no server — the operator gives scenes instead)
    terminal_scene_servers: str | None = None
    # --- voice: the table read (engine.voice); unset model: the offline eSpeak NG engine
    tts_model: str | None = None  # CIRCUS_TTS_MODEL: a litellm speech model, e.g. openai/tts-1
    tts_api_base: str | None = None  # CIRCUS_TTS_API_BASE: a server speaking /v1/audio/speech
    tts_api_key: str | None = field(default=None, repr=False)  # CIRCUS_TTS_API_KEY (a secret)
    voices: str | None = None  # CIRCUS_VOICES: the voices Discord may set, comma-separated
    read_cache_mb: int = READ_CACHE_MB  # CIRCUS_READ_CACHE_MB (0: no cache)
    # --- not one variable: the values of every credential variable (provider keys, the gateway
    # key, the bot token), masked in whatever text reaches a person (engine.redact)
    secrets: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Config:
        """Read every CIRCUS_* and DISCORD_* variable of `env` (raises CircusError for a mistyped retry count)."""
        waiting = _float(env, "CIRCUS_WAITING_SECONDS", WAITING_SECONDS)
        templates = _text(env, "CIRCUS_TEMPLATES_DIR")
        return cls(
            secrets=secret_values(env),
            model=_text(env, "CIRCUS_MODEL"),
            stage_manager_model=_text(env, "CIRCUS_STAGE_MANAGER_MODEL"),
            api_base=_text(env, "CIRCUS_API_BASE"),
            turn_timeout=env.get("CIRCUS_TURN_TIMEOUT") or None,
            num_ctx=_int(env, "CIRCUS_NUM_CTX", DEFAULT_NUM_CTX, 512),
            max_reply_tokens=_int(env, "CIRCUS_MAX_REPLY_TOKENS", DEFAULT_REPLY_CAP, 64),
            model_retries=int(_strict(env, "CIRCUS_MODEL_RETRIES", DEFAULT_RETRIES, whole=True)),
            retry_base_seconds=_strict(
                env, "CIRCUS_RETRY_BASE_SECONDS", RETRY_BASE_SECONDS, whole=False
            ),
            waiting_seconds=max(waiting, 0.01),
            model_prices=env.get("CIRCUS_MODEL_PRICES") or None,
            allowed_models=env.get("CIRCUS_ALLOWED_MODELS") or None,
            daily_budget_usd=env.get("CIRCUS_DAILY_BUDGET_USD") or None,
            daily_budget_tokens=env.get("CIRCUS_DAILY_BUDGET_TOKENS") or None,
            scenes_dir=Path(env.get("CIRCUS_SCENES_DIR") or "scenes"),
            templates_dir=Path(templates) if templates else None,
            embedded_threads=_int(env, "CIRCUS_EMBEDDED_THREADS", EMBEDDED_THREADS, 1),
            embedded_cache_mb=_int(env, "CIRCUS_EMBEDDED_CACHE_MB", EMBEDDED_CACHE_MB, 0),
            reply_format=_choice(env, "CIRCUS_REPLY_FORMAT", ("auto", "json", "tags")),
            direct_http=_choice(env, "CIRCUS_DIRECT_HTTP", ("on", "off")) != "off",
            discord_token=_text(env, "DISCORD_TOKEN"),
            discord_guild_id=_text(env, "DISCORD_GUILD_ID"),
            discord_api_base=env.get("DISCORD_API_BASE") or None,
            discord_gateway_url=env.get("DISCORD_GATEWAY_URL") or None,
            gateway_url=_text(env, "CIRCUS_GATEWAY_URL"),
            gateway_key=_text(env, "CIRCUS_GATEWAY_KEY"),
            metrics_port=_port(env, "CIRCUS_METRICS_PORT"),
            metrics_addr=_text(env, "CIRCUS_METRICS_ADDR") or "127.0.0.1",
            shards=_text(env, "CIRCUS_SHARDS"),
            shard_count=_text(env, "CIRCUS_SHARD_COUNT"),
            terminal_scene_servers=_text(env, "CIRCUS_TERMINAL_SCENE_SERVERS"),
            tts_model=_text(env, "CIRCUS_TTS_MODEL"),
            tts_api_base=_text(env, "CIRCUS_TTS_API_BASE"),
            tts_api_key=_text(env, "CIRCUS_TTS_API_KEY"),
            voices=_text(env, "CIRCUS_VOICES"),
            read_cache_mb=_int(env, "CIRCUS_READ_CACHE_MB", READ_CACHE_MB, 0),
        )


def scripted_latency(env: Mapping[str, str]) -> float:
    """CIRCUS_SCRIPTED_LATENCY: seconds each call to the built-in scripted model waits (a test
    and demo knob, so not a production setting: engine.providers.scripted reads it for the scripts a
    default door answers `scripted/...` with; a ScriptedModels is handed its own)."""
    return _float(env, "CIRCUS_SCRIPTED_LATENCY", 0.0)


@functools.cache
def default_config() -> Config:
    """The fallback for library callers not handed a Config: the process environment as it was
    at the first call, built once (frontends build their own at startup and pass it down)."""
    return Config.from_env(os.environ)
