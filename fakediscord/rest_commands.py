"""Application command routes: global and guild commands (list, bulk overwrite, CRUD).

Invariant: commands are keyed by (name, type) per pool; overwriting keeps the id of a command
with the same key and bumps ``version``, and only the fake's own application id is accepted.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from .models import forbidden, form_error, not_found

if TYPE_CHECKING:
    from .routing import Route
    from .server import FakeDiscord


def register_command_routes(fake: FakeDiscord, route: Route) -> None:
    def check_app(ctx):
        if int(ctx.params["application_id"]) != fake.application_id:
            raise forbidden(50001, "Missing Access")

    def pool_for(ctx) -> dict[int, dict[str, Any]]:
        check_app(ctx)
        if "guild_id" in ctx.params:
            pool = fake.guild_command_pools.get(int(ctx.params["guild_id"]))
            if pool is None:  # not a guild the bot is in
                raise forbidden(50001, "Missing Access")
            return pool
        return fake.global_commands

    def normalize_command(ctx, body, existing: dict[str, Any] | None) -> dict[str, Any]:
        cmd = copy.deepcopy(body)
        cmd.setdefault("type", 1)
        cmd["id"] = existing["id"] if existing else str(fake.snowflake())
        cmd["application_id"] = str(fake.application_id)
        cmd["version"] = str(fake.snowflake())
        cmd.setdefault("description", "")
        cmd.setdefault("default_member_permissions", None)
        if cmd["default_member_permissions"] is not None:  # Discord answers a string bit set
            cmd["default_member_permissions"] = str(int(cmd["default_member_permissions"]))
        cmd.setdefault("nsfw", False)
        cmd.setdefault("integration_types", [0])
        cmd.setdefault("contexts", None)
        if "guild_id" in ctx.params:
            cmd["guild_id"] = ctx.params["guild_id"]
        return cmd

    @route("GET", "/applications/{application_id}/commands")
    @route("GET", "/applications/{application_id}/guilds/{guild_id}/commands")
    async def list_commands(ctx):
        return list(pool_for(ctx).values())

    @route("PUT", "/applications/{application_id}/commands")
    @route("PUT", "/applications/{application_id}/guilds/{guild_id}/commands")
    async def bulk_overwrite(ctx):
        pool = pool_for(ctx)
        body = ctx.body or []
        names = [(c.get("name"), c.get("type", 1)) for c in body]
        if len(names) != len(set(names)):
            raise form_error(
                [],
                "APPLICATION_COMMANDS_DUPLICATE_NAME",
                "Application command names must be unique",
            )
        by_key = {(c["name"], c.get("type", 1)): c for c in pool.values()}
        new = [normalize_command(ctx, c, by_key.get((c["name"], c.get("type", 1)))) for c in body]
        pool.clear()
        for c in new:
            pool[int(c["id"])] = c
        return new

    @route("POST", "/applications/{application_id}/commands")
    @route("POST", "/applications/{application_id}/guilds/{guild_id}/commands")
    async def upsert_command(ctx):
        pool = pool_for(ctx)
        existing = next(
            (
                c
                for c in pool.values()
                if c["name"] == ctx.body["name"] and c.get("type", 1) == ctx.body.get("type", 1)
            ),
            None,
        )
        cmd = normalize_command(ctx, ctx.body, existing)
        pool[int(cmd["id"])] = cmd
        return (200 if existing else 201), cmd

    @route("GET", "/applications/{application_id}/commands/{command_id}")
    @route("GET", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
    async def get_command(ctx):
        cmd = pool_for(ctx).get(int(ctx.params["command_id"]))
        if cmd is None:
            raise not_found(10063, "application command")
        return cmd

    @route("PATCH", "/applications/{application_id}/commands/{command_id}")
    @route("PATCH", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
    async def edit_command(ctx):
        cmd = await get_command(ctx)
        cmd.update(copy.deepcopy(ctx.body or {}))
        cmd["version"] = str(fake.snowflake())
        return cmd

    @route("DELETE", "/applications/{application_id}/commands/{command_id}")
    @route("DELETE", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}")
    async def delete_command(ctx):
        await get_command(ctx)
        pool_for(ctx).pop(int(ctx.params["command_id"]))
        return None

    # Command permissions are set by admins in the client (the fake: set_command_permissions);
    # an app may read them. Editing them needs a user's Bearer token (not modelled).
    @route("GET", "/applications/{application_id}/guilds/{guild_id}/commands/permissions")
    async def list_command_permissions(ctx):
        pool = pool_for(ctx)
        keys = [k for k in fake.command_permissions if k in pool or k == fake.application_id]
        return [fake.command_permissions_payload(k) for k in keys]

    @route(
        "GET", "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}/permissions"
    )
    async def get_command_permissions(ctx):
        pool_for(ctx)
        payload = fake.command_permissions_payload(int(ctx.params["command_id"]))
        if payload is None:
            raise not_found(10066, "application command permissions")
        return payload
