"""REST plumbing: every /api request is recorded, authenticated, rule-checked, validated
against the OpenAPI spec, then handled by the route registered for its spec template.

Invariant: each request ends as a JSON response (or 204) and a ``RecordedRequest``; any
``DiscordHTTPError`` becomes Discord's JSON error body and is logged in ``errors``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .models import DiscordHTTPError, RecordedRequest
from .rest_interactions import note_interaction_error

Handler = Callable[["Ctx"], Awaitable[Any]]
Route = Callable[[str, str], Callable[[Handler], Handler]]


class HttpMixin:
    """The aiohttp handlers behind /api/* and /attachments/*."""

    def requests_to(self, method: str, template_or_path: str) -> list[RecordedRequest]:
        return [
            r
            for r in self.requests
            if r.method == method.upper() and template_or_path in (r.template, r.path)
        ]

    async def _attachment_handler(self, request: web.Request) -> web.StreamResponse:
        data = self.attachments_data.get(int(request.match_info["attachment_id"]))
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data)

    async def _read_body(
        self, request: web.Request
    ) -> tuple[Any, bool, str | None, list[dict[str, Any]]]:
        ctype = request.content_type if request.body_exists else None
        files: list[dict[str, Any]] = []
        if not request.body_exists:
            return None, False, None, files
        if ctype == "multipart/form-data":
            reader = await request.multipart()
            body: Any = None
            has = False
            async for part in reader:
                if part.name == "payload_json":
                    body = json.loads(await part.text())
                    has = True
                else:
                    data = await part.read(decode=False)
                    files.append(
                        {
                            "field": part.name,
                            "filename": part.filename,
                            "data": bytes(data),
                            "content_type": part.headers.get("Content-Type"),
                            "size": len(data),
                        }
                    )
            return body, has, ctype, files
        raw = await request.read()
        if not raw:
            return None, False, ctype, files
        try:
            return json.loads(raw), True, ctype, files
        except ValueError:
            raise DiscordHTTPError(400, 50109, "The request body contains invalid JSON.") from None

    async def _api_handler(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        method = request.method.upper()
        query = {k: v for k, v in request.query.items()}
        record = RecordedRequest(method, path, query, None)
        self.requests.append(record)
        headers: dict[str, str] = {}
        try:
            body, has_body, ctype, files = await self._read_body(request)
            record.json = body
            record.files = [{k: v for k, v in f.items() if k != "data"} for f in files]
            if self.spec is not None:
                op, params, err = self.spec.operation(method, path)
                if err:
                    self.spec_violations.append(err)
                    raise DiscordHTTPError(404, 0, "404: Not Found", extra={"_fake": err})
                template = op.template
            else:
                template, params = match_own(self._routes, method, path)
                op = None
            record.template = template
            if (
                "{webhook_token}" not in template
                and "{interaction_token}" not in template
                and template != "/gateway"
            ):
                if request.headers.get("Authorization") != f"Bot {self.token}":
                    raise DiscordHTTPError(401, 0, "401: Unauthorized")
            ctx = Ctx(
                method, path, template, params, query, body if has_body else None, files, request
            )
            await self._check_rules(ctx)
            if op is not None:
                problems = self.spec.validate(op, params, query, ctype, body, has_body)
                if problems:
                    self.spec_violations.extend(problems)
                    errors = {
                        "_spec": {
                            "_errors": [
                                {"code": "OPENAPI_VALIDATION", "message": p} for p in problems
                            ]
                        }
                    }
                    raise DiscordHTTPError(400, 50035, "Invalid Form Body", errors=errors)
            handler = self._routes.get((method, template))
            if handler is None:
                self.unhandled.append(f"{method} {template}")
                raise DiscordHTTPError(
                    404,
                    0,
                    "404: Not Found",
                    extra={"_fake": f"fakediscord does not implement {method} {template}"},
                )
            result = await handler(ctx)
            status = 200
            if isinstance(result, tuple):
                status, result, headers = (
                    result[0],
                    result[1],
                    (result[2] if len(result) > 2 else {}),
                )
            headers = {**headers, **ctx.response_headers}
        except DiscordHTTPError as exc:
            status, result, headers = exc.status, exc.body(), exc.headers
            self.errors.append((method, path, status, result))
            await note_interaction_error(self, record.template, path, result)
        record.status = status
        record.response = result
        if status == 204 or result is None:
            record.status = 204
            return web.Response(status=204, headers=headers)
        # Discord answers exactly "application/json" (no charset); discord.py compares verbatim.
        return web.Response(
            body=json.dumps(result).encode(),
            status=status,
            headers={**headers, "Content-Type": "application/json"},
        )


class Ctx:
    def __init__(self, method, path, template, params, query, body, files, request) -> None:
        self.method = method
        self.path = path
        self.template = template
        self.params = params
        self.query = query
        self.body = body
        self.files = files
        self.request = request
        self.response_headers: dict[str, str] = {}


def match_own(
    routes: dict[tuple[str, str], Any], method: str, path: str
) -> tuple[str, dict[str, str]]:
    """Route matching without the spec (validate_spec=False)."""
    best = None
    for _method, template in routes:
        parts = []
        for seg in template.strip("/").split("/"):
            mm = re.fullmatch(r"\{(\w+)\}", seg)
            parts.append(f"(?P<{mm.group(1)}>[^/]+)" if mm else re.escape(seg))
        match = re.match("^/" + "/".join(parts) + "/?$", path)
        if match:
            literal = sum(1 for seg in template.split("/") if seg and not seg.startswith("{"))
            if best is None or literal > best[0]:
                best = (literal, template, match.groupdict())
    if best is None:
        raise DiscordHTTPError(404, 0, "404: Not Found")
    return best[1], best[2]
