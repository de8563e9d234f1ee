"""Discord's business rules, checked before schema validation.

Invariant: a bot tripping a rule (content over 2000 characters, more than 25 autocomplete
choices, a forbidden webhook name, a rate limit, a component or modal over Discord's limits) gets Discord's real JSON error, and the request
is not counted as a spec violation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .components import check_request
from .models import form_error

if TYPE_CHECKING:
    from .routing import Ctx


class RulesMixin:
    """Request-level checks that run for every REST call before its handler."""

    async def _check_rules(self, ctx: Ctx) -> None:
        """Discord business rules checked before schema validation (so that a bot tripping them
        gets Discord's real error, and it is not counted as a spec violation)."""
        self._check_forced_429(ctx)
        check_request(ctx.method, ctx.template, ctx.body)  # components, modals, menus
        body = ctx.body if isinstance(ctx.body, dict) else {}
        content_holder = body
        prefix: list[Any] = []
        if ctx.template == "/interactions/{interaction_id}/{interaction_token}/callback":
            content_holder = body.get("data") if isinstance(body.get("data"), dict) else {}
            prefix = ["data"]
            if body.get("type") == 8:
                choices = content_holder.get("choices") or []
                if len(choices) > 25:
                    raise form_error(
                        ["data", "choices"],
                        "BASE_TYPE_MAX_LENGTH",
                        "Must be 25 or fewer in length.",
                    )
        content = content_holder.get("content")
        if isinstance(content, str) and len(content) > 2000:
            raise form_error(
                prefix + ["content"], "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length."
            )
        if ctx.method == "POST" and ctx.template == "/webhooks/{webhook_id}/{webhook_token}":
            if (
                int(ctx.params["webhook_id"]) != self.application_id
            ):  # channel webhooks, not followups
                ctx.response_headers.update(
                    self._check_webhook_rate_limit(int(ctx.params["webhook_id"]))
                )
            username = body.get("username")
            if username is not None:
                self._check_name(username, "username", 80)
        if ctx.method in ("POST", "PATCH") and ctx.template in (
            "/channels/{channel_id}/webhooks",
            "/webhooks/{webhook_id}",
            "/webhooks/{webhook_id}/{webhook_token}",
        ):
            if body.get("name") is not None:
                self._check_name(body["name"], "name", 80)

    @staticmethod
    def _check_name(value: str, field: str, max_len: int) -> None:
        stripped = value.strip()
        if not (1 <= len(stripped) <= max_len):
            raise form_error(
                [field], "BASE_TYPE_BAD_LENGTH", f"Must be between 1 and {max_len} in length."
            )
        low = stripped.lower()
        for word in ("clyde", "discord"):
            if word in low:
                raise form_error(
                    [field], "USERNAME_INVALID_CONTAINS", f'Username cannot contain "{word}"'
                )
        if low in ("everyone", "here"):
            raise form_error([field], "USERNAME_INVALID", "Username is invalid")
