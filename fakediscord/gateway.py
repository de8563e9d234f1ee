"""The gateway websocket: HELLO, IDENTIFY -> READY + GUILD_CREATE, RESUME, heartbeats, dispatch.

Invariant: every dispatch gets the session's next sequence number and is buffered (last 1000)
so a RESUME replays exactly the events after the client's ``seq``; frames are zlib-stream
compressed when the client asked for it, MESSAGE_* content is blanked without the intent, and
reaction events reach only sessions holding a reactions intent.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import secrets
import zlib
from typing import Any

import aiohttp
from aiohttp import web

from .rest_reactions import reaction_intent
from .sharding import GUILD_OBJECT_EVENTS, identify_shard, owns

INTENT_GUILD_MEMBERS = 1 << 1
INTENT_MESSAGE_CONTENT = 1 << 15


class GatewayConn:
    """One gateway websocket connection."""

    def __init__(self, ws: web.WebSocketResponse, compress: str | None) -> None:
        self.ws = ws
        self.lock = asyncio.Lock()
        self.zlib = zlib.compressobj() if compress == "zlib-stream" else None
        self.session: GatewaySession | None = None

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


class GatewaySession:
    def __init__(self, session_id: str, intents: int, shard: tuple[int, int] = (0, 1)) -> None:
        self.session_id = session_id
        self.intents = intents
        self.shard = shard
        self.seq = 0
        self.buffer: list[dict[str, Any]] = []
        self.conn: GatewayConn | None = None


class GatewayMixin:
    """Gateway connections, sessions and event dispatch (test API: connected, dispatch...)."""

    async def force_reconnect(self) -> None:
        """Send opcode 7 RECONNECT to every connected client (they should RESUME)."""
        for conn in list(self._conns):
            await conn.send({"op": 7, "d": None})

    async def drop_connections(self, code: int = 4000) -> None:
        """Close every gateway socket abruptly with ``code``."""
        for conn in list(self._conns):
            await conn.ws.close(code=code)

    # The timeouts bound a hang only (busy cores: the suite runs on every core).
    async def wait_for_identify(self, timeout: float = 60.0) -> None:
        await asyncio.wait_for(self._identified.wait(), timeout)

    @contextlib.asynccontextmanager
    async def connected(
        self,
        client: Any,
        *,
        timeout: float = 60.0,
        patch_discord: bool = True,
        guild_id: int | None = None,
    ):
        """Run ``client.start(token)`` against this fake until the guild (``guild_id``, else
        the first) is in its cache.

        Restores discord.py's URLs and closes the client on exit."""
        from . import point_discord_py_at

        restore = point_discord_py_at(self.url) if patch_discord else (lambda: None)
        task = asyncio.create_task(client.start(self.token), name="fakediscord-client")
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while client.get_guild(guild_id or self.guild_id) is None:
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
        conn = GatewayConn(ws, request.query.get("compress"))
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

    async def _on_gateway_op(self, conn: GatewayConn, payload: dict[str, Any]) -> None:
        op, d = payload.get("op"), payload.get("d")
        if op == 1:  # heartbeat
            await conn.send({"op": 11, "s": None, "t": None, "d": None})
        elif op == 2:  # identify
            if d.get("token") != self.token:
                await conn.ws.close(code=4004, message=b"Authentication failed.")
                return
            shard = identify_shard(d)
            if shard is None:
                await conn.ws.close(code=4010, message=b"Invalid shard.")
                return
            per_shard = sum(owns(shard, g) for g in self.guilds)
            if per_shard > self.guilds_per_shard:
                await conn.ws.close(code=4011, message=b"Sharding required.")
                return
            if not self.session_starts.identify(shard[0]):
                await conn.send({"op": 9, "s": None, "t": None, "d": False})
                return
            session = GatewaySession(secrets.token_hex(16), int(d.get("intents", 0)), shard)
            self._sessions[session.session_id] = session
            session.conn = conn
            conn.session = session
            await self._send_dispatch(session, "READY", self._ready_payload(session))
            for guild in [g for g in self.guilds.values() if owns(shard, g.id)]:
                payload = self._guild_create_payload(session, guild)
                await self._send_dispatch(session, "GUILD_CREATE", payload)
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
            guild = self._guild(int(d.get("guild_id") or self.guild_id))
            members = list(guild.members.values())
            if d.get("user_ids"):
                wanted = {
                    int(u)
                    for u in (d["user_ids"] if isinstance(d["user_ids"], list) else [d["user_ids"]])
                }
                members = [m for m in members if int(m["user"]["id"]) in wanted]
            elif d.get("query"):
                members = [m for m in members if m["user"]["username"].startswith(d["query"])]
            chunk = {
                "guild_id": str(guild.id),
                "members": members,
                "chunk_index": 0,
                "chunk_count": 1,
            }
            if d.get("nonce"):
                chunk["nonce"] = d["nonce"]
            await self._send_dispatch(conn.session, "GUILD_MEMBERS_CHUNK", chunk)
        # op 3 (presence), 4 (voice) and anything else: ignored

    def _ready_payload(self, session: GatewaySession) -> dict[str, Any]:
        user = self.bot_user.to_dict()
        user.update({"verified": True, "mfa_enabled": False, "email": None})
        return {
            "v": 10,
            "user": user,
            "guilds": [
                {"id": str(g), "unavailable": True} for g in self.guilds if owns(session.shard, g)
            ],
            "session_id": session.session_id,
            "shard": list(session.shard),
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.application_id), "flags": self.application_flags},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "geo_ordered_rtc_regions": [],
            "_trace": ["fakediscord"],
        }

    def _guild_create_payload(self, session: GatewaySession, guild: Any = None) -> dict[str, Any]:
        guild = guild or self._guild()
        gid = str(guild.id)
        if session.intents & INTENT_GUILD_MEMBERS:
            members = list(guild.members.values())
        else:  # without GUILD_MEMBERS, Discord only sends the bot's own member
            members = [guild.members[self.bot_user.id]]
        channels = []
        for c in self.channels.values():
            if c["guild_id"] != gid:
                continue
            c = dict(c)
            c.pop("guild_id", None)
            channels.append(c)
        threads = [
            t
            for t in self.threads.values()
            if not t["thread_metadata"]["archived"] and t["guild_id"] == gid
        ]
        return {
            "id": gid,
            "name": guild.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": str(guild.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": list(guild.roles.values()),
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": str(guild.channel_id),
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
            "joined_at": guild.members[self.bot_user.id]["joined_at"],
            "large": False,
            "unavailable": False,
            "member_count": len(guild.members),
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

    async def _send_dispatch(
        self, session: GatewaySession, event: str, data: dict[str, Any]
    ) -> None:
        session.seq += 1
        payload = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.buffer.append(payload)
        if len(session.buffer) > 1000:
            del session.buffer[:-1000]
        self.gateway_events.append(payload)
        if session.conn is not None:
            await session.conn.send(payload)

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway dispatch to every identified session of the event's shard."""
        needed = reaction_intent(event, data)
        guild_id = self._event_guild(event, data)
        for session in list(self._sessions.values()):
            if not owns(session.shard, guild_id):
                continue  # Discord sends a guild's events to its shard only, DMs to shard 0
            if needed is not None and not session.intents & needed:
                continue  # Discord only sends reaction events to sessions with the intent
            d = data
            if event in ("MESSAGE_CREATE", "MESSAGE_UPDATE"):
                d = self._apply_content_intent(session, data)
            await self._send_dispatch(session, event, copy.deepcopy(d))

    def _event_guild(self, event: str, data: dict[str, Any]) -> int | None:
        """The guild an event belongs to (None: a DM or no guild at all)."""
        if event in GUILD_OBJECT_EVENTS:
            return int(data["id"])
        if data.get("guild_id"):
            return int(data["guild_id"])
        channel = data.get("channel_id") or (data.get("id") if "type" in data else None)
        return self.guild_of(int(channel)) if channel else None

    def shard_sessions(self) -> dict[tuple[int, int], int]:
        """(shard id, count) -> how many of its sessions have a live connection."""
        out: dict[tuple[int, int], int] = {}
        for session in self._sessions.values():
            live = session.conn is not None and not session.conn.ws.closed
            out[session.shard] = out.get(session.shard, 0) + live
        return out

    def _apply_content_intent(self, session: GatewaySession, msg: dict[str, Any]) -> dict[str, Any]:
        if session.intents & INTENT_MESSAGE_CONTENT:
            return msg
        author_id = int(msg.get("author", {}).get("id", 0))
        mentioned = any(int(u["id"]) == self.bot_user.id for u in msg.get("mentions", []))
        if author_id == self.bot_user.id or mentioned or "guild_id" not in msg:
            return msg
        msg = dict(msg)
        msg.update(content="", embeds=[], attachments=[], components=[])
        return msg
