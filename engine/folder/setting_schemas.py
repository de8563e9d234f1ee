"""The pydantic schemas of a scene's settings (soul.md, context.md): the one authority on what
each setting accepts, and the wording of every refusal.

Invariant: loaded only when a file's settings are not plainly valid (engine/folder/settings.py
asks engine/folder/setting_rules.py's quick check first) or a setting is edited; the rules both
share are setting_rules' functions, so the two cannot drift apart unseen (a test compares them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)
from pydantic_core import PydanticCustomError

from engine.door.structured import ReplyFormat
from engine.folder.setting_rules import (
    LANGUAGE,
    MAX_ALIASES,
    MAX_LIST,
    MAX_MODEL_CHARS,
    MAX_NAME_CHARS,
    MAX_SECRET_CHARS,
    MAX_SECRETS,
    MAX_URL_CHARS,
    VOICE_NAME,
    model_name_refused,
    no_controls,
    not_everyone,
    number_as_name,
    one_or_many,
    url_ok,
)


def _url_check(schemes: tuple[str, ...]) -> Any:
    def check(text: str) -> str:
        if not url_ok(text, schemes):
            raise ValueError("scheme")
        return text

    return AfterValidator(check)


def _plain_model_name(name: str) -> str:
    if model_name_refused(name):
        raise PydanticCustomError("model_shape", "not a plain model name")
    return name


ModelName = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=MAX_MODEL_CHARS, pattern=r"^\S+$"
    ),
    AfterValidator(_plain_model_name),
]
Url = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_URL_CHARS)
]
Name = Annotated[
    str,
    BeforeValidator(number_as_name),
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_CHARS),
    AfterValidator(no_controls),
]
Names = Annotated[list[Name], Field(max_length=MAX_LIST)]


VoiceName = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True,
        min_length=1,
        max_length=MAX_NAME_CHARS,
        pattern=rf"^{VOICE_NAME}$",
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
            list[Annotated[Name, AfterValidator(not_everyone)]],
            Field(max_length=MAX_ALIASES),
            BeforeValidator(one_or_many),
        ]
        | None
    ) = None
    avatar_url: Annotated[Url, _url_check(("https",))] | None = None
    api_base: Annotated[Url, _url_check(("http", "https"))] | None = None
    reply_format: ReplyFormat | None = None  # engine.door.structured: auto, json or tags
    voice: VoiceValue | None = None  # the table read (engine.folder.voices)
    # what this character hides (engine/takes/secrets.py: the ledger of when each one surfaced)
    secrets: (
        Annotated[
            list[
                Annotated[
                    str,
                    BeforeValidator(number_as_name),
                    StringConstraints(
                        strip_whitespace=True, min_length=1, max_length=MAX_SECRET_CHARS
                    ),
                    AfterValidator(no_controls),
                ]
            ],
            Field(max_length=MAX_SECRETS),
            BeforeValidator(one_or_many),
        ]
        | None
    ) = None


class ContextSettings(_Settings):
    """context.md front matter: the scene's settings (never shown to any model)."""

    language: Annotated[str, StringConstraints(pattern=rf"^{LANGUAGE}$")] | None = None
    neglect_turns: Annotated[int, Field(ge=0, le=1000)] | None = None
    cast: Names | None = None
    on_stage: Names | None = None  # who is on stage when the scene opens (branch stage)
    opening: bool | None = None
    model: ModelName | None = None
    stage_manager_model: ModelName | None = None
    api_base: Annotated[Url, _url_check(("http", "https"))] | None = None
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
