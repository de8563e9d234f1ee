"""Login, user, application, DM and guild read routes.

Invariant: these routes only read the guild model, except ``POST /users/@me/channels`` which
opens (at most) one DM channel per user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .gateway import GatewaySession
from .models import not_found

if TYPE_CHECKING:
    from .routing import Route
    from .server import FakeDiscord


def register_user_routes(fake: FakeDiscord, route: Route) -> None:
    """Gateway discovery, users and the application (registered first)."""

    @route("GET", "/gateway")
    async def get_gateway(ctx):
        return {"url": fake.gateway_url.rstrip("/")}

    @route("GET", "/gateway/bot")
    async def get_gateway_bot(ctx):
        return {
            "url": fake.gateway_url.rstrip("/"),
            "shards": fake.recommended_shards,
            "session_start_limit": fake.session_starts.as_json(),
        }

    @route("GET", "/users/@me")
    async def get_me(ctx):
        d = fake.bot_user.to_dict()
        d.update({"verified": True, "mfa_enabled": False, "email": None, "locale": "en-US"})
        return d

    @route("GET", "/users/{user_id}")
    async def get_user(ctx):
        uid = int(ctx.params["user_id"])
        if uid not in fake._users_by_id:
            raise not_found(10013, "User")
        return fake._users_by_id[uid].to_dict()

    def app_info():
        owner = fake._users_by_id[fake.owner_id].to_dict()
        return {
            "id": str(fake.application_id),
            "name": fake.bot_user.username,
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "cover_image": None,
            "bot_public": False,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": fake.application_flags,
            "owner": owner,
            "team": None,
            "guild_id": None,
            "rpc_origins": [],
            "terms_of_service_url": None,
            "privacy_policy_url": None,
            "interactions_endpoint_url": None,
            "redirect_uris": [],
            "tags": [],
            "integration_types_config": {"0": {}},
            "approximate_guild_count": len(fake.guilds),
            "bot": fake.bot_user.to_dict(),
        }

    @route("GET", "/oauth2/applications/@me")
    async def get_oauth_app(ctx):
        return app_info()

    @route("GET", "/applications/@me")
    async def get_app(ctx):
        return app_info()


def register_guild_routes(fake: FakeDiscord, route: Route) -> None:
    """DMs, guild, channels list, roles and members (registered last)."""

    @route("POST", "/users/@me/channels")
    async def open_dm(ctx):
        uid = int(ctx.body["recipient_id"])
        if uid not in fake._users_by_id:
            raise not_found(10013, "User")
        dm = fake.dm_channels.get(uid)
        if dm is None:
            cid = fake.snowflake()
            dm = {
                "id": str(cid),
                "type": 1,
                "last_message_id": None,
                "flags": 0,
                "recipients": [fake._users_by_id[uid].to_dict()],
            }
            fake.dm_channels[uid] = dm
            fake.messages[cid] = []
        return dm

    @route("GET", "/guilds/{guild_id}")
    async def get_guild(ctx):
        guild = fake._check_guild(ctx)
        data = fake._guild_create_payload(GatewaySession("x", 0), guild)
        for key in (
            "members",
            "channels",
            "threads",
            "presences",
            "voice_states",
            "joined_at",
            "large",
            "member_count",
            "unavailable",
            "lazy",
            "stage_instances",
            "guild_scheduled_events",
            "soundboard_sounds",
        ):
            data.pop(key, None)
        return data

    @route("GET", "/guilds/{guild_id}/channels")
    async def get_guild_channels(ctx):
        gid = str(fake._check_guild(ctx).id)
        return [c for c in fake.channels.values() if c["guild_id"] == gid]

    @route("GET", "/guilds/{guild_id}/roles")
    async def get_roles(ctx):
        return list(fake._check_guild(ctx).roles.values())

    @route("GET", "/guilds/{guild_id}/members/{user_id}")
    async def get_member(ctx):
        member = fake._check_guild(ctx).members.get(int(ctx.params["user_id"]))
        if member is None:
            raise not_found(10007, "Member")
        return member

    @route("GET", "/guilds/{guild_id}/members")
    async def list_members(ctx):
        guild = fake._check_guild(ctx)
        limit = int(ctx.query.get("limit", 1))
        after = int(ctx.query.get("after", 0))
        members = sorted(guild.members.values(), key=lambda m: int(m["user"]["id"]))
        return [m for m in members if int(m["user"]["id"]) > after][:limit]
