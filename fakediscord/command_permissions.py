"""Who may use an application command, as Discord decides before an interaction exists.

Invariant: ``slash()`` and ``autocomplete()`` deliver nothing for a command the member may not
use (Discord's client does not even list it): the bot never sees the attempt. The rule is
Discord's "permissions v2" (changelog 2022-11-17): Administrator (or ownership) may use every
command; the channel must allow Use Application Commands; a channel denied at command level (or,
without a command-level channel entry, at app level) hides it; a command-level user/role entry
decides outright (it overrides ``default_member_permissions``); otherwise an app-level deny
hides it, and ``default_member_permissions`` (every bit, "0" = admins only) decides. Threads
follow their parent channel. Admins set these entries in Server Settings → Integrations; tests
set them with ``set_command_permissions``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .guild import UserLike
from .models import P

ROLE, USER, CHANNEL = 1, 2, 3


class CommandUnavailable(LookupError):
    """Discord would not offer this command to this member here; nothing reached the bot."""


@dataclass(frozen=True)
class Entry:
    """One application command permission (Discord's {id, type, permission})."""

    id: int
    type: int  # ROLE, USER or CHANNEL
    permission: bool

    def to_dict(self) -> dict[str, Any]:
        return {"id": str(self.id), "type": self.type, "permission": self.permission}


def command_allowed(
    *,
    default_member_permissions: str | None,
    member_permissions: int,
    user_id: int,
    role_ids: Iterable[int],
    channel_ids: tuple[int, ...],
    guild_id: int,
    command_level: Iterable[Entry] = (),
    app_level: Iterable[Entry] = (),
) -> bool:
    """Discord's decision (pure). ``channel_ids``: the channel, then its parent for a thread."""
    if member_permissions & P.ADMINISTRATOR:
        return True
    if not member_permissions & P.USE_APPLICATION_COMMANDS:
        return False
    command_level, app_level = list(command_level), list(app_level)
    channel = _channel_verdict(command_level, channel_ids, guild_id)
    if channel is None:
        channel = _channel_verdict(app_level, channel_ids, guild_id)
    if channel is False:
        return False
    roles = set(role_ids)
    member = _member_verdict(command_level, user_id, roles, guild_id)
    if member is not None:
        return member
    if _member_verdict(app_level, user_id, roles, guild_id) is False:
        return False
    if default_member_permissions is None:
        return True
    needed = int(default_member_permissions)
    return needed != 0 and member_permissions & needed == needed


def _channel_verdict(entries: list[Entry], channel_ids: tuple[int, ...], guild_id: int):
    by_id = {e.id: e.permission for e in entries if e.type == CHANNEL}
    for cid in channel_ids:
        if cid in by_id:
            return by_id[cid]
    return by_id.get(guild_id - 1)  # "All Channels"


def _member_verdict(entries: list[Entry], user_id: int, roles: set[int], guild_id: int):
    users = {e.id: e.permission for e in entries if e.type == USER}
    if user_id in users:
        return users[user_id]
    held = [e.permission for e in entries if e.type == ROLE and e.id in roles]
    if held:
        return any(held)  # any allowing role is enough
    everyone = [e.permission for e in entries if e.type == ROLE and e.id == guild_id]
    return everyone[0] if everyone else None


class CommandPermissionsMixin:
    """Test API: ``set_command_permissions``; ``may_use`` is what slash()/autocomplete() ask."""

    def set_command_permissions(
        self,
        command: str | None,
        *,
        users: Mapping[UserLike, bool] | None = None,
        roles: Mapping[int, bool] | None = None,
        channels: Mapping[int, bool] | None = None,
    ) -> None:
        """What an admin sets in Server Settings → Integrations → the app: for one command by
        name (registered by the bot), or for the whole app (``command=None``). Replaces the
        entries of that level; ``roles={fake.guild_id: ...}`` is @everyone."""
        key = self.application_id if command is None else int(self.find_command(command)["id"])
        entries = [Entry(self._user(u).id, USER, bool(v)) for u, v in (users or {}).items()]
        entries += [Entry(int(r), ROLE, bool(v)) for r, v in (roles or {}).items()]
        entries += [Entry(int(c), CHANNEL, bool(v)) for c, v in (channels or {}).items()]
        if len(entries) > 100:
            raise ValueError("Discord allows at most 100 permissions per command")
        self.command_permissions[key] = entries

    def may_use(self, command: dict[str, Any], user: UserLike, channel_id: int) -> bool:
        """Would Discord offer ``command`` to ``user`` in ``channel_id``?"""
        u = self._user(user)
        channel = self._channel_any(channel_id) or {}
        if channel.get("type") == 1:  # a DM: only global commands allowed in bot DMs
            contexts = command.get("contexts")
            return not command.get("guild_id") and (contexts is None or 1 in contexts)
        guild = self._guild(channel_id)
        member = guild.members.get(u.id)
        if member is None:
            return False
        channel_ids = (int(channel_id),)
        if channel.get("parent_id"):
            channel_ids += (int(channel["parent_id"]),)
        return command_allowed(
            default_member_permissions=command.get("default_member_permissions"),
            member_permissions=self.permissions_of(u, guild.id),
            user_id=u.id,
            role_ids=[int(r) for r in member["roles"]],
            channel_ids=channel_ids,
            guild_id=guild.id,
            command_level=self.command_permissions.get(int(command["id"]), ()),
            app_level=self.command_permissions.get(self.application_id, ()),
        )

    def _require_usable(self, command: dict[str, Any], user: UserLike, channel_id: int) -> None:
        if not self.may_use(command, user, channel_id):
            raise CommandUnavailable(
                f"{self._user(user).username} cannot use /{command['name']} in channel "
                f"{channel_id}: Discord would not offer it (default_member_permissions="
                f"{command.get('default_member_permissions')!r}, or an Integrations override)"
            )

    def command_permissions_payload(self, command_id: int) -> dict[str, Any] | None:
        entries = self.command_permissions.get(int(command_id))
        if entries is None:
            return None
        return {
            "id": str(command_id),
            "application_id": str(self.application_id),
            "guild_id": str(self.guild_id),  # Integrations entries: set for the first guild
            "permissions": [e.to_dict() for e in entries],
        }
