"""The guild model: users, roles, members, text channels and permission arithmetic.

Invariant: every user is in both ``users`` (by name) and ``_users_by_id``; a member's effective
permissions are @everyone | its roles (ADMINISTRATOR or ownership means all), and the bot is
checked against the same arithmetic before privileged REST actions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .models import P, UserRef, forbidden, iso_now, not_found

UserLike = UserRef | int | str


if TYPE_CHECKING:
    from .routing import Ctx


class GuildMixin:
    """State setup and permission checks (test API: add_user, add_role, set_bot_permissions...)."""

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

    def _check_guild(self, ctx: Ctx) -> None:
        if int(ctx.params["guild_id"]) != self.guild_id:
            raise not_found(10004, "Guild")

    def _bot_has(self, perm: int) -> bool:
        return bool(self.permissions_of(self.bot_user) & perm)

    def _require_bot(self, perm: int) -> None:
        if not self._bot_has(perm):
            raise forbidden()
