"""The Discord client: command tree, the scenes it plays, and `main()` for `circus bot`.

Invariants: one Stage per bound scene, found by its thread id; at start the bot re-attaches
every scene bound on disk (.circus/discord.json) before it takes any interaction; the bot only
asks for the Guilds intent (no message content, no members).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path

import discord
import yarl
from discord import app_commands

from bot import commands, scenes, stagecraft
from bot.backstage import Backstage
from bot.binding import Binding, read_binding, scan_bindings, write_binding
from bot.edge import on_tree_error
from bot.i18n import CommandTranslator
from bot.personas import Personas
from bot.stage import Stage
from engine.errors import CircusError
from engine.templates import list_templates

log = logging.getLogger("circus.bot")


class CircusBot(discord.Client):
    """Plays the scenes in `scenes_dir` in Discord threads."""

    def __init__(
        self,
        scenes_dir: Path | str,
        *,
        guild_id: int | None = None,
        sync_commands: bool = True,
        **options: object,
    ) -> None:
        intents = discord.Intents.none()
        intents.guilds = True
        options.setdefault("guild_ready_timeout", 0.5)
        super().__init__(intents=intents, **options)  # type: ignore[arg-type]
        self.scenes_dir = Path(scenes_dir)
        self.guild_id = guild_id
        self.sync_commands = sync_commands
        self.tree = app_commands.CommandTree(self)
        self.tree.on_error = on_tree_error
        self.personas = Personas(self, on_webhook=self._webhook_changed)
        self.backstage = Backstage(self)
        self.stages: dict[str, Stage] = {}
        self._threads: dict[int, str] = {}

    # ------------------------------------------------------------------ startup
    async def setup_hook(self) -> None:
        await self.tree.set_translator(CommandTranslator())
        self.tree.add_command(scenes.build(list_templates()))
        for command in [*commands.COMMANDS, *stagecraft.COMMANDS]:
            self.tree.add_command(command)
        await self.reattach()
        if not self.sync_commands:
            return
        if self.guild_id:
            guild = discord.Object(self.guild_id)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()

    async def reattach(self) -> None:
        """Attach every scene bound on disk to its thread (after a restart)."""
        for name, binding in scan_bindings(self.scenes_dir).items():
            if name not in self.stages:
                stage = self._attach(name, binding)
                try:
                    await stage.refresh()
                except CircusError as exc:  # a broken scene still answers, with the reason
                    log.warning("scene %s: %s", name, exc)
                except Exception:  # a bug in one scene must not keep the bot from every other
                    log.exception("scene %s could not be loaded", name)

    # ------------------------------------------------------------------ scenes
    def stage_for_thread(self, thread_id: int | None) -> Stage | None:
        name = self._threads.get(thread_id or 0)
        return self.stages.get(name) if name else None

    def _attach(self, name: str, binding: Binding) -> Stage:
        stage = Stage(self.scenes_dir / name, binding, self, self.personas, self.backstage)
        self.stages[name] = stage
        self._threads[binding.thread_id] = name
        return stage

    async def bind(self, name: str, binding: Binding) -> Stage:
        """Bind a scene to a thread (replacing any earlier thread) and persist the binding."""
        write_binding(self.scenes_dir / name, binding)
        stage = self.stages.get(name)
        if stage is None:
            stage = self._attach(name, binding)
        else:
            self._threads.pop(stage.binding.thread_id, None)
            stage.binding = binding
            self._threads[binding.thread_id] = name
        await stage.refresh()
        return stage

    async def unbind(self, name: str) -> None:
        stage = self.stages.pop(name, None)
        if stage is not None:
            self._threads.pop(stage.binding.thread_id, None)
            await stage.close()

    def _webhook_changed(self, channel_id: int, webhook_id: int) -> None:
        for stage in self.stages.values():
            b = stage.binding
            if b.channel_id == channel_id and b.webhook_id != webhook_id:
                if read_binding(stage.rehearsal.root) is not None:
                    stage.rebind(
                        Binding(b.guild_id, b.channel_id, b.thread_id, b.directors, webhook_id)
                    )

    # ------------------------------------------------------------------ shutdown
    async def drain(self) -> None:
        """Wait until everything the scenes emitted so far is in Discord (tests, bench)."""
        for stage in list(self.stages.values()):
            await stage.drain()
        await self.personas.drain()
        await self.backstage.drain()

    async def close(self) -> None:
        for stage in list(self.stages.values()):
            with contextlib.suppress(Exception):
                await stage.close()
        await self.personas.close()
        await self.backstage.close()
        await super().close()


def point_at(api_base: str | None, gateway_url: str | None) -> None:
    """Talk to a Discord-compatible server instead of discord.com (tests, self-hosting)."""
    if api_base:
        discord.http.Route.BASE = api_base.rstrip("/")
    if gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


def main() -> int:
    """`circus bot`: read the environment and run the bot until interrupted."""
    token = os.environ.get("DISCORD_TOKEN", "").strip()
    if not token:
        print(
            "DISCORD_TOKEN is not set — create a bot at https://discord.com/developers/applications "
            "and export its token (see README, 'Discord bot').",
            file=sys.stderr,
        )
        return 2
    guild = os.environ.get("DISCORD_GUILD_ID", "").strip()
    if guild and not guild.isdigit():
        print(f"DISCORD_GUILD_ID must be a number, not {guild!r}.", file=sys.stderr)
        return 2
    scenes_dir = Path(os.environ.get("CIRCUS_SCENES_DIR") or "scenes")
    if not scenes_dir.is_dir():
        print(f"{scenes_dir} does not exist — create it or set CIRCUS_SCENES_DIR.", file=sys.stderr)
        return 2
    point_at(os.environ.get("DISCORD_API_BASE"), os.environ.get("DISCORD_GATEWAY_URL"))
    bot = CircusBot(scenes_dir, guild_id=int(guild) if guild else None)
    try:
        bot.run(token, log_level=logging.INFO)
    except discord.LoginFailure:
        print("Discord refused DISCORD_TOKEN — copy the bot token again.", file=sys.stderr)
        return 1
    except discord.PrivilegedIntentsRequired:
        print("Discord refused an intent; the bot needs none beyond Guilds.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
