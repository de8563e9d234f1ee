"""Tests for tests/fakediscord: the real discord.py client against the fake Discord."""

from __future__ import annotations

import asyncio

import aiohttp
import discord
import pytest
from discord import app_commands
from discord.ext import commands
from fakediscord import FakeDiscord, point_discord_py_at  # tests/ is on sys.path (rootdir conftest)

pytestmark = pytest.mark.asyncio


# --------------------------------------------------------------------------- a tiny bot
class TopicModal(discord.ui.Modal, title="New act"):
    topic = discord.ui.TextInput(label="Topic", custom_id="topic")
    notes = discord.ui.TextInput(
        label="Notes", custom_id="notes", style=discord.TextStyle.paragraph, required=False
    )

    def __init__(self, bot: TinyBot) -> None:
        super().__init__(custom_id="new_act")
        self.bot = bot

    async def on_submit(self, interaction: discord.Interaction) -> None:
        self.bot.modal_results.append((self.topic.value, self.notes.value))
        await interaction.response.send_message(f"act about {self.topic.value}", ephemeral=True)


class LabelModal(discord.ui.Modal, title="Cast"):
    def __init__(self, bot: TinyBot) -> None:
        super().__init__(custom_id="cast")
        self.bot = bot
        self.name = discord.ui.TextInput(custom_id="actor_name")
        self.add_item(discord.ui.Label(text="Actor name", component=self.name))

    async def on_submit(self, interaction: discord.Interaction) -> None:
        self.bot.modal_results.append(("label", self.name.value))
        await interaction.response.defer()


class CurtainView(discord.ui.View):
    def __init__(self, bot: TinyBot) -> None:
        super().__init__(timeout=None)
        self.bot = bot

    @discord.ui.button(label="Raise curtain", custom_id="curtain:raise")
    async def raise_curtain(
        self, interaction: discord.Interaction, button: discord.ui.Button
    ) -> None:
        await interaction.response.edit_message(
            content=f"curtain raised by {interaction.user.name}", view=None
        )

    @discord.ui.select(cls=discord.ui.UserSelect, custom_id="curtain:pick")
    async def pick(self, interaction: discord.Interaction, select: discord.ui.UserSelect) -> None:
        self.bot.picked.extend(u.id for u in select.values)
        await interaction.response.defer()


class TinyBot(commands.Bot):
    def __init__(self, fake: FakeDiscord, **kwargs) -> None:
        intents = discord.Intents.default()
        intents.message_content = kwargs.pop("message_content", True)
        intents.members = kwargs.pop("members", True)
        super().__init__(command_prefix="!", intents=intents, guild_ready_timeout=0.01, **kwargs)
        self.fake = fake
        self.modal_results: list[tuple] = []
        self.errors: list[BaseException] = []
        self.webhook: discord.Webhook | None = None
        self.last_thread: discord.Thread | None = None
        self.sleep_before_reply = 0.0
        self.picked: list[int] = []

        circus = app_commands.Group(name="circus", description="Circus commands")

        @circus.command(name="start", description="Start an act")
        @app_commands.describe(topic="What the act is about", partner="Who joins")
        async def start(
            interaction: discord.Interaction, topic: str, partner: discord.Member | None = None
        ):
            await interaction.response.defer(thinking=True)
            thread = await interaction.channel.create_thread(
                name=f"act: {topic}",
                type=discord.ChannelType.public_thread,
                auto_archive_duration=1440,
            )
            self.last_thread = thread
            hook = await self.ensure_webhook(interaction.channel)
            await hook.send(
                content=f"Ladies and gentlemen: {topic}!",
                username="Ringmaster Rex",
                avatar_url="https://example.com/rex.png",
                thread=thread,
                allowed_mentions=discord.AllowedMentions.none(),
            )
            who = partner.display_name if partner else "nobody"
            await interaction.followup.send(f"started {thread.mention} with {who}")
            await interaction.followup.send("second followup", ephemeral=True)

        @start.autocomplete("topic")
        async def topic_autocomplete(interaction: discord.Interaction, current: str):
            topics = ["cats", "clowns", "canons", "dogs", "acrobats"] + [
                f"topic{i}" for i in range(40)
            ]
            return [app_commands.Choice(name=t, value=t) for t in topics if t.startswith(current)][
                :25
            ]

        @circus.command(name="new", description="Open the new-act modal")
        async def new(interaction: discord.Interaction):
            await interaction.response.send_modal(TopicModal(self))

        @circus.command(name="cast", description="Open the label modal")
        async def cast(interaction: discord.Interaction):
            await interaction.response.send_modal(LabelModal(self))

        @circus.command(name="curtain", description="Post the curtain controls")
        async def curtain(interaction: discord.Interaction):
            await interaction.response.send_message("curtain is down", view=CurtainView(self))

        @circus.command(name="dm", description="DM someone")
        async def dm(interaction: discord.Interaction, member: discord.Member):
            await interaction.response.defer(ephemeral=True)
            try:
                await member.send("psst, the show starts soon")
            except discord.Forbidden as exc:
                await interaction.followup.send(f"cannot DM: {exc.code}", ephemeral=True)
            else:
                await interaction.followup.send("sent", ephemeral=True)

        @circus.command(name="slow", description="Replies late")
        async def slow(interaction: discord.Interaction):
            await asyncio.sleep(self.sleep_before_reply)
            try:
                await interaction.response.send_message("finally")
            except discord.HTTPException as exc:
                self.errors.append(exc)

        @circus.command(name="twice", description="Acknowledges twice")
        async def twice(interaction: discord.Interaction):
            await interaction.response.send_message("once")
            # bypass discord.py's own "already responded" guard and hit the API again
            adapter = discord.webhook.async_.async_context.get()
            params = discord.webhook.async_.interaction_response_params(4, {"content": "twice"})
            try:
                await adapter.create_interaction_response(
                    interaction.id, interaction.token, session=interaction._session, params=params
                )
            except discord.HTTPException as exc:
                self.errors.append(exc)

        @circus.command(name="long", description="Too long a reply")
        async def long(interaction: discord.Interaction):
            try:
                await interaction.response.send_message("x" * 2001)
            except discord.HTTPException as exc:
                self.errors.append(exc)
                await interaction.response.send_message("too long, sorry")

        self.tree.add_command(circus)

    async def setup_hook(self) -> None:
        guild = discord.Object(self.fake.guild_id)
        self.tree.copy_global_to(guild=guild)
        await self.tree.sync(guild=guild)

    async def ensure_webhook(self, channel: discord.TextChannel) -> discord.Webhook:
        if self.webhook is None:
            hooks = await channel.webhooks()
            mine = [h for h in hooks if h.user and h.user.id == self.user.id]
            self.webhook = mine[0] if mine else await channel.create_webhook(name="circus-actors")
        return self.webhook


@pytest.fixture
async def fake():
    async with FakeDiscord() as fake:
        yield fake
    # no test may leave a REST call the spec rejects (tests that expect one clear it),
    # nor hit a route the fake does not implement
    assert fake.spec_violations == []
    assert fake.unhandled == []


@pytest.fixture
async def bot(fake):
    bot = TinyBot(fake)
    async with fake.connected(bot):
        yield bot


# --------------------------------------------------------------------------- login & gateway
async def test_login_and_guild_cache(fake: FakeDiscord, bot: TinyBot):
    guild = bot.get_guild(fake.guild_id)
    assert guild is not None and guild.name == fake.guild_name
    assert bot.user.id == fake.bot_user.id
    assert bot.application_id == fake.application_id
    alice = guild.get_member(fake.users["alice"].id)
    bob = guild.get_member(fake.users["bob"].id)
    assert alice.guild_permissions.manage_threads
    assert not bob.guild_permissions.manage_threads
    assert [c["name"] for c in fake.guild_commands.values()] == ["circus"]
    assert fake.spec_violations == []
    assert fake.unhandled == []


async def test_slash_defer_thread_webhook_followups(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash(
        "circus start", {"topic": "cats", "partner": fake.users["bob"]}, user="alice"
    )
    callback = await handle
    assert callback["type"] == 5
    await handle.wait_followups(2)
    thread = fake.thread_by_name("act: cats")
    assert thread["type"] == 11 and int(thread["parent_id"]) == fake.channel_id
    posted = fake.messages_in(int(thread["id"]))
    assert [(m["username"], m["content"], m["avatar_url"]) for m in posted] == [
        ("Ringmaster Rex", "Ladies and gentlemen: cats!", "https://example.com/rex.png")
    ]
    assert posted[0]["webhook_id"] is not None
    # first followup replaced the "thinking" message, second is ephemeral
    assert handle.original["content"] == f"started <#{thread['id']}> with bob"
    assert handle.followups[1]["flags"] & 64
    channel_msgs = fake.messages_in(fake.channel_id)
    assert [m["type"] for m in channel_msgs] == [
        20,
        18,
    ]  # deferred command reply, thread-created notice
    assert fake.unhandled == []


async def test_autocomplete(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.autocomplete("circus start", {"topic": "c"}, focused="topic", user="bob")
    await handle
    assert [c["value"] for c in handle.choices] == ["cats", "clowns", "canons"]
    handle = await fake.autocomplete(
        "circus start", {"topic": "topic"}, focused="topic", user="bob"
    )
    await handle
    assert len(handle.choices) == 25


async def test_modal_roundtrip(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus new", user="alice")
    await handle
    assert handle.modal["custom_id"] == "new_act"
    submitted = await fake.submit_modal(handle, {"topic": "jugglers", "notes": "bring pins"})
    reply = await submitted
    assert reply["type"] == 4 and reply["data"]["content"] == "act about jugglers"
    assert bot.modal_results == [("jugglers", "bring pins")]


# --------------------------------------------------------------------------- Discord's rules
async def test_content_over_2000_rejected(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus long", user="bob")
    reply = await handle
    assert reply["data"]["content"] == "too long, sorry"
    [exc] = bot.errors
    assert exc.status == 400 and exc.code == 50035
    assert "content" in exc.text or "2000" in exc.text
    assert (
        handle.rejected[0]["errors"]["data"]["content"]["_errors"][0]["code"]
        == "BASE_TYPE_MAX_LENGTH"
    )
    assert fake.spec_violations == []  # a rule rejection, not a spec violation


async def test_channel_message_over_2000_rejected(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    with pytest.raises(discord.HTTPException) as info:
        await channel.send("y" * 2001)
    assert info.value.code == 50035
    await channel.send("y" * 2000)
    assert len(fake.messages_in(fake.channel_id)[-1]["content"]) == 2000


@pytest.mark.parametrize("name", ["Clyde the clown", "my DISCORD bot", ""])
async def test_webhook_username_rules(fake: FakeDiscord, bot: TinyBot, name: str):
    hook = await bot.ensure_webhook(bot.get_channel(fake.channel_id))
    with pytest.raises(discord.HTTPException) as info:
        await hook.send("hello", username=name or " ")
    assert info.value.status == 400 and info.value.code == 50035
    assert fake.messages_in(fake.channel_id) == []


async def test_webhook_name_rules_on_create(fake: FakeDiscord, bot: TinyBot):
    with pytest.raises(discord.HTTPException) as info:
        await bot.get_channel(fake.channel_id).create_webhook(name="clyde")
    assert info.value.code == 50035


async def test_dm_open_and_closed(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus dm", {"member": fake.users["bob"]}, user="alice")
    await handle.wait_followups(1)
    assert handle.contents == ["sent"]
    assert [m["content"] for m in fake.dms_to("bob")] == ["psst, the show starts soon"]

    handle = await fake.slash("circus dm", {"member": fake.users["carol"]}, user="alice")
    await handle.wait_followups(1)
    assert handle.contents == ["cannot DM: 50007"]
    assert fake.dms_to("carol") == []
    assert ("POST", "/users/@me/channels") in [(r.method, r.path) for r in fake.requests]


async def test_double_ack_rejected(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus twice", user="bob")
    await handle.wait_event("rejected")
    [exc] = bot.errors
    assert exc.status == 400 and exc.code == 40060
    assert handle.callback["data"]["content"] == "once"


async def test_initial_response_deadline(fake: FakeDiscord, bot: TinyBot):
    fake.interaction_deadline = 0.05
    bot.sleep_before_reply = 0.1
    handle = await fake.slash("circus slow", user="bob")
    await handle.wait_event("rejected")
    [exc] = bot.errors
    assert isinstance(exc, discord.NotFound) and exc.code == 10062
    assert handle.callback is None


async def test_webhook_429_retried_by_discord_py(fake: FakeDiscord, bot: TinyBot):
    hook = await bot.ensure_webhook(bot.get_channel(fake.channel_id))
    fake.rate_limit_next_webhook_executes(2, retry_after=0.02)
    msg = await hook.send("after the storm", username="Weather", wait=True)
    assert msg.content == "after the storm"
    executes = fake.requests_to("POST", "/webhooks/{webhook_id}/{webhook_token}")
    assert [r.status for r in executes] == [429, 429, 200]
    assert executes[0].response["retry_after"] == 0.02


async def test_webhook_bucket_rate_limit(fake: FakeDiscord, bot: TinyBot):
    hook = await bot.ensure_webhook(bot.get_channel(fake.channel_id))
    fake.set_webhook_rate_limit(2, per=0.1, send_headers=False)
    for i in range(3):
        await hook.send(f"m{i}")
    statuses = [
        r.status for r in fake.requests_to("POST", "/webhooks/{webhook_id}/{webhook_token}")
    ]
    assert statuses.count(429) >= 1 and statuses.count(204) == 3
    assert [m["content"] for m in fake.messages_in(fake.channel_id)] == ["m0", "m1", "m2"]


async def test_webhook_limit_per_channel(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    for i in range(15):
        await channel.create_webhook(name=f"hook{i}")
    with pytest.raises(discord.HTTPException) as info:
        await channel.create_webhook(name="one too many")
    assert info.value.code == 30007
    assert len(fake.webhooks_in(fake.channel_id)) == 15


async def test_deleted_webhook_then_recreated(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    hook = await bot.ensure_webhook(channel)
    await fake.delete_webhook(hook.id)
    with pytest.raises(discord.NotFound) as info:
        await hook.send("anyone there?")
    assert info.value.code == 10015
    bot.webhook = None
    hook2 = await bot.ensure_webhook(channel)
    assert hook2.id != hook.id
    await hook2.send("back again")
    assert [m["content"] for m in fake.messages_in(fake.channel_id)] == ["back again"]


async def test_archived_thread_rules(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    thread = await channel.create_thread(name="old act", type=discord.ChannelType.public_thread)
    hook = await bot.ensure_webhook(channel)
    first = await hook.send("before", thread=thread, wait=True)
    await fake.archive_thread(thread.id)
    # editing in an archived thread fails like Discord (50083)
    with pytest.raises(discord.HTTPException) as info:
        await hook.edit_message(first.id, content="edited", thread=thread)
    assert info.value.code == 50083
    # posting through the webhook unarchives it
    await hook.send("wake up", thread=thread)
    assert fake.threads[thread.id]["thread_metadata"]["archived"] is False
    assert [m["content"] for m in fake.messages_in(thread.id)] == ["before", "wake up"]
    # and the bot can archive it itself
    await thread.edit(archived=True)
    assert fake.threads[thread.id]["thread_metadata"]["archived"] is True
    await thread.edit(archived=False)
    assert fake.threads[thread.id]["thread_metadata"]["archived"] is False


async def test_thread_from_message_and_attachments(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    msg = await channel.send(
        "the show", file=discord.File(__import__("io").BytesIO(b"hello"), "program.txt")
    )
    thread = await msg.create_thread(name="show thread")
    assert thread.id == msg.id
    [stored] = fake.messages_in(fake.channel_id)
    [att] = stored["attachments"]
    assert att["filename"] == "program.txt" and att["size"] == 5
    async with aiohttp.ClientSession() as session:
        async with session.get(att["url"]) as resp:
            assert await resp.read() == b"hello"
    hook = await bot.ensure_webhook(channel)
    await hook.send(
        "with file", thread=thread, file=discord.File(__import__("io").BytesIO(b"abc"), "a.txt")
    )
    [m] = fake.messages_in(thread.id)
    assert m["attachments"][0]["filename"] == "a.txt"
    async with channel.typing():
        pass
    assert fake.typing and fake.typing[0][0] == fake.channel_id


async def test_spec_violation_is_recorded_and_rejected(fake: FakeDiscord, bot: TinyBot):
    route = discord.http.Route("POST", "/channels/{channel_id}/threads", channel_id=fake.channel_id)
    with pytest.raises(discord.HTTPException) as info:
        await bot.http.request(route, json={"name": "x" * 101, "type": 11})
    assert info.value.status == 400
    assert len(fake.spec_violations) == 1 and "name" in fake.spec_violations[0]
    fake.spec_violations.clear()


async def test_human_messages_and_content_intent(fake: FakeDiscord):
    bot = TinyBot(fake, message_content=False)
    seen: list[discord.Message] = []

    async def on_message(message: discord.Message) -> None:
        seen.append(message)

    bot.add_listener(on_message)
    async with fake.connected(bot):
        await fake.post_message(fake.channel_id, "secret plans", user="bob")
        await fake.post_message(fake.channel_id, f"hey <@{fake.bot_user.id}>", user="bob")
        for _ in range(100):
            if len(seen) == 2:
                break
            await asyncio.sleep(0.005)
    assert [m.content for m in seen] == ["", f"hey <@{fake.bot_user.id}>"]


async def test_reconnect_resumes(fake: FakeDiscord, bot: TinyBot):
    await fake.force_reconnect()
    for _ in range(400):
        if any(e["t"] == "RESUMED" for e in fake.gateway_events):
            break
        await asyncio.sleep(0.005)
    assert [p["op"] for p in fake.gateway_received if p["op"] in (2, 6)] == [
        2,
        6,
    ]  # one IDENTIFY, one RESUME
    assert len(fake.gateway_connections) == 2
    handle = await fake.autocomplete("circus start", {"topic": "do"}, focused="topic", user="bob")
    await handle
    assert [c["value"] for c in handle.choices] == ["dogs"]


async def test_gateway_compression_and_identify(fake: FakeDiscord, bot: TinyBot):
    from discord import utils

    [query] = fake.gateway_connections
    assert query["v"] == "10" and query["encoding"] == "json"
    assert query.get("compress") == utils._ActiveDecompressionContext.COMPRESSION_TYPE
    [identify] = [p for p in fake.gateway_received if p["op"] == 2]
    assert identify["d"]["token"] == fake.token
    assert identify["d"]["intents"] & (1 << 15)  # message content intent as the bot asked


async def test_point_discord_py_at_restores():
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    before = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
    restore = point_discord_py_at("http://127.0.0.1:1")
    assert Route.BASE == "http://127.0.0.1:1/api/v10"
    assert str(DiscordWebSocket.DEFAULT_GATEWAY) == "ws://127.0.0.1:1/"
    restore()
    assert (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY) == before


async def test_label_modal(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus cast", user="bob")
    await handle
    assert handle.modal["components"][0]["type"] == 18
    reply = await (await fake.submit_modal(handle, {"actor_name": "Mimi"}))
    assert reply["type"] == 6
    assert bot.modal_results == [("label", "Mimi")]


async def test_component_click_and_select(fake: FakeDiscord, bot: TinyBot):
    handle = await fake.slash("circus curtain", user="alice")
    await handle
    message_id = int(handle.original["id"])
    picked = await fake.click(message_id, "curtain:pick", user="alice", values=[fake.users["bob"]])
    assert (await picked)["type"] == 6
    assert bot.picked == [fake.users["bob"].id]
    clicked = await fake.click(message_id, "curtain:raise", user="bob")
    assert (await clicked)["type"] == 7
    [msg] = [m for m in fake.messages_in(fake.channel_id) if int(m["id"]) == message_id]
    assert msg["content"] == "curtain raised by bob" and msg["components"] == []


async def test_bot_rest_429_retried(fake: FakeDiscord, bot: TinyBot):
    fake.rate_limit_next("POST", "/channels/{channel_id}/messages", 1, retry_after=0.02)
    await bot.get_channel(fake.channel_id).send("eventually")
    assert [r.status for r in fake.requests_to("POST", "/channels/{channel_id}/messages")] == [
        429,
        200,
    ]


async def test_webhook_bucket_headers_avoid_429(fake: FakeDiscord, bot: TinyBot):
    hook = await bot.ensure_webhook(bot.get_channel(fake.channel_id))
    fake.set_webhook_rate_limit(2, per=0.1, send_headers=True)
    loop = asyncio.get_running_loop()
    started = loop.time()
    for i in range(3):
        await hook.send(f"m{i}")
    assert loop.time() - started >= 0.05  # discord.py waited for the bucket to reset
    statuses = [
        r.status for r in fake.requests_to("POST", "/webhooks/{webhook_id}/{webhook_token}")
    ]
    assert statuses == [204, 204, 204]


async def test_without_members_intent_members_are_fetched(fake: FakeDiscord):
    bot = TinyBot(fake, members=False)
    async with fake.connected(bot):
        guild = bot.get_guild(fake.guild_id)
        assert guild.get_member(fake.users["alice"].id) is None
        member = await guild.fetch_member(fake.users["alice"].id)
        assert member.guild_permissions.manage_threads
        with pytest.raises(discord.NotFound):
            await guild.fetch_member(12345)


async def test_dropped_connection_resumes_and_replays(fake: FakeDiscord, bot: TinyBot):
    await fake.drop_connections(code=4000)
    # events dispatched while the bot is away are buffered and replayed on RESUME
    handle = await fake.autocomplete("circus start", {"topic": "cl"}, focused="topic", user="bob")
    await handle.response(timeout=3)
    assert [c["value"] for c in handle.choices] == ["clowns"]
    assert [p["op"] for p in fake.gateway_received if p["op"] in (2, 6)] == [2, 6]


async def test_partial_webhook_from_id_and_token(fake: FakeDiscord, bot: TinyBot):
    made = await bot.get_channel(fake.channel_id).create_webhook(name="stored")
    # what a bot does with an id/token it persisted: Webhook.from_url() only accepts discord.com
    hook = discord.Webhook.partial(made.id, made.token, client=bot)
    msg = await hook.send("from storage", username="Keeper", wait=True)
    assert msg.author.name == "Keeper"
    assert fake.messages_in(fake.channel_id)[-1]["username"] == "Keeper"
