"""The settings a scene's files may carry: one pydantic schema per file (soul.md, context.md).

Types, ranges and sizes are checked and unknown keys refused naming the nearest known one, so a
misspelt `temprature:` is an error rather than silently nothing. Files the operator writes on
disk are trusted configuration; a soul that arrives through Discord is data, so
`check_untrusted_soul` also refuses `api_base` and models outside `allowed_models()`.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any
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

from engine.config import Config, default_config
from engine.errors import BadSceneFile, Refused
from engine.llm import EMBEDDED_MODEL
from engine.names import is_everyone

MAX_FILE_BYTES = 256 * 1024  # soul.md / context.md: a real soul is 2–5 KB
MAX_LIST = 32  # cast, on_stage
MAX_ALIASES = 16
ORIGINS = ("operator", "discord")


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


ModelName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=r"^\S+$")
]
Url = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Name = Annotated[
    str,
    BeforeValidator(_number_as_name),
    StringConstraints(strip_whitespace=True, min_length=1, max_length=64),
    AfterValidator(_no_controls),
]
Names = Annotated[list[Name], Field(max_length=MAX_LIST)]


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


_MODEL_HELP = (
    "a litellm model name without spaces, e.g. anthropic/claude-3-5-haiku-latest",
    "litellm 模型名稱（不含空格），例如 anthropic/claude-3-5-haiku-latest",
)
_NAMES_HELP = (
    f"a list of at most {MAX_LIST} names, e.g. [林小姐, 刑警]",
    f"最多 {MAX_LIST} 個名字的清單，例如 [林小姐, 刑警]",
)
# What each setting must be, said the way a writer would fix it.
HELP: dict[str, tuple[str, str]] = {
    "model": _MODEL_HELP,
    "fallback_model": _MODEL_HELP,
    "stage_manager_model": _MODEL_HELP,
    "temperature": ("a number from 0 to 2", "0 到 2 之間的數字"),
    "aliases": (
        f"a list of at most {MAX_ALIASES} short names (64 characters each) that are not words "
        "for everyone, e.g. aliases: [林, 林小姐]",
        f"最多 {MAX_ALIASES} 個簡短名字（每個最多 64 字，不能是「大家」這類詞）的清單，"
        "例如 aliases: [林, 林小姐]",
    ),
    "avatar_url": ("an https:// address of an image", "https:// 開頭的圖片網址"),
    "api_base": ("an http:// or https:// address", "http:// 或 https:// 開頭的網址"),
    "language": ("a language code such as zh or en", "語言代碼，例如 zh 或 en"),
    "neglect_turns": ("a whole number from 0 to 1000", "0 到 1000 之間的整數"),
    "cast": _NAMES_HELP,
    "on_stage": _NAMES_HELP,
    "opening": ("true or false", "true 或 false"),
    "turn_timeout": (
        "a number of seconds, more than 0 and at most 3600",
        "秒數，大於 0、最多 3600",
    ),
    "budget_usd": ("a number of US dollars, 0 or more", "美元金額，0 或以上"),
    "budget_tokens": ("a whole number of tokens, 0 or more", "token 數（整數），0 或以上"),
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
            en = f"unknown setting `{key}` — did you mean `{guess[0]}`?"
            zh = f"不認得的設定 `{key}`——你是不是要寫 `{guess[0]}`？"
        else:
            en = f"unknown setting `{key}` — the settings here are {', '.join(known)}"
            zh = f"不認得的設定 `{key}`——這裡可用的設定是 {', '.join(known)}"
        return BadSceneFile(path, en, zh, rel=rel)
    en, zh = HELP.get(key, ("a different value", "別的值"))
    got = _short(first.get("input"))
    space = " " if zh[:1].isascii() else ""
    return BadSceneFile(
        path, f"`{key}` must be {en}, not {got}", f"`{key}` 必須是{space}{zh}，不是 {got}", rel=rel
    )


def _validate(
    schema: type[_Settings], raw: Mapping[str, Any], path: object, rel: str | None
) -> Any:
    for key in raw:
        if not isinstance(key, str):
            raise BadSceneFile(
                path,
                f"unknown setting `{key}` — a setting's name is a word like model or temperature",
                f"不認得的設定 `{key}`——設定名稱是像 model、temperature 這樣的詞",
                rel=rel,
            )
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
def allowed_models(config: Config | None = None) -> tuple[str, ...]:
    """Models a soul sent through Discord may name: `CIRCUS_ALLOWED_MODELS` (comma-separated
    litellm names or `provider/*` patterns), else the models the operator configured."""
    config = config or default_config()
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
    """Exact names, or `provider/*` for every model of one provider (`*` alone: any model)."""
    model = model.strip()
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


def check_untrusted_soul(
    new: SoulSettings,
    current: SoulSettings | None,
    config: Config | None = None,
) -> None:
    """Refuse what a soul arriving through Discord may not set (raises Refused).

    A value equal to the one already in the soul.md on disk passes: the operator wrote it, and
    a director editing the character's text must be able to send the rest back unchanged.
    """

    def unchanged(key: str) -> bool:
        return current is not None and getattr(current, key) == getattr(new, key)

    if new.api_base is not None and not unchanged("api_base"):
        raise Refused("api_base", new.api_base)
    allowed = allowed_models(config)
    for key in ("model", "fallback_model"):
        value = getattr(new, key)
        if value is not None and not unchanged(key) and not model_allowed(value, allowed):
            raise Refused(key, value, allowed)
