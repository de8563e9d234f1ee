"""Small data helpers shared by the fake: snowflakes, errors, permissions, handles."""

from __future__ import annotations

import asyncio
import datetime
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DISCORD_EPOCH_MS = 1420070400000


class P:
    """Permission bits (subset)."""

    CREATE_INSTANT_INVITE = 1 << 0
    ADMINISTRATOR = 1 << 3
    MANAGE_CHANNELS = 1 << 4
    ADD_REACTIONS = 1 << 6
    VIEW_CHANNEL = 1 << 10
    SEND_MESSAGES = 1 << 11
    MANAGE_MESSAGES = 1 << 13
    EMBED_LINKS = 1 << 14
    ATTACH_FILES = 1 << 15
    READ_MESSAGE_HISTORY = 1 << 16
    MENTION_EVERYONE = 1 << 17
    USE_EXTERNAL_EMOJIS = 1 << 18
    CHANGE_NICKNAME = 1 << 26
    MANAGE_WEBHOOKS = 1 << 29
    USE_APPLICATION_COMMANDS = 1 << 31
    MANAGE_THREADS = 1 << 34
    CREATE_PUBLIC_THREADS = 1 << 35
    CREATE_PRIVATE_THREADS = 1 << 36
    SEND_MESSAGES_IN_THREADS = 1 << 38
    ALL = (1 << 53) - 1

    EVERYONE_DEFAULT = (
        CREATE_INSTANT_INVITE
        | ADD_REACTIONS
        | VIEW_CHANNEL
        | SEND_MESSAGES
        | EMBED_LINKS
        | ATTACH_FILES
        | READ_MESSAGE_HISTORY
        | USE_EXTERNAL_EMOJIS
        | CHANGE_NICKNAME
        | USE_APPLICATION_COMMANDS
        | CREATE_PUBLIC_THREADS
        | CREATE_PRIVATE_THREADS
        | SEND_MESSAGES_IN_THREADS
    )
    BOT_DEFAULT = (
        EVERYONE_DEFAULT | MANAGE_WEBHOOKS | MANAGE_THREADS | MANAGE_MESSAGES | MENTION_EVERYONE
    )


class SnowflakeGen:
    def __init__(self) -> None:
        self._last = 0
        self._inc = itertools.count()

    def __call__(self) -> int:
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        value = (ms << 22) | (next(self._inc) & 0xFFF)
        if value <= self._last:
            value = self._last + 1
        self._last = value
        return value

    def for_shard(self, shard_id: int, shard_count: int) -> int:
        """A fresh snowflake on shard ``shard_id`` of ``shard_count``: its timestamp bits
        (above bit 22, what Discord shards by) are nudged forward a few ms until they fit."""
        if not 0 <= shard_id < shard_count:
            raise ValueError(f"shard {shard_id} of {shard_count}")
        ms = max(int(time.time() * 1000) - DISCORD_EPOCH_MS, (self._last >> 22) + 1)
        ms += (shard_id - ms) % shard_count
        value = (ms << 22) | (next(self._inc) & 0xFFF)
        self._last = value
        return value


def iso_from_snowflake(snowflake: int) -> str:
    ms = (int(snowflake) >> 22) + DISCORD_EPOCH_MS
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).isoformat()


def iso_now() -> str:
    return datetime.datetime.now(tz=datetime.UTC).isoformat()


class DiscordHTTPError(Exception):
    """Raised inside route handlers; rendered as Discord's JSON error body."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        errors: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors
        self.headers = headers or {}
        self.extra = extra or {}

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors is not None:
            out["errors"] = self.errors
        out.update(self.extra)
        return out


def form_error(path: list[Any], code: str, message: str) -> DiscordHTTPError:
    """50035 Invalid Form Body with Discord's nested ``errors`` structure."""
    errors: dict[str, Any] = {"_errors": [{"code": code, "message": message}]}
    for key in reversed(path):
        errors = {str(key): errors}
    return DiscordHTTPError(400, 50035, "Invalid Form Body", errors=errors)


def not_found(code: int, what: str) -> DiscordHTTPError:
    return DiscordHTTPError(404, code, f"Unknown {what}")


def forbidden(code: int = 50013, message: str = "Missing Permissions") -> DiscordHTTPError:
    return DiscordHTTPError(403, code, message)


@dataclass
class UserRef:
    """A user known to the fake.  ``int(user)`` gives the id."""

    id: int
    username: str
    bot: bool = False
    global_name: str | None = None
    dms_closed: bool = False

    def __int__(self) -> int:
        return self.id

    def __index__(self) -> int:
        return self.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.username,
            "discriminator": "0",
            "global_name": self.global_name,
            "avatar": None,
            "bot": self.bot,
            "system": False,
            "public_flags": 0,
            "flags": 0,
            "banner": None,
            "accent_color": None,
            "avatar_decoration_data": None,
            "primary_guild": None,
            "collectibles": None,
        }


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    json: Any
    files: list[dict[str, Any]] = field(default_factory=list)
    template: str | None = None
    status: int | None = None
    response: Any = None

    def __repr__(self) -> str:  # compact in pytest output
        return f"<{self.method} {self.path} -> {self.status}>"


class InteractionHandle:
    """What a test gets back when it injects an interaction.

    ``await handle`` (or ``await handle.response()``) waits for the initial callback and
    returns its body (``{"type": ..., "data": ...}``).  Followups, the original response
    message and edits are collected as they happen.
    """

    def __init__(self, fake: Any, payload: dict[str, Any], created_at: float) -> None:
        self._fake = fake
        self.payload = payload
        self.id = int(payload["id"])
        self.token: str = payload["token"]
        self.type: int = payload["type"]
        self.channel_id = int(payload["channel_id"]) if payload.get("channel_id") else None
        user = payload.get("member", {}).get("user") or payload.get("user")
        self.user_id = int(user["id"]) if user else None
        self.created_at = created_at
        self.callback: dict[str, Any] | None = None  # initial response body
        self.original: dict[str, Any] | None = None  # original response message
        self.followups: list[dict[str, Any]] = []
        self.events: list[
            tuple
        ] = []  # ("callback", body) / ("followup", msg) / ("edit", msg) / ("delete", id)
        self.rejected: list[dict[str, Any]] = []  # error bodies returned for this interaction
        self._changed = asyncio.Condition()

    # -- recording (called by the fake) ---------------------------------------------
    async def _record(self, kind: str, value: Any) -> None:
        self.events.append((kind, value))
        async with self._changed:
            self._changed.notify_all()

    # -- waiting -------------------------------------------------------------------
    async def wait_until(
        self, predicate: Callable[[InteractionHandle], bool], timeout: float = 2.0
    ) -> None:
        async def _wait() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: predicate(self))

        try:
            await asyncio.wait_for(_wait(), timeout)
        except TimeoutError:
            raise TimeoutError(self._diagnose(timeout)) from None

    def _diagnose(self, timeout: float) -> str:
        """Why a wait timed out: the errors the fake returned are usually the answer."""
        lines = [f"{self!r}: condition not met within {timeout}s"]
        if self.rejected:
            lines.append(f"  errors returned for this interaction: {self.rejected}")
        recent = self._fake.errors[-5:]
        if recent:
            lines.append(
                "  recent error responses: "
                + "; ".join(f"{m} {p} -> {s} {b}" for m, p, s, b in recent)
            )
        if self._fake.spec_violations:
            lines.append(f"  spec violations: {self._fake.spec_violations}")
        if self._fake.unhandled:
            lines.append(f"  unimplemented routes hit: {self._fake.unhandled}")
        lines.append(
            "  (exceptions inside the bot's handlers are only logged by discord.py; check the log)"
        )
        return "\n".join(lines)

    async def response(self, timeout: float = 2.0) -> dict[str, Any]:
        await self.wait_until(lambda h: h.callback is not None, timeout)
        assert self.callback is not None
        return self.callback

    def __await__(self):
        return self.response().__await__()

    async def wait_followups(self, count: int = 1, timeout: float = 2.0) -> list[dict[str, Any]]:
        await self.wait_until(lambda h: len(h.followups) >= count, timeout)
        return self.followups

    async def wait_event(self, kind: str, count: int = 1, timeout: float = 2.0) -> list[Any]:
        await self.wait_until(lambda h: sum(1 for k, _ in h.events if k == kind) >= count, timeout)
        return [v for k, v in self.events if k == kind]

    # -- conveniences --------------------------------------------------------------
    @property
    def callback_type(self) -> int | None:
        return None if self.callback is None else self.callback.get("type")

    @property
    def choices(self) -> list[dict[str, Any]] | None:
        """Autocomplete choices (callback type 8)."""
        if self.callback_type == 8:
            return (self.callback.get("data") or {}).get("choices", [])
        return None

    @property
    def modal(self) -> dict[str, Any] | None:
        """The modal the bot showed (callback type 9)."""
        if self.callback_type == 9:
            return self.callback.get("data")
        return None

    @property
    def deferred(self) -> bool:
        return self.callback_type in (5, 6)

    @property
    def ephemeral(self) -> bool:
        data = (self.callback or {}).get("data") or {}
        return bool((data.get("flags") or 0) & 64)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Original response (if any, current state) followed by followups."""
        out = []
        if self.original is not None:
            out.append(self.original)
        out.extend(
            m for m in self.followups if self.original is None or m["id"] != self.original["id"]
        )
        return out

    @property
    def contents(self) -> list[str]:
        return [m.get("content", "") for m in self.messages]

    def __repr__(self) -> str:
        return f"<InteractionHandle id={self.id} type={self.type} callback={self.callback_type} followups={len(self.followups)}>"
