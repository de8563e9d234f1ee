"""Pins: the bot pins or unpins a message in a channel or thread (both of Discord's routes).

Invariant: pinning needs Manage Messages (403 / 50013 without it); a pin changes the message's
``pinned`` (MESSAGE_UPDATE), dispatches CHANNEL_PINS_UPDATE and, like Discord, leaves a type-6
"pinned a message" system line in the channel; pinning a pinned message changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .models import P, iso_now

if TYPE_CHECKING:
    from .routing import Route
    from .server import FakeDiscord

MAX_PINS = 250


def register_pin_routes(fake: FakeDiscord, route: Route) -> None:
    async def changed(cid: int, msg: dict) -> None:
        await fake.dispatch("MESSAGE_UPDATE", msg)
        data = {"channel_id": str(cid), "guild_id": str(fake._guild(cid).id)}
        data["last_pin_timestamp"] = iso_now()
        await fake.dispatch("CHANNEL_PINS_UPDATE", data)

    @route("PUT", "/channels/{channel_id}/pins/{message_id}")
    @route("PUT", "/channels/{channel_id}/messages/pins/{message_id}")
    async def pin(ctx):
        cid = int(ctx.params["channel_id"])
        msg = fake._get_message(cid, int(ctx.params["message_id"]))
        fake._require_bot(P.MANAGE_MESSAGES, cid)
        if msg.get("pinned"):
            return None
        msg["pinned"] = True
        fake.pins.setdefault(cid, []).append(int(msg["id"]))
        await changed(cid, msg)
        await fake._create_message(
            cid,
            author=fake.bot_user.to_dict(),
            mtype=6,
            extra={"message_reference": {"channel_id": str(cid), "message_id": msg["id"]}},
        )
        return None

    @route("DELETE", "/channels/{channel_id}/pins/{message_id}")
    @route("DELETE", "/channels/{channel_id}/messages/pins/{message_id}")
    async def unpin(ctx):
        cid = int(ctx.params["channel_id"])
        msg = fake._get_message(cid, int(ctx.params["message_id"]))
        fake._require_bot(P.MANAGE_MESSAGES, cid)
        if msg.get("pinned"):
            msg["pinned"] = False
            fake.pins[cid].remove(int(msg["id"]))
            await changed(cid, msg)
        return None

    @route("GET", "/channels/{channel_id}/pins")
    async def list_pins(ctx):
        cid = int(ctx.params["channel_id"])
        ids = fake.pins.get(cid, [])
        return [fake._get_message(cid, mid) for mid in reversed(ids)]

    @route("GET", "/channels/{channel_id}/messages/pins")
    async def list_message_pins(ctx):  # the newer, paginated listing discord.py 2.7 reads
        cid = int(ctx.params["channel_id"])
        items = [
            {"pinned_at": iso_now(), "message": fake._get_message(cid, mid)}
            for mid in reversed(fake.pins.get(cid, []))
        ]
        return {"items": items, "has_more": False}
