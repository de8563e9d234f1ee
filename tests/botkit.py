"""Test kit for the Discord bot: the real CircusBot logged into the loopback fake Discord.

`Room` is a writers' room: a fake Discord, a scenes folder, and the bot. Helpers speak in what
users see — private replies, lines in a scene thread, DMs — and wait for them without timing
assertions (a wait only bounds how long a broken bot can hang a test).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.app import CircusBot
from engine import Config, Models
from engine.providers.scripted import ScriptedRequest, improv
from fakediscord import FakeDiscord, InteractionHandle

TEMPLATES = Path(__file__).resolve().parent.parent / "engine" / "scene_templates"
WAIT = 60.0  # only bounds how long a broken bot can hang a test; a loaded machine is slow


async def until(predicate: Callable[[], Any], timeout: float = WAIT, what: str = "") -> Any:
    """Poll until `predicate()` is truthy; fail (not time) if it never is."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what or predicate}")
        await asyncio.sleep(0.005)


async def finished(r: Room, thread: int, count: int = 1) -> None:
    """Wait for the run's closing status line(s) in the thread, then for every post and DM."""

    def ends() -> int:
        return sum(1 for m in r.thread(thread) if m["username"] == "Circus" and "■" in m["content"])

    await until(lambda: ends() >= count, what="the run to finish")
    await r.drain()


class Room:
    """A fake Discord guild with the bot in it, directing scenes in `scenes_dir`."""

    def __init__(self, fake: FakeDiscord, scenes_dir: Path, models: Models | None = None) -> None:
        self.fake = fake
        self.scenes_dir = scenes_dir
        self.home = scenes_dir / str(fake.guild_id)  # the server's own scenes (bot.server_folders)
        self.home.mkdir(parents=True, exist_ok=True)
        self.models = models  # the bot's model door (None: the default, as `circus bot`)
        self.bot: CircusBot | None = None
        self._stack = contextlib.AsyncExitStack()

    async def start_bot(self, *, every_server: bool = False) -> CircusBot:
        """Start the bot; its commands go to the first guild (DISCORD_GUILD_ID, as a test
        server does), or globally to every server with `every_server`."""
        config = Config.from_env(os.environ)  # as `circus bot` reads it, once at start
        guild = None if every_server else self.fake.guild_id
        self.bot = CircusBot(self.scenes_dir, guild_id=guild, models=self.models, config=config)
        await self._stack.enter_async_context(self.fake.connected(self.bot))
        return self.bot

    def scene_thread(self, name: str) -> Any:
        """The bot's SceneThread of this server's scene `name` (KeyError if it is not bound)."""
        assert self.bot is not None
        found = self.bot.scene_thread_named(self.fake.guild_id, name)
        if found is None:
            raise KeyError(name)
        return found

    async def stop_bot(self) -> None:
        await self._stack.aclose()
        self._stack = contextlib.AsyncExitStack()
        self.bot = None

    # ------------------------------------------------------------------ doing
    async def slash(
        self,
        command: str,
        options: dict[str, Any] | None = None,
        *,
        user: str = "alice",
        channel: int | None = None,
    ) -> InteractionHandle:
        """Invoke a command and wait for its acknowledgement."""
        handle = await self.fake.slash(command, options or {}, user=user, channel_id=channel)
        await handle.response(timeout=WAIT)
        return handle

    async def ask(
        self,
        command: str,
        options: dict[str, Any] | None = None,
        *,
        user: str = "alice",
        channel: int | None = None,
    ) -> str:
        """Invoke a command and return the private reply the user reads."""
        handle = await self.slash(command, options, user=user, channel=channel)
        return await self.answer(handle)

    async def answer(self, handle: InteractionHandle) -> str:
        if handle.callback_type == 5:
            await handle.wait_followups(1, timeout=WAIT)
        assert handle.ephemeral, "replies to commands must be private"
        return "\n".join(handle.contents)

    async def new_scene(
        self, name: str, template: str = "interrogation", user: str = "alice"
    ) -> int:
        text = await self.ask("scene new", {"name": name, "template": template}, user=user)
        thread = self.fake.thread_by_name(f"🎭 {name}")
        assert f"<#{thread['id']}>" in text, text
        return int(thread["id"])

    def let_open_scenes(self, *users: str) -> None:
        """What a server's admins do in Server Settings → Integrations: allow these members
        /scene although they lack Manage Threads (its default_member_permissions)."""
        command = int(self.fake.find_command("scene")["id"])
        allowed = {
            e.id: e.permission
            for e in self.fake.command_permissions.get(command, [])
            if e.type == 2
        }
        allowed.update({self.fake.user(u).id: True for u in users})
        self.fake.set_command_permissions("scene", users=allowed)

    async def drain(self) -> None:
        assert self.bot is not None
        await self.bot.drain()

    # ------------------------------------------------------------------ seeing
    def thread(self, thread_id: int) -> list[dict[str, Any]]:
        return self.fake.messages_in(thread_id)

    def lines(self, thread_id: int) -> list[str]:
        """What the actors posted in the thread (webhook messages, status lines excluded)."""
        return [
            f"{m['username']}: {m['content']}"
            for m in self.thread(thread_id)
            if m["webhook_id"] and m["username"] != "Circus"
        ]

    def everything_public(self) -> str:
        """Every message anyone in the guild can read, plus every webhook payload sent."""
        texts = []
        for channel_id in [*self.fake.channels, *self.fake.threads]:
            texts += [m["content"] for m in self.fake.messages_in(channel_id)]
        for r in self.fake.requests:
            if r.template == "/webhooks/{webhook_id}/{webhook_token}" and isinstance(r.json, dict):
                if int(r.path.split("/")[2]) != self.fake.application_id:
                    texts.append(str(r.json))
        return "\n".join(texts)

    def dms(self, user: str) -> list[str]:
        return [m["content"] for m in self.fake.dms_to(user)]

    async def until_lines(self, thread_id: int, count: int) -> list[str]:
        await until(lambda: len(self.lines(thread_id)) >= count, what=f"{count} lines")
        return self.lines(thread_id)


@contextlib.asynccontextmanager
async def room(tmp_path: Path, *, start: bool = True, models: Models | None = None):
    scenes_dir = tmp_path / "scenes"
    scenes_dir.mkdir()
    async with FakeDiscord() as fake:
        r = Room(fake, scenes_dir, models)
        if start:
            await r.start_bot()
        try:
            yield r
        finally:
            await r.stop_bot()
        # Every request matched Discord's OpenAPI spec, every interaction was answered once,
        # in time, and the fake implemented everything the bot asked for.
        assert fake.spec_violations == [], fake.spec_violations
        assert [h.rejected for h in fake.interactions.values() if h.rejected] == []
        assert fake.unhandled == [], fake.unhandled


def copy_template(name: str, dest: Path) -> Path:
    shutil.copytree(TEMPLATES / name, dest)
    return dest


class Gate:
    """A script whose second actor call waits until released (a model taking forever)."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()
        self.release = asyncio.Event()
        self.actor_calls = 0

    async def __call__(self, request: ScriptedRequest) -> str:
        if request.shape.kind == "actor":
            self.actor_calls += 1
            if self.actor_calls >= 2:
                self.waiting.set()
                await self.release.wait()
        return improv(request)
