"""pytest fixtures for the fake's own tests: a checked FakeDiscord and a TinyBot logged into it.

Loaded by tests/conftest.py (`pytest_plugins`); every test using them ends by asserting that the
bot's requests all matched Discord's OpenAPI spec and hit implemented routes.
"""

from __future__ import annotations

import pytest

from fakediscord.tinybot import TinyBot, checked_fake


@pytest.fixture
async def fake():
    async with checked_fake() as fake:
        yield fake


@pytest.fixture
async def bot(fake):
    bot = TinyBot(fake)
    async with fake.connected(bot):
        yield bot
