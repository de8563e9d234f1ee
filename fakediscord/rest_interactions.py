"""Interaction responses: the initial callback (with its deadline) and the interaction
webhook (followups, @original edits and deletes) that shares the /webhooks/{app id}/... routes.

Invariant: an interaction is acknowledged at most once and only within ``interaction_deadline``;
followups need an acknowledged, unexpired token; every error response is noted on its handle.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .messages import MSG_FLAG_EPHEMERAL, MSG_FLAG_LOADING
from .models import DiscordHTTPError, InteractionHandle, form_error, not_found

if TYPE_CHECKING:
    from .routing import Ctx, Route
    from .server import FakeDiscord


def register_interaction_routes(fake: FakeDiscord, route: Route) -> None:
    @route("POST", "/interactions/{interaction_id}/{interaction_token}/callback")
    async def interaction_callback(ctx):
        handle = interaction_for(fake, ctx, "interaction_id", "interaction_token")
        loop = asyncio.get_running_loop()
        body = ctx.body or {}
        ctype = body.get("type")
        try:
            if (
                loop.time() - handle.created_at > fake.interaction_deadline
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
            raise  # noted on the handle by note_interaction_error
        handle.callback = body
        data = body.get("data") or {}
        message = None
        if ctype in (4, 5):
            message = await make_interaction_message(
                fake, handle, data, ctx.files, loading=ctype == 5
            )
            handle.original = message
        elif ctype == 7 and handle.payload.get("message"):
            msg, cid = fake._find_message(int(handle.payload["message"]["id"]))
            message = await fake._edit_message(cid, msg, data)
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


# ---------------------------------------------------------------- lookups
def interaction_for(fake: FakeDiscord, ctx: Ctx, id_key: str, token_key: str) -> InteractionHandle:
    handle = fake.interactions.get(int(ctx.params[id_key])) if id_key else None
    if handle is None or handle.token != ctx.params[token_key]:
        raise not_found(10062, "interaction")
    return handle


def interaction_by_token(fake: FakeDiscord, ctx: Ctx) -> InteractionHandle:
    if int(ctx.params["webhook_id"]) != fake.application_id:
        raise not_found(10015, "Webhook")
    token = ctx.params["webhook_token"]
    for handle in fake.interactions.values():
        if handle.token == token:
            if asyncio.get_running_loop().time() - handle.created_at > fake.interaction_token_ttl:
                raise DiscordHTTPError(401, 50027, "Invalid Webhook Token")
            return handle
    raise not_found(10015, "Webhook")


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


async def make_interaction_message(
    fake: FakeDiscord,
    handle: InteractionHandle,
    data: dict[str, Any],
    files,
    *,
    loading: bool = False,
) -> dict[str, Any]:
    channel_id = handle.channel_id
    flags = int(data.get("flags") or 0)
    if loading:
        flags |= MSG_FLAG_LOADING
    if not flags & MSG_FLAG_EPHEMERAL:
        await fake._ensure_postable(channel_id)
    attachments = fake._attachments_from(channel_id, data, files)
    meta = {
        "id": str(handle.id),
        "type": handle.type,
        "user": fake._user(handle.user_id).to_dict(),
        "authorizing_integration_owners": handle.payload.get("authorizing_integration_owners", {}),
    }
    if handle.type == 2:
        meta["name"] = handle.payload["data"]["name"]
    extra = {"application_id": str(fake.application_id), "interaction_metadata": meta}
    if handle.type == 2:
        extra["interaction"] = {
            "id": str(handle.id),
            "type": 2,
            "name": handle.payload["data"]["name"],
            "user": meta["user"],
        }
    return await fake._create_message(
        channel_id,
        author=fake.bot_user.to_dict(),
        content=data.get("content") or "",
        body=data,
        attachments=attachments,
        webhook_id=fake.application_id,
        flags=flags,
        mtype=20 if handle.type == 2 else 0,
        extra=extra,
    )


# ---------------------------------------------------------------- interaction webhook (followups)
# The /webhooks/{webhook_id}/{webhook_token}/... routes in rest_webhooks delegate here when
# webhook_id is the application id.
async def execute_followup(fake: FakeDiscord, ctx: Ctx) -> dict[str, Any]:
    body = ctx.body or {}
    handle = interaction_by_token(fake, ctx)
    if handle.callback is None:
        raise not_found(10015, "Webhook")
    original = handle.original
    if original is not None and original["flags"] & MSG_FLAG_LOADING and handle.callback_type == 5:
        # first followup after a "thinking" defer edits the loading message
        attachments = fake._attachments_from(handle.channel_id, body, ctx.files)
        msg = await fake._edit_message(handle.channel_id, original, body, attachments)
        handle.followups.append(msg)
        await handle._record("followup", msg)
        return msg
    msg = await make_interaction_message(fake, handle, body, ctx.files)
    handle.followups.append(msg)
    await handle._record("followup", msg)
    return msg


def get_followup(fake: FakeDiscord, ctx: Ctx, mid: str) -> dict[str, Any]:
    return message_of(interaction_by_token(fake, ctx), mid)


async def edit_followup(fake: FakeDiscord, ctx: Ctx, mid: str) -> dict[str, Any]:
    body = ctx.body or {}
    handle = interaction_by_token(fake, ctx)
    msg = message_of(handle, mid)
    attachments = fake._attachments_from(handle.channel_id, body, ctx.files)
    msg = await fake._edit_message(int(msg["channel_id"]), msg, body, attachments)
    await handle._record("edit", msg)
    return msg


async def delete_followup(fake: FakeDiscord, ctx: Ctx, mid: str) -> None:
    handle = interaction_by_token(fake, ctx)
    msg = message_of(handle, mid)
    await fake._delete_message(int(msg["channel_id"]), msg)
    await handle._record("delete", msg["id"])
    return None


async def note_interaction_error(
    fake: FakeDiscord, template: str | None, path: str, body: dict[str, Any]
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
    for handle in fake.interactions.values():
        if handle.token == token:
            handle.rejected.append(body)
            await handle._record("rejected", body)
            return
