"""FakeDiscord: a loopback Discord (REST + gateway) for driving the real discord.py client.

This module only holds the state and wires the pieces together: each mixin below owns one
concept (see README.md, "Layout"), and REST routes are registered by one function per area.
Invariant: all state lives on the ``FakeDiscord`` instance; mixins and routes share it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from aiohttp import web

from .command_permissions import CommandPermissionsMixin, Entry
from .gateway import GatewayConn, GatewayMixin, GatewaySession
from .guild import GuildMixin, GuildRecord
from .interactions import InteractionsMixin
from .messages import MessagesMixin
from .models import InteractionHandle, P, RecordedRequest, SnowflakeGen, UserRef
from .ratelimits import RateLimitMixin
from .rest_channels import ChannelsMixin, register_channel_routes
from .rest_commands import register_command_routes
from .rest_interactions import register_interaction_routes
from .rest_pins import register_pin_routes
from .rest_reactions import ReactionsMixin, register_reaction_routes
from .rest_users import register_guild_routes, register_user_routes
from .rest_webhooks import WebhooksMixin, register_webhook_routes
from .routing import Handler, HttpMixin
from .rules import RulesMixin
from .sharding import SessionStarts
from .spec import SpecValidator

log = logging.getLogger("fakediscord")

# Order matters: with validate_spec=False, equally specific templates match first-registered first.
ROUTE_REGISTRARS = (
    register_user_routes,
    register_command_routes,
    register_interaction_routes,
    register_webhook_routes,
    register_channel_routes,
    register_reaction_routes,
    register_pin_routes,
    register_guild_routes,
)


class FakeDiscord(
    GuildMixin,
    MessagesMixin,
    GatewayMixin,
    InteractionsMixin,
    CommandPermissionsMixin,
    ChannelsMixin,
    WebhooksMixin,
    ReactionsMixin,
    RateLimitMixin,
    RulesMixin,
    HttpMixin,
):
    """A fake Discord server.  See README.md for usage.

    Construction parameters are also attributes that tests may change at any time:
    ``interaction_deadline`` (seconds for the initial interaction callback),
    ``heartbeat_interval`` (ms, sent in HELLO), ``validate_spec``, and the sharding knobs
    ``recommended_shards``, ``guilds_per_shard``, ``session_starts`` (see sharding.py).
    """

    def __init__(
        self,
        *,
        token: str = "fake-bot-token",
        spec_path: str | None = None,
        validate_spec: bool = True,
        heartbeat_interval: int = 45_000,
        interaction_deadline: float = 3.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.token = token
        self.validate_spec = validate_spec
        self.spec = SpecValidator(spec_path) if validate_spec else None
        self.heartbeat_interval = heartbeat_interval
        self.interaction_deadline = interaction_deadline
        self.interaction_token_ttl = 15 * 60.0
        self.host = host
        self.port = port
        self.snowflake = SnowflakeGen()
        # sharding (tests may change these before the client connects): what GET /gateway/bot
        # recommends, how many guilds one connection may hold before IDENTIFY is closed 4011,
        # and the session start limit with its IDENTIFY buckets
        self.recommended_shards = 1
        self.guilds_per_shard = 2500
        self.session_starts = SessionStarts()

        # observability
        self.requests: list[RecordedRequest] = []
        self.spec_violations: list[str] = []
        self.unhandled: list[str] = []  # spec-valid routes the fake does not implement
        self.errors: list[tuple[str, str, int, dict[str, Any]]] = []  # (method, path, status, body)
        self.gateway_events: list[dict[str, Any]] = []  # every dispatch sent
        self.gateway_received: list[dict[str, Any]] = []  # every op received from clients
        self.interactions: dict[int, InteractionHandle] = {}

        # state
        self.users: dict[str, UserRef] = {}
        self._users_by_id: dict[int, UserRef] = {}
        self.bot_user = self._new_user("CircusBot", bot=True)
        self.application_id = self.bot_user.id  # modern apps: application id == bot user id
        self.application_flags = 0
        self.guild_id = self.snowflake()
        first = GuildRecord(self.guild_id, "Circus Test Guild", 0)
        self.guilds: dict[int, GuildRecord] = {self.guild_id: first}  # add_guild() adds more
        # guild id -> command id -> command (each guild's own commands; see guild_commands)
        self.guild_command_pools: dict[int, dict[int, dict[str, Any]]] = {self.guild_id: {}}
        self.roles: dict[int, dict[str, Any]] = first.roles  # the first guild's (as before)
        self.members: dict[int, dict[str, Any]] = first.members
        self.channels: dict[int, dict[str, Any]] = {}  # guild text channels
        self.threads: dict[int, dict[str, Any]] = {}
        self.thread_members: dict[int, set] = {}
        self.dm_channels: dict[int, dict[str, Any]] = {}  # user id -> DM channel
        self.messages: dict[int, list[dict[str, Any]]] = {}  # channel id -> messages
        self._message_meta: dict[int, dict[str, Any]] = {}
        # message id -> emoji key -> {"emoji": emoji object, "ids": user ids in order}
        self.reactors: dict[int, dict[str, dict[str, Any]]] = {}
        self.pins: dict[int, list[int]] = {}  # channel id -> pinned message ids, oldest first
        self.webhooks: dict[int, dict[str, Any]] = {}
        self.deleted_webhooks: dict[int, dict[str, Any]] = {}
        self.attachments_data: dict[int, bytes] = {}
        self.global_commands: dict[int, dict[str, Any]] = {}
        # command id (or the application id: app-level) -> Integrations entries
        self.command_permissions: dict[int, list[Entry]] = {}
        self.typing: list[tuple[int, float]] = []  # (channel id, loop time)

        # rate limiting of webhook executes
        self._forced_429: list[tuple[str, str, float]] = []  # (method, template, retry_after)
        self._webhook_bucket: tuple[int, float, bool] | None = (
            None  # (limit, per seconds, send headers)
        )
        self.gateway_connections: list[dict[str, str]] = []  # query of every websocket connect
        self._webhook_hits: dict[int, list[float]] = {}

        everyone = self._add_role(
            "@everyone", P.EVERYONE_DEFAULT, role_id=self.guild_id, position=0
        )
        del everyone
        self.bot_role_id = self._add_role(
            "CircusBot",
            P.BOT_DEFAULT,
            managed=True,
            position=2,
            tags={"bot_id": str(self.bot_user.id)},
        )
        self.moderator_role_id = self._add_role(
            "Ringmaster", P.MANAGE_THREADS | P.MANAGE_MESSAGES, position=1
        )
        first.bot_role_id, first.moderator_role_id = self.bot_role_id, self.moderator_role_id
        self._add_member(self.bot_user, [self.bot_role_id])
        owner = self.add_user("owner", roles=[self.moderator_role_id])
        self.owner_id = owner.id
        self.add_user("alice", manage_threads=True)
        self.add_user("bob")
        self.add_user("carol", dms_closed=True)
        self.channel_id = first.channel_id = self.add_text_channel("general")

        # server
        self._app: web.Application | None = None
        self._runner: web.AppRunner | None = None
        self._sessions: dict[str, GatewaySession] = {}
        self._conns: list[GatewayConn] = []
        self._identified = asyncio.Event()
        self._routes = self._build_routes()

    @property
    def guild_commands(self) -> dict[int, dict[str, Any]]:
        """Every guild's registered commands (id -> command; each carries its guild_id)."""
        return {k: v for pool in self.guild_command_pools.values() for k, v in pool.items()}

    # ================================================================ lifecycle
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_base(self) -> str:
        return f"{self.url}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://{self.host}:{self.port}/"

    def env(self) -> dict[str, str]:
        """Environment variables that point a bot process at this fake."""
        return {
            "DISCORD_API_BASE": self.api_base,
            "DISCORD_GATEWAY_URL": self.gateway_url,
            "DISCORD_TOKEN": self.token,
        }

    async def start(self) -> FakeDiscord:
        self._identified = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("GET", "/", self._ws_handler)
        app.router.add_route(
            "GET", "/attachments/{channel_id}/{attachment_id}/{filename}", self._attachment_handler
        )
        app.router.add_route("*", "/api/v{version:\\d+}/{tail:.*}", self._api_handler)
        app.router.add_route("*", "/api/{tail:.*}", self._api_handler)
        self._app = app
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = site._server.sockets  # type: ignore[union-attr]
        self.port = sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        for conn in list(self._conns):
            with contextlib.suppress(Exception):
                await conn.ws.close(code=1001)
        self._conns.clear()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    # ================================================================ routes
    def _build_routes(self) -> dict[tuple[str, str], Handler]:
        routes: dict[tuple[str, str], Handler] = {}

        def route(method: str, template: str):
            def deco(fn):
                routes[(method, template)] = fn
                return fn

            return deco

        for register in ROUTE_REGISTRARS:
            register(self, route)
        return routes
