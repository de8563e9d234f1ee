"""Startup latency a writer feels at the terminal, each from process start, in one table.

  * `python -c pass`: the interpreter alone, the floor;
  * `circus --help`, and the commands that only read or write the scene folder (`status`,
    `note`, `take list`, `pick`, `secrets`, `report`, `export`): to the process's exit;
  * the one-shot model commands (`run -n 1`, `cue`, `check-model`): to the moment a loopback
    OpenAI-compatible server (the tests' FakeOpenAI, in a thread of this process) receives the
    command's first model request, and, for `run`, to the process's exit once that one turn
    is played, and once more with the model taking THINK seconds to answer (litellm, which
    prices the reply, loads meanwhile).

Every command runs once untimed (the file cache), then `--runs` times; the table gives the
min, median and max of each, in seconds. Timings live here, never in tests. `--against REV`
also times REV's tree (a `git worktree` in a temporary folder, run by this venv's Python with
that tree first on its path), alternating run by run, and prints both medians side by side.

    python bench/bench_startup.py [--runs 5] [--against REV]
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


def circus_command(tree: Path | None = None) -> list[str]:
    """The `circus` a writer runs: the venv's console script, else the module; for another
    tree, that tree's code through this venv's Python (its folder first on the path)."""
    if tree is not None:
        return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tree)!r}); "
                "from circus.cli import main; sys.exit(main())"]  # fmt: skip
    script = Path(sys.executable).with_name("circus")
    return [str(script)] if script.exists() else [sys.executable, "-m", "circus"]


class Arrivals(FakeOpenAI):
    """FakeOpenAI that notes when each request reaches it (this process's perf_counter)."""

    def __init__(self, cast: list[str]) -> None:
        super().__init__(cast)
        self.arrived: list[float] = []
        self.first = threading.Event()
        self.think = 0.0  # seconds before each answer: a hosted model's time to reply

    async def handle(self, request: Any) -> Any:
        self.arrived.append(time.perf_counter())
        self.first.set()
        if self.think:
            await asyncio.sleep(self.think)
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
    # A writer's circus runs from compiled bytecode after its first run (the untimed round
    # writes it): a PYTHONDONTWRITEBYTECODE left in a CI or sandbox shell would otherwise have
    # every timed run compile the engine from source (~0.3 s of a folder command).
    skip = ("CIRCUS_", "DISCORD_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
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
    """The wake scene with two turns played and a take saved (what the read commands read)."""
    scripted = env | {"CIRCUS_MODEL": "scripted/improv", "CIRCUS_STAGE_MANAGER_MODEL": ""}
    for args in (("new", "scene", "--template", "wake"), ("run", "scene", "-n", "2")):
        subprocess.run(
            [*circus_command(), *args], env=scripted, cwd=root, capture_output=True, check=True
        )
    subprocess.run(
        [*circus_command(), "take", "scene", "save"], env=env, cwd=root, capture_output=True
    )
    return root / "scene"


THINK = 2.0  # seconds: a hosted model's answer, with litellm's import (to price it) beside it

FOLDER_COMMANDS = [
    ("circus status SCENE", ["status", "scene"]),
    ("circus note SCENE TEXT", ["note", "scene", "Keep it quiet."]),
    ("circus take SCENE list", ["take", "scene", "list"]),
    ("circus pick SCENE 1", ["pick", "scene", "1"]),
    ("circus secrets SCENE", ["secrets", "scene"]),
    ("circus report SCENE", ["report", "scene"]),
    ("circus export SCENE", ["export", "scene", "--out", "scene.fountain"]),
]


def measure(runs: int, trees: list[Path | None]) -> dict[str, list[list[float]]]:
    """For each row, each tree's timings (runs alternate between the trees)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        probe = environment("http://127.0.0.1:9/v1")
        scene = make_scene(root, probe)
        server = Server(sorted(p.name for p in (scene / "actors").iterdir()))
        env = environment(server.base)
        rows: dict[str, list[list[float]]] = {}

        def add(name: str, k: int, value: float) -> None:
            rows.setdefault(name, [[] for _ in trees])[k].append(value)

        for i in range(runs + 1):  # the first round warms the file cache, untimed
            order = list(enumerate(trees)) if i % 2 == 0 else list(enumerate(trees))[::-1]
            for k, tree in order:
                circus = circus_command(tree)
                timed = [("python -c pass", [sys.executable, "-c", "pass"])]
                timed += [("circus --help", [*circus, "--help"])]
                timed += [(name, [*circus, *args]) for name, args in FOLDER_COMMANDS]
                for name, command in timed:
                    took = to_exit(command, env, root)
                    if i:
                        add(name, k, took)
                first, done = to_first_request(
                    [*circus, "run", "scene", "-n", "1"], env, root, server
                )
                server.fake.think = THINK
                _, thought = to_first_request(
                    [*circus, "run", "scene", "-n", "1"], env, root, server
                )
                server.fake.think = 0.0
                cue, _ = to_first_request([*circus, "cue", "scene", "Ruth"], env, root, server)
                probe_args = ["check-model", MODEL, "--api-base", server.base]
                check, _ = to_first_request([*circus, *probe_args], env, root, server)
                if i:
                    add("circus run SCENE -n 1 → first request", k, first)
                    add("circus run SCENE -n 1 → exit (1 turn)", k, done)
                    add(f"  … each model call taking {THINK:g} s", k, thought)
                    add("circus cue SCENE Ruth → first request", k, cue)
                    add("circus check-model → first request", k, check)
        server.close()
    return rows


def checkout(rev: str, into: Path) -> Path:
    tree = into / "tree"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tree), rev],
        check=True,
    )
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", metavar="REV", help="also time REV's tree, alternating")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        trees: list[Path | None] = [None]
        if args.against:
            trees.append(checkout(args.against, Path(tmp)))
        try:
            rows = measure(args.runs, trees)
        finally:
            if args.against:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(trees[1])],
                    check=False,
                )
    width = max(len(name) for name in rows)
    print(f"startup, seconds from process start; {args.runs} runs each after one untimed")
    if args.against:
        print(f"| {'command'.ljust(width)} | {args.against:>9} | this tree |   ratio |")
        print(f"| {'-' * width} | --------: | --------: | ------: |")
        for name, (mine, theirs) in rows.items():
            a, b = statistics.median(theirs), statistics.median(mine)
            print(f"| {name.ljust(width)} | {a:9.2f} | {b:9.2f} | {b / a:6.2f}× |")
        return
    print(f"| {'command'.ljust(width)} |   min | median |   max |")
    print(f"| {'-' * width} | ----: | -----: | ----: |")
    for name, (values,) in rows.items():
        print(
            f"| {name.ljust(width)} | {min(values):5.2f} | {statistics.median(values):6.2f} "
            f"| {max(values):5.2f} |"
        )


if __name__ == "__main__":
    main()
