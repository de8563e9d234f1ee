"""Discord's limits on message components, modals and message commands, as Discord enforces them.

Invariant: every message the bot sends or edits (channel messages, webhook executes and edits,
interaction callbacks and followups), every modal it shows and every command it registers is
checked here before spec validation; a bot over a limit gets Discord's 400 / 50035 with the
path of the offending field, never a silent success.
"""

from __future__ import annotations

from typing import Any

from .models import form_error

FLAG_COMPONENTS_V2 = 1 << 15
MAX_ROWS = 5  # action rows in a (classic) message or a modal
MAX_BUTTONS = 5  # buttons in one action row
MAX_OPTIONS = 25  # options of a string select, and max_values of any select
CUSTOM_ID = 100
BUTTON_LABEL = 80
MODAL_TITLE = 45
INPUT_LABEL = 45
SELECT_TYPES = {3, 5, 6, 7, 8}
BUTTON = 2
TEXT_INPUT = 4
ROW = 1
LINK, PREMIUM = 5, 6  # button styles that carry no custom_id


def _too_long(path: list[Any], limit: int) -> Exception:
    return form_error(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")


def _bounded(value: Any, path: list[Any], limit: int) -> None:
    if isinstance(value, str) and len(value) > limit:
        raise _too_long(path, limit)


def check_message_components(body: dict[str, Any], prefix: list[Any]) -> None:
    """A message's ``components`` (classic layout: action rows only, unless the message sets
    IS_COMPONENTS_V2, whose layout components the fake does not check)."""
    components = body.get("components")
    if not isinstance(components, list) or not components:
        return
    if int(body.get("flags") or 0) & FLAG_COMPONENTS_V2:
        return
    path = [*prefix, "components"]
    if len(components) > MAX_ROWS:
        raise _too_long(path, MAX_ROWS)
    seen: set[str] = set()
    for i, row in enumerate(components):
        _check_row(row, [*path, i], seen)


def _check_row(row: Any, path: list[Any], seen: set[str]) -> None:
    if not isinstance(row, dict) or row.get("type") != ROW:
        raise form_error([*path, "type"], "UNION_TYPE_CHOICES", "Value must be an action row.")
    kids = row.get("components") or []
    if not kids:
        raise form_error([*path, "components"], "BASE_TYPE_MIN_LENGTH", "Must be 1 or more.")
    kinds = {k.get("type") for k in kids if isinstance(k, dict)}
    if kinds & SELECT_TYPES and len(kids) > 1:
        raise form_error(
            [*path, "components"],
            "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
            "The specified component exceeds the maximum width",
        )
    if len(kids) > MAX_BUTTONS:
        raise _too_long([*path, "components"], MAX_BUTTONS)
    for j, kid in enumerate(kids):
        _check_component(kid, [*path, "components", j], seen)


def _check_component(c: dict[str, Any], path: list[Any], seen: set[str]) -> None:
    ctype = c.get("type")
    custom_id = c.get("custom_id")
    if ctype == BUTTON:
        _bounded(c.get("label"), [*path, "label"], BUTTON_LABEL)
        if c.get("style") in (LINK, PREMIUM):
            return
    elif ctype in SELECT_TYPES:
        _check_select(c, path)
    elif ctype != TEXT_INPUT:
        return
    if not isinstance(custom_id, str) or not custom_id:
        raise form_error([*path, "custom_id"], "BASE_TYPE_REQUIRED", "This field is required")
    _bounded(custom_id, [*path, "custom_id"], CUSTOM_ID)
    if custom_id in seen:
        raise form_error(
            [*path, "custom_id"],
            "COMPONENT_CUSTOM_ID_DUPLICATED",
            "Component custom id cannot be duplicated",
        )
    seen.add(custom_id)


def _check_select(c: dict[str, Any], path: list[Any]) -> None:
    _bounded(c.get("placeholder"), [*path, "placeholder"], 150)
    options = c.get("options")
    if c.get("type") == 3:
        if not isinstance(options, list) or not options:
            raise form_error([*path, "options"], "BASE_TYPE_MIN_LENGTH", "Must be 1 or more.")
        if len(options) > MAX_OPTIONS:
            raise _too_long([*path, "options"], MAX_OPTIONS)
        for k, option in enumerate(options):
            for key in ("label", "value", "description"):
                _bounded(option.get(key), [*path, "options", k, key], 100)
    top = c.get("max_values")
    if isinstance(top, int) and top > MAX_OPTIONS:
        raise form_error([*path, "max_values"], "NUMBER_TYPE_MAX", "Must be 25 or less.")


def check_modal(data: dict[str, Any], prefix: list[Any]) -> None:
    """A modal (interaction callback type 9): title, custom id, at most five rows or labels."""
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise form_error([*prefix, "title"], "BASE_TYPE_REQUIRED", "This field is required")
    _bounded(title, [*prefix, "title"], MODAL_TITLE)
    custom_id = data.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        raise form_error([*prefix, "custom_id"], "BASE_TYPE_REQUIRED", "This field is required")
    _bounded(custom_id, [*prefix, "custom_id"], CUSTOM_ID)
    rows = data.get("components") or []
    if not 1 <= len(rows) <= MAX_ROWS:
        raise _too_long([*prefix, "components"], MAX_ROWS)
    seen: set[str] = set()
    for i, row in enumerate(rows):
        path = [*prefix, "components", i]
        if row.get("type") == 18:  # a label wrapping one component
            _bounded(row.get("label"), [*path, "label"], INPUT_LABEL)
            _check_component(row.get("component") or {}, [*path, "component"], seen)
            continue
        for j, kid in enumerate(row.get("components") or []):
            _bounded(kid.get("label"), [*path, "components", j, "label"], INPUT_LABEL)
            _check_component(kid, [*path, "components", j], seen)


def check_commands(body: Any) -> None:
    """Commands the bot registers: a message or user command (type 3 / 2) has no description
    and no options, like Discord requires."""
    commands = body if isinstance(body, list) else [body]
    for i, cmd in enumerate(commands):
        if not isinstance(cmd, dict) or cmd.get("type", 1) not in (2, 3):
            continue
        path = [i] if isinstance(body, list) else []
        if cmd.get("description"):
            raise form_error(
                [*path, "description"],
                "APPLICATION_COMMAND_INVALID_DESCRIPTION",
                "Description must be empty for this command type",
            )
        if cmd.get("options"):
            raise form_error(
                [*path, "options"],
                "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                "Options are not allowed for this command type",
            )


MESSAGE_TEMPLATES = {
    ("POST", "/channels/{channel_id}/messages"),
    ("PATCH", "/channels/{channel_id}/messages/{message_id}"),
    ("POST", "/webhooks/{webhook_id}/{webhook_token}"),
    ("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}"),
    ("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/@original"),
}
COMMAND_TEMPLATES = {
    "/applications/{application_id}/commands",
    "/applications/{application_id}/guilds/{guild_id}/commands",
    "/applications/{application_id}/commands/{command_id}",
    "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
}
CALLBACK = "/interactions/{interaction_id}/{interaction_token}/callback"


def check_request(method: str, template: str, body: Any) -> None:
    """Route a REST request's body to the checks that apply to it."""
    if method in ("PUT", "POST", "PATCH") and template in COMMAND_TEMPLATES:
        check_commands(body)
        return
    if not isinstance(body, dict):
        return
    if (method, template) in MESSAGE_TEMPLATES:
        check_message_components(body, [])
    elif template == CALLBACK and isinstance(body.get("data"), dict):
        if body.get("type") == 9:
            check_modal(body["data"], ["data"])
        elif body.get("type") in (4, 7):
            check_message_components(body["data"], ["data"])
