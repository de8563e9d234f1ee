"""Startup latency a writer feels at the terminal, each from process start, in one table.

  * `python -c pass`: the interpreter alone, the floor;
  * `circus --help` and `circus status SCENE`: to the process's exit;
  * `circus run SCENE -n 1`: to the moment a loopback OpenAI-compatible server (the
    tests' FakeOpenAI, in a thread of this process) receives the run's first model request,
    and, apart, to the process's exit once that one turn is played.

Every command runs once untimed (the file cache), then `--runs` times; the table gives the
min, median and max of each, in seconds. Timings live here, never in tests.

    python bench/bench_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # fakeproviders
sys.path.insert(0, str(REPO))

from fakeproviders import FakeOpenAI  # noqa: E402

MODEL = "openai/gpt-4o-mini"  # litellm knows its price: no unknown-model noise


def circus_command() -> list[str]:
    """The `circus` a writer runs: the venv's console script, else the module."""
    script = Path(sys.executable).with_name("circus")
    return [str(script)] if script.exists() else [sys.executable, "-m", "circus"]


class Arrivals(FakeOpenAI):
    """FakeOpenAI that notes when each request reaches it (this process's perf_counter)."""

    def __init__(self, cast: list[str]) -> None:
        super().__init__(cast)
        self.arrived: list[float] = []
        self.first = threading.Event()

    async def handle(self, request: Any) -> Any:
        self.arrived.append(time.perf_counter())
        self.first.set()
        return await super().handle(request)


class Server:
    """An Arrivals fake served by its own event loop in a daemon thread."""

    def __init__(self, cast: list[str]) -> None:
        self.fake = Arrivals(cast)
        self.base = ""
        ready = threading.Event()
        self.loop = asyncio.new_event_loop()

        async def up() -> None:
            self.base = await self.fake.__aenter__()

        def run() -> None:
            self.loop.run_until_complete(up())
            ready.set()
            self.loop.run_forever()

        threading.Thread(target=run, daemon=True, name="fake-openai").start()
        ready.wait(30)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.fake.__aexit__(None, None, None), self.loop).result(
            10
        )
        self.loop.call_soon_threadsafe(self.loop.stop)


def environment(base: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CIRCUS_", "DISCORD_"))}
    return env | {
        "CIRCUS_MODEL": MODEL,
        "CIRCUS_STAGE_MANAGER_MODEL": MODEL,
        "CIRCUS_API_BASE": base,
        "CIRCUS_MODEL_RETRIES": "0",
        "OPENAI_API_KEY": "sk-loopback-bench",
    }


def to_exit(command: list[str], env: dict[str, str], cwd: Path) -> float:
    began = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    took = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return took


def to_first_request(
    command: list[str], env: dict[str, str], cwd: Path, server: Server
) -> tuple[float, float]:
    """(seconds to the server's first request, seconds to the process's exit)."""
    server.fake.first.clear()
    before = len(server.fake.arrived)
    began = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out, err = proc.communicate(timeout=120)
    ended = time.perf_counter()
    if proc.returncode != 0 or len(server.fake.arrived) <= before:
        sys.exit(f"{' '.join(command)} exited {proc.returncode}, no request:\n{err[-2000:]}")
    return server.fake.arrived[before] - began, ended - began


def make_scene(root: Path, env: dict[str, str]) -> Path:
    subprocess.run(
        [*circus_command(), "new", "scene", "--template", "wake"],
        env=env,
        cwd=root,
        capture_output=True,
        check=True,
    )
    return root / "scene"


def measure(runs: int) -> list[tuple[str, list[float]]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        probe = environment("http://127.0.0.1:9/v1")
        scene = make_scene(root, probe)
        server = Server(sorted(p.name for p in (scene / "actors").iterdir()))
        env = environment(server.base)
        circus = circus_command()
        timed: list[tuple[str, Callable[[], float]]] = [
            ("python -c pass", lambda: to_exit([sys.executable, "-c", "pass"], env, root)),
            ("circus --help", lambda: to_exit([*circus, "--help"], env, root)),
            ("circus status SCENE", lambda: to_exit([*circus, "status", "scene"], env, root)),
        ]
        rows = []
        for name, once in timed:
            once()  # warm the file cache
            rows.append((name, [once() for _ in range(runs)]))
        run = [*circus, "run", "scene", "-n", "1"]
        to_first_request(run, env, root, server)
        both = [to_first_request(run, env, root, server) for _ in range(runs)]
        rows.append(("circus run SCENE -n 1 → first request", [a for a, _ in both]))
        rows.append(("circus run SCENE -n 1 → exit (1 turn)", [b for _, b in both]))
        server.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rows = measure(args.runs)
    width = max(len(name) for name, _ in rows)
    print(f"startup, seconds from process start; {args.runs} runs each after one untimed")
    print(f"| {'command'.ljust(width)} |   min | median |   max |")
    print(f"| {'-' * width} | ----: | -----: | ----: |")
    for name, values in rows:
        print(
            f"| {name.ljust(width)} | {min(values):5.2f} | {statistics.median(values):6.2f} "
            f"| {max(values):5.2f} |"
        )


if __name__ == "__main__":
    main()
