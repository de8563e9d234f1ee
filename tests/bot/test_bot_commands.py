"""The slash commands as Discord receives them — names, options, descriptions, zh-TW/zh-CN
localisations, permissions — are exactly the recorded ones (tests/fixtures/commands.json).

Changing what users see in Discord's command picker is a deliberate act: regenerate the
fixture with `python -m tests.test_bot_commands` and review its diff.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import discord
from discord import app_commands

from bot.app import register
from bot.i18n import CommandTranslator

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "commands.json"


async def payloads() -> list[dict[str, Any]]:
    """What `tree.sync()` would send, with the translator the bot uses."""
    tree = app_commands.CommandTree(discord.Client(intents=discord.Intents.none()))
    register(tree, ["interrogation"])
    translator = CommandTranslator()
    await tree.set_translator(translator)
    found = [await c.get_translated_payload(tree, translator) for c in tree.get_commands()]
    return sorted(found, key=lambda p: p["name"])


async def test_the_registered_commands_are_the_recorded_ones():
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    # Normalised through JSON, as Discord receives them.
    assert json.loads(json.dumps(await payloads())) == recorded


async def test_each_tree_gets_its_own_groups():
    """Two bots in one process (tests, benches) register independently."""
    first, second = await payloads(), await payloads()
    assert first == second
    take = next(p for p in first if p["name"] == "take")
    assert [o["name"] for o in take["options"]] == ["save", "list", "compare"]


if __name__ == "__main__":
    text = json.dumps(asyncio.run(payloads()), ensure_ascii=False, indent=1, sort_keys=True)
    FIXTURE.write_text(text, encoding="utf-8")
    print(f"wrote {FIXTURE}", file=sys.stderr)
