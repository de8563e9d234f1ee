"""Rate limits: forced 429s on any route and a sliding window on channel-webhook executes.

Invariant: a 429 carries the headers discord.py needs to retry (Retry-After, X-RateLimit-*,
Via); interaction followups share the webhook execute route but are never rate limited here.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .models import DiscordHTTPError

if TYPE_CHECKING:
    from .routing import Ctx


class RateLimitMixin:
    """Fault injection (rate_limit_next, set_webhook_rate_limit) and the checks behind it."""

    def rate_limit_next_webhook_executes(self, count: int = 1, retry_after: float = 0.05) -> None:
        """The next ``count`` channel-webhook executes get a 429 with ``retry_after`` seconds."""
        self.rate_limit_next("POST", "/webhooks/{webhook_id}/{webhook_token}", count, retry_after)

    def rate_limit_next(
        self, method: str, template: str, count: int = 1, retry_after: float = 0.05
    ) -> None:
        """The next ``count`` requests matching ``method`` + spec path template get a 429."""
        self._forced_429.extend([(method.upper(), template, retry_after)] * count)

    def set_webhook_rate_limit(
        self, limit: int | None, per: float = 2.0, *, send_headers: bool = True
    ) -> None:
        """Per-webhook sliding window rate limit on executes (``None`` disables it).

        With ``send_headers`` successful executes carry X-RateLimit-* headers (as Discord does),
        so discord.py can wait *before* hitting the limit; without, the bot only learns from 429s."""
        self._webhook_bucket = None if limit is None else (limit, per, send_headers)
        self._webhook_hits.clear()

    def _check_forced_429(self, ctx: Ctx) -> None:
        for i, (method, template, retry_after) in enumerate(self._forced_429):
            if method == ctx.method and template == ctx.template:
                if (
                    template == "/webhooks/{webhook_id}/{webhook_token}"
                    and int(ctx.params["webhook_id"]) == self.application_id
                ):
                    continue  # interaction followups are not channel webhook executes
                del self._forced_429[i]
                self._raise_429(ctx.template, retry_after, 5)

    def _check_webhook_rate_limit(self, webhook_id: int) -> dict[str, str]:
        if self._webhook_bucket is None:
            return {}
        import time as _time

        now = asyncio.get_running_loop().time()
        limit, per, send_headers = self._webhook_bucket
        hits = [t for t in self._webhook_hits.get(webhook_id, []) if now - t < per]
        self._webhook_hits[webhook_id] = hits
        if len(hits) >= limit:
            self._raise_429(f"webhook-{webhook_id}", max(0.001, per - (now - hits[0])), limit)
        hits.append(now)
        if not send_headers:
            return {}
        reset_after = per - (now - hits[0])
        return {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(limit - len(hits)),
            "X-RateLimit-Reset": f"{_time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": f"webhook-{webhook_id}",
        }

    def _raise_429(self, bucket: str, retry_after: float, limit: int) -> None:
        import time as _time

        retry_after = round(retry_after, 3)
        headers = {
            "Retry-After": str(max(1, int(retry_after + 0.999))),
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{_time.time() + retry_after:.3f}",
            "X-RateLimit-Reset-After": f"{retry_after:.3f}",
            "X-RateLimit-Bucket": bucket,
            "X-RateLimit-Scope": "user",
            # discord.py treats a 429 without Via as a Cloudflare ban and does not retry.
            "Via": "1.1 google",
        }
        raise DiscordHTTPError(
            429,
            0,
            "You are being rate limited.",
            headers=headers,
            extra={"retry_after": retry_after, "global": False},
        )
