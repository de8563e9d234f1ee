"""Latency a director feels: `circus --help`, how long a cut takes to stop a run, and how long
after a Ctrl-C the `circus run` process is gone (the cut's summary is printed at once; the
interpreter's exit used to take 5-20 s more).

Timings live here, not in tests (a loaded CI machine would make a timed test flaky). Prints a
markdown table of medians over several runs.

    python bench/bench_cli.py [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


from engine import Config, Rehearsal, Run  # noqa: E402
from engine.events import TurnStarted  # noqa: E402
from engine.folder.templates import new_scene  # noqa: E402
from engine.providers.scripted import ScriptedModels  # noqa: E402


def help_seconds(runs: int) -> list[float]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "circus", "--help"]
    subprocess.run(cmd, env=env, capture_output=True, check=True)  # warm the file cache
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        out.append(time.perf_counter() - started)
    return out


async def cut_seconds(runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        folder = Path(tempfile.mkdtemp()) / "scene"
        new_scene(folder, "wake", config=Config.from_env(os.environ))
        text = (folder / "context.md").read_text("utf-8")
        (folder / "context.md").write_text(
            text.replace(
                "---\n", "---\nmodel: scripted/improv\nstage_manager_model: scripted/improv\n", 1
            ),
            "utf-8",
        )
        rehearsal = Rehearsal(folder, models=ScriptedModels(latency=0.5))
        second = asyncio.Event()
        rehearsal.events.listen(
            lambda e, second=second: (
                second.set() if isinstance(e, TurnStarted) and e.turn == 2 else None
            )
        )
        task = await rehearsal.start_run(Run(10))
        await second.wait()
        started = time.perf_counter()
        await rehearsal.cut()
        await task
        out.append(time.perf_counter() - started)
        shutil.rmtree(folder.parent, ignore_errors=True)
    return out


def exit_seconds(runs: int) -> list[float]:
    """`circus run` on a scripted model, Ctrl-C once its second turn is on screen: seconds
    until the process has exited."""
    import signal

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CIRCUS_", "DISCORD_"))}
    env.update(PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", CIRCUS_MODEL="scripted/improv")
    env["CIRCUS_SCRIPTED_LATENCY"] = "0.3"
    out = []
    for _ in range(runs):
        folder = Path(tempfile.mkdtemp()) / "scene"
        new_scene(folder, "wake", config=Config.from_env(os.environ))
        proc = subprocess.Popen(
            [sys.executable, "-m", "circus", "run", str(folder), "-n", "40"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("[2] "):
                break
        started = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.stdout.read()
        proc.wait()
        out.append(time.perf_counter() - started)
        shutil.rmtree(folder.parent, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    helps = help_seconds(args.runs)
    cuts = asyncio.run(cut_seconds(args.runs))
    exits = exit_seconds(args.runs)
    print("| measure | median | max | runs |")
    print("|---|---|---|---|")
    for name, values in (
        ("`circus --help` wall time (s)", helps),
        ("cut → run ended (s)", cuts),
        ("Ctrl-C → `circus run` process exited (s)", exits),
    ):
        print(f"| {name} | {statistics.median(values):.3f} | {max(values):.3f} | {len(values)} |")


if __name__ == "__main__":
    main()
