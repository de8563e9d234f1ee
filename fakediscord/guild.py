"""The guild model: users, roles, members, text channels and permission arithmetic.

Invariant: every user is in both ``users`` (by name) and ``_users_by_id``; each guild
(``GuildRecord``) owns its roles and members, channels carry their ``guild_id``; a member's
effective permissions in a guild are its @everyone | its roles (ADMINISTRATOR or ownership
means all), and the bot is checked against the same arithmetic, in the guild of the channel it
acts in, before privileged REST actions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .models import P, UserRef, forbidden, iso_now, not_found

UserLike = UserRef | int | str


if TYPE_CHECKING:
    from .routing import Ctx


@dataclass
class GuildRecord:
    """One guild's own state (the first guild's dicts are also ``fake.roles``/``fake.members``)."""

    id: int
    name: str
    owner_id: int
    roles: dict[int, dict[str, Any]] = field(default_factory=dict)
    members: dict[int, dict[str, Any]] = field(default_factory=dict)
    bot_role_id: int = 0
    moderator_role_id: int = 0
    channel_id: int = 0  # its "general" text channel


class GuildMixin:
    """State setup and permission checks (test API: add_user, add_role, set_bot_permissions...)."""

    # The first guild's name and owner, as attributes (tests and payloads read them).
    @property
    def guild_name(self) -> str:
        return self.guilds[self.guild_id].name

    @guild_name.setter
    def guild_name(self, value: str) -> None:
        self.guilds[self.guild_id].name = value

    @property
    def owner_id(self) -> int:
        return self.guilds[self.guild_id].owner_id

    @owner_id.setter
    def owner_id(self, value: int) -> None:
        for guild in self.guilds.values():  # the fake's owner user owns every guild
            guild.owner_id = value

    def _guild(self, where: int | None = None) -> GuildRecord:
        """The guild ``where`` names: a guild id, or a channel/thread id in it (None, a DM or
        an unknown id: the first guild)."""
        if where is None:
            return self.guilds[self.guild_id]
        where = int(where)
        if where in self.guilds:
            return self.guilds[where]
        channel = self._channel_any(where)
        if channel is not None and channel.get("guild_id"):
            return self.guilds[int(channel["guild_id"])]
        return self.guilds[self.guild_id]

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
        guild: GuildRecord | None = None,
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
        (guild or self._guild()).roles[rid] = role
        return rid

    def _add_member(
        self, user: UserRef, roles: Iterable[int], guild: GuildRecord | None = None
    ) -> None:
        (guild or self._guild()).members[user.id] = {
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
        """Add a user (a member of every guild unless ``member=False``; ``roles`` go to the
        guild each belongs to, ``manage_threads`` gives each guild's "Ringmaster" role)."""
        user = self._new_user(username, bot=bot, dms_closed=dms_closed, global_name=global_name)
        role_ids = [int(r) for r in roles]
        if member:
            for guild in self.guilds.values():
                mine = [r for r in role_ids if r in guild.roles]
                if manage_threads and guild.moderator_role_id not in mine:
                    mine.append(guild.moderator_role_id)
                self._add_member(user, mine, guild)
        return user

    def add_role(self, name: str, permissions: int, *, guild_id: int | None = None) -> int:
        guild = self._guild(guild_id)
        return self._add_role(name, permissions, position=len(guild.roles), guild=guild)

    def add_text_channel(
        self, name: str, *, topic: str | None = None, guild_id: int | None = None
    ) -> int:
        guild = self._guild(guild_id)
        cid = self.snowflake()
        self.channels[cid] = {
            "id": str(cid),
            "type": 0,
            "guild_id": str(guild.id),
            "name": name,
            "position": sum(int(c["guild_id"]) == guild.id for c in self.channels.values()),
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

    def add_guild(
        self, name: str = "Another Guild", *, shard: tuple[int, int] | None = None
    ) -> int:
        """Make another guild and return its id (``shard=(i, n)``: an id on shard i of n).

        Like the first: @everyone (id == guild id), the bot's managed role, "Ringmaster"
        (Manage Threads/Messages), every current member with the same semantics (the bot,
        owner and Manage Threads users get this guild's roles; roles added with ``add_role``
        stay in their own guild), the fake's owner user as owner, a "general" text channel
        (``guild_channel(id)``).  Add guilds before the client connects (no GUILD_CREATE is
        sent to live sessions)."""
        gid = self.snowflake.for_shard(*shard) if shard else self.snowflake()
        guild = GuildRecord(gid, name, self.owner_id)
        self.guilds[gid] = guild
        self.guild_command_pools[gid] = {}
        self._add_role("@everyone", P.EVERYONE_DEFAULT, role_id=gid, position=0, guild=guild)
        guild.bot_role_id = self._add_role(
            "CircusBot",
            P.BOT_DEFAULT,
            managed=True,
            position=2,
            tags={"bot_id": str(self.bot_user.id)},
            guild=guild,
        )
        guild.moderator_role_id = self._add_role(
            "Ringmaster", P.MANAGE_THREADS | P.MANAGE_MESSAGES, position=1, guild=guild
        )
        first = self._guild()
        same = {
            first.bot_role_id: guild.bot_role_id,
            first.moderator_role_id: guild.moderator_role_id,
        }
        for uid, member in first.members.items():
            roles = [same[int(r)] for r in member["roles"] if int(r) in same]
            self._add_member(self._users_by_id[uid], roles, guild)
        guild.channel_id = self.add_text_channel("general", guild_id=gid)
        return gid

    def guild_channel(self, guild_id: int) -> int:
        """The id of a guild's "general" text channel."""
        return self.guilds[int(guild_id)].channel_id

    def guild_of(self, channel_id: int) -> int | None:
        """The guild id of a channel or thread (None for a DM or an unknown id)."""
        channel = self._channel_any(channel_id)
        return int(channel["guild_id"]) if channel and channel.get("guild_id") else None

    def set_bot_permissions(self, permissions: int, *, guild_id: int | None = None) -> None:
        guild = self._guild(guild_id)
        guild.roles[guild.bot_role_id]["permissions"] = str(permissions)

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

    def permissions_of(self, user: UserLike, where: int | None = None) -> int:
        """``user``'s permissions in a guild (``where``: its id or a channel's; default first)."""
        guild = self._guild(where)
        uid = self._user(user).id
        if uid == guild.owner_id:
            return P.ALL
        member = guild.members.get(uid)
        if member is None:
            return 0
        perms = int(guild.roles[guild.id]["permissions"])
        for rid in member["roles"]:
            role = guild.roles.get(int(rid))
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

    def _check_guild(self, ctx: Ctx) -> GuildRecord:
        guild = self.guilds.get(int(ctx.params["guild_id"]))
        if guild is None:
            raise not_found(10004, "Guild")
        return guild

    def _bot_has(self, perm: int, where: int | None = None) -> bool:
        return bool(self.permissions_of(self.bot_user, where) & perm)

    def _require_bot(self, perm: int, where: int | None = None) -> None:
        """403 unless the bot has ``perm`` in the guild of ``where`` (a channel or guild id)."""
        if not self._bot_has(perm, where):
            raise forbidden()
