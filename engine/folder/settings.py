"""The settings a scene's files may carry: one pydantic schema per file (soul.md, context.md).

Types, ranges and sizes are checked and unknown keys refused naming the nearest known one, so a
misspelt `temprature:` is an error rather than silently nothing; a model name never carries an
address (`://`, `//`) or hidden characters, from any file. Files the operator writes on
disk are trusted configuration; a soul that arrives through Discord is data, so
`check_untrusted_soul` also refuses `api_base` and models outside `allowed_models()`.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)
from pydantic_core import PydanticCustomError

from engine.catalog import Phrase
from engine.config import Config
from engine.door.gateway import allowed_forms
from engine.door.llm import EMBEDDED_MODEL
from engine.door.structured import ReplyFormat
from engine.errors import BadSceneFile, Refused
from engine.folder.names import is_everyone
from engine.folder.voices import allowed_voices
from engine.vocabulary import Origin

MAX_FILE_BYTES = 256 * 1024  # soul.md / context.md: a real soul is 2–5 KB
MAX_LIST = 32  # cast, on_stage
MAX_ALIASES = 16
MAX_SECRETS = (
    12  # `secrets:` in soul.md (engine/takes/secrets.py): a few short phrases per character
)
MAX_SECRET_CHARS = 80
ORIGINS = get_args(Origin)  # who a text came from (engine.vocabulary.Origin)


def _no_controls(text: str) -> str:
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise ValueError("control characters")
    return text


def _url(schemes: tuple[str, ...]) -> Any:
    def check(text: str) -> str:
        parts = urlsplit(text)
        if parts.scheme.lower() not in schemes or not parts.hostname:
            raise ValueError("scheme")
        return text

    return AfterValidator(check)


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _number_as_name(value: Any) -> Any:
    # `aliases: [47]` means the name "47", not a number.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _not_everyone(name: str) -> str:
    if is_everyone(name):
        raise ValueError("everyone word")
    return name


def model_name_refused(name: str) -> bool:
    """A model name that carries an address or hidden text rather than naming one model.

    `provider/*` on the allow-list must not let `huggingface/http://host/v1` through: a scheme
    or `//` points requests at a server of the sender's choosing (api_base is the operator's
    setting), and whitespace or control characters hide what is really sent.
    """
    return (
        "://" in name
        or "//" in name
        or any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in name)
    )


def _plain_model_name(name: str) -> str:
    if model_name_refused(name):
        raise PydanticCustomError("model_shape", "not a plain model name")
    return name


ModelName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=r"^\S+$"),
    AfterValidator(_plain_model_name),
]
Url = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Name = Annotated[
    str,
    BeforeValidator(_number_as_name),
    StringConstraints(strip_whitespace=True, min_length=1, max_length=64),
    AfterValidator(_no_controls),
]
Names = Annotated[list[Name], Field(max_length=MAX_LIST)]


VoiceName = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True,
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+:-]*$",
    ),
]


class VoiceSetting(BaseModel):
    """`voice: {name: en-us+f3, pitch: 60, rate: 170}` (engine.folder.voices.Voice)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: VoiceName
    pitch: Annotated[int, Field(ge=0, le=99)] | None = None
    rate: Annotated[int, Field(ge=80, le=450)] | None = None


def _voice_form(value: Any) -> Any:
    # `voice: alloy` is the short form of `voice: {name: alloy}`.
    return VoiceSetting(name=value) if isinstance(value, str) else value


def _voice_mapping(value: Any) -> Any:
    return VoiceSetting.model_validate(value) if isinstance(value, Mapping) else value


VoiceValue = Annotated[VoiceSetting, BeforeValidator(_voice_mapping), BeforeValidator(_voice_form)]


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    def as_dict(self) -> dict[str, Any]:
        """The settings written in the file, validated and normalised (what code reads)."""
        return self.model_dump(exclude_unset=True, exclude_none=True)


class SoulSettings(_Settings):
    """soul.md front matter: everything optional; the scene and environment fill the rest."""

    model: ModelName | None = None
    fallback_model: ModelName | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    aliases: (
        Annotated[
            list[Annotated[Name, AfterValidator(_not_everyone)]],
            Field(max_length=MAX_ALIASES),
            BeforeValidator(_one_or_many),
        ]
        | None
    ) = None
    avatar_url: Annotated[Url, _url(("https",))] | None = None
    api_base: Annotated[Url, _url(("http", "https"))] | None = None
    reply_format: ReplyFormat | None = None  # engine.door.structured: auto, json or tags
    voice: VoiceValue | None = None  # the table read (engine.folder.voices)
    # what this character hides (engine/takes/secrets.py: the ledger of when each one surfaced)
    secrets: (
        Annotated[
            list[
                Annotated[
                    str,
                    BeforeValidator(_number_as_name),
                    StringConstraints(
                        strip_whitespace=True, min_length=1, max_length=MAX_SECRET_CHARS
                    ),
                    AfterValidator(_no_controls),
                ]
            ],
            Field(max_length=MAX_SECRETS),
            BeforeValidator(_one_or_many),
        ]
        | None
    ) = None


class ContextSettings(_Settings):
    """context.md front matter: the scene's settings (never shown to any model)."""

    language: (
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8}){0,3}$")]
        | None
    ) = None
    neglect_turns: Annotated[int, Field(ge=0, le=1000)] | None = None
    cast: Names | None = None
    on_stage: Names | None = None  # who is on stage when the scene opens (branch stage)
    opening: bool | None = None
    model: ModelName | None = None
    stage_manager_model: ModelName | None = None
    api_base: Annotated[Url, _url(("http", "https"))] | None = None
    turn_timeout: Annotated[float, Field(gt=0, le=3600)] | None = None
    budget_usd: Annotated[float, Field(ge=0, le=1_000_000)] | None = None
    budget_tokens: Annotated[int, Field(ge=0, le=10_000_000_000)] | None = None
    reply_format: ReplyFormat | None = None  # the actors' and stage manager's default
    # the table read (engine.folder.voices): who reads the action and the heading, who reads
    # the thoughts (a director's read), which speech model (the operator's), who may ask
    narrator_voice: VoiceValue | None = None
    thoughts_voice: VoiceValue | None = None
    read_model: ModelName | None = None
    spectators_read: bool | None = None
    line_notes: Literal["everyone", "crew"] | None = None  # who may note a line (Discord)
    captains_cue: bool | None = None  # a captain may /cue their own character (default: no)


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


def _validate(
    schema: type[_Settings], raw: Mapping[str, Any], path: object, rel: str | None
) -> Any:
    for key in raw:
        if not isinstance(key, str):
            raise BadSceneFile(path, "error.setting.not_a_word", rel=rel, key=key)
    try:
        return schema.model_validate(dict(raw))
    except ValidationError as exc:
        raise _refusal(exc, schema, path, rel) from None


def soul_settings(raw: Mapping[str, Any], path: object, rel: str | None = None) -> SoulSettings:
    """Validate soul.md front matter (raises BadSceneFile naming the file and the key)."""
    return _validate(SoulSettings, raw, path, rel)


def context_settings(
    raw: Mapping[str, Any], path: object, rel: str | None = None
) -> ContextSettings:
    """Validate context.md front matter (raises BadSceneFile naming the file and the key)."""
    return _validate(ContextSettings, raw, path, rel)


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
