"""Channel, thread and message routes: channels, threads, thread members, messages, typing
(reactions: rest_reactions).

Invariant: permission-gated actions check the bot's permissions first; archived threads reject
edits (a locked one also rejects posts), and every state change is dispatched on the gateway.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .messages import MSG_FLAG_EPHEMERAL
from .models import DiscordHTTPError, P, forbidden, iso_now, not_found

if TYPE_CHECKING:
    from .routing import Route
    from .server import FakeDiscord


class ChannelsMixin:
    """Test API: thread_by_name() and archive_thread()."""

    def thread_by_name(self, name: str) -> dict[str, Any]:
        for t in self.threads.values():
            if t["name"] == name:
                return t
        raise KeyError(name)

    async def archive_thread(self, thread_id: int, *, locked: bool = False) -> None:
        thread = self.threads[int(thread_id)]
        thread["thread_metadata"]["archived"] = True
        thread["thread_metadata"]["locked"] = locked
        thread["thread_metadata"]["archive_timestamp"] = iso_now()
        await self.dispatch("THREAD_UPDATE", thread)


def register_channel_routes(fake: FakeDiscord, route: Route) -> None:
    def thread_payload(
        thread_id: int, parent_id: int, body: dict[str, Any], default_type: int
    ) -> dict[str, Any]:
        ttype = int(body.get("type") or default_type)
        duration = int(
            body.get("auto_archive_duration")
            or fake.channels[parent_id].get("default_auto_archive_duration", 1440)
        )
        thread = {
            "id": str(thread_id),
            "type": ttype,
            "guild_id": fake.channels[parent_id]["guild_id"],
            "parent_id": str(parent_id),
            "owner_id": str(fake.bot_user.id),
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
                "user_id": str(fake.bot_user.id),
                "join_timestamp": iso_now(),
                "flags": 0,
            },
        }
        if ttype == 12:
            thread["thread_metadata"]["invitable"] = bool(body.get("invitable", True))
        return thread

    async def register_thread(thread: dict[str, Any]) -> dict[str, Any]:
        tid = int(thread["id"])
        fake.threads[tid] = thread
        fake.messages.setdefault(tid, [])
        fake.thread_members[tid] = {fake.bot_user.id}
        await fake.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return thread

    @route("POST", "/channels/{channel_id}/threads")
    async def create_thread(ctx):
        cid = int(ctx.params["channel_id"])
        if cid not in fake.channels:
            if fake._channel_any(cid) is not None:
                raise DiscordHTTPError(400, 50024, "Cannot execute action on this channel type")
            raise not_found(10003, "Channel")
        body = ctx.body or {}
        ttype = int(
            body.get("type") or 12
        )  # Discord defaults to a private thread without a message
        fake._require_bot(P.CREATE_PRIVATE_THREADS if ttype == 12 else P.CREATE_PUBLIC_THREADS, cid)
        thread = await register_thread(thread_payload(fake.snowflake(), cid, body, ttype))
        if ttype == 11:
            await fake._create_message(
                cid,
                author=fake.bot_user.to_dict(),
                content=thread["name"],
                mtype=18,
                extra={
                    "message_reference": {
                        "channel_id": thread["id"],
                        "guild_id": thread["guild_id"],
                    }
                },
            )
        return 201, thread

    @route("POST", "/channels/{channel_id}/messages/{message_id}/threads")
    async def create_thread_from_message(ctx):
        cid = int(ctx.params["channel_id"])
        if cid not in fake.channels:
            raise not_found(10003, "Channel")
        msg = fake._get_message(cid, int(ctx.params["message_id"]))
        if msg.get("thread"):
            raise DiscordHTTPError(
                400, 160004, "A thread has already been created for this message"
            )
        fake._require_bot(P.CREATE_PUBLIC_THREADS, cid)
        thread = thread_payload(int(msg["id"]), cid, ctx.body or {}, 11)
        thread["type"] = 11
        await register_thread(thread)
        msg["thread"] = thread
        return 201, thread

    @route("GET", "/channels/{channel_id}")
    async def get_channel(ctx):
        ch = fake._channel_any(int(ctx.params["channel_id"]))
        if ch is None:
            raise not_found(10003, "Channel")
        return ch

    @route("PATCH", "/channels/{channel_id}")
    async def edit_channel(ctx):
        cid = int(ctx.params["channel_id"])
        ch = fake._channel_any(cid)
        if ch is None:
            raise not_found(10003, "Channel")
        body = ctx.body or {}
        if cid in fake.threads:
            meta = ch["thread_metadata"]
            if meta["archived"] and body.get("archived") is not False:
                raise DiscordHTTPError(400, 50083, "Thread is archived")
            if (
                ("locked" in body or "archived" in body)
                and not fake._bot_has(P.MANAGE_THREADS, cid)
                and int(ch["owner_id"]) != fake.bot_user.id
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
            await fake.dispatch("THREAD_UPDATE", ch)
        else:
            if ch["type"] == 1:
                raise DiscordHTTPError(400, 50024, "Cannot execute action on this channel type")
            fake._require_bot(P.MANAGE_CHANNELS, cid)
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
            await fake.dispatch("CHANNEL_UPDATE", ch)
        return ch

    @route("DELETE", "/channels/{channel_id}")
    async def delete_channel(ctx):
        cid = int(ctx.params["channel_id"])
        if cid in fake.threads:
            fake._require_bot(P.MANAGE_THREADS, cid)
            thread = fake.threads.pop(cid)
            await fake.dispatch(
                "THREAD_DELETE", {k: thread[k] for k in ("id", "guild_id", "parent_id", "type")}
            )
            return thread
        if cid in fake.channels:
            fake._require_bot(P.MANAGE_CHANNELS, cid)
            ch = fake.channels.pop(cid)
            await fake.dispatch("CHANNEL_DELETE", ch)
            return ch
        raise not_found(10003, "Channel")

    @route("GET", "/channels/{channel_id}/messages")
    async def list_messages(ctx):
        cid = int(ctx.params["channel_id"])
        if fake._channel_any(cid) is None:
            raise not_found(10003, "Channel")
        msgs = [
            m for m in fake.messages.get(cid, []) if not (m.get("flags", 0) & MSG_FLAG_EPHEMERAL)
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
        return fake._get_message(int(ctx.params["channel_id"]), int(ctx.params["message_id"]))

    @route("POST", "/channels/{channel_id}/messages")
    async def create_message(ctx):
        cid = int(ctx.params["channel_id"])
        channel = await fake._ensure_postable(cid)
        body = ctx.body or {}
        if channel["type"] == 1:
            recipient = fake._users_by_id[int(channel["recipients"][0]["id"])]
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
        attachments = fake._attachments_from(cid, body, ctx.files)
        return await fake._create_message(
            cid,
            author=fake.bot_user.to_dict(),
            content=body.get("content") or "",
            body=body,
            attachments=attachments,
        )

    @route("PATCH", "/channels/{channel_id}/messages/{message_id}")
    async def edit_message(ctx):
        cid = int(ctx.params["channel_id"])
        msg = fake._get_message(cid, int(ctx.params["message_id"]))
        if int(msg["author"]["id"]) != fake.bot_user.id:
            raise forbidden(50005, "Cannot edit a message authored by another user")
        attachments = fake._attachments_from(cid, ctx.body or {}, ctx.files)
        return await fake._edit_message(cid, msg, ctx.body or {}, attachments)

    @route("DELETE", "/channels/{channel_id}/messages/{message_id}")
    async def delete_message(ctx):
        cid = int(ctx.params["channel_id"])
        msg = fake._get_message(cid, int(ctx.params["message_id"]))
        if int(msg["author"]["id"]) != fake.bot_user.id:
            fake._require_bot(P.MANAGE_MESSAGES, cid)
        await fake._delete_message(cid, msg)
        return None

    @route("POST", "/channels/{channel_id}/typing")
    async def typing(ctx):
        cid = int(ctx.params["channel_id"])
        if fake._channel_any(cid) is None:
            raise not_found(10003, "Channel")
        fake.typing.append((cid, asyncio.get_running_loop().time()))
        return None

    @route("PUT", "/channels/{channel_id}/thread-members/@me")
    @route("PUT", "/channels/{channel_id}/thread-members/{user_id}")
    @route("DELETE", "/channels/{channel_id}/thread-members/@me")
    @route("DELETE", "/channels/{channel_id}/thread-members/{user_id}")
    async def thread_member(ctx):
        tid = int(ctx.params["channel_id"])
        if tid not in fake.threads:
            raise not_found(10003, "Channel")
        uid = fake.bot_user.id if "user_id" not in ctx.params else int(ctx.params["user_id"])
        if uid not in fake._users_by_id:
            raise not_found(10013, "User")
        members = fake.thread_members.setdefault(tid, set())
        if ctx.method == "PUT":
            members.add(uid)
        else:
            members.discard(uid)
        fake.threads[tid]["member_count"] = len(members)
        return None

    @route("GET", "/channels/{channel_id}/thread-members")
    async def list_thread_members(ctx):
        tid = int(ctx.params["channel_id"])
        if tid not in fake.threads:
            raise not_found(10003, "Channel")
        return [
            {"id": str(tid), "user_id": str(u), "join_timestamp": iso_now(), "flags": 0}
            for u in sorted(fake.thread_members.get(tid, ()))
        ]

    @route("GET", "/guilds/{guild_id}/threads/active")
    async def active_threads(ctx):
        gid = str(fake._check_guild(ctx).id)
        threads = [
            t
            for t in fake.threads.values()
            if not t["thread_metadata"]["archived"] and t["guild_id"] == gid
        ]
        return {"threads": threads, "members": [], "has_more": False}

    @route("GET", "/channels/{channel_id}/threads/archived/public")
    @route("GET", "/channels/{channel_id}/threads/archived/private")
    async def archived_threads(ctx):
        cid = int(ctx.params["channel_id"])
        want = 11 if ctx.template.endswith("public") else 12
        threads = [
            t
            for t in fake.threads.values()
            if t["thread_metadata"]["archived"] and int(t["parent_id"]) == cid and t["type"] == want
        ]
        return {"threads": threads, "members": [], "has_more": False}
