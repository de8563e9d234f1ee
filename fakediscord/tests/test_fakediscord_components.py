"""The fake Discord's component rules: limits on buttons, selects and modals checked on every
message the bot sends or edits, message commands (type 3), clicks on disabled buttons, pins.
"""

from __future__ import annotations

import discord
import pytest

from fakediscord import ComponentDisabled, FakeDiscord, P
from fakediscord.components import check_commands, check_modal, check_request
from fakediscord.models import DiscordHTTPError
from fakediscord.tinybot import TinyBot


def button(n: int, **extra: object) -> dict:
    return {"type": 2, "style": 1, "label": f"b{n}", "custom_id": f"id{n}", **extra}


def row(*kids: dict) -> dict:
    return {"type": 1, "components": list(kids)}


def select(options: int, **extra: object) -> dict:
    opts = [{"label": f"o{i}", "value": f"v{i}"} for i in range(options)]
    return {"type": 3, "custom_id": "pick", "options": opts, **extra}


MESSAGE = ("POST", "/channels/{channel_id}/messages")


def refusal(body: object, where: tuple[str, str] = MESSAGE) -> str | None:
    """The error code Discord answers a message body with, or None if it is accepted."""
    try:
        check_request(*where, body)
    except DiscordHTTPError as exc:
        errors = exc.errors
        while "_errors" not in errors:
            errors = next(iter(errors.values()))
        return errors["_errors"][0]["code"]
    return None


@pytest.mark.parametrize(
    ("components", "code"),
    [
        ([row(*(button(i) for i in range(5)))], None),
        ([row(*(button(i) for i in range(6)))], "BASE_TYPE_MAX_LENGTH"),
        ([row(button(i)) for i in range(5)], None),
        ([row(button(i)) for i in range(6)], "BASE_TYPE_MAX_LENGTH"),
        ([row(select(25))], None),
        ([row(select(26))], "BASE_TYPE_MAX_LENGTH"),
        ([row(select(2), button(1))], "COMPONENT_LAYOUT_WIDTH_EXCEEDED"),
        ([row(select(2, max_values=26))], "NUMBER_TYPE_MAX"),
        ([row(button(1, label="x" * 80))], None),
        ([row(button(1, label="x" * 81))], "BASE_TYPE_MAX_LENGTH"),
        ([row(button(1, custom_id="x" * 100))], None),
        ([row(button(1, custom_id="x" * 101))], "BASE_TYPE_MAX_LENGTH"),
        ([row(button(1), button(2, custom_id="id1"))], "COMPONENT_CUSTOM_ID_DUPLICATED"),
        ([row(button(1, custom_id=None))], "BASE_TYPE_REQUIRED"),
        ([row({"type": 2, "style": 5, "label": "site", "url": "https://x.test"})], None),
        ([button(1)], "UNION_TYPE_CHOICES"),
        ([row()], "BASE_TYPE_MIN_LENGTH"),
    ],
)
def test_message_component_limits(components: list, code: str | None):
    assert refusal({"content": "panel", "components": components}) == code


@pytest.mark.parametrize(
    "where",
    [
        ("PATCH", "/channels/{channel_id}/messages/{message_id}"),
        ("POST", "/webhooks/{webhook_id}/{webhook_token}"),
        ("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}"),
        ("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/@original"),
    ],
)
def test_limits_apply_to_every_send_and_edit(where: tuple[str, str]):
    assert refusal({"components": [row(select(26))]}, where) == "BASE_TYPE_MAX_LENGTH"


CALLBACK = ("POST", "/interactions/{interaction_id}/{interaction_token}/callback")


@pytest.mark.parametrize(
    ("callback", "code"),
    [
        ({"type": 4, "data": {"content": "x", "components": [row(select(26))]}}, "BASE_TYPE_MAX_LENGTH"),
        ({"type": 7, "data": {"components": [row(*(button(i) for i in range(6)))]}}, "BASE_TYPE_MAX_LENGTH"),
        ({"type": 9, "data": {"title": "t" * 45, "custom_id": "m", "components": [row({"type": 4, "custom_id": "a", "label": "A", "style": 1})]}}, None),
        ({"type": 9, "data": {"title": "t" * 46, "custom_id": "m", "components": [row({"type": 4, "custom_id": "a", "label": "A", "style": 1})]}}, "BASE_TYPE_MAX_LENGTH"),
        ({"type": 9, "data": {"title": "t", "custom_id": "m" * 101, "components": [row({"type": 4, "custom_id": "a", "label": "A", "style": 1})]}}, "BASE_TYPE_MAX_LENGTH"),
        ({"type": 9, "data": {"title": "t", "custom_id": "m", "components": []}}, "BASE_TYPE_MAX_LENGTH"),
        ({"type": 9, "data": {"title": "t", "custom_id": "m", "components": [row({"type": 4, "custom_id": "a", "label": "L" * 46, "style": 1})]}}, "BASE_TYPE_MAX_LENGTH"),
    ],
)  # fmt: skip
def test_callback_and_modal_limits(callback: dict, code: str | None):
    assert refusal(callback, CALLBACK) == code


@pytest.mark.parametrize(
    ("command", "ok"),
    [
        ({"name": "⭐ Pick line", "type": 3}, True),
        ({"name": "⭐ Pick line", "type": 3, "description": ""}, True),
        ({"name": "Pick", "type": 3, "description": "picks a line"}, False),
        ({"name": "Pick", "type": 3, "options": [{"name": "x", "type": 3}]}, False),
        ({"name": "run", "type": 1, "description": "Run", "options": [{"name": "x", "type": 3}]}, True),
    ],
)  # fmt: skip
def test_message_commands_have_no_description_or_options(command: dict, ok: bool):
    try:
        check_commands([command])
    except DiscordHTTPError:
        assert not ok
    else:
        assert ok


def test_modal_label_components_are_checked():
    label = {"type": 18, "label": "L" * 46, "component": {"type": 4, "custom_id": "a", "style": 1}}
    with pytest.raises(DiscordHTTPError):
        check_modal({"title": "t", "custom_id": "m", "components": [label]}, ["data"])


async def test_a_real_send_over_the_limit_is_refused(fake: FakeDiscord, bot: TinyBot):
    view = discord.ui.View()
    view.add_item(discord.ui.Button(label="x" * 81, custom_id="long"))
    with pytest.raises(discord.HTTPException) as info:
        await bot.get_channel(fake.channel_id).send("panel", view=view)
    assert info.value.code == 50035
    assert fake.messages_in(fake.channel_id) == []
    assert fake.spec_violations == []  # a rule, not a spec violation


async def test_a_disabled_button_cannot_be_clicked(fake: FakeDiscord, bot: TinyBot):
    view = discord.ui.View()
    view.add_item(discord.ui.Button(label="Cut", custom_id="cut", disabled=True))
    view.add_item(discord.ui.Select(custom_id="who", options=[discord.SelectOption(label="a")]))
    msg = await bot.get_channel(fake.channel_id).send("panel", view=view)
    with pytest.raises(ComponentDisabled):
        await fake.click(msg.id, "cut", user="bob")
    with pytest.raises(ValueError):
        await fake.click(msg.id, "who", user="bob", values=["not offered"])
    assert fake.interactions == {}


async def test_a_message_command_arrives_with_its_target(fake: FakeDiscord, bot: TinyBot):
    seen: list[tuple[str, int, str]] = []

    @discord.app_commands.context_menu(name="⭐ Pick line")
    async def pick(interaction: discord.Interaction, message: discord.Message) -> None:
        seen.append((interaction.command.name, message.id, message.content))
        await interaction.response.send_message("picked", ephemeral=True)

    bot.tree.add_command(pick)
    await bot.tree.sync()
    [registered] = [c for c in fake.global_commands.values() if c["type"] == 3]
    assert registered["name"] == "⭐ Pick line" and registered["description"] == ""
    msg = await bot.get_channel(fake.channel_id).send("a line")
    handle = await fake.message_command("⭐ Pick line", msg.id, user="bob")
    assert (await handle)["data"]["content"] == "picked"
    assert seen == [("⭐ Pick line", msg.id, "a line")]
    assert handle.payload["data"]["target_id"] == str(msg.id)


async def test_pins_need_manage_messages(fake: FakeDiscord, bot: TinyBot):
    channel = bot.get_channel(fake.channel_id)
    msg = await channel.send("the panel")
    await msg.pin()
    assert fake.messages_in(fake.channel_id)[0]["pinned"] is True
    assert fake.messages_in(fake.channel_id)[-1]["type"] == 6  # "CircusBot pinned a message"
    assert [m.id for m in await channel.pins()] == [msg.id]
    await msg.unpin()
    assert fake.messages_in(fake.channel_id)[0]["pinned"] is False
    fake.set_bot_permissions(P.BOT_DEFAULT & ~P.MANAGE_MESSAGES)
    with pytest.raises(discord.Forbidden):
        await msg.pin()
    assert fake.messages_in(fake.channel_id)[0]["pinned"] is False
