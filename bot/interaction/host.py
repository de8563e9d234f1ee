"""What a command needs from the running bot, as a Protocol: its scenes, settings and queues.

Invariant: command modules reach the bot only through `host_of(interaction)` (the client the
interaction arrived on, typed as `Host`), never by importing bot.app — app.py composes the
commands, so nothing below it may import it back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import discord

from bot.binding import Binding
from bot.thread.backstage import Backstage
from bot.thread.personas import Personas
from bot.thread.scene import SceneThread
from engine import Config


class Host(Protocol):
    """The bot as its commands see it (bot.app.CircusBot is the one implementation)."""

    scenes_dir: Path
    config: Config
    terminal_servers: frozenset[int]  # may see the terminal's loose scenes (server_folders)
    personas: Personas
    backstage: Backstage
    scene_threads: dict[str, SceneThread]  # by SceneThread.key: its server and name

    def scene_thread_in(self, thread_id: int | None) -> SceneThread | None: ...

    def scene_thread_named(self, guild_id: int, name: str) -> SceneThread | None: ...

    async def bind(self, name: str, binding: Binding) -> SceneThread: ...

    async def unbind(self, key: str) -> None: ...

    async def show_panel(
        self, scene_thread: SceneThread
    ) -> None: ...  # post the scene's control panel


def host_of(interaction: discord.Interaction) -> Host:
    """The bot this interaction arrived on."""
    return interaction.client  # type: ignore[return-value]
