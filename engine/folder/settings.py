"""The settings a scene's files may carry (soul.md, context.md), checked on every read.

Types, ranges and sizes are checked and unknown keys refused naming the nearest known one, so a
misspelt `temprature:` is an error rather than silently nothing; a model name never carries an
address (`://`, `//`) or hidden characters, from any file. Files the operator writes on
disk are trusted configuration; a soul that arrives through Discord is data, so
`check_untrusted_soul` also refuses `api_base` and models outside `allowed_models()`.
The schemas are pydantic's (engine/folder/setting_schemas.py), loaded only when a file's
settings are not plainly valid (engine/folder/setting_rules.py) or a setting is edited.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, get_args

from engine.catalog import Phrase
from engine.config import Config
from engine.door.values import EMBEDDED_MODEL
from engine.errors import BadSceneFile, Refused
from engine.folder.setting_rules import (
    CONTEXT_RULES,
    MAX_ALIASES,
    MAX_FILE_BYTES,
    MAX_LIST,
    MAX_SECRET_CHARS,
    MAX_SECRETS,
    SOUL_RULES,
    model_name_refused,
    quick_settings,
)
from engine.vocabulary import Origin

if TYPE_CHECKING:  # the schemas load on first use (module __getattr__ below)
    from pydantic import ValidationError

    from engine.folder.setting_schemas import ContextSettings, SoulSettings, VoiceSetting, _Settings

__all__ = [
    "HELP",
    "MAX_ALIASES",
    "MAX_FILE_BYTES",
    "MAX_LIST",
    "MAX_SECRETS",
    "MAX_SECRET_CHARS",
    "OPERATOR_CONTEXT_KEYS",
    "ORIGINS",
    "ContextSettings",
    "SoulSettings",
    "VoiceSetting",
    "allowed_models",
    "check_untrusted_context",
    "check_untrusted_soul",
    "context_model",
    "context_settings",
    "context_settings_dict",
    "model_allowed",
    "model_name_refused",
    "soul_model",
    "soul_settings",
    "soul_settings_dict",
]
ORIGINS = get_args(Origin)  # who a text came from (engine.vocabulary.Origin)
_SCHEMAS = ("ContextSettings", "SoulSettings", "VoiceSetting")


def __getattr__(name: str) -> Any:
    """The pydantic schemas, imported when first asked for (PEP 562)."""
    if name in _SCHEMAS:
        from engine.folder import setting_schemas

        return getattr(setting_schemas, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_MODEL_HELP = Phrase("error.setting.help.model")
_NAMES_HELP = Phrase("error.setting.help.names", most=MAX_LIST)
# What each setting must be, said the way a writer would fix it (engine/catalog).
HELP: dict[str, Phrase] = {
    "model": _MODEL_HELP,
    "fallback_model": _MODEL_HELP,
    "stage_manager_model": _MODEL_HELP,
    "temperature": Phrase("error.setting.help.temperature"),
    "aliases": Phrase("error.setting.help.aliases", most=MAX_ALIASES),
    "avatar_url": Phrase("error.setting.help.avatar_url"),
    "api_base": Phrase("error.setting.help.api_base"),
    "language": Phrase("error.setting.help.language"),
    "neglect_turns": Phrase("error.setting.help.neglect_turns"),
    "cast": _NAMES_HELP,
    "on_stage": _NAMES_HELP,
    "opening": Phrase("error.setting.help.opening"),
    "turn_timeout": Phrase("error.setting.help.turn_timeout"),
    "budget_usd": Phrase("error.setting.help.budget_usd"),
    "budget_tokens": Phrase("error.setting.help.budget_tokens"),
    "reply_format": Phrase("error.setting.help.reply_format"),
    "secrets": Phrase("error.setting.help.secrets", most=MAX_SECRETS, chars=MAX_SECRET_CHARS),
    "voice": Phrase("error.setting.help.voice"),
    "narrator_voice": Phrase("error.setting.help.voice"),
    "thoughts_voice": Phrase("error.setting.help.voice"),
    "read_model": _MODEL_HELP,
    "spectators_read": Phrase("error.setting.help.opening"),
    "line_notes": Phrase("error.setting.help.line_notes"),
    "captains_cue": Phrase("error.setting.help.opening"),
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def _refusal(
    error: ValidationError, schema: type[_Settings], path: object, rel: str | None
) -> BadSceneFile:
    first = error.errors()[0]
    key = str(first["loc"][0]) if first["loc"] else "?"
    if first["type"] == "extra_forbidden":
        known = list(schema.model_fields)
        guess = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        if guess:
            return BadSceneFile(
                path, "error.setting.unknown_guess", rel=rel, key=key, guess=guess[0]
            )
        return BadSceneFile(path, "error.setting.unknown", rel=rel, key=key, known=", ".join(known))
    if first["type"] == "model_shape":
        return BadSceneFile(
            path, "error.setting.model_shape", rel=rel, key=key, got=_short(first.get("input"))
        )
    return BadSceneFile(
        path,
        "error.setting.must_be",
        rel=rel,
        key=key,
        help=HELP.get(key, Phrase("error.setting.help.other")),
        got=_short(first.get("input")),
    )


def _words_only(raw: Mapping[str, Any], path: object, rel: str | None) -> None:
    for key in raw:
        if not isinstance(key, str):
            raise BadSceneFile(path, "error.setting.not_a_word", rel=rel, key=key)


def _validate(schema: str, raw: Mapping[str, Any], path: object, rel: str | None) -> Any:
    from pydantic import ValidationError

    from engine.folder import setting_schemas

    model: type[_Settings] = getattr(setting_schemas, schema)
    _words_only(raw, path, rel)
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise _refusal(exc, model, path, rel) from None


def soul_settings(raw: Mapping[str, Any], path: object, rel: str | None = None) -> SoulSettings:
    """Validate soul.md front matter (raises BadSceneFile naming the file and the key)."""
    return _validate("SoulSettings", raw, path, rel)


def context_settings(
    raw: Mapping[str, Any], path: object, rel: str | None = None
) -> ContextSettings:
    """Validate context.md front matter (raises BadSceneFile naming the file and the key)."""
    return _validate("ContextSettings", raw, path, rel)


def soul_model(settings: Mapping[str, Any]) -> SoulSettings:
    """The schema's object for settings already read and checked (`Soul.settings`)."""
    from engine.folder.setting_schemas import SoulSettings

    return SoulSettings(**settings)


def context_model(settings: Mapping[str, Any]) -> ContextSettings:
    """The schema's object for a scene's settings already read and checked."""
    from engine.folder.setting_schemas import ContextSettings

    return ContextSettings(**settings)


def soul_settings_dict(
    raw: Mapping[str, Any], path: object, rel: str | None = None
) -> dict[str, Any]:
    """`soul_settings(...).as_dict()`, without loading the schema when the settings are
    plainly valid (engine.folder.setting_rules.quick_settings)."""
    _words_only(raw, path, rel)
    quick = quick_settings(SOUL_RULES, raw)
    return quick if quick is not None else soul_settings(raw, path, rel).as_dict()


def context_settings_dict(
    raw: Mapping[str, Any], path: object, rel: str | None = None
) -> dict[str, Any]:
    """`context_settings(...).as_dict()`, as quickly as `soul_settings_dict`."""
    _words_only(raw, path, rel)
    quick = quick_settings(CONTEXT_RULES, raw)
    return quick if quick is not None else context_settings(raw, path, rel).as_dict()


# ---------------------------------------------------------------------- untrusted edits
def allowed_models(config: Config) -> tuple[str, ...]:
    """Models a soul sent through Discord may name: `CIRCUS_ALLOWED_MODELS` (comma-separated
    litellm names or `provider/*` patterns), else the models the operator configured."""
    raw = config.allowed_models or ""
    if raw.strip():
        items = [item.strip() for item in raw.split(",")]
    else:
        items = [config.model or "", config.stage_manager_model or ""]
        if not config.model:
            items.append(EMBEDDED_MODEL)
    out: list[str] = []
    for item in items:
        item = item.strip()
        if item and item not in out:
            out.append(item)
    return tuple(out)


def model_allowed(model: str, allowed: tuple[str, ...]) -> bool:
    """Exact names, or `provider/*` for every model of one provider (`*` alone: any model).

    Never a name that carries an address or hidden text (model_name_refused), whatever the
    pattern: `huggingface/*` allows Hugging Face models, not `huggingface/http://…`."""
    model = model.strip()
    if not model or model_name_refused(model):
        return False
    for pattern in allowed:
        if pattern == "*" or pattern == model:
            return True
        if (
            pattern.endswith("/*")
            and model.startswith(pattern[:-1])
            and len(model) > len(pattern[:-1])
        ):
            return True
    return False


def _allowed(model: str, allowed: tuple[str, ...], config: Config) -> bool:
    """Allowed as written or as sent through the operator's gateway (engine.door.gateway)."""
    from engine.door.gateway import allowed_forms

    forms = allowed_forms(model, config)
    return any(model_allowed(form, allowed) for form in forms)


def check_untrusted_soul(
    new: SoulSettings,
    current: SoulSettings | None,
    config: Config,
) -> None:
    """Refuse what a soul arriving through Discord may not set (raises Refused).

    A value equal to the one already in the soul.md on disk passes: the operator wrote it, and
    a director editing the character's text must be able to send the rest back unchanged.
    """

    def unchanged(key: str) -> bool:
        return current is not None and getattr(current, key) == getattr(new, key)

    if new.api_base is not None and not unchanged("api_base"):
        raise Refused("api_base", new.api_base)
    if new.reply_format is not None and not unchanged("reply_format"):
        raise Refused("reply_format", new.reply_format)  # the operator's choice, like api_base
    allowed = allowed_models(config)
    for key in ("model", "fallback_model"):
        value = getattr(new, key)
        if value is not None and not unchanged(key) and not _allowed(value, allowed, config):
            raise Refused(key, value, allowed)
    _check_voices(new, ("voice",), unchanged, config)


def _check_voices(new: _Settings, keys: tuple[str, ...], unchanged: Any, config: Config) -> None:
    """A voice sent through Discord must be on the operator's list (engine.folder.voices)."""
    from engine.folder.voices import allowed_voices

    voices = allowed_voices(config)
    for key in keys:
        value = getattr(new, key)
        if value is not None and not unchanged(key) and value.name not in voices:
            raise Refused(key, value.name, voices)


# Context settings only the operator may change: where requests go, what they may spend.
OPERATOR_CONTEXT_KEYS = ("api_base", "budget_usd", "budget_tokens", "turn_timeout", "read_model")


def check_untrusted_context(
    new: ContextSettings,
    current: ContextSettings | None,
    config: Config,
) -> None:
    """Refuse what a context.md arriving through Discord may not set (raises Refused): any
    change to the operator's keys (added, changed or removed), and models as for a soul
    (`check_untrusted_soul`)."""

    def unchanged(key: str) -> bool:
        return current is not None and getattr(current, key) == getattr(new, key)

    for key in OPERATOR_CONTEXT_KEYS:  # removing one is a change too (a budget dropped)
        before = getattr(current, key) if current is not None else None
        if getattr(new, key) != before:
            raise Refused(key, getattr(new, key))
    allowed = allowed_models(config)
    for key in ("model", "stage_manager_model"):
        value = getattr(new, key)
        if value is not None and not unchanged(key) and not _allowed(value, allowed, config):
            raise Refused(key, value, allowed)
    _check_voices(new, ("narrator_voice", "thoughts_voice"), unchanged, config)
