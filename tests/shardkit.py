"""A studio past one machine, on loopback: several `circus bot` processes, each given a range of
shards, against one fake Discord of many servers, every model call through one fake LiteLLM
proxy. Shared by the simulation test and bench/bench_shards.py.

What it promises: each process is the real `circus bot` command (a subprocess, its own
/metrics port), started, killed (`kill -9`) and restarted like an operator would; the helpers
speak in what users see (lines in a scene's thread, files on disk) and wait on them, never on
wall-clock margins — a timeout only bounds how long a broken bot can hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import socket
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakediscord import FakeDiscord
from tests import botkit

__all__ = ["BotProcess", "Studio", "bot_env", "guilds_over_shards", "running", "until"]

REPO = Path(__file__).resolve().parent.parent
CAST = ("林小姐", "刑警", "律師")  # the interrogation template's
MODEL = "writers-room"  # the proxy's own model name, as its config.yaml would list it
WAIT = 180.0  # bounds a hang only: a loaded 2-core machine starts Python and litellm slowly
STATUS = "Circus"
until = functools.partial(botkit.until, timeout=WAIT)  # botkit's wait, with room for subprocesses


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def guilds_over_shards(fake: FakeDiscord, count: int, per_shard: int) -> list[int]:
    """Servers so that each of `count` shards holds `per_shard` of them (the fake's first
    guild included)."""
    guilds = [fake.guild_id]
    held = {s: 0 for s in range(count)}
    held[(fake.guild_id >> 22) % count] += 1
    for shard in range(count):
        while held[shard] < per_shard:
            guilds.append(fake.add_guild(f"Room {len(guilds) + 1}", shard=(shard, count)))
            held[shard] += 1
    return guilds


@dataclass
class BotProcess:
    """One `circus bot --shards IDS --shard-count N` process."""

    shards: str
    count: int
    env: dict[str, str]
    log: Path
    metrics_port: int = field(default_factory=free_port)
    process: asyncio.subprocess.Process | None = None
    lives: int = 0

    async def start(self) -> None:
        self.lives += 1
        env = {**self.env, "CIRCUS_METRICS_PORT": str(self.metrics_port)}
        args = ["--shards", self.shards, "--shard-count", str(self.count)]
        with self.log.open("ab") as log:
            log.write(f"\n=== life {self.lives} ===\n".encode())
            log.flush()
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "circus", "bot", *args,
                env=env, stdout=asyncio.subprocess.DEVNULL, stderr=log, cwd=str(REPO),
            )  # fmt: skip

    def kill(self) -> None:
        """`kill -9`: no drain, no goodbye, whatever is queued is lost."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)

    async def wait(self) -> int:
        assert self.process is not None
        return await self.process.wait()

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 60)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    def scrape(self) -> str:
        """The process's /metrics page, as Prometheus would scrape it."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 (loopback)
            return response.read().decode("utf-8")

    def tail(self) -> str:
        return self.log.read_text("utf-8", errors="replace")[-4000:]


def bot_env(fake: FakeDiscord, scenes_dir: Path, gateway: str, latency: float = 0.0) -> dict:
    """The operator's environment for every process: one scenes folder, one gateway."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CIRCUS_", "DISCORD_"))}
    env.update(
        fake.env(),
        CIRCUS_SCENES_DIR=str(scenes_dir),
        CIRCUS_GATEWAY_URL=gateway,
        CIRCUS_MODEL=MODEL,
        CIRCUS_STAGE_MANAGER_MODEL=MODEL,
        CIRCUS_ALLOWED_MODELS=MODEL,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_OFFLINE_MODE="true",
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    return env


class Studio:
    """The fake Discord's servers and the scenes the directors make in them."""

    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.threads: dict[str, int] = {}  # scene name -> its thread
        self.guild_of: dict[str, int] = {}  # scene name -> its server

    async def new_scene(self, guild: int, name: str) -> int:
        handle = await self.fake.slash(
            "scene new",
            {"name": name, "template": "interrogation"},
            channel_id=self.fake.guild_channel(guild),
        )
        await handle.wait_followups(1, timeout=WAIT)
        thread = int(self.fake.thread_by_name(f"🎭 {name}")["id"])
        self.threads[name], self.guild_of[name] = thread, guild
        return thread

    async def command(self, name: str, command: str, options: dict | None = None) -> str:
        handle = await self.fake.slash(command, options or {}, channel_id=self.threads[name])
        await handle.response(timeout=WAIT)
        if handle.callback_type == 5:
            await handle.wait_followups(1, timeout=WAIT)
        return "\n".join(handle.contents)

    def lines(self, name: str) -> list[dict[str, Any]]:
        """The actors' messages in the scene's thread, oldest first."""
        return [
            m
            for m in self.fake.messages_in(self.threads[name])
            if m["webhook_id"] and m["username"] != STATUS
        ]

    def ended(self, name: str) -> int:
        """How many runs have ended in the scene's thread (its ■ status lines)."""
        return sum(
            1
            for m in self.fake.messages_in(self.threads[name])
            if m["username"] == STATUS and "■" in m["content"]
        )


@contextlib.asynccontextmanager
async def running(processes: list[BotProcess]):
    """Start the processes; on the way out stop every one still alive."""
    try:
        for p in processes:
            await p.start()
        yield processes
    finally:
        for p in processes:
            with contextlib.suppress(ProcessLookupError):
                await p.stop()
