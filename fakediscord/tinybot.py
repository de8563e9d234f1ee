"""TinyBot: the small discord.py bot that the fake's own tests drive, and their fixtures' core.

Invariant: TinyBot only uses discord.py's public API (except ``/circus twice``, which bypasses
discord.py's guard on purpose), so what the fake's tests observe is what a real bot would see;
``checked_fake()`` fails a test that left a spec violation or hit an unimplemented route.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import discord
from discord import app_commands
from discord.ext import commands

from .server import FakeDiscord


@contextlib.asynccontextmanager
async def checked_fake() -> AsyncIterator[FakeDiscord]:
    """A running FakeDiscord; on exit, asserts no test left a REST call the spec rejects (tests
    that expect one clear it), nor hit a route the fake does not implement."""
    async with FakeDiscord() as fake:
        yield fake
    assert fake.spec_violations == []
    assert fake.unhandled == []


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
