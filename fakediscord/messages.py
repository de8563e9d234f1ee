"""Messages and attachments: creating, editing and deleting them, and reading them back.

Invariant: every message lives in ``messages[channel_id]`` (oldest first) and every change is
dispatched (MESSAGE_CREATE/UPDATE/DELETE) unless the message is ephemeral; posting into an
archived thread unarchives it unless it is locked.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import Any

from .guild import UserLike
from .models import DiscordHTTPError, iso_from_snowflake, iso_now, not_found

MSG_FLAG_EPHEMERAL = 1 << 6
MSG_FLAG_LOADING = 1 << 7


class MessagesMixin:
    """Message plumbing shared by every route, plus the test API to read and post messages."""

    def _present(self, msg: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(msg)
        meta = self._message_meta.get(int(msg["id"]), {})
        author = msg["author"]
        username = author.get("global_name") or author["username"]
        if not msg.get("webhook_id"):
            member = self._guild(msg.get("guild_id")).members.get(int(author["id"]))
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
            members = self._guild(int(channel["guild_id"])).members
            if webhook_id is None and int(author["id"]) in members:
                member = copy.deepcopy(members[int(author["id"])])
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
