"""FakeDiscord: a loopback Discord (REST + gateway) for driving the real discord.py client."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import re
import secrets
import zlib
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import aiohttp
from aiohttp import web

from .models import (
    DiscordHTTPError,
    InteractionHandle,
    P,
    RecordedRequest,
    SnowflakeGen,
    UserRef,
    forbidden,
    form_error,
    iso_from_snowflake,
    iso_now,
    not_found,
)
from .spec import SpecValidator

log = logging.getLogger("fakediscord")

UserLike = UserRef | int | str

INTENT_GUILD_MEMBERS = 1 << 1
INTENT_MESSAGE_CONTENT = 1 << 15

MSG_FLAG_EPHEMERAL = 1 << 6
MSG_FLAG_LOADING = 1 << 7

THREAD_TYPES = (10, 11, 12)
AUTO_ARCHIVE_DURATIONS = (60, 1440, 4320, 10080)


def _sf(value: Any) -> int:
    return int(value)


class _Conn:
    """One gateway websocket connection."""

    def __init__(self, ws: web.WebSocketResponse, compress: str | None) -> None:
        self.ws = ws
        self.lock = asyncio.Lock()
        self.zlib = zlib.compressobj() if compress == "zlib-stream" else None
        self.session: _Session | None = None

    async def send(self, payload: dict[str, Any]) -> None:
        text = json.dumps(payload, separators=(",", ":"))
        async with self.lock:
            if self.ws.closed:
                return
            if self.zlib is not None:
                data = self.zlib.compress(text.encode()) + self.zlib.flush(zlib.Z_SYNC_FLUSH)
                await self.ws.send_bytes(data)
            else:
                # zstd-stream (or no compression): discord.py accepts plain text frames too.
                await self.ws.send_str(text)


class _Session:
    def __init__(self, session_id: str, intents: int) -> None:
        self.session_id = session_id
        self.intents = intents
        self.seq = 0
        self.buffer: list[dict[str, Any]] = []
        self.conn: _Conn | None = None


class FakeDiscord:
    """A fake Discord server.  See README.md for usage.

    Construction parameters are also attributes that tests may change at any time:
    ``interaction_deadline`` (seconds for the initial interaction callback),
    ``heartbeat_interval`` (ms, sent in HELLO), ``validate_spec``.
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
        self.guild_name = "Circus Test Guild"
        self.owner_id: int = 0
        self.roles: dict[int, dict[str, Any]] = {}
        self.members: dict[int, dict[str, Any]] = {}
        self.channels: dict[int, dict[str, Any]] = {}  # guild text channels
        self.threads: dict[int, dict[str, Any]] = {}
        self.thread_members: dict[int, set] = {}
        self.dm_channels: dict[int, dict[str, Any]] = {}  # user id -> DM channel
        self.messages: dict[int, list[dict[str, Any]]] = {}  # channel id -> messages
        self._message_meta: dict[int, dict[str, Any]] = {}
        self.webhooks: dict[int, dict[str, Any]] = {}
        self.deleted_webhooks: dict[int, dict[str, Any]] = {}
        self.attachments_data: dict[int, bytes] = {}
        self.global_commands: dict[int, dict[str, Any]] = {}
        self.guild_commands: dict[int, dict[str, Any]] = {}
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
        self._add_member(self.bot_user, [self.bot_role_id])
        owner = self.add_user("owner", roles=[self.moderator_role_id])
        self.owner_id = owner.id
        self.add_user("alice", manage_threads=True)
        self.add_user("bob")
        self.add_user("carol", dms_closed=True)
        self.channel_id = self.add_text_channel("general")

        # server
        self._app: web.Application | None = None
        self._runner: web.AppRunner | None = None
        self._sessions: dict[str, _Session] = {}
        self._conns: list[_Conn] = []
        self._identified = asyncio.Event()
        self._routes = self._build_routes()

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

    # ================================================================ state setup (test API)
    def _new_user(
        self,
        username: str,
        *,
        bot: bool = False,
        dms_closed: bool = False,
        global_name: str | None = None,
    ) -> UserRef:
        user = UserRef(
            self.snowflake(), username, bot=bot, global_name=global_name, dms_closed=dms_closed
        )
        self.users[username] = user
        self._users_by_id[user.id] = user
        return user

    def _add_role(
        self,
        name: str,
        permissions: int,
        *,
        role_id: int | None = None,
        position: int = 0,
        managed: bool = False,
        tags: dict[str, Any] | None = None,
    ) -> int:
        rid = role_id or self.snowflake()
        role = {
            "id": str(rid),
            "name": name,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "position": position,
            "permissions": str(permissions),
            "managed": managed,
            "mentionable": False,
            "flags": 0,
        }
        if tags is not None:
            role["tags"] = tags
        self.roles[rid] = role
        return rid

    def _add_member(self, user: UserRef, roles: Iterable[int]) -> None:
        self.members[user.id] = {
            "user": user.to_dict(),
            "nick": None,
            "avatar": None,
            "banner": None,
            "roles": [str(r) for r in roles],
            "joined_at": iso_now(),
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "pending": False,
            "flags": 0,
            "communication_disabled_until": None,
        }

    def add_user(
        self,
        username: str,
        *,
        manage_threads: bool = False,
        dms_closed: bool = False,
        roles: Iterable[int] = (),
        member: bool = True,
        bot: bool = False,
        global_name: str | None = None,
    ) -> UserRef:
        """Add a user (a guild member unless ``member=False``)."""
        user = self._new_user(username, bot=bot, dms_closed=dms_closed, global_name=global_name)
        role_ids = list(roles)
        if manage_threads and self.moderator_role_id not in role_ids:
            role_ids.append(self.moderator_role_id)
        if member:
            self._add_member(user, role_ids)
        return user

    def add_role(self, name: str, permissions: int) -> int:
        return self._add_role(name, permissions, position=len(self.roles))

    def add_text_channel(self, name: str, *, topic: str | None = None) -> int:
        cid = self.snowflake()
        self.channels[cid] = {
            "id": str(cid),
            "type": 0,
            "guild_id": str(self.guild_id),
            "name": name,
            "position": len(self.channels),
            "permission_overwrites": [],
            "nsfw": False,
            "topic": topic,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "parent_id": None,
            "default_auto_archive_duration": 1440,
            "flags": 0,
            "last_pin_timestamp": None,
        }
        self.messages[cid] = []
        return cid

    def set_bot_permissions(self, permissions: int) -> None:
        self.roles[self.bot_role_id]["permissions"] = str(permissions)

    def set_dms_closed(self, user: UserLike, closed: bool = True) -> None:
        self._user(user).dms_closed = closed

    def user(self, user: UserLike) -> UserRef:
        return self._user(user)

    def _user(self, user: UserLike) -> UserRef:
        if isinstance(user, UserRef):
            return user
        if isinstance(user, str) and not user.isdigit():
            return self.users[user]
        return self._users_by_id[int(user)]

    def permissions_of(self, user: UserLike) -> int:
        uid = self._user(user).id
        if uid == self.owner_id:
            return P.ALL
        member = self.members.get(uid)
        if member is None:
            return 0
        perms = int(self.roles[self.guild_id]["permissions"])
        for rid in member["roles"]:
            role = self.roles.get(int(rid))
            if role:
                perms |= int(role["permissions"])
        if perms & P.ADMINISTRATOR:
            return P.ALL
        return perms

    # ================================================================ observability (test API)
    def _channel_any(self, channel_id: int) -> dict[str, Any] | None:
        channel_id = int(channel_id)
        if channel_id in self.channels:
            return self.channels[channel_id]
        if channel_id in self.threads:
            return self.threads[channel_id]
        for dm in self.dm_channels.values():
            if int(dm["id"]) == channel_id:
                return dm
        return None

    def _present(self, msg: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(msg)
        meta = self._message_meta.get(int(msg["id"]), {})
        author = msg["author"]
        username = author.get("global_name") or author["username"]
        if not msg.get("webhook_id"):
            member = self.members.get(int(author["id"]))
            if member and member.get("nick") and msg.get("guild_id"):
                username = member["nick"]
        out["username"] = username
        out["avatar_url"] = meta.get("avatar_url")
        out["ephemeral"] = bool(msg.get("flags", 0) & MSG_FLAG_EPHEMERAL)
        out.setdefault("webhook_id", None)
        return out

    def messages_in(
        self, channel_id: int, *, include_ephemeral: bool = False
    ) -> list[dict[str, Any]]:
        """Messages in a channel/thread/DM, oldest first.  Each is a Discord message object plus
        ``username`` (the name as displayed), ``avatar_url`` (webhook override) and ``ephemeral``."""
        out = []
        for m in self.messages.get(int(channel_id), []):
            if not include_ephemeral and m.get("flags", 0) & MSG_FLAG_EPHEMERAL:
                continue
            out.append(self._present(m))
        return out

    def dms_to(self, user: UserLike) -> list[dict[str, Any]]:
        """Messages the bot delivered in its DM channel with ``user``."""
        uid = self._user(user).id
        dm = self.dm_channels.get(uid)
        if dm is None:
            return []
        return [
            m for m in self.messages_in(int(dm["id"])) if int(m["author"]["id"]) == self.bot_user.id
        ]

    def thread_by_name(self, name: str) -> dict[str, Any]:
        for t in self.threads.values():
            if t["name"] == name:
                return t
        raise KeyError(name)

    def requests_to(self, method: str, template_or_path: str) -> list[RecordedRequest]:
        return [
            r
            for r in self.requests
            if r.method == method.upper() and template_or_path in (r.template, r.path)
        ]

    def webhooks_in(self, channel_id: int) -> list[dict[str, Any]]:
        return [w for w in self.webhooks.values() if int(w["channel_id"]) == int(channel_id)]

    # ================================================================ fault injection (test API)
    async def delete_webhook(self, webhook_id: int) -> None:
        """Delete a webhook behind the bot's back (requests to it then 404 with code 10015)."""
        hook = self.webhooks.pop(int(webhook_id))
        self.deleted_webhooks[int(webhook_id)] = hook
        await self.dispatch(
            "WEBHOOKS_UPDATE", {"guild_id": str(self.guild_id), "channel_id": hook["channel_id"]}
        )

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

    async def archive_thread(self, thread_id: int, *, locked: bool = False) -> None:
        thread = self.threads[int(thread_id)]
        thread["thread_metadata"]["archived"] = True
        thread["thread_metadata"]["locked"] = locked
        thread["thread_metadata"]["archive_timestamp"] = iso_now()
        await self.dispatch("THREAD_UPDATE", thread)

    async def force_reconnect(self) -> None:
        """Send opcode 7 RECONNECT to every connected client (they should RESUME)."""
        for conn in list(self._conns):
            await conn.send({"op": 7, "d": None})

    async def drop_connections(self, code: int = 4000) -> None:
        """Close every gateway socket abruptly with ``code``."""
        for conn in list(self._conns):
            await conn.ws.close(code=code)

    # ================================================================ gateway
    async def wait_for_identify(self, timeout: float = 5.0) -> None:
        await asyncio.wait_for(self._identified.wait(), timeout)

    @contextlib.asynccontextmanager
    async def connected(self, client: Any, *, timeout: float = 5.0, patch_discord: bool = True):
        """Run ``client.start(token)`` against this fake until the guild is in its cache.

        Restores discord.py's URLs and closes the client on exit."""
        from . import point_discord_py_at

        restore = point_discord_py_at(self.url) if patch_discord else (lambda: None)
        task = asyncio.create_task(client.start(self.token), name="fakediscord-client")
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while client.get_guild(self.guild_id) is None:
                if task.done():
                    task.result()  # raise the login/connect error
                    raise RuntimeError("client stopped before connecting")
                if loop.time() > deadline:
                    raise TimeoutError("client did not receive GUILD_CREATE")
                await asyncio.sleep(0.002)
            yield client
        finally:
            with contextlib.suppress(Exception):
                await client.close()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 2)
            restore()

    async def _ws_handler(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=0, autoping=True)
        await ws.prepare(request)
        conn = _Conn(ws, request.query.get("compress"))
        self.gateway_connections.append(dict(request.query))
        self._conns.append(conn)
        try:
            await conn.send(
                {
                    "op": 10,
                    "s": None,
                    "t": None,
                    "d": {"heartbeat_interval": self.heartbeat_interval, "_trace": ["fakediscord"]},
                }
            )
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                payload = json.loads(msg.data)
                self.gateway_received.append(payload)
                await self._on_gateway_op(conn, payload)
        finally:
            if conn in self._conns:
                self._conns.remove(conn)
            if conn.session is not None and conn.session.conn is conn:
                conn.session.conn = None
        return ws

    async def _on_gateway_op(self, conn: _Conn, payload: dict[str, Any]) -> None:
        op, d = payload.get("op"), payload.get("d")
        if op == 1:  # heartbeat
            await conn.send({"op": 11, "s": None, "t": None, "d": None})
        elif op == 2:  # identify
            if d.get("token") != self.token:
                await conn.ws.close(code=4004, message=b"Authentication failed.")
                return
            session = _Session(secrets.token_hex(16), int(d.get("intents", 0)))
            self._sessions[session.session_id] = session
            session.conn = conn
            conn.session = session
            await self._send_dispatch(session, "READY", self._ready_payload(session))
            await self._send_dispatch(session, "GUILD_CREATE", self._guild_create_payload(session))
            self._identified.set()
        elif op == 6:  # resume
            session = self._sessions.get(d.get("session_id"))
            if session is None or d.get("token") != self.token:
                await conn.send({"op": 9, "s": None, "t": None, "d": False})
                return
            session.conn = conn
            conn.session = session
            seq = d.get("seq") or 0
            for event in [e for e in session.buffer if e["s"] > seq]:
                await conn.send(event)
            await self._send_dispatch(session, "RESUMED", {"_trace": ["fakediscord"]})
        elif op == 8:  # request guild members
            if conn.session is None:
                return
            members = list(self.members.values())
            if d.get("user_ids"):
                wanted = {
                    int(u)
                    for u in (d["user_ids"] if isinstance(d["user_ids"], list) else [d["user_ids"]])
                }
                members = [m for m in members if int(m["user"]["id"]) in wanted]
            elif d.get("query"):
                members = [m for m in members if m["user"]["username"].startswith(d["query"])]
            chunk = {
                "guild_id": str(self.guild_id),
                "members": members,
                "chunk_index": 0,
                "chunk_count": 1,
            }
            if d.get("nonce"):
                chunk["nonce"] = d["nonce"]
            await self._send_dispatch(conn.session, "GUILD_MEMBERS_CHUNK", chunk)
        # op 3 (presence), 4 (voice) and anything else: ignored

    def _ready_payload(self, session: _Session) -> dict[str, Any]:
        user = self.bot_user.to_dict()
        user.update({"verified": True, "mfa_enabled": False, "email": None})
        return {
            "v": 10,
            "user": user,
            "guilds": [{"id": str(self.guild_id), "unavailable": True}],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.application_id), "flags": self.application_flags},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "geo_ordered_rtc_regions": [],
            "_trace": ["fakediscord"],
        }

    def _guild_create_payload(self, session: _Session) -> dict[str, Any]:
        if session.intents & INTENT_GUILD_MEMBERS:
            members = list(self.members.values())
        else:  # without GUILD_MEMBERS, Discord only sends the bot's own member
            members = [self.members[self.bot_user.id]]
        channels = []
        for c in self.channels.values():
            c = dict(c)
            c.pop("guild_id", None)
            channels.append(c)
        threads = [t for t in self.threads.values() if not t["thread_metadata"]["archived"]]
        return {
            "id": str(self.guild_id),
            "name": self.guild_name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": str(self.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": list(self.roles.values()),
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": str(self.channel_id),
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "safety_alerts_channel_id": None,
            "max_members": 500000,
            "max_video_channel_users": 25,
            "joined_at": self.members[self.bot_user.id]["joined_at"],
            "large": False,
            "unavailable": False,
            "member_count": len(self.members),
            "voice_states": [],
            "members": members,
            "channels": channels,
            "threads": threads,
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "lazy": True,
        }

    async def _send_dispatch(self, session: _Session, event: str, data: dict[str, Any]) -> None:
        session.seq += 1
        payload = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.buffer.append(payload)
        if len(session.buffer) > 1000:
            del session.buffer[:-1000]
        self.gateway_events.append(payload)
        if session.conn is not None:
            await session.conn.send(payload)

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway dispatch to every identified session."""
        for session in list(self._sessions.values()):
            d = data
            if event in ("MESSAGE_CREATE", "MESSAGE_UPDATE"):
                d = self._apply_content_intent(session, data)
            await self._send_dispatch(session, event, copy.deepcopy(d))

    def _apply_content_intent(self, session: _Session, msg: dict[str, Any]) -> dict[str, Any]:
        if session.intents & INTENT_MESSAGE_CONTENT:
            return msg
        author_id = int(msg.get("author", {}).get("id", 0))
        mentioned = any(int(u["id"]) == self.bot_user.id for u in msg.get("mentions", []))
        if author_id == self.bot_user.id or mentioned or "guild_id" not in msg:
            return msg
        msg = dict(msg)
        msg.update(content="", embeds=[], attachments=[], components=[])
        return msg

    # ================================================================ interactions (test API)
    def _interaction_base(
        self, itype: int, user: UserLike, channel_id: int | None
    ) -> dict[str, Any]:
        u = self._user(user)
        channel_id = int(channel_id or self.channel_id)
        channel = self._channel_any(channel_id)
        if channel is None:
            raise ValueError(f"unknown channel {channel_id}")
        payload: dict[str, Any] = {
            "id": str(self.snowflake()),
            "application_id": str(self.application_id),
            "type": itype,
            "token": "itok_" + secrets.token_urlsafe(32),
            "version": 1,
            "channel_id": str(channel_id),
            "channel": self._interaction_channel(channel),
            "locale": "en-US",
            "entitlements": [],
            "attachment_size_limit": 10 * 1024 * 1024,
            "app_permissions": str(self.permissions_of(self.bot_user)),
        }
        if channel["type"] == 1:  # DM
            payload["user"] = u.to_dict()
            payload["context"] = 1
            payload["authorizing_integration_owners"] = {"0": str(self.guild_id)}
        else:
            member = self.members.get(u.id)
            if member is None:
                raise ValueError(f"{u.username} is not a member of the guild")
            m = copy.deepcopy(member)
            m["permissions"] = str(self.permissions_of(u))
            payload.update(
                guild_id=str(self.guild_id),
                member=m,
                context=0,
                guild_locale="en-US",
                guild={"id": str(self.guild_id), "locale": "en-US", "features": []},
                authorizing_integration_owners={"0": str(self.guild_id)},
            )
        return payload

    def _interaction_channel(self, channel: dict[str, Any]) -> dict[str, Any]:
        c = copy.deepcopy(channel)
        if c["type"] != 1:
            c["permissions"] = str(self.permissions_of(self.bot_user))
        return c

    async def inject_interaction(
        self,
        itype: int,
        data: dict[str, Any] | None,
        *,
        user: UserLike,
        channel_id: int | None = None,
        message: dict[str, Any] | None = None,
    ) -> InteractionHandle:
        """Low level: dispatch INTERACTION_CREATE with the given ``data``."""
        payload = self._interaction_base(itype, user, channel_id)
        if data is not None:
            payload["data"] = data
        if message is not None:
            payload["message"] = message
        handle = InteractionHandle(self, payload, asyncio.get_running_loop().time())
        self.interactions[handle.id] = handle
        await self.dispatch("INTERACTION_CREATE", payload)
        return handle

    def find_command(self, name: str, *, type: int = 1) -> dict[str, Any]:
        for pool in (self.guild_commands, self.global_commands):
            for cmd in pool.values():
                if cmd["name"] == name and cmd.get("type", 1) == type:
                    return cmd
        raise LookupError(
            f"application command {name!r} (type {type}) was not registered by the bot; "
            f"registered: {[c['name'] for c in [*self.guild_commands.values(), *self.global_commands.values()]]}"
        )

    def _build_command_data(
        self, command: str, options: dict[str, Any] | None, focused: str | None = None
    ) -> dict[str, Any]:
        parts = command.split()
        cmd = self.find_command(parts[0])
        data: dict[str, Any] = {"id": cmd["id"], "name": cmd["name"], "type": 1}
        if cmd.get("guild_id"):
            data["guild_id"] = cmd["guild_id"]
        resolved: dict[str, dict[str, Any]] = {}
        container = cmd.get("options") or []
        wrappers: list[dict[str, Any]] = []
        for part in parts[1:]:
            sub = next((o for o in container if o["name"] == part and o["type"] in (1, 2)), None)
            if sub is None:
                raise LookupError(
                    f"{command!r}: no subcommand (group) {part!r}; have {[o['name'] for o in container]}"
                )
            wrappers.append({"name": sub["name"], "type": sub["type"], "options": []})
            container = sub.get("options") or []
        if any(o["type"] in (1, 2) for o in container):
            raise LookupError(
                f"{command!r} is a group; name a subcommand: {[o['name'] for o in container]}"
            )
        leaf_opts = []
        options = dict(options or {})
        for definition in container:
            name = definition["name"]
            if name not in options:
                if definition.get("required") and focused is None:
                    raise ValueError(f"{command!r}: required option {name!r} missing")
                continue
            value = options.pop(name)
            entry: dict[str, Any] = {"name": name, "type": definition["type"]}
            if name == focused:
                entry["value"] = str(value)
                entry["focused"] = True
            else:
                entry["value"] = self._option_value(definition, value, resolved)
            leaf_opts.append(entry)
        if options:
            raise ValueError(
                f"{command!r}: unknown options {sorted(options)}; have {[o['name'] for o in container]}"
            )
        node = leaf_opts
        for wrapper in reversed(wrappers):
            wrapper["options"] = node
            node = [wrapper]
        data["options"] = node
        if resolved:
            data["resolved"] = resolved
        return data

    def _option_value(
        self, definition: dict[str, Any], value: Any, resolved: dict[str, dict[str, Any]]
    ) -> Any:
        t = definition["type"]
        if t == 3:
            value = str(value)
        elif t == 4:
            value = int(value)
        elif t == 5:
            value = bool(value)
        elif t == 10:
            value = float(value)
        elif t in (6, 9) and (
            isinstance(value, UserRef) or (t == 6) or int(value) in self._users_by_id
        ):
            u = self._user(value)
            resolved.setdefault("users", {})[str(u.id)] = u.to_dict()
            if u.id in self.members:
                m = copy.deepcopy(self.members[u.id])
                m.pop("user")
                m["permissions"] = str(self.permissions_of(u))
                resolved.setdefault("members", {})[str(u.id)] = m
            value = str(u.id)
        elif t in (8, 9):
            role = self.roles[int(value)]
            resolved.setdefault("roles", {})[role["id"]] = role
            value = role["id"]
        elif t == 7:
            ch = self._channel_any(int(value))
            if ch is None:
                raise ValueError(f"unknown channel {value}")
            c = {
                k: ch.get(k)
                for k in ("id", "name", "type", "parent_id", "thread_metadata")
                if ch.get(k) is not None
            }
            c["permissions"] = str(self.permissions_of(self.bot_user))
            resolved.setdefault("channels", {})[c["id"]] = c
            value = c["id"]
        elif t == 11:
            filename, content = value
            att = self._make_attachment(self.channel_id, filename, content, None)
            resolved.setdefault("attachments", {})[att["id"]] = att
            value = att["id"]
        choices = definition.get("choices")
        if choices and value not in [c["value"] for c in choices]:
            raise ValueError(f"option {definition['name']!r}: {value!r} is not one of the choices")
        return value

    async def slash(
        self,
        command: str,
        options: dict[str, Any] | None = None,
        *,
        user: UserLike = "alice",
        channel_id: int | None = None,
    ) -> InteractionHandle:
        """Invoke a registered slash command like a user would.

        ``command`` is "name", "name sub" or "name group sub"; ``options`` maps option name to
        value (UserRef/ids for USER, role ids, channel ids, ``(filename, bytes)`` for ATTACHMENT).
        The payload (ids, nested options, resolved) is built from the command the bot registered."""
        data = self._build_command_data(command, options)
        return await self.inject_interaction(2, data, user=user, channel_id=channel_id)

    async def autocomplete(
        self,
        command: str,
        options: dict[str, Any] | None = None,
        *,
        focused: str,
        user: UserLike = "alice",
        channel_id: int | None = None,
    ) -> InteractionHandle:
        """Type-4 interaction; ``options[focused]`` is the partial text typed so far."""
        options = dict(options or {})
        options.setdefault(focused, "")
        data = self._build_command_data(command, options, focused=focused)
        return await self.inject_interaction(4, data, user=user, channel_id=channel_id)

    async def submit_modal(
        self,
        modal: InteractionHandle | dict[str, Any] | str,
        values: dict[str, str],
        *,
        user: UserLike | None = None,
        channel_id: int | None = None,
    ) -> InteractionHandle:
        """Submit a modal (type 5).  ``modal`` is the handle whose callback showed it, the modal
        dict, or a bare custom_id.  ``values`` maps text-input custom_id -> value."""
        if isinstance(modal, InteractionHandle):
            if user is None:
                user = modal.user_id
            if channel_id is None:
                channel_id = modal.channel_id
            modal_data = modal.modal
            if modal_data is None:
                raise ValueError(f"{modal!r} did not respond with a modal")
        elif isinstance(modal, str):
            modal_data = {
                "custom_id": modal,
                "components": [
                    {"type": 1, "components": [{"type": 4, "custom_id": k}]} for k in values
                ],
            }
        else:
            modal_data = modal
        remaining = dict(values)
        resolved: dict[str, dict[str, Any]] = {}

        def fill(component: dict[str, Any]) -> dict[str, Any] | None:
            t = component.get("type")
            if t == 1:
                kids = [
                    k for k in (fill(c) for c in component.get("components", [])) if k is not None
                ]
                return {"type": 1, "id": component.get("id", 0), "components": kids}
            if t == 18:
                inner = fill(component["component"])
                return {"type": 18, "id": component.get("id", 0), "component": inner}
            if t == 4:
                value = remaining.pop(component["custom_id"], component.get("value") or "")
                return {
                    "type": 4,
                    "id": component.get("id", 0),
                    "custom_id": component["custom_id"],
                    "value": value,
                }
            if t in (3, 5, 6, 7, 8, 19, 22):  # selects, file upload, checkbox group: "values"
                value = remaining.pop(component["custom_id"], [])
                values = []
                for v in value:
                    if t in (5, 6, 7, 8):
                        values.append(self._resolve_select_value(t, v, resolved))
                    elif t == 19:
                        filename, content = v
                        att = self._make_attachment(
                            int(channel_id or self.channel_id), filename, content, None
                        )
                        resolved.setdefault("attachments", {})[att["id"]] = att
                        values.append(att["id"])
                    else:
                        values.append(str(v))
                return {
                    "type": t,
                    "id": component.get("id", 0),
                    "custom_id": component["custom_id"],
                    "values": values,
                }
            if t == 21:  # radio group
                return {
                    "type": t,
                    "id": component.get("id", 0),
                    "custom_id": component["custom_id"],
                    "value": remaining.pop(component["custom_id"], None),
                }
            if t == 23:  # checkbox
                return {
                    "type": t,
                    "id": component.get("id", 0),
                    "custom_id": component["custom_id"],
                    "value": bool(remaining.pop(component["custom_id"], False)),
                }
            if t == 10:
                return {"type": 10, "id": component.get("id", 0)}
            return None

        components = [
            c for c in (fill(c) for c in modal_data.get("components", [])) if c is not None
        ]
        if remaining:
            raise ValueError(
                f"modal {modal_data.get('custom_id')!r} has no inputs {sorted(remaining)}"
            )
        data: dict[str, Any] = {"custom_id": modal_data["custom_id"], "components": components}
        if resolved:
            data["resolved"] = resolved
        return await self.inject_interaction(
            5, data, user=user if user is not None else "alice", channel_id=channel_id
        )

    def _resolve_select_value(
        self, ctype: int, value: Any, resolved: dict[str, dict[str, Any]]
    ) -> str:
        """Resolve one value of a user(5)/role(6)/mentionable(7)/channel(8) select."""
        if ctype == 6 or (
            ctype == 7 and not isinstance(value, UserRef) and int(value) in self.roles
        ):
            return self._option_value({"type": 8, "name": "values"}, value, resolved)
        if ctype == 8:
            return self._option_value({"type": 7, "name": "values"}, value, resolved)
        return self._option_value({"type": 6, "name": "values"}, value, resolved)

    async def click(
        self,
        message_id: int,
        custom_id: str,
        *,
        user: UserLike = "alice",
        values: list[str] | None = None,
    ) -> InteractionHandle:
        """Component interaction (type 3) on a message the bot sent."""
        msg, channel_id = self._find_message(int(message_id))
        comp_type = None

        def walk(components: list[dict[str, Any]]) -> None:
            nonlocal comp_type
            for c in components:
                if c.get("custom_id") == custom_id:
                    comp_type = c["type"]
                walk(c.get("components", []))
                if c.get("component"):
                    walk([c["component"]])
                if c.get("accessory"):
                    walk([c["accessory"]])

        walk(msg.get("components", []))
        if comp_type is None:
            raise LookupError(f"message {message_id} has no component {custom_id!r}")
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": comp_type}
        if values is not None:
            resolved: dict[str, dict[str, Any]] = {}
            if comp_type in (5, 6, 7, 8):
                values = [self._resolve_select_value(comp_type, v, resolved) for v in values]
            data["values"] = [str(v) for v in values]
            if resolved:
                data["resolved"] = resolved
        return await self.inject_interaction(
            3, data, user=user, channel_id=channel_id, message=copy.deepcopy(msg)
        )

    async def post_message(
        self,
        channel_id: int,
        content: str,
        *,
        user: UserLike = "alice",
        attachments: Iterable[tuple[str, bytes]] = (),
    ) -> dict[str, Any]:
        """A human posts a message (dispatches MESSAGE_CREATE)."""
        u = self._user(user)
        channel_id = int(channel_id)
        atts = [self._make_attachment(channel_id, name, data, None) for name, data in attachments]
        return await self._create_message(
            channel_id, author=u.to_dict(), content=content, attachments=atts
        )

    # ================================================================ message plumbing
    def _find_message(self, message_id: int) -> tuple[dict[str, Any], int]:
        for cid, msgs in self.messages.items():
            for m in msgs:
                if int(m["id"]) == message_id:
                    return m, cid
        raise not_found(10008, "Message")

    def _get_message(self, channel_id: int, message_id: int) -> dict[str, Any]:
        for m in self.messages.get(channel_id, []):
            if int(m["id"]) == message_id:
                return m
        raise not_found(10008, "Message")

    def _make_attachment(
        self,
        channel_id: int,
        filename: str,
        data: bytes,
        description: str | None,
        content_type: str | None = None,
    ) -> dict[str, Any]:
        aid = self.snowflake()
        self.attachments_data[aid] = data
        url = f"{self.url}/attachments/{channel_id}/{aid}/{filename}"
        att = {
            "id": str(aid),
            "filename": filename,
            "size": len(data),
            "url": url,
            "proxy_url": url,
            "content_type": content_type or "application/octet-stream",
        }
        if description:
            att["description"] = description
        return att

    def _mentions(self, content: str, allowed: dict[str, Any] | None) -> list[dict[str, Any]]:
        ids = [int(x) for x in re.findall(r"<@!?(\d+)>", content or "")]
        if allowed is not None:
            parse = allowed.get("parse") or []
            if "users" not in parse:
                permitted = {int(x) for x in allowed.get("users") or []}
                ids = [i for i in ids if i in permitted]
        out, seen = [], set()
        for i in ids:
            if i in self._users_by_id and i not in seen:
                seen.add(i)
                out.append(self._users_by_id[i].to_dict())
        return out

    async def _create_message(
        self,
        channel_id: int,
        *,
        author: dict[str, Any],
        content: str = "",
        body: dict[str, Any] | None = None,
        attachments: list[dict[str, Any]] | None = None,
        webhook_id: int | None = None,
        avatar_url: str | None = None,
        flags: int = 0,
        mtype: int = 0,
        extra: dict[str, Any] | None = None,
        dispatch: bool = True,
    ) -> dict[str, Any]:
        body = body or {}
        channel = self._channel_any(channel_id)
        mid = self.snowflake()
        msg: dict[str, Any] = {
            "id": str(mid),
            "type": mtype,
            "channel_id": str(channel_id),
            "author": author,
            "content": content or "",
            "timestamp": iso_from_snowflake(mid),
            "edited_timestamp": None,
            "tts": bool(body.get("tts") or False),
            "mention_everyone": False,
            "mentions": self._mentions(content, body.get("allowed_mentions")),
            "mention_roles": [],
            "attachments": attachments or [],
            "embeds": body.get("embeds") or [],
            "pinned": False,
            "flags": flags | int(body.get("flags") or 0),
            "components": body.get("components") or [],
        }
        if body.get("nonce") is not None:
            msg["nonce"] = body["nonce"]
        if body.get("message_reference"):
            msg["message_reference"] = body["message_reference"]
        if channel is not None and channel.get("guild_id"):
            msg["guild_id"] = channel["guild_id"]
            if webhook_id is None and int(author["id"]) in self.members:
                member = copy.deepcopy(self.members[int(author["id"])])
                member.pop("user", None)
                msg["member"] = member
        if webhook_id is not None:
            msg["webhook_id"] = str(webhook_id)
        if extra:
            msg.update(extra)
        self.messages.setdefault(channel_id, []).append(msg)
        self._message_meta[mid] = {"avatar_url": avatar_url}
        if channel is not None:
            channel["last_message_id"] = str(mid)
            if channel_id in self.threads:
                channel["message_count"] = channel.get("message_count", 0) + 1
                channel["total_message_sent"] = channel.get("total_message_sent", 0) + 1
        if dispatch and not (msg["flags"] & MSG_FLAG_EPHEMERAL):
            await self.dispatch("MESSAGE_CREATE", msg)
        return msg

    async def _edit_message(
        self,
        channel_id: int,
        msg: dict[str, Any],
        body: dict[str, Any],
        attachments: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        thread = self.threads.get(channel_id)
        if thread is not None and thread["thread_metadata"]["archived"]:
            raise DiscordHTTPError(400, 50083, "Thread is archived")
        for key in ("content", "embeds", "components", "flags"):
            if key in body and body[key] is not None:
                msg[key] = body[key]
        if "content" in body:
            msg["mentions"] = self._mentions(msg["content"], body.get("allowed_mentions"))
        if "attachments" in body and body["attachments"] is not None:
            keep = {str(a.get("id")) for a in body["attachments"]}
            msg["attachments"] = [a for a in msg["attachments"] if a["id"] in keep] + (
                attachments or []
            )
        elif attachments:
            msg["attachments"] = msg["attachments"] + attachments
        msg["flags"] = (
            int(msg.get("flags") or 0) & ~MSG_FLAG_LOADING
            if "content" in body or "embeds" in body
            else msg["flags"]
        )
        msg["edited_timestamp"] = iso_now()
        if not (msg["flags"] & MSG_FLAG_EPHEMERAL):
            await self.dispatch("MESSAGE_UPDATE", msg)
        return msg

    async def _delete_message(self, channel_id: int, msg: dict[str, Any]) -> None:
        self.messages[channel_id].remove(msg)
        data = {"id": msg["id"], "channel_id": str(channel_id)}
        if msg.get("guild_id"):
            data["guild_id"] = msg["guild_id"]
        if not (msg.get("flags", 0) & MSG_FLAG_EPHEMERAL):
            await self.dispatch("MESSAGE_DELETE", data)

    async def _ensure_postable(self, channel_id: int) -> dict[str, Any]:
        """Check a channel can receive a message; sending into an archived (unlocked) thread unarchives it."""
        channel = self._channel_any(channel_id)
        if channel is None:
            raise not_found(10003, "Channel")
        thread = self.threads.get(channel_id)
        if thread is not None and thread["thread_metadata"]["archived"]:
            if thread["thread_metadata"].get("locked"):
                raise DiscordHTTPError(400, 50083, "Thread is locked")
            thread["thread_metadata"]["archived"] = False
            thread["thread_metadata"]["archive_timestamp"] = iso_now()
            await self.dispatch("THREAD_UPDATE", thread)
        return channel

    def _attachments_from(
        self, channel_id: int, body: dict[str, Any], files: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        out = []
        described = {
            str(a.get("id")): a for a in body.get("attachments") or [] if isinstance(a, dict)
        }
        for f in files:
            idx = re.fullmatch(r"files\[(\d+)\]", f["field"] or "")
            meta = described.get(idx.group(1)) if idx else None
            filename = (meta or {}).get("filename") or f["filename"]
            out.append(
                self._make_attachment(
                    channel_id,
                    filename,
                    f["data"],
                    (meta or {}).get("description"),
                    f.get("content_type"),
                )
            )
        return out

    # ================================================================ HTTP plumbing
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
                template, params = _match_own(self._routes, method, path)
                op = None
            record.template = template
            if (
                "{webhook_token}" not in template
                and "{interaction_token}" not in template
                and template != "/gateway"
            ):
                if request.headers.get("Authorization") != f"Bot {self.token}":
                    raise DiscordHTTPError(401, 0, "401: Unauthorized")
            ctx = _Ctx(
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
            await self._note_interaction_error(record.template, path, result)
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

    async def _note_interaction_error(
        self, template: str | None, path: str, body: dict[str, Any]
    ) -> None:
        """Attach an error response to the interaction it concerns (callback or followup)."""
        if (
            template is None
            or "{interaction_token}" not in template
            and "{webhook_token}" not in template
        ):
            return
        parts = path.strip("/").split("/")
        token = parts[2] if len(parts) > 2 else None
        for handle in self.interactions.values():
            if handle.token == token:
                handle.rejected.append(body)
                await handle._record("rejected", body)
                return

    async def _check_rules(self, ctx: _Ctx) -> None:
        """Discord business rules checked before schema validation (so that a bot tripping them
        gets Discord's real error, and it is not counted as a spec violation)."""
        self._check_forced_429(ctx)
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

    def _check_forced_429(self, ctx: _Ctx) -> None:
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

    # ================================================================ routes
    def _build_routes(self) -> dict[tuple[str, str], Callable[[_Ctx], Awaitable[Any]]]:
        r = {}

        def route(method: str, template: str):
            def deco(fn):
                r[(method, template)] = fn
                return fn

            return deco

        # ---- misc / login
        @route("GET", "/gateway")
        async def get_gateway(ctx):
            return {"url": self.gateway_url.rstrip("/")}

        @route("GET", "/gateway/bot")
        async def get_gateway_bot(ctx):
            return {
                "url": self.gateway_url.rstrip("/"),
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 0,
                    "max_concurrency": 1,
                },
            }

        @route("GET", "/users/@me")
        async def get_me(ctx):
            d = self.bot_user.to_dict()
            d.update({"verified": True, "mfa_enabled": False, "email": None, "locale": "en-US"})
            return d

        @route("GET", "/users/{user_id}")
        async def get_user(ctx):
            uid = int(ctx.params["user_id"])
            if uid not in self._users_by_id:
                raise not_found(10013, "User")
            return self._users_by_id[uid].to_dict()

        def app_info():
            owner = self._users_by_id[self.owner_id].to_dict()
            return {
                "id": str(self.application_id),
                "name": self.bot_user.username,
                "icon": None,
                "description": "",
                "summary": "",
                "type": None,
                "cover_image": None,
                "bot_public": False,
                "bot_require_code_grant": False,
                "verify_key": "0" * 64,
                "flags": self.application_flags,
                "owner": owner,
                "team": None,
                "guild_id": None,
                "rpc_origins": [],
                "terms_of_service_url": None,
                "privacy_policy_url": None,
                "interactions_endpoint_url": None,
                "redirect_uris": [],
                "tags": [],
                "integration_types_config": {"0": {}},
                "approximate_guild_count": 1,
                "bot": self.bot_user.to_dict(),
            }

        @route("GET", "/oauth2/applications/@me")
        async def get_oauth_app(ctx):
            return app_info()

        @route("GET", "/applications/@me")
        async def get_app(ctx):
            return app_info()

        # ---- application commands
        def check_app(ctx):
            if int(ctx.params["application_id"]) != self.application_id:
                raise forbidden(50001, "Missing Access")

        def pool_for(ctx) -> dict[int, dict[str, Any]]:
            check_app(ctx)
            if "guild_id" in ctx.params:
                if int(ctx.params["guild_id"]) != self.guild_id:
                    raise forbidden(50001, "Missing Access")
                return self.guild_commands
            return self.global_commands

        def normalize_command(ctx, body, existing: dict[str, Any] | None) -> dict[str, Any]:
            cmd = copy.deepcopy(body)
            cmd.setdefault("type", 1)
            cmd["id"] = existing["id"] if existing else str(self.snowflake())
            cmd["application_id"] = str(self.application_id)
            cmd["version"] = str(self.snowflake())
            cmd.setdefault("description", "")
            cmd.setdefault("default_member_permissions", None)
            cmd.setdefault("nsfw", False)
            cmd.setdefault("integration_types", [0])
            cmd.setdefault("contexts", None)
            if "guild_id" in ctx.params:
                cmd["guild_id"] = ctx.params["guild_id"]
            return cmd

        @route("GET", "/applications/{application_id}/commands")
        @route("GET", "/applications/{application_id}/guilds/{guild_id}/commands")
        async def list_commands(ctx):
            return list(pool_for(ctx).values())

        @route("PUT", "/applications/{application_id}/commands")
        @route("PUT", "/applications/{application_id}/guilds/{guild_id}/commands")
        async def bulk_overwrite(ctx):
            pool = pool_for(ctx)
            body = ctx.body or []
            names = [(c.get("name"), c.get("type", 1)) for c in body]
            if len(names) != len(set(names)):
                raise form_error(
                    [],
                    "APPLICATION_COMMANDS_DUPLICATE_NAME",
                    "Application command names must be unique",
                )
            by_key = {(c["name"], c.get("type", 1)): c for c in pool.values()}
            new = [
                normalize_command(ctx, c, by_key.get((c["name"], c.get("type", 1)))) for c in body
            ]
            pool.clear()
            for c in new:
                pool[int(c["id"])] = c
            return new

        @route("POST", "/applications/{application_id}/commands")
        @route("POST", "/applications/{application_id}/guilds/{guild_id}/commands")
        async def upsert_command(ctx):
            pool = pool_for(ctx)
            existing = next(
                (
                    c
                    for c in pool.values()
                    if c["name"] == ctx.body["name"] and c.get("type", 1) == ctx.body.get("type", 1)
                ),
                None,
            )
            cmd = normalize_command(ctx, ctx.body, existing)
            pool[int(cmd["id"])] = cmd
            return (200 if existing else 201), cmd

        @route("GET", "/applications/{application_id}/commands/{command_id}")
        @route("GET", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
        async def get_command(ctx):
            cmd = pool_for(ctx).get(int(ctx.params["command_id"]))
            if cmd is None:
                raise not_found(10063, "application command")
            return cmd

        @route("PATCH", "/applications/{application_id}/commands/{command_id}")
        @route("PATCH", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
        async def edit_command(ctx):
            cmd = await get_command(ctx)
            cmd.update(copy.deepcopy(ctx.body or {}))
            cmd["version"] = str(self.snowflake())
            return cmd

        @route("DELETE", "/applications/{application_id}/commands/{command_id}")
        @route("DELETE", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
        async def delete_command(ctx):
            await get_command(ctx)
            pool_for(ctx).pop(int(ctx.params["command_id"]))
            return None

        # ---- interactions
        def interaction_for(ctx, id_key: str, token_key: str) -> InteractionHandle:
            handle = self.interactions.get(int(ctx.params[id_key])) if id_key else None
            if handle is None or handle.token != ctx.params[token_key]:
                raise not_found(10062, "interaction")
            return handle

        def interaction_by_token(ctx) -> InteractionHandle:
            if int(ctx.params["webhook_id"]) != self.application_id:
                raise not_found(10015, "Webhook")
            token = ctx.params["webhook_token"]
            for handle in self.interactions.values():
                if handle.token == token:
                    if (
                        asyncio.get_running_loop().time() - handle.created_at
                        > self.interaction_token_ttl
                    ):
                        raise DiscordHTTPError(401, 50027, "Invalid Webhook Token")
                    return handle
            raise not_found(10015, "Webhook")

        async def make_interaction_message(
            handle: InteractionHandle, data: dict[str, Any], files, *, loading: bool = False
        ) -> dict[str, Any]:
            channel_id = handle.channel_id
            flags = int(data.get("flags") or 0)
            if loading:
                flags |= MSG_FLAG_LOADING
            if not flags & MSG_FLAG_EPHEMERAL:
                await self._ensure_postable(channel_id)
            attachments = self._attachments_from(channel_id, data, files)
            meta = {
                "id": str(handle.id),
                "type": handle.type,
                "user": self._user(handle.user_id).to_dict(),
                "authorizing_integration_owners": handle.payload.get(
                    "authorizing_integration_owners", {}
                ),
            }
            if handle.type == 2:
                meta["name"] = handle.payload["data"]["name"]
            extra = {"application_id": str(self.application_id), "interaction_metadata": meta}
            if handle.type == 2:
                extra["interaction"] = {
                    "id": str(handle.id),
                    "type": 2,
                    "name": handle.payload["data"]["name"],
                    "user": meta["user"],
                }
            return await self._create_message(
                channel_id,
                author=self.bot_user.to_dict(),
                content=data.get("content") or "",
                body=data,
                attachments=attachments,
                webhook_id=self.application_id,
                flags=flags,
                mtype=20 if handle.type == 2 else 0,
                extra=extra,
            )

        @route("POST", "/interactions/{interaction_id}/{interaction_token}/callback")
        async def interaction_callback(ctx):
            handle = interaction_for(ctx, "interaction_id", "interaction_token")
            loop = asyncio.get_running_loop()
            body = ctx.body or {}
            ctype = body.get("type")
            try:
                if (
                    loop.time() - handle.created_at > self.interaction_deadline
                    and handle.callback is None
                ):
                    raise not_found(10062, "interaction")
                if handle.callback is not None:
                    raise DiscordHTTPError(400, 40060, "Interaction has already been acknowledged.")
                allowed = {
                    2: {4, 5, 9, 10, 12},
                    3: {4, 5, 6, 7, 9, 10, 12},
                    4: {8},
                    5: {4, 5, 6, 7, 10, 12},
                }
                if handle.type == 5 and "message" not in handle.payload:
                    # Docs: 6/7 only for modals opened from a component.  In practice Discord
                    # acks a 6 for any modal submit, and discord.py's defer() sends 6 there.
                    allowed[5] = {4, 5, 6, 10, 12}
                if ctype not in allowed.get(handle.type, set()):
                    raise form_error(
                        ["type"],
                        "INTERACTION_CALLBACK_TYPE_INVALID",
                        f"Interaction callback type {ctype} is not valid for interaction type {handle.type}",
                    )
            except DiscordHTTPError:
                raise  # noted on the handle by _note_interaction_error
            handle.callback = body
            data = body.get("data") or {}
            message = None
            if ctype in (4, 5):
                message = await make_interaction_message(
                    handle, data, ctx.files, loading=ctype == 5
                )
                handle.original = message
            elif ctype == 7 and handle.payload.get("message"):
                msg, cid = self._find_message(int(handle.payload["message"]["id"]))
                message = await self._edit_message(cid, msg, data)
                handle.original = message
            await handle._record("callback", body)
            if ctx.query.get("with_response", "").lower() in ("1", "true"):
                resp = {"interaction": {"id": str(handle.id), "type": handle.type}}
                resource: dict[str, Any] = {"type": ctype}
                if message is not None:
                    resp["interaction"].update(
                        response_message_id=message["id"],
                        response_message_loading=bool(message["flags"] & MSG_FLAG_LOADING),
                        response_message_ephemeral=bool(message["flags"] & MSG_FLAG_EPHEMERAL),
                    )
                    resource["message"] = message
                resp["resource"] = resource
                return resp
            return None

        def original_of(handle: InteractionHandle) -> dict[str, Any]:
            if handle.original is None:
                raise not_found(10008, "Message")
            return handle.original

        def message_of(handle: InteractionHandle, message_id: str) -> dict[str, Any]:
            if message_id == "@original":
                return original_of(handle)
            for m in handle.followups:
                if m["id"] == message_id:
                    return m
            if handle.original is not None and handle.original["id"] == message_id:
                return handle.original
            raise not_found(10008, "Message")

        # ---- webhooks (channel webhooks and interaction webhooks share these routes)
        def channel_webhook(ctx, need_token: bool) -> dict[str, Any]:
            wid = int(ctx.params["webhook_id"])
            hook = self.webhooks.get(wid)
            if hook is None:
                raise not_found(10015, "Webhook")
            if need_token and hook["token"] != ctx.params["webhook_token"]:
                raise DiscordHTTPError(401, 50027, "Invalid Webhook Token")
            return hook

        @route("POST", "/webhooks/{webhook_id}/{webhook_token}")
        async def execute_webhook(ctx):
            body = ctx.body or {}
            if int(ctx.params["webhook_id"]) == self.application_id:
                handle = interaction_by_token(ctx)
                if handle.callback is None:
                    raise not_found(10015, "Webhook")
                original = handle.original
                if (
                    original is not None
                    and original["flags"] & MSG_FLAG_LOADING
                    and handle.callback_type == 5
                ):
                    # first followup after a "thinking" defer edits the loading message
                    attachments = self._attachments_from(handle.channel_id, body, ctx.files)
                    msg = await self._edit_message(handle.channel_id, original, body, attachments)
                    handle.followups.append(msg)
                    await handle._record("followup", msg)
                    return msg
                msg = await make_interaction_message(handle, body, ctx.files)
                handle.followups.append(msg)
                await handle._record("followup", msg)
                return msg
            hook = channel_webhook(ctx, True)
            if not (
                body.get("content")
                or body.get("embeds")
                or ctx.files
                or body.get("components")
                or body.get("poll")
            ):
                raise DiscordHTTPError(400, 50006, "Cannot send an empty message")
            channel_id = int(hook["channel_id"])
            if ctx.query.get("thread_id"):
                tid = int(ctx.query["thread_id"])
                thread = self.threads.get(tid)
                if thread is None or int(thread["parent_id"]) != channel_id:
                    raise not_found(10003, "Channel")
                channel_id = tid
            await self._ensure_postable(channel_id)
            author = {
                "id": str(hook["id"]),
                "username": body.get("username") or hook["name"],
                "avatar": None,
                "discriminator": "0000",
                "bot": True,
                "global_name": None,
                "public_flags": 0,
                "flags": 0,
            }
            attachments = self._attachments_from(channel_id, body, ctx.files)
            msg = await self._create_message(
                channel_id,
                author=author,
                content=body.get("content") or "",
                body=body,
                attachments=attachments,
                webhook_id=hook["id"],
                avatar_url=body.get("avatar_url"),
                extra={"application_id": str(self.application_id)}
                if hook.get("application_id")
                else None,
            )
            if ctx.query.get("wait", "").lower() in ("true", "1"):
                return msg
            return None

        @route("GET", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}")
        @route("GET", "/webhooks/{webhook_id}/{webhook_token}/messages/@original")
        async def get_webhook_message(ctx):
            mid = ctx.params.get("message_id", "@original")
            if int(ctx.params["webhook_id"]) == self.application_id:
                return message_of(interaction_by_token(ctx), mid)
            hook = channel_webhook(ctx, True)
            msg, _ = self._find_message(int(mid))
            if msg.get("webhook_id") != str(hook["id"]):
                raise not_found(10008, "Message")
            return msg

        @route("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}")
        @route("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/@original")
        async def edit_webhook_message(ctx):
            mid = ctx.params.get("message_id", "@original")
            body = ctx.body or {}
            if int(ctx.params["webhook_id"]) == self.application_id:
                handle = interaction_by_token(ctx)
                msg = message_of(handle, mid)
                attachments = self._attachments_from(handle.channel_id, body, ctx.files)
                msg = await self._edit_message(int(msg["channel_id"]), msg, body, attachments)
                await handle._record("edit", msg)
                return msg
            hook = channel_webhook(ctx, True)
            msg, cid = self._find_message(int(mid))
            if msg.get("webhook_id") != str(hook["id"]):
                raise not_found(10008, "Message")
            attachments = self._attachments_from(cid, body, ctx.files)
            return await self._edit_message(cid, msg, body, attachments)

        @route("DELETE", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}")
        @route("DELETE", "/webhooks/{webhook_id}/{webhook_token}/messages/@original")
        async def delete_webhook_message(ctx):
            mid = ctx.params.get("message_id", "@original")
            if int(ctx.params["webhook_id"]) == self.application_id:
                handle = interaction_by_token(ctx)
                msg = message_of(handle, mid)
                await self._delete_message(int(msg["channel_id"]), msg)
                await handle._record("delete", msg["id"])
                return None
            hook = channel_webhook(ctx, True)
            msg, cid = self._find_message(int(mid))
            if msg.get("webhook_id") != str(hook["id"]):
                raise not_found(10008, "Message")
            await self._delete_message(cid, msg)
            return None

        def public_hook(hook: dict[str, Any], with_token: bool = True) -> dict[str, Any]:
            h = dict(hook)
            if not with_token:
                h.pop("token", None)
            return h

        @route("GET", "/webhooks/{webhook_id}")
        async def get_webhook(ctx):
            return public_hook(channel_webhook(ctx, False))

        @route("GET", "/webhooks/{webhook_id}/{webhook_token}")
        async def get_webhook_with_token(ctx):
            return public_hook(channel_webhook(ctx, True), with_token=False)

        @route("PATCH", "/webhooks/{webhook_id}")
        @route("PATCH", "/webhooks/{webhook_id}/{webhook_token}")
        async def edit_webhook(ctx):
            hook = channel_webhook(ctx, "webhook_token" in ctx.params)
            body = ctx.body or {}
            if body.get("name"):
                hook["name"] = body["name"]
            if "channel_id" in body and "webhook_token" not in ctx.params:
                hook["channel_id"] = str(body["channel_id"])
            return public_hook(hook, with_token="webhook_token" not in ctx.params)

        @route("DELETE", "/webhooks/{webhook_id}")
        @route("DELETE", "/webhooks/{webhook_id}/{webhook_token}")
        async def delete_webhook_route(ctx):
            hook = channel_webhook(ctx, "webhook_token" in ctx.params)
            await self.delete_webhook(int(hook["id"]))
            return None

        @route("GET", "/channels/{channel_id}/webhooks")
        async def list_channel_webhooks(ctx):
            cid = int(ctx.params["channel_id"])
            if cid not in self.channels:
                raise not_found(10003, "Channel")
            self._require_bot(P.MANAGE_WEBHOOKS)
            return [public_hook(h) for h in self.webhooks_in(cid)]

        @route("GET", "/guilds/{guild_id}/webhooks")
        async def list_guild_webhooks(ctx):
            self._check_guild(ctx)
            self._require_bot(P.MANAGE_WEBHOOKS)
            return [public_hook(h) for h in self.webhooks.values()]

        @route("POST", "/channels/{channel_id}/webhooks")
        async def create_webhook(ctx):
            cid = int(ctx.params["channel_id"])
            if cid not in self.channels:
                if cid in self.threads:
                    raise DiscordHTTPError(400, 50024, "Cannot execute action on this channel type")
                raise not_found(10003, "Channel")
            self._require_bot(P.MANAGE_WEBHOOKS)
            if len(self.webhooks_in(cid)) >= 15:
                raise DiscordHTTPError(400, 30007, "Maximum number of webhooks reached (15)")
            wid = self.snowflake()
            hook = {
                "id": str(wid),
                "type": 1,
                "guild_id": str(self.guild_id),
                "channel_id": str(cid),
                "name": ctx.body["name"],
                "avatar": None,
                "token": secrets.token_urlsafe(48),
                "application_id": str(self.application_id),
                "user": self.bot_user.to_dict(),
            }
            self.webhooks[wid] = hook
            await self.dispatch(
                "WEBHOOKS_UPDATE", {"guild_id": str(self.guild_id), "channel_id": str(cid)}
            )
            return public_hook(hook)

        # ---- channels & threads
        def thread_payload(
            thread_id: int, parent_id: int, body: dict[str, Any], default_type: int
        ) -> dict[str, Any]:
            ttype = int(body.get("type") or default_type)
            duration = int(
                body.get("auto_archive_duration")
                or self.channels[parent_id].get("default_auto_archive_duration", 1440)
            )
            thread = {
                "id": str(thread_id),
                "type": ttype,
                "guild_id": str(self.guild_id),
                "parent_id": str(parent_id),
                "owner_id": str(self.bot_user.id),
                "name": body["name"],
                "last_message_id": None,
                "message_count": 0,
                "total_message_sent": 0,
                "member_count": 1,
                "rate_limit_per_user": int(body.get("rate_limit_per_user") or 0),
                "flags": 0,
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": duration,
                    "archive_timestamp": iso_now(),
                    "locked": False,
                    "create_timestamp": iso_now(),
                },
                "member": {
                    "id": str(thread_id),
                    "user_id": str(self.bot_user.id),
                    "join_timestamp": iso_now(),
                    "flags": 0,
                },
            }
            if ttype == 12:
                thread["thread_metadata"]["invitable"] = bool(body.get("invitable", True))
            return thread

        async def register_thread(thread: dict[str, Any]) -> dict[str, Any]:
            tid = int(thread["id"])
            self.threads[tid] = thread
            self.messages.setdefault(tid, [])
            self.thread_members[tid] = {self.bot_user.id}
            await self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
            return thread

        @route("POST", "/channels/{channel_id}/threads")
        async def create_thread(ctx):
            cid = int(ctx.params["channel_id"])
            if cid not in self.channels:
                if self._channel_any(cid) is not None:
                    raise DiscordHTTPError(400, 50024, "Cannot execute action on this channel type")
                raise not_found(10003, "Channel")
            body = ctx.body or {}
            ttype = int(
                body.get("type") or 12
            )  # Discord defaults to a private thread without a message
            self._require_bot(P.CREATE_PRIVATE_THREADS if ttype == 12 else P.CREATE_PUBLIC_THREADS)
            thread = await register_thread(thread_payload(self.snowflake(), cid, body, ttype))
            if ttype == 11:
                await self._create_message(
                    cid,
                    author=self.bot_user.to_dict(),
                    content=thread["name"],
                    mtype=18,
                    extra={
                        "message_reference": {
                            "channel_id": thread["id"],
                            "guild_id": str(self.guild_id),
                        }
                    },
                )
            return 201, thread

        @route("POST", "/channels/{channel_id}/messages/{message_id}/threads")
        async def create_thread_from_message(ctx):
            cid = int(ctx.params["channel_id"])
            if cid not in self.channels:
                raise not_found(10003, "Channel")
            msg = self._get_message(cid, int(ctx.params["message_id"]))
            if msg.get("thread"):
                raise DiscordHTTPError(
                    400, 160004, "A thread has already been created for this message"
                )
            self._require_bot(P.CREATE_PUBLIC_THREADS)
            thread = thread_payload(int(msg["id"]), cid, ctx.body or {}, 11)
            thread["type"] = 11
            await register_thread(thread)
            msg["thread"] = thread
            return 201, thread

        @route("GET", "/channels/{channel_id}")
        async def get_channel(ctx):
            ch = self._channel_any(int(ctx.params["channel_id"]))
            if ch is None:
                raise not_found(10003, "Channel")
            return ch

        @route("PATCH", "/channels/{channel_id}")
        async def edit_channel(ctx):
            cid = int(ctx.params["channel_id"])
            ch = self._channel_any(cid)
            if ch is None:
                raise not_found(10003, "Channel")
            body = ctx.body or {}
            if cid in self.threads:
                meta = ch["thread_metadata"]
                if meta["archived"] and body.get("archived") is not False:
                    raise DiscordHTTPError(400, 50083, "Thread is archived")
                if (
                    ("locked" in body or "archived" in body)
                    and not self._bot_has(P.MANAGE_THREADS)
                    and int(ch["owner_id"]) != self.bot_user.id
                ):
                    raise forbidden()
                for key in ("archived", "locked", "auto_archive_duration", "invitable"):
                    if body.get(key) is not None:
                        meta[key] = body[key]
                if "archived" in body:
                    meta["archive_timestamp"] = iso_now()
                for key in ("name", "rate_limit_per_user", "flags", "applied_tags"):
                    if body.get(key) is not None:
                        ch[key] = body[key]
                await self.dispatch("THREAD_UPDATE", ch)
            else:
                if ch["type"] == 1:
                    raise DiscordHTTPError(400, 50024, "Cannot execute action on this channel type")
                self._require_bot(P.MANAGE_CHANNELS)
                for key in (
                    "name",
                    "topic",
                    "nsfw",
                    "rate_limit_per_user",
                    "default_auto_archive_duration",
                    "position",
                    "parent_id",
                ):
                    if key in body:
                        ch[key] = body[key]
                await self.dispatch("CHANNEL_UPDATE", ch)
            return ch

        @route("DELETE", "/channels/{channel_id}")
        async def delete_channel(ctx):
            cid = int(ctx.params["channel_id"])
            if cid in self.threads:
                self._require_bot(P.MANAGE_THREADS)
                thread = self.threads.pop(cid)
                await self.dispatch(
                    "THREAD_DELETE", {k: thread[k] for k in ("id", "guild_id", "parent_id", "type")}
                )
                return thread
            if cid in self.channels:
                self._require_bot(P.MANAGE_CHANNELS)
                ch = self.channels.pop(cid)
                await self.dispatch("CHANNEL_DELETE", ch)
                return ch
            raise not_found(10003, "Channel")

        @route("GET", "/channels/{channel_id}/messages")
        async def list_messages(ctx):
            cid = int(ctx.params["channel_id"])
            if self._channel_any(cid) is None:
                raise not_found(10003, "Channel")
            msgs = [
                m
                for m in self.messages.get(cid, [])
                if not (m.get("flags", 0) & MSG_FLAG_EPHEMERAL)
            ]
            limit = int(ctx.query.get("limit", 50))
            if "before" in ctx.query:
                msgs = [m for m in msgs if int(m["id"]) < int(ctx.query["before"])]
            if "after" in ctx.query:
                msgs = [m for m in msgs if int(m["id"]) > int(ctx.query["after"])]
                return list(reversed(msgs[:limit]))
            if "around" in ctx.query:
                around = int(ctx.query["around"])
                msgs.sort(key=lambda m: abs(int(m["id"]) - around))
                return sorted(msgs[:limit], key=lambda m: int(m["id"]), reverse=True)
            return list(reversed(msgs[-limit:]))

        @route("GET", "/channels/{channel_id}/messages/{message_id}")
        async def get_message(ctx):
            return self._get_message(int(ctx.params["channel_id"]), int(ctx.params["message_id"]))

        @route("POST", "/channels/{channel_id}/messages")
        async def create_message(ctx):
            cid = int(ctx.params["channel_id"])
            channel = await self._ensure_postable(cid)
            body = ctx.body or {}
            if channel["type"] == 1:
                recipient = self._users_by_id[int(channel["recipients"][0]["id"])]
                if recipient.dms_closed:
                    raise forbidden(50007, "Cannot send messages to this user")
            if not (
                body.get("content")
                or body.get("embeds")
                or ctx.files
                or body.get("sticker_ids")
                or body.get("components")
                or body.get("poll")
            ):
                raise DiscordHTTPError(400, 50006, "Cannot send an empty message")
            attachments = self._attachments_from(cid, body, ctx.files)
            return await self._create_message(
                cid,
                author=self.bot_user.to_dict(),
                content=body.get("content") or "",
                body=body,
                attachments=attachments,
            )

        @route("PATCH", "/channels/{channel_id}/messages/{message_id}")
        async def edit_message(ctx):
            cid = int(ctx.params["channel_id"])
            msg = self._get_message(cid, int(ctx.params["message_id"]))
            if int(msg["author"]["id"]) != self.bot_user.id:
                raise forbidden(50005, "Cannot edit a message authored by another user")
            attachments = self._attachments_from(cid, ctx.body or {}, ctx.files)
            return await self._edit_message(cid, msg, ctx.body or {}, attachments)

        @route("DELETE", "/channels/{channel_id}/messages/{message_id}")
        async def delete_message(ctx):
            cid = int(ctx.params["channel_id"])
            msg = self._get_message(cid, int(ctx.params["message_id"]))
            if int(msg["author"]["id"]) != self.bot_user.id:
                self._require_bot(P.MANAGE_MESSAGES)
            await self._delete_message(cid, msg)
            return None

        @route("PUT", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me")
        async def add_reaction(ctx):
            msg = self._get_message(int(ctx.params["channel_id"]), int(ctx.params["message_id"]))
            msg.setdefault("reactions", []).append(
                {"emoji": {"id": None, "name": ctx.params["emoji_name"]}, "count": 1, "me": True}
            )
            return None

        @route("POST", "/channels/{channel_id}/typing")
        async def typing(ctx):
            cid = int(ctx.params["channel_id"])
            if self._channel_any(cid) is None:
                raise not_found(10003, "Channel")
            self.typing.append((cid, asyncio.get_running_loop().time()))
            return None

        @route("PUT", "/channels/{channel_id}/thread-members/@me")
        @route("PUT", "/channels/{channel_id}/thread-members/{user_id}")
        @route("DELETE", "/channels/{channel_id}/thread-members/@me")
        @route("DELETE", "/channels/{channel_id}/thread-members/{user_id}")
        async def thread_member(ctx):
            tid = int(ctx.params["channel_id"])
            if tid not in self.threads:
                raise not_found(10003, "Channel")
            uid = self.bot_user.id if "user_id" not in ctx.params else int(ctx.params["user_id"])
            if uid not in self._users_by_id:
                raise not_found(10013, "User")
            members = self.thread_members.setdefault(tid, set())
            if ctx.method == "PUT":
                members.add(uid)
            else:
                members.discard(uid)
            self.threads[tid]["member_count"] = len(members)
            return None

        @route("GET", "/channels/{channel_id}/thread-members")
        async def list_thread_members(ctx):
            tid = int(ctx.params["channel_id"])
            if tid not in self.threads:
                raise not_found(10003, "Channel")
            return [
                {"id": str(tid), "user_id": str(u), "join_timestamp": iso_now(), "flags": 0}
                for u in sorted(self.thread_members.get(tid, ()))
            ]

        @route("GET", "/guilds/{guild_id}/threads/active")
        async def active_threads(ctx):
            self._check_guild(ctx)
            threads = [t for t in self.threads.values() if not t["thread_metadata"]["archived"]]
            return {"threads": threads, "members": [], "has_more": False}

        @route("GET", "/channels/{channel_id}/threads/archived/public")
        @route("GET", "/channels/{channel_id}/threads/archived/private")
        async def archived_threads(ctx):
            cid = int(ctx.params["channel_id"])
            want = 11 if ctx.template.endswith("public") else 12
            threads = [
                t
                for t in self.threads.values()
                if t["thread_metadata"]["archived"]
                and int(t["parent_id"]) == cid
                and t["type"] == want
            ]
            return {"threads": threads, "members": [], "has_more": False}

        # ---- DMs, guild, members
        @route("POST", "/users/@me/channels")
        async def open_dm(ctx):
            uid = int(ctx.body["recipient_id"])
            if uid not in self._users_by_id:
                raise not_found(10013, "User")
            dm = self.dm_channels.get(uid)
            if dm is None:
                cid = self.snowflake()
                dm = {
                    "id": str(cid),
                    "type": 1,
                    "last_message_id": None,
                    "flags": 0,
                    "recipients": [self._users_by_id[uid].to_dict()],
                }
                self.dm_channels[uid] = dm
                self.messages[cid] = []
            return dm

        @route("GET", "/guilds/{guild_id}")
        async def get_guild(ctx):
            self._check_guild(ctx)
            data = self._guild_create_payload(_Session("x", 0))
            for key in (
                "members",
                "channels",
                "threads",
                "presences",
                "voice_states",
                "joined_at",
                "large",
                "member_count",
                "unavailable",
                "lazy",
                "stage_instances",
                "guild_scheduled_events",
                "soundboard_sounds",
            ):
                data.pop(key, None)
            return data

        @route("GET", "/guilds/{guild_id}/channels")
        async def get_guild_channels(ctx):
            self._check_guild(ctx)
            return list(self.channels.values())

        @route("GET", "/guilds/{guild_id}/roles")
        async def get_roles(ctx):
            self._check_guild(ctx)
            return list(self.roles.values())

        @route("GET", "/guilds/{guild_id}/members/{user_id}")
        async def get_member(ctx):
            self._check_guild(ctx)
            member = self.members.get(int(ctx.params["user_id"]))
            if member is None:
                raise not_found(10007, "Member")
            return member

        @route("GET", "/guilds/{guild_id}/members")
        async def list_members(ctx):
            self._check_guild(ctx)
            limit = int(ctx.query.get("limit", 1))
            after = int(ctx.query.get("after", 0))
            members = sorted(self.members.values(), key=lambda m: int(m["user"]["id"]))
            return [m for m in members if int(m["user"]["id"]) > after][:limit]

        return r

    def _check_guild(self, ctx: _Ctx) -> None:
        if int(ctx.params["guild_id"]) != self.guild_id:
            raise not_found(10004, "Guild")

    def _bot_has(self, perm: int) -> bool:
        return bool(self.permissions_of(self.bot_user) & perm)

    def _require_bot(self, perm: int) -> None:
        if not self._bot_has(perm):
            raise forbidden()


class _Ctx:
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


def _match_own(
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
