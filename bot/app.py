"""The Discord client: command tree, the scenes it plays, and `main()` for `circus bot`.

Invariants: one SceneThread per bound scene, found by its thread id; at start the bot re-attaches
every scene bound on disk (.circus/discord.json) before it takes any interaction, and a scene
that fails to load still answers (with the reason, to its directors); the bot only asks for the
Guilds and Guild Message Reactions intents (no message content, no members). SIGTERM (`docker
stop`) or SIGINT cuts every running scene, tells its directors, and delivers what is queued
before the bot exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import discord
import yarl
from discord import app_commands

from bot.binding import Binding, binding_or_none, write_binding
from bot.commands import (
    cast,
    continuity,
    directing,
    harvest,
    room,
    scenes,
    scripts,
    stagecraft,
    watching,
)
from bot.i18n import CommandTranslator
from bot.interaction.edge import on_tree_error
from bot.panel import menus
from bot.panel.alerts import AlertButton, Pager
from bot.panel.controls import PanelButton, PanelSelect
from bot.panel.message import EDIT_INTERVAL, Panels
from bot.server_folders import (
    bound_scenes,
    misplaced,
    scene_folder,
    scene_key,
    terminal_servers,
)
from bot.shards import IdentifyPacer, ShardPlan, shard_plan
from bot.thread import votes
from bot.thread.backstage import Backstage
from bot.thread.personas import Personas
from bot.thread.scene import SceneThread
from engine import (
    CircusError,
    Config,
    LiteLLMModels,
    Models,
    discord_trace,
    list_templates,
    metered,
    preload,
    redact_logs,
    say,
    shown_number,
    track_queue,
    whole_number,
)

log = logging.getLogger("circus.bot")

# `docker stop` waits 10 s between SIGTERM and SIGKILL: cut, tell and deliver within that.
SHUTDOWN_GRACE = 7.0


class CircusBot(discord.AutoShardedClient):
    """Plays the scenes of its shards' servers (`scenes_dir/<server id>/`) in Discord threads."""

    def __init__(
        self,
        scenes_dir: Path | str,
        *,
        guild_id: int | None = None,
        sync_commands: bool = True,
        models: Models | None = None,
        config: Config | None = None,
        panel_interval: float = EDIT_INTERVAL,
        shards: ShardPlan | None = None,
        **options: object,
    ) -> None:
        """`config`: the operator's settings, read once at startup by `bot.main` (default: every
        setting at its default); `models`: the model door every scene uses (default: litellm,
        per `config`); `shards`: which shards this process connects (default: all of them, as
        many as Discord recommends)."""
        intents = discord.Intents.none()
        intents.guilds = True
        intents.guild_reactions = True  # ⭐ on an actor's line is a vote (not privileged)
        options.setdefault("guild_ready_timeout", 0.5)
        config = config or Config()
        options.setdefault("http_trace", discord_trace(config))  # scale: /metrics counts REST
        self.shards_plan = shards or ShardPlan()
        if self.shards_plan.ids is not None:
            options.update(shard_ids=list(self.shards_plan.ids), shard_count=self.shards_plan.count)
        super().__init__(intents=intents, **options)  # type: ignore[arg-type]
        self.pacer = IdentifyPacer()
        self.scenes_dir = Path(scenes_dir)
        self.config = config
        # The servers that may see the terminal's scenes (checked by `refusal` at start).
        self.terminal_servers = terminal_servers(config.terminal_scene_servers)
        self.models: Models = metered(models or LiteLLMModels(self.config), self.config)
        self.guild_id = guild_id
        self.sync_commands = sync_commands
        self.tree = app_commands.CommandTree(self)
        self.tree.error(on_tree_error)
        self.personas = Personas(self, on_webhook=self._webhook_changed)
        self.backstage = Backstage(self)
        track_queue(self.config, "personas", self.personas.queued)  # scale: /metrics
        track_queue(self.config, "backstage", self.backstage.queued)
        self.scene_threads: dict[str, SceneThread] = {}
        self.pagers: dict[str, Pager] = {}  # each scene's alerts (bot.panel.alerts), by key
        self.panels = Panels(self, panel_interval)  # each scene thread's control panel
        track_queue(self.config, "panel", self.panels.queued)
        self._warming: asyncio.Task[None] | None = None
        self._threads: dict[int, str] = {}  # thread id -> scene key (bot.server_folders)
        self.reactions_seen = 0  # raw reaction events handled (⭐ votes or ignored)

    # ------------------------------------------------------------------ startup
    async def setup_hook(self) -> None:
        # The engine's parts load now, before any scene plays: a one-shot command loads each
        # on first use, but here that would be on the event loop, in the middle of a run.
        preload()
        # litellm takes seconds to import: load it off the event loop now, not in the middle
        # of the first run (where it would stall every scene and interaction meanwhile).
        self._warming = asyncio.create_task(self._warm_models(), name="warm-litellm")
        await self.tree.set_translator(CommandTranslator())
        register(self.tree, list_templates(self.config))
        self.add_dynamic_items(PanelButton, PanelSelect)  # panels work across restarts
        self.add_dynamic_items(AlertButton)  # and so do the buttons of an alert's DM
        try:
            _count, _url, limits = await self.http.get_bot_gateway()
            self.pacer.max_concurrency = max(1, int(limits.get("max_concurrency") or 1))
        except (discord.GatewayNotFound, discord.HTTPException, TypeError, ValueError):
            log.warning("no session start limit from Discord: shards identify one at a time")
        await self.reattach()
        if not self.sync_commands:
            return
        if self.guild_id:
            guild = discord.Object(self.guild_id)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()

    async def _warm_models(self) -> None:
        try:
            await asyncio.to_thread(self.models.warm)
        except Exception:  # the first model call will say what is wrong, to a director
            log.warning("could not preload litellm", exc_info=True)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        # Discord lets `max_concurrency` shards identify at once, one per bucket per 5 s;
        # discord.py's default waits 5 s before every shard but the first, whatever the bucket.
        await self.pacer.wait(shard_id or 0)

    async def reattach(self) -> None:
        """Attach every scene bound on disk in this process's servers to its thread (after a
        restart). Other processes' servers are never read."""
        for guild_id, name, binding in bound_scenes(self.scenes_dir, self.shards_plan):
            if scene_key(guild_id, name) in self.scene_threads:
                continue
            try:
                scene_thread = self._attach(name, binding)
                await scene_thread.refresh()
                await scene_thread.catch_up()
                await self.panels.adopt(scene_thread)
            except CircusError as exc:  # a broken scene still answers, with the reason
                log.warning("scene %s: %s", name, exc)
            except Exception:  # one unreadable scene must not keep the bot from starting
                log.exception("scene %s could not be attached", name)

    # ------------------------------------------------------------------ scenes
    def scene_thread_in(self, thread_id: int | None) -> SceneThread | None:
        key = self._threads.get(thread_id or 0)
        return self.scene_threads.get(key) if key else None

    def scene_thread_named(self, guild_id: int, name: str) -> SceneThread | None:
        """The server's scene `name`, if it is bound to a thread."""
        return self.scene_threads.get(scene_key(guild_id, name))

    def _attach(self, name: str, binding: Binding) -> SceneThread:
        scene_thread = SceneThread(
            scene_folder(self.scenes_dir, binding.guild_id, name),
            binding,
            self,
            self.personas,
            self.backstage,
            models=self.models,
            config=self.config,
        )
        self.scene_threads[scene_thread.key] = scene_thread
        self.pagers[scene_thread.key] = Pager(scene_thread)
        self._threads[binding.thread_id] = scene_thread.key
        return scene_thread

    async def bind(self, name: str, binding: Binding) -> SceneThread:
        """Bind the server's scene `name` (in its folder) to a thread, replacing any earlier
        thread, and persist the binding."""
        write_binding(scene_folder(self.scenes_dir, binding.guild_id, name), binding)
        scene_thread = self.scene_thread_named(binding.guild_id, name)
        if scene_thread is None:
            scene_thread = self._attach(name, binding)
        else:
            self._threads.pop(scene_thread.binding.thread_id, None)
            scene_thread.binding = binding
            self._threads[binding.thread_id] = scene_thread.key
        await scene_thread.refresh()
        await scene_thread.mark_all_posted()
        return scene_thread

    async def show_panel(self, scene_thread: SceneThread) -> None:
        """Post the scene's control panel in its (new) thread (bot.panel.message)."""
        await self.panels.show(scene_thread)

    async def unbind(self, key: str) -> None:
        """Forget the scene `key` (bot.server_folders.scene_key) and its thread."""
        self.panels.drop(key)
        scene_thread = self.scene_threads.pop(key, None)
        pager = self.pagers.pop(key, None)
        if scene_thread is not None:
            self._threads.pop(scene_thread.binding.thread_id, None)
            await scene_thread.close()
        if pager is not None:
            await pager.close()

    async def on_app_command_completion(
        self, interaction: discord.Interaction, command: object
    ) -> None:
        scene_thread = self.scene_thread_in(interaction.channel_id)
        if scene_thread is not None:  # a replay or a cast change: no event says so to the panel
            self.panels.nudge(scene_thread.key)

    async def on_raw_reaction_add(self, event: discord.RawReactionActionEvent) -> None:
        try:
            await votes.on_reaction(self, event)
        finally:
            self.reactions_seen += 1  # tests and benches wait on this, never on time

    async def on_raw_reaction_remove(self, event: discord.RawReactionActionEvent) -> None:
        try:
            await votes.on_reaction(self, event)
        finally:
            self.reactions_seen += 1

    def _webhook_changed(self, channel_id: int, webhook_id: int) -> None:
        for scene_thread in self.scene_threads.values():
            b = scene_thread.binding
            if b.channel_id == channel_id and b.webhook_id != webhook_id:
                if binding_or_none(scene_thread.rehearsal.root) is not None:
                    scene_thread.rebind(replace(b, webhook_id=webhook_id))

    # ------------------------------------------------------------------ shutdown
    async def shutdown(self, grace: float = SHUTDOWN_GRACE) -> None:
        """Stop cleanly: cut every running scene (turns stay whole), tell its directors in the
        thread and by DM, and deliver what is queued — within `grace` seconds — then close."""
        log.info("shutting down: cutting running scenes")
        scene_threads = list(self.scene_threads.values())
        cut = await asyncio.gather(
            *(s.stop_for_shutdown() for s in scene_threads), return_exceptions=True
        )
        log.info("cut %d running scene(s)", sum(1 for c in cut if c is True))
        try:
            async with asyncio.timeout(grace):
                await self.drain()
        except TimeoutError:
            log.warning("shutdown: gave up delivering queued messages after %.0f s", grace)
        await self.close()

    async def drain(self) -> None:
        """Wait until everything the scenes emitted so far is in Discord (tests, bench)."""
        for scene_thread in list(self.scene_threads.values()):
            await scene_thread.drain()
        for pager in list(self.pagers.values()):  # an alert waits for its line's post
            await pager.drain()
        await self.personas.drain()
        for scene_thread in list(self.scene_threads.values()):
            await scene_thread.votes.drain()
        await self.backstage.drain()

    async def close(self) -> None:
        for scene_thread in list(self.scene_threads.values()):
            with contextlib.suppress(Exception):
                await scene_thread.close()
        for pager in list(self.pagers.values()):
            with contextlib.suppress(Exception):
                await pager.close()
        self.panels.close()
        await self.personas.close()
        await self.backstage.close()
        await super().close()


# The command modules, in the order they register: a new one is one more line here.
COMMAND_MODULES: tuple[Callable[[app_commands.CommandTree], None], ...] = (
    directing.setup,  # first: it makes the /take group that harvest adds /take compare to
    harvest.setup,
    stagecraft.setup,
    cast.setup,
    continuity.setup,  # /scene next, /secrets, the tree in /take list
    scripts.setup,  # /scene import
    room.setup,  # /captain, /backstage
    menus.setup,  # ⭐ Pick line, 🎬 Cue this actor, 💭 Thought, 📌 Note on this line (menus)
    watching.setup,  # /watch: page me when…
)


def register(tree: app_commands.CommandTree, templates: list[str]) -> None:
    """Every slash command the bot offers, in one place (`/scene new` offers `templates`)."""
    tree.add_command(scenes.build(templates))
    for setup in COMMAND_MODULES:
        setup(tree)


def point_at(api_base: str | None, gateway_url: str | None) -> None:
    """Talk to a Discord-compatible server instead of discord.com (tests, self-hosting)."""
    if api_base:
        discord.http.Route.BASE = api_base.rstrip("/")
    if gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


async def serve(config: Config, guild_id: int | None) -> None:
    """Run the bot until Discord ends the session or SIGTERM/SIGINT asks for a clean stop."""
    plan = shard_plan(config.shards, config.shard_count)
    log.info("connecting shards: %s", plan.label)
    if config.shards is None and config.shard_count is not None:
        log.warning(
            "a shard count without --shards: this process connects all %s shards; if other "
            "processes serve this bot too, give each its own --shards",
            config.shard_count,
        )
    bot = CircusBot(config.scenes_dir, guild_id=guild_id, config=config, shards=plan)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with bot:
        running = asyncio.create_task(bot.start(config.discord_token or ""), name="discord")
        stopping = asyncio.create_task(stop.wait(), name="signals")
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if stop.is_set():
            await bot.shutdown()
        stopping.cancel()
        await running  # re-raises LoginFailure & co.


def refusal(config: Config) -> str | None:
    """Why `circus bot` cannot start with these settings (in English, for the operator)."""
    if not config.discord_token:
        return say("bot.start.no_token", "en")
    guild = config.discord_guild_id
    if guild and whole_number(guild, 20) is None:
        return say("bot.start.bad_guild", "en", shown=shown_number(guild))
    if not config.scenes_dir.is_dir():
        return say("bot.start.no_scenes", "en", path=config.scenes_dir)
    try:
        shard_plan(config.shards, config.shard_count)
        terminal_servers(config.terminal_scene_servers)
    except CircusError as exc:
        return str(exc)
    old = misplaced(config.scenes_dir)
    if old:
        names = ", ".join(name for name, _guild in old[:5]) + (", …" if len(old) > 5 else "")
        return say("bot.start.misplaced", "en", count=len(old), path=config.scenes_dir, names=names)
    return None


def main(config: Config) -> int:
    """`circus bot`: run the bot with the operator's settings (read once, by the caller)."""
    why = refusal(config)
    if why is not None:
        print(why, file=sys.stderr)
        return 2
    point_at(config.discord_api_base, config.discord_gateway_url)
    discord.utils.setup_logging(level=logging.INFO)
    redact_logs(config.secrets)  # a provider's error in a log line carries no key
    guild = config.discord_guild_id
    try:
        asyncio.run(serve(config, int(guild) if guild else None))
    except discord.LoginFailure:
        print(say("bot.start.login_refused", "en"), file=sys.stderr)
        return 1
    except discord.PrivilegedIntentsRequired:
        print(say("bot.start.intents_refused", "en"), file=sys.stderr)
        return 1
    except CircusError as exc:  # a setting the operator must change (e.g. a taken metrics port)
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0
