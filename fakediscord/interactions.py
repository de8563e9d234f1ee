"""Injecting interactions as a user would: slash commands, autocomplete, modals, components.

Invariant: payloads are built from what the bot registered (command ids, option types, the
modal or message components it sent), so a test can only invoke what a real user could; each
injected interaction is tracked as an ``InteractionHandle`` in ``interactions``.
"""

from __future__ import annotations

import asyncio
import copy
import secrets
from typing import Any

from .guild import UserLike
from .models import InteractionHandle, UserRef


class InteractionsMixin:
    """Test API: slash(), autocomplete(), submit_modal(), click(), inject_interaction()."""

    def _interaction_base(
        self, itype: int, user: UserLike, channel_id: int | None
    ) -> dict[str, Any]:
        u = self._user(user)
        channel_id = int(channel_id or self.channel_id)
        channel = self._channel_any(channel_id)
        if channel is None:
            raise ValueError(f"unknown channel {channel_id}")
        payload: dict[str, Any] = {
            "id": str(self.snowflake()),
            "application_id": str(self.application_id),
            "type": itype,
            "token": "itok_" + secrets.token_urlsafe(32),
            "version": 1,
            "channel_id": str(channel_id),
            "channel": self._interaction_channel(channel),
            "locale": "en-US",
            "entitlements": [],
            "attachment_size_limit": 10 * 1024 * 1024,
            "app_permissions": str(self.permissions_of(self.bot_user, channel_id)),
        }
        if channel["type"] == 1:  # DM
            payload["user"] = u.to_dict()
            payload["context"] = 1
            payload["authorizing_integration_owners"] = {"0": str(self.guild_id)}
        else:
            guild = self._guild(channel_id)  # the interaction is in the channel's guild
            member = guild.members.get(u.id)
            if member is None:
                raise ValueError(f"{u.username} is not a member of the guild")
            m = copy.deepcopy(member)
            m["permissions"] = str(self.permissions_of(u, guild.id))
            payload.update(
                guild_id=str(guild.id),
                member=m,
                context=0,
                guild_locale="en-US",
                guild={"id": str(guild.id), "locale": "en-US", "features": []},
                authorizing_integration_owners={"0": str(guild.id)},
            )
        return payload

    def _interaction_channel(self, channel: dict[str, Any]) -> dict[str, Any]:
        c = copy.deepcopy(channel)
        if c["type"] != 1:
            c["permissions"] = str(self.permissions_of(self.bot_user, int(c["id"])))
        return c

    async def inject_interaction(
        self,
        itype: int,
        data: dict[str, Any] | None,
        *,
        user: UserLike,
        channel_id: int | None = None,
        message: dict[str, Any] | None = None,
    ) -> InteractionHandle:
        """Low level: dispatch INTERACTION_CREATE with the given ``data``."""
        payload = self._interaction_base(itype, user, channel_id)
        if data is not None:
            payload["data"] = data
        if message is not None:
            payload["message"] = message
        handle = InteractionHandle(self, payload, asyncio.get_running_loop().time())
        self.interactions[handle.id] = handle
        await self.dispatch("INTERACTION_CREATE", payload)
        return handle

    def find_command(self, name: str, *, type: int = 1, where: int | None = None) -> dict[str, Any]:
        """The command ``name`` as registered for the guild of ``where`` (a guild or channel
        id; default the first guild), else globally."""
        gid = str(self._guild(where).id)
        mine = [c for c in self.guild_commands.values() if c.get("guild_id") == gid]
        for pool in (mine, self.global_commands.values()):
            for cmd in pool:
                if cmd["name"] == name and cmd.get("type", 1) == type:
                    return cmd
        raise LookupError(
            f"application command {name!r} (type {type}) was not registered by the bot; "
            f"registered: {[c['name'] for c in [*self.guild_commands.values(), *self.global_commands.values()]]}"
        )

    def _build_command_data(
        self,
        command: str,
        options: dict[str, Any] | None,
        focused: str | None = None,
        where: int | None = None,
    ) -> dict[str, Any]:
        parts = command.split()
        cmd = self.find_command(parts[0], where=where)
        data: dict[str, Any] = {"id": cmd["id"], "name": cmd["name"], "type": 1}
        if cmd.get("guild_id"):
            data["guild_id"] = cmd["guild_id"]
        resolved: dict[str, dict[str, Any]] = {}
        container = cmd.get("options") or []
        wrappers: list[dict[str, Any]] = []
        for part in parts[1:]:
            sub = next((o for o in container if o["name"] == part and o["type"] in (1, 2)), None)
            if sub is None:
                raise LookupError(
                    f"{command!r}: no subcommand (group) {part!r}; have {[o['name'] for o in container]}"
                )
            wrappers.append({"name": sub["name"], "type": sub["type"], "options": []})
            container = sub.get("options") or []
        if any(o["type"] in (1, 2) for o in container):
            raise LookupError(
                f"{command!r} is a group; name a subcommand: {[o['name'] for o in container]}"
            )
        leaf_opts = []
        options = dict(options or {})
        for definition in container:
            name = definition["name"]
            if name not in options:
                if definition.get("required") and focused is None:
                    raise ValueError(f"{command!r}: required option {name!r} missing")
                continue
            value = options.pop(name)
            entry: dict[str, Any] = {"name": name, "type": definition["type"]}
            if name == focused:
                entry["value"] = str(value)
                entry["focused"] = True
            else:
                entry["value"] = self._option_value(definition, value, resolved, where)
            leaf_opts.append(entry)
        if options:
            raise ValueError(
                f"{command!r}: unknown options {sorted(options)}; have {[o['name'] for o in container]}"
            )
        node = leaf_opts
        for wrapper in reversed(wrappers):
            wrapper["options"] = node
            node = [wrapper]
        data["options"] = node
        if resolved:
            data["resolved"] = resolved
        return data

    def _option_value(
        self,
        definition: dict[str, Any],
        value: Any,
        resolved: dict[str, dict[str, Any]],
        where: int | None = None,
    ) -> Any:
        """One option's value; users resolve to members and roles to roles of ``where``'s guild."""
        t = definition["type"]
        guild = self._guild(where)
        if t == 3:
            value = str(value)
        elif t == 4:
            value = int(value)
        elif t == 5:
            value = bool(value)
        elif t == 10:
            value = float(value)
        elif t in (6, 9) and (
            isinstance(value, UserRef) or (t == 6) or int(value) in self._users_by_id
        ):
            u = self._user(value)
            resolved.setdefault("users", {})[str(u.id)] = u.to_dict()
            if u.id in guild.members:
                m = copy.deepcopy(guild.members[u.id])
                m.pop("user")
                m["permissions"] = str(self.permissions_of(u, guild.id))
                resolved.setdefault("members", {})[str(u.id)] = m
            value = str(u.id)
        elif t in (8, 9):
            role = guild.roles[int(value)]
            resolved.setdefault("roles", {})[role["id"]] = role
            value = role["id"]
        elif t == 7:
            ch = self._channel_any(int(value))
            if ch is None:
                raise ValueError(f"unknown channel {value}")
            c = {
                k: ch.get(k)
                for k in ("id", "name", "type", "parent_id", "thread_metadata")
                if ch.get(k) is not None
            }
            c["permissions"] = str(self.permissions_of(self.bot_user, int(c["id"])))
            resolved.setdefault("channels", {})[c["id"]] = c
            value = c["id"]
        elif t == 11:
            filename, content = value
            att = self._make_attachment(where or self.channel_id, filename, content, None)
            resolved.setdefault("attachments", {})[att["id"]] = att
            value = att["id"]
        choices = definition.get("choices")
        if choices and value not in [c["value"] for c in choices]:
            raise ValueError(f"option {definition['name']!r}: {value!r} is not one of the choices")
        return value

    async def slash(
        self,
        command: str,
        options: dict[str, Any] | None = None,
        *,
        user: UserLike = "alice",
        channel_id: int | None = None,
    ) -> InteractionHandle:
        """Invoke a registered slash command like a user would.

        ``command`` is "name", "name sub" or "name group sub"; ``options`` maps option name to
        value (UserRef/ids for USER, role ids, channel ids, ``(filename, bytes)`` for ATTACHMENT).
        The payload (ids, nested options, resolved) is built from the command the bot registered.
        Raises ``CommandUnavailable`` (nothing is delivered) if Discord would not offer the
        command to ``user`` there (``default_member_permissions``, Integrations overrides)."""
        where = channel_id or self.channel_id
        data = self._build_command_data(command, options, where=where)
        self._require_usable(self.find_command(data["name"], where=where), user, where)
        return await self.inject_interaction(2, data, user=user, channel_id=channel_id)

    async def autocomplete(
        self,
        command: str,
        options: dict[str, Any] | None = None,
        *,
        focused: str,
        user: UserLike = "alice",
        channel_id: int | None = None,
    ) -> InteractionHandle:
        """Type-4 interaction; ``options[focused]`` is the partial text typed so far."""
        options = dict(options or {})
        options.setdefault(focused, "")
        where = channel_id or self.channel_id
        data = self._build_command_data(command, options, focused=focused, where=where)
        self._require_usable(self.find_command(data["name"], where=where), user, where)
        return await self.inject_interaction(4, data, user=user, channel_id=channel_id)

    async def submit_modal(
        self,
        modal: InteractionHandle | dict[str, Any] | str,
        values: dict[str, str],
        *,
        user: UserLike | None = None,
        channel_id: int | None = None,
    ) -> InteractionHandle:
        """Submit a modal (type 5).  ``modal`` is the handle whose callback showed it, the modal
        dict, or a bare custom_id.  ``values`` maps text-input custom_id -> value.  A modal
        shown in answer to a component (a button on a message) carries that message, as on
        Discord, so the bot may answer by updating it (callback type 7)."""
        message = None
        if isinstance(modal, InteractionHandle):
            if modal.type == 3 and modal.payload.get("message"):
                message, _ = self._find_message(int(modal.payload["message"]["id"]))
                message = copy.deepcopy(message)
            if user is None:
                user = modal.user_id
            if channel_id is None:
                channel_id = modal.channel_id
            modal_data = modal.modal
            if modal_data is None:
                raise ValueError(f"{modal!r} did not respond with a modal")
        elif isinstance(modal, str):
            modal_data = {
                "custom_id": modal,
                "components": [
                    {"type": 1, "components": [{"type": 4, "custom_id": k}]} for k in values
                ],
            }
        else:
            modal_data = modal
        remaining = dict(values)
        resolved: dict[str, dict[str, Any]] = {}

        def fill(component: dict[str, Any]) -> dict[str, Any] | None:
            t = component.get("type")
            if t == 1:
                kids = [
                    k for k in (fill(c) for c in component.get("components", [])) if k is not None
                ]
                return {"type": 1, "id": component.get("id", 0), "components": kids}
            if t == 18:
                inner = fill(component["component"])
                return {"type": 18, "id": component.get("id", 0), "component": inner}
            if t == 4:
                value = remaining.pop(component["custom_id"], component.get("value") or "")
                return {
                    "type": 4,
                    "id": component.get("id", 0),
                    "custom_id": component["custom_id"],
                    "value": value,
                }
            if t in (3, 5, 6, 7, 8, 19, 22):  # selects, file upload, checkbox group: "values"
                value = remaining.pop(component["custom_id"], [])
                values = []
                for v in value:
                    if t in (5, 6, 7, 8):
                        values.append(self._resolve_select_value(t, v, resolved, channel_id))
                    elif t == 19:
                        filename, content = v
                        att = self._make_attachment(
                            int(channel_id or self.channel_id), filename, content, None
                        )
                        resolved.setdefault("attachments", {})[att["id"]] = att
                        values.append(att["id"])
                    else:
                        values.append(str(v))
                return {
                    "type": t,
                    "id": component.get("id", 0),
                    "custom_id": component["custom_id"],
                    "values": values,
                }
            if t == 21:  # radio group
                return {
                    "type": t,
                    "id": component.get("id", 0),
                    "custom_id": component["custom_id"],
                    "value": remaining.pop(component["custom_id"], None),
                }
            if t == 23:  # checkbox
                return {
                    "type": t,
                    "id": component.get("id", 0),
                    "custom_id": component["custom_id"],
                    "value": bool(remaining.pop(component["custom_id"], False)),
                }
            if t == 10:
                return {"type": 10, "id": component.get("id", 0)}
            return None

        components = [
            c for c in (fill(c) for c in modal_data.get("components", [])) if c is not None
        ]
        if remaining:
            raise ValueError(
                f"modal {modal_data.get('custom_id')!r} has no inputs {sorted(remaining)}"
            )
        data: dict[str, Any] = {"custom_id": modal_data["custom_id"], "components": components}
        if resolved:
            data["resolved"] = resolved
        return await self.inject_interaction(
            5,
            data,
            user=user if user is not None else "alice",
            channel_id=channel_id,
            message=message,
        )

    def _resolve_select_value(
        self,
        ctype: int,
        value: Any,
        resolved: dict[str, dict[str, Any]],
        where: int | None = None,
    ) -> str:
        """Resolve one value of a user(5)/role(6)/mentionable(7)/channel(8) select."""
        roles = self._guild(where).roles
        if ctype == 6 or (ctype == 7 and not isinstance(value, UserRef) and int(value) in roles):
            return self._option_value({"type": 8, "name": "values"}, value, resolved, where)
        if ctype == 8:
            return self._option_value({"type": 7, "name": "values"}, value, resolved, where)
        return self._option_value({"type": 6, "name": "values"}, value, resolved, where)

    async def click(
        self,
        message_id: int,
        custom_id: str,
        *,
        user: UserLike = "alice",
        values: list[str] | None = None,
    ) -> InteractionHandle:
        """Component interaction (type 3) on a message the bot sent."""
        msg, channel_id = self._find_message(int(message_id))
        comp_type = None
        found: dict[str, Any] = {}

        def walk(components: list[dict[str, Any]]) -> None:
            nonlocal comp_type
            for c in components:
                if c.get("custom_id") == custom_id:
                    comp_type = c["type"]
                    found.update(c)
                walk(c.get("components", []))
                if c.get("component"):
                    walk([c["component"]])
                if c.get("accessory"):
                    walk([c["accessory"]])

        walk(msg.get("components", []))
        if comp_type is None:
            raise LookupError(f"message {message_id} has no component {custom_id!r}")
        if found.get("disabled"):  # Discord's client greys it out: nothing is delivered
            raise ComponentDisabled(f"component {custom_id!r} of message {message_id} is disabled")
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": comp_type}
        if comp_type == 3 and values is not None:
            offered = {o["value"] for o in found.get("options", [])}
            low, high = found.get("min_values", 1), found.get("max_values", 1)
            if not set(values) <= offered or not low <= len(values) <= high:
                raise ValueError(f"select {custom_id!r} offers {sorted(offered)}, not {values}")
        if values is not None:
            resolved: dict[str, dict[str, Any]] = {}
            if comp_type in (5, 6, 7, 8):
                values = [
                    self._resolve_select_value(comp_type, v, resolved, channel_id) for v in values
                ]
            data["values"] = [str(v) for v in values]
            if resolved:
                data["resolved"] = resolved
        return await self.inject_interaction(
            3, data, user=user, channel_id=channel_id, message=copy.deepcopy(msg)
        )

    async def message_command(
        self, name: str, message_id: int, *, user: UserLike = "alice"
    ) -> InteractionHandle:
        """A member runs the message command ``name`` (long-press a message → Apps): type 2
        with command type 3, ``target_id`` and the message in ``resolved.messages``."""
        msg, channel_id = self._find_message(int(message_id))
        cmd = self.find_command(name, type=3, where=channel_id)
        self._require_usable(cmd, user, channel_id)
        data: dict[str, Any] = {
            "id": cmd["id"],
            "name": cmd["name"],
            "type": 3,
            "target_id": msg["id"],
            "resolved": {"messages": {msg["id"]: copy.deepcopy(msg)}},
        }
        if cmd.get("guild_id"):
            data["guild_id"] = cmd["guild_id"]
        return await self.inject_interaction(2, data, user=user, channel_id=channel_id)


class ComponentDisabled(LookupError):
    """The test clicked a component Discord shows disabled (the click never reaches the bot)."""
