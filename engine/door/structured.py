"""Structured output: whether a model is asked for its reply as a JSON object, and with what schema.

`reply_format: auto` asks for JSON where the provider can hold the model to a schema (litellm's
supports_response_schema, Ollama's `format`) and for the four tags everywhere else; `json` and
`tags` force one. In-process models (scripted/, circus-local/) keep the tags: the embedded
model's grammar is written for them. Only the prompt's format paragraph differs between the two,
and the schema is sent only where the provider takes one. Pure functions.
"""

from __future__ import annotations

from typing import Any, Literal

ReplyFormat = Literal["auto", "json", "tags"]  # the `reply_format` setting
Format = Literal["json", "tags"]
IN_PROCESS = ("scripted/", "circus-local/")

_ACTOR_FIELDS = ("thought", "action", "dialogue", "cue")
_STAGE_MANAGER_FIELDS = ("next", "reason")


def chosen_format(model: str, setting: str | None, schema_support: bool) -> Format:
    """What `model` is asked to reply in, for the operator's `reply_format` setting."""
    if model.startswith(IN_PROCESS):
        return "tags"
    if setting == "json":
        return "json"
    if setting == "tags":
        return "tags"
    return "json" if schema_support else "tags"


def _schema(fields: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f: {"type": "string"} for f in fields},
        "required": list(fields),
        "additionalProperties": False,
    }


def request_params(kind: str, fmt: Format, schema_support: bool) -> dict[str, Any]:
    """The litellm keywords that hold a reply to the JSON object (none for tags, for free text,
    or for a provider without schema support: there the prompt alone asks for JSON)."""
    if fmt != "json" or not schema_support or kind not in ("actor", "stage_manager"):
        return {}
    fields = _ACTOR_FIELDS if kind == "actor" else _STAGE_MANAGER_FIELDS
    name = "actor_turn" if kind == "actor" else "next_speaker"
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": _schema(fields), "strict": True},
        }
    }
