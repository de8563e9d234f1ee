"""Channel webhook routes: create, list, fetch, edit, delete, execute and webhook messages.

Invariant: at most 15 webhooks per channel and never on a thread; executes need the webhook's
token and non-empty content, may target a thread of the webhook's channel via ``thread_id``, and
go to rest_interactions instead when the webhook id is the application id (followups).
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from .models import DiscordHTTPError, P, not_found
from .rest_interactions import delete_followup, edit_followup, execute_followup, get_followup

if TYPE_CHECKING:
    from .routing import Route
    from .server import FakeDiscord


class WebhooksMixin:
    """Test API: webhooks_in() and delete_webhook() (a webhook vanishing behind the bot's back)."""

    def webhooks_in(self, channel_id: int) -> list[dict[str, Any]]:
        return [w for w in self.webhooks.values() if int(w["channel_id"]) == int(channel_id)]

    async def delete_webhook(self, webhook_id: int) -> None:
        """Delete a webhook behind the bot's back (requests to it then 404 with code 10015)."""
        hook = self.webhooks.pop(int(webhook_id))
        self.deleted_webhooks[int(webhook_id)] = hook
        await self.dispatch(
            "WEBHOOKS_UPDATE", {"guild_id": hook["guild_id"], "channel_id": hook["channel_id"]}
        )


def register_webhook_routes(fake: FakeDiscord, route: Route) -> None:
    def channel_webhook(ctx, need_token: bool) -> dict[str, Any]:
        wid = int(ctx.params["webhook_id"])
        hook = fake.webhooks.get(wid)
        if hook is None:
            raise not_found(10015, "Webhook")
        if need_token and hook["token"] != ctx.params["webhook_token"]:
            raise DiscordHTTPError(401, 50027, "Invalid Webhook Token")
        return hook

    @route("POST", "/webhooks/{webhook_id}/{webhook_token}")
    async def execute_webhook(ctx):
        body = ctx.body or {}
        if int(ctx.params["webhook_id"]) == fake.application_id:
            return await execute_followup(fake, ctx)
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
            thread = fake.threads.get(tid)
            if thread is None or int(thread["parent_id"]) != channel_id:
                raise not_found(10003, "Channel")
            channel_id = tid
        await fake._ensure_postable(channel_id)
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
        attachments = fake._attachments_from(channel_id, body, ctx.files)
        msg = await fake._create_message(
            channel_id,
            author=author,
            content=body.get("content") or "",
            body=body,
            attachments=attachments,
            webhook_id=hook["id"],
            avatar_url=body.get("avatar_url"),
            extra={"application_id": str(fake.application_id)}
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
        if int(ctx.params["webhook_id"]) == fake.application_id:
            return get_followup(fake, ctx, mid)
        hook = channel_webhook(ctx, True)
        msg, _ = fake._find_message(int(mid))
        if msg.get("webhook_id") != str(hook["id"]):
            raise not_found(10008, "Message")
        return msg

    @route("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}")
    @route("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/@original")
    async def edit_webhook_message(ctx):
        mid = ctx.params.get("message_id", "@original")
        body = ctx.body or {}
        if int(ctx.params["webhook_id"]) == fake.application_id:
            return await edit_followup(fake, ctx, mid)
        hook = channel_webhook(ctx, True)
        msg, cid = fake._find_message(int(mid))
        if msg.get("webhook_id") != str(hook["id"]):
            raise not_found(10008, "Message")
        attachments = fake._attachments_from(cid, body, ctx.files)
        return await fake._edit_message(cid, msg, body, attachments)

    @route("DELETE", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}")
    @route("DELETE", "/webhooks/{webhook_id}/{webhook_token}/messages/@original")
    async def delete_webhook_message(ctx):
        mid = ctx.params.get("message_id", "@original")
        if int(ctx.params["webhook_id"]) == fake.application_id:
            return await delete_followup(fake, ctx, mid)
        hook = channel_webhook(ctx, True)
        msg, cid = fake._find_message(int(mid))
        if msg.get("webhook_id") != str(hook["id"]):
            raise not_found(10008, "Message")
        await fake._delete_message(cid, msg)
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
        await fake.delete_webhook(int(hook["id"]))
        return None

    @route("GET", "/channels/{channel_id}/webhooks")
    async def list_channel_webhooks(ctx):
        cid = int(ctx.params["channel_id"])
        if cid not in fake.channels:
            raise not_found(10003, "Channel")
        fake._require_bot(P.MANAGE_WEBHOOKS, cid)
        return [public_hook(h) for h in fake.webhooks_in(cid)]

    @route("GET", "/guilds/{guild_id}/webhooks")
    async def list_guild_webhooks(ctx):
        gid = fake._check_guild(ctx).id
        fake._require_bot(P.MANAGE_WEBHOOKS, gid)
        return [public_hook(h) for h in fake.webhooks.values() if int(h["guild_id"]) == gid]

    @route("POST", "/channels/{channel_id}/webhooks")
    async def create_webhook(ctx):
        cid = int(ctx.params["channel_id"])
        if cid not in fake.channels:
            if cid in fake.threads:
                raise DiscordHTTPError(400, 50024, "Cannot execute action on this channel type")
            raise not_found(10003, "Channel")
        fake._require_bot(P.MANAGE_WEBHOOKS, cid)
        if len(fake.webhooks_in(cid)) >= 15:
            raise DiscordHTTPError(400, 30007, "Maximum number of webhooks reached (15)")
        wid = fake.snowflake()
        hook = {
            "id": str(wid),
            "type": 1,
            "guild_id": fake.channels[cid]["guild_id"],
            "channel_id": str(cid),
            "name": ctx.body["name"],
            "avatar": None,
            "token": secrets.token_urlsafe(48),
            "application_id": str(fake.application_id),
            "user": fake.bot_user.to_dict(),
        }
        fake.webhooks[wid] = hook
        await fake.dispatch(
            "WEBHOOKS_UPDATE", {"guild_id": hook["guild_id"], "channel_id": str(cid)}
        )
        return public_hook(hook)
