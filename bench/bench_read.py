"""Table-read benchmark: a 40-turn take read aloud, cold, and again after one replayed turn.

Plays a take on the scripted model (varied lines of 6–24 words, an action every other turn),
then reads it (`circus read`'s engine call) with an empty line cache; then saves it, replays it
up to its last turn, plays that turn anew, and reads the new take. One row per engine, language
and format: the offline voices (eSpeak NG) in English and Chinese, and a speech server
(tests/fakeproviders' loopback `/v1/audio/speech`, answering each line after `--latency`
seconds, as a hosted model would). Columns: wall time against the audio's own length (target:
faster than real time), the file's size per minute of audio, and the re-read's wall time as a
share of the first (target ≤ 10%) with how many of its lines it had to make.

    python bench/bench_read.py [--turns 40] [--latency 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fakeproviders import FakeSpeech  # noqa: E402

from engine import Config, ReadOrder, Rehearsal, new_scene  # noqa: E402
from engine.providers.scripted import ScriptedModels, ScriptedRequest  # noqa: E402

WORDS = {
    "en": (
        "the will house father desk signed night never told you me we it was is not why "
        "because Carol Danny Ruth drawer weeks before died second leave kitchen light cold"
    ).split(),
    "zh": list(
        "那天晚上你到底在哪裡我已經說過三次了監視器拍到你的車信封裡面是什麼律師來之前不說話"
    ),
}


def performer(language: str):
    """A scripted actor with varied lines (seeded by the call's index: the same take each run,
    and a replayed turn that says something new)."""

    def script(request: ScriptedRequest) -> str:
        shape = request.shape
        cast = list(shape.cast)
        if shape.kind == "stage_manager":
            return f"NEXT: {cast[request.index % len(cast)]}\nREASON: bench"
        if shape.kind != "actor":
            return "A scripted answer."
        rng = random.Random(request.index * 7919)
        sep = " " if language == "en" else ""
        line = sep.join(rng.choice(WORDS[language]) for _ in range(rng.randint(6, 24)))
        action = (
            sep.join(rng.choice(WORDS[language]) for _ in range(5)) if rng.random() < 0.5 else ""
        )
        others = [a for a in cast if a != shape.speaker]
        nxt = others[request.index % len(others)]
        tags = f"<thought>bench {request.index}</thought>\n"
        if action:
            tags += f"<action>{action}.</action>\n"
        return tags + f"<dialogue>{line}.</dialogue>\n<cue>{nxt}</cue>"

    return script


async def played(language: str, turns: int, folder: Path, config: Config) -> Rehearsal:
    """A scene of `language` after `turns` turns on the scripted performer."""
    template = "wake" if language == "en" else "interrogation"
    root = new_scene(folder, template, config=config)
    models = ScriptedModels()
    models.register("improv", performer(language))
    context = root / "context.md"
    text = context.read_text(encoding="utf-8")
    models_line = "---\nmodel: scripted/improv\nstage_manager_model: scripted/improv\n"
    context.write_text(text.replace("---\n", models_line, 1), encoding="utf-8")
    r = Rehearsal(root, models=models, config=config)
    await r.run(turns)
    return r


async def row(
    engine: str, language: str, fmt: str, turns: int, folder: Path, config: Config
) -> str:
    r = await played(language, turns, folder, config)
    started = time.perf_counter()
    first = await r.read.read(ReadOrder(fmt=fmt))
    first_wall = time.perf_counter() - started
    size = first.audio[0].stat().st_size
    await r.takes.save()
    await r.takes.replay(1, until=turns - 1)
    await r.run(1)
    started = time.perf_counter()
    again = await r.read.read(ReadOrder(fmt=fmt))
    again_wall = time.perf_counter() - started
    minutes = first.seconds / 60
    return (
        f"| {engine} | {language} | {fmt} | {first.lines} | {first.seconds:.0f} "
        f"| {first_wall:.1f} | {first.seconds / first_wall:.0f}× | {size / 1e6 / minutes:.2f} "
        f"| {again.made} of {again.lines} | {again_wall:.1f} | {100 * again_wall / first_wall:.0f}% |"
    )


async def through_server(language: str, fmt: str, turns: int, folder: Path, latency: float) -> str:
    fake = FakeSpeech(delay=latency)
    async with fake as base:
        env = {"CIRCUS_TTS_MODEL": "openai/tts-1", "CIRCUS_TTS_API_BASE": base}
        engine = f"speech server ({latency:g} s a line)"
        return await row(engine, language, fmt, turns, folder, Config.from_env(env))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.3)
    args = parser.parse_args()
    print(
        "| engine | language | format | lines read | audio (s) | first read (s) "
        "| faster than real time | MB per minute | re-read made | re-read (s) | re-read / first |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    folder = Path(tempfile.mkdtemp(prefix="bench-read-"))
    offline = Config.from_env({})
    cases = [("en", "ogg"), ("zh", "ogg"), ("en", "mp3"), ("en", "wav")]
    try:
        for n, (language, fmt) in enumerate(cases):
            where = folder / f"offline-{n}"
            print(
                asyncio.run(row("eSpeak NG", language, fmt, args.turns, where, offline)), flush=True
            )
        where = folder / "server"
        print(asyncio.run(through_server("en", "ogg", args.turns, where, args.latency)), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
