"""A loopback fake Discord for driving the real discord.py client in tests.

    async with FakeDiscord() as fake:
        async with fake.connected(bot):
            handle = await fake.slash("circus start", {"topic": "cats"}, user="alice")
            assert (await handle)["type"] == 5

See README.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .command_permissions import CommandUnavailable
from .interactions import ComponentDisabled
from .models import DiscordHTTPError, InteractionHandle, P, RecordedRequest, UserRef
from .server import FakeDiscord

__all__ = [
    "FakeDiscord",
    "CommandUnavailable",
    "ComponentDisabled",
    "InteractionHandle",
    "UserRef",
    "RecordedRequest",
    "DiscordHTTPError",
    "P",
    "point_discord_py_at",
    "point_discord_py_from_env",
]


def point_discord_py_at(
    url: str | None = None, *, api_base: str | None = None, gateway_url: str | None = None
) -> Callable[[], None]:
    """Redirect discord.py (REST, webhooks, interaction callbacks and gateway) to another server.

    ``url`` is the fake's root (``http://127.0.0.1:PORT``); or give ``api_base``
    (``http://host:port/api/v10``) and ``gateway_url`` (``ws://host:port/``) explicitly.
    Returns a function that restores the previous values.  These are process-wide class
    attributes of discord.py, so set them before ``client.start()``.
    """
    import yarl
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    if url is not None:
        url = url.rstrip("/")
        api_base = api_base or f"{url}/api/v10"
        gateway_url = gateway_url or (
            "ws" + url[len("http") :] + "/" if url.startswith("http") else url + "/"
        )
    old_base, old_gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    if api_base:
        # Used by HTTPClient (bot REST) and by discord.Webhook's adapter (webhook executes,
        # interaction callbacks and followups): both build URLs from Route.BASE.
        Route.BASE = api_base.rstrip("/")
    if gateway_url:
        # discord.Client.connect() does not call GET /gateway/bot; it connects to
        # DEFAULT_GATEWAY and, after READY, to READY.resume_gateway_url for RESUMEs.
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)

    def restore() -> None:
        Route.BASE = old_base
        DiscordWebSocket.DEFAULT_GATEWAY = old_gateway

    return restore


def point_discord_py_from_env() -> Callable[[], None] | None:
    """Honour DISCORD_API_BASE / DISCORD_GATEWAY_URL if set (what bot code should do)."""
    api_base = os.environ.get("DISCORD_API_BASE")
    gateway_url = os.environ.get("DISCORD_GATEWAY_URL")
    if not api_base and not gateway_url:
        return None
    return point_discord_py_at(api_base=api_base, gateway_url=gateway_url)
