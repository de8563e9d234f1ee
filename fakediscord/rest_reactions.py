"""Message reactions: members react (test API), the bot reacts (REST), and both are dispatched.

Invariant: who reacted with what lives in ``reactors[message_id][emoji_key]`` (user ids, in the
order they reacted) and every message's ``reactions`` field is rebuilt from it; a user reacts
with an emoji at most once; each real change is dispatched as MESSAGE_REACTION_ADD/REMOVE
(/REMOVE_ALL/REMOVE_EMOJI) with Discord's payload, only to sessions holding the reactions intent
(GUILD_MESSAGE_REACTIONS in a guild, DIRECT_MESSAGE_REACTIONS in a DM).
"""

from __future__ import annotations

import copy
import urllib.parse
from typing import TYPE_CHECKING, Any

from .guild import UserLike
from .models import DiscordHTTPError, P

if TYPE_CHECKING:
    from .routing import Route
    from .server import FakeDiscord

INTENT_GUILD_MESSAGE_REACTIONS = 1 << 10
INTENT_DIRECT_MESSAGE_REACTIONS = 1 << 13
REACTION_EVENTS = (
    "MESSAGE_REACTION_ADD",
    "MESSAGE_REACTION_REMOVE",
    "MESSAGE_REACTION_REMOVE_ALL",
    "MESSAGE_REACTION_REMOVE_EMOJI",
)


def parse_emoji(text: str) -> dict[str, Any]:
    """An emoji as Discord's URL path or a test names it: ``⭐`` (unicode), ``name:id`` (custom),
    or ``a:name:id`` (animated custom)."""
    text = urllib.parse.unquote(text)
    parts = text.split(":")
    if len(parts) == 2 and parts[1].isdigit():
        return {"id": parts[1], "name": parts[0]}
    if len(parts) == 3 and parts[0] == "a" and parts[2].isdigit():
        return {"id": parts[2], "name": parts[1], "animated": True}
    return {"id": None, "name": text}


def emoji_key(emoji: dict[str, Any]) -> str:
    return f"{emoji['name']}:{emoji['id']}" if emoji.get("id") else emoji["name"]


def reaction_intent(event: str, data: dict[str, Any]) -> int | None:
    """The intent a session needs to receive `event` (None: no reaction event, no gate)."""
    if event not in REACTION_EVENTS:
        return None
    return (
        INTENT_GUILD_MESSAGE_REACTIONS if data.get("guild_id") else INTENT_DIRECT_MESSAGE_REACTIONS
    )


class ReactionsMixin:
    """Test API: ``react``, ``unreact`` and ``reactions_on``."""

    async def react(self, message_id: int, emoji: str = "⭐", *, user: UserLike = "bob") -> bool:
        """``user`` adds a reaction (as a member clicking it would); False if they already had."""
        msg, cid = self._find_message(int(message_id))
        return await self._add_reaction(msg, cid, parse_emoji(emoji), self._user(user).id)

    async def unreact(self, message_id: int, emoji: str = "⭐", *, user: UserLike = "bob") -> bool:
        """``user`` removes their reaction; False if they had none."""
        msg, cid = self._find_message(int(message_id))
        return await self._remove_reaction(msg, cid, parse_emoji(emoji), self._user(user).id)

    def reactions_on(self, message_id: int) -> dict[str, list[int]]:
        """Emoji key (``⭐`` or ``name:id``) -> ids of the users who reacted, in order."""
        slots = self.reactors.get(int(message_id), {})
        return {key: list(slot["ids"]) for key, slot in slots.items() if slot["ids"]}

    # ------------------------------------------------------------------ plumbing
    def _sync_reactions(self, msg: dict[str, Any]) -> None:
        mine = self.bot_user.id
        out = []
        for users in self.reactors.get(int(msg["id"]), {}).values():
            if not users["ids"]:
                continue
            out.append(
                {
                    "count": len(users["ids"]),
                    "count_details": {"burst": 0, "normal": len(users["ids"])},
                    "me": mine in users["ids"],
                    "me_burst": False,
                    "emoji": copy.deepcopy(users["emoji"]),
                    "burst_colors": [],
                }
            )
        if out:
            msg["reactions"] = out
        else:
            msg.pop("reactions", None)

    def _reaction_base(self, msg: dict[str, Any], cid: int, emoji: dict[str, Any]) -> dict:
        data: dict[str, Any] = {
            "channel_id": str(cid),
            "message_id": msg["id"],
            "emoji": copy.deepcopy(emoji),
            "burst": False,
            "type": 0,
        }
        if msg.get("guild_id"):
            data["guild_id"] = msg["guild_id"]
        return data

    async def _add_reaction(
        self, msg: dict[str, Any], cid: int, emoji: dict[str, Any], user_id: int
    ) -> bool:
        slot = self.reactors.setdefault(int(msg["id"]), {}).setdefault(
            emoji_key(emoji), {"emoji": emoji, "ids": []}
        )
        if user_id in slot["ids"]:
            return False
        slot["ids"].append(user_id)
        self._sync_reactions(msg)
        data = self._reaction_base(msg, cid, emoji)
        data["user_id"] = str(user_id)
        data["burst_colors"] = []
        data["message_author_id"] = msg["author"]["id"]
        members = self._guild(msg.get("guild_id")).members
        if msg.get("guild_id") and user_id in members:
            data["member"] = copy.deepcopy(members[user_id])
        await self.dispatch("MESSAGE_REACTION_ADD", data)
        return True

    async def _remove_reaction(
        self, msg: dict[str, Any], cid: int, emoji: dict[str, Any], user_id: int
    ) -> bool:
        slot = self.reactors.get(int(msg["id"]), {}).get(emoji_key(emoji))
        if slot is None or user_id not in slot["ids"]:
            return False
        slot["ids"].remove(user_id)
        self._sync_reactions(msg)
        data = self._reaction_base(msg, cid, slot["emoji"])
        data["user_id"] = str(user_id)
        await self.dispatch("MESSAGE_REACTION_REMOVE", data)
        return True


def register_reaction_routes(fake: FakeDiscord, route: Route) -> None:
    def target(ctx) -> tuple[dict[str, Any], int]:
        cid = int(ctx.params["channel_id"])
        if fake._channel_any(cid) is None:
            raise DiscordHTTPError(404, 10003, "Unknown Channel")
        return fake._get_message(cid, int(ctx.params["message_id"])), cid

    def emoji_of(ctx) -> dict[str, Any]:
        emoji = parse_emoji(ctx.params["emoji_name"])
        if not emoji["name"]:
            raise DiscordHTTPError(400, 10014, "Unknown Emoji")
        return emoji

    @route("PUT", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me")
    async def add_own_reaction(ctx):
        msg, cid = target(ctx)
        emoji = emoji_of(ctx)
        fake._require_bot(P.READ_MESSAGE_HISTORY, cid)
        existing = fake.reactors.get(int(msg["id"]), {}).get(emoji_key(emoji))
        if not (existing and existing["ids"]):  # only a new reaction needs Add Reactions
            fake._require_bot(P.ADD_REACTIONS, cid)
        await fake._add_reaction(msg, cid, emoji, fake.bot_user.id)
        return None

    @route("DELETE", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me")
    async def remove_own_reaction(ctx):
        msg, cid = target(ctx)
        await fake._remove_reaction(msg, cid, emoji_of(ctx), fake.bot_user.id)
        return None

    @route(
        "DELETE", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/{user_id}"
    )
    async def remove_user_reaction(ctx):
        msg, cid = target(ctx)
        uid = int(ctx.params["user_id"])
        if uid != fake.bot_user.id:
            fake._require_bot(P.MANAGE_MESSAGES, cid)
        await fake._remove_reaction(msg, cid, emoji_of(ctx), uid)
        return None

    @route("GET", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}")
    async def list_reactors(ctx):
        msg, _ = target(ctx)
        slot = fake.reactors.get(int(msg["id"]), {}).get(emoji_key(emoji_of(ctx)))
        ids = sorted(slot["ids"]) if slot else []
        if "after" in ctx.query:
            ids = [i for i in ids if i > int(ctx.query["after"])]
        ids = ids[: int(ctx.query.get("limit", 25))]
        return [fake._users_by_id[i].to_dict() for i in ids if i in fake._users_by_id]

    @route("DELETE", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}")
    async def clear_emoji(ctx):
        msg, cid = target(ctx)
        fake._require_bot(P.MANAGE_MESSAGES, cid)
        emoji = emoji_of(ctx)
        slot = fake.reactors.get(int(msg["id"]), {}).pop(emoji_key(emoji), None)
        fake._sync_reactions(msg)
        if slot and slot["ids"]:
            data = fake._reaction_base(msg, cid, slot["emoji"])
            for key in ("burst", "type"):
                data.pop(key)
            await fake.dispatch("MESSAGE_REACTION_REMOVE_EMOJI", data)
        return None

    @route("DELETE", "/channels/{channel_id}/messages/{message_id}/reactions")
    async def clear_all(ctx):
        msg, cid = target(ctx)
        fake._require_bot(P.MANAGE_MESSAGES, cid)
        had = fake.reactors.pop(int(msg["id"]), {})
        fake._sync_reactions(msg)
        if any(slot["ids"] for slot in had.values()):
            data = {"channel_id": str(cid), "message_id": msg["id"]}
            if msg.get("guild_id"):
                data["guild_id"] = msg["guild_id"]
            await fake.dispatch("MESSAGE_REACTION_REMOVE_ALL", data)
        return None
