"""Prompt benchmark: how many tokens an actor's prompt really is, and how cache-friendly it is.

Runs a 4-actor `interrogation` scene on the scripted model (instant, through the door's real call
path; it records every prompt) and prints markdown tables:

- the prompt of the last actor call at 40 turns counted with o200k, cl100k (tiktoken, where
  its encoding files are on this machine) and the embedded model's own tokenizer (SmolLM2);
- the prefix share of consecutive prompts of the same actor (characters of the previous prompt
  the next one starts with / the next one's length): median, p10, min, share of calls < 0.75;
- the same scene's prompts rebuilt for the embedded model (its tokenizer and context), when
  engine.turn.prompts can address a model, so the window and the context bound are its own.

    python bench/bench_prompts.py [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from engine import Config, Rehearsal  # noqa: E402
from engine.folder.templates import new_scene  # noqa: E402
from engine.providers import embedded
from engine.providers.scripted import ScriptedModels, ScriptedRequest  # noqa: E402
from engine.turn import prompts

THOUGHTS = [
    "他問得太快，像早就知道答案。",
    "信封的事他提了兩次，是警告嗎？",
    "她的手在抖，她知道得更多。",
]
ACTIONS = ["把杯子推到桌子中央。", "靠回椅背，敲了三下桌面。", "沉默地翻過一頁筆錄。"]
LINES = [
    "「十一點我在家，說過三次了。」",
    "「監視器可不是這麼說的。」",
    "「我的當事人有權不回答。」",
]


def realistic(request: ScriptedRequest) -> str:
    """A ~60-token turn that always throws the ball to someone by name."""
    shape = request.shape
    others = [a for a in shape.cast if a != shape.speaker]
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[0]}\nREASON: scripted"
    i = request.index
    return (
        f"<thought>{THOUGHTS[i % 3]}</thought>\n<action>{ACTIONS[i % 3]}</action>\n"
        f"<dialogue>{LINES[(i + 1) % 3]}</dialogue>\n<cue>{others[i % len(others)]}</cue>"
    )


def add_fourth_actor(scene: Path) -> None:
    src = next((scene / "actors").iterdir())
    shutil.copytree(src, scene / "actors" / "書記員")
    ctx = scene / "context.md"
    text = ctx.read_text(encoding="utf-8")
    ctx.write_text(text.replace("cast: [", "cast: [書記員, ", 1), encoding="utf-8")


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def shares(prompts_by_call: Sequence[tuple[str, str]]) -> list[float]:
    """Prefix share of each prompt with the same speaker's previous prompt."""
    out: list[float] = []
    last: dict[str, str] = {}
    for speaker, text in prompts_by_call:
        prev = last.get(speaker)
        if prev is not None:
            out.append(common_prefix(prev, text) / len(text))
        last[speaker] = text
    return out


def distribution(values: Sequence[float]) -> str:
    ordered = sorted(values)
    p10 = ordered[max(0, int(len(ordered) * 0.1) - 1)]
    low = sum(1 for v in values if v < 0.75) / len(values)
    return (
        f"| {statistics.median(values):.3f} | {p10:.3f} | {min(values):.3f} | {low:.1%} "
        f"| {len(values)} |"
    )


def tiktoken_counter(name: str) -> Callable[[str], int] | None:
    """A tiktoken encoding if this machine has its file (litellm bundles cl100k and o200k)."""
    try:
        from engine.door.llm import litellm_module

        litellm_module().token_counter(model="gpt-4o", text="x")  # points tiktoken at its files
        import tiktoken

        encoding = tiktoken.get_encoding(name)
    except Exception:
        return None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def embedded_counter() -> Callable[[str], int] | None:
    if not embedded.available():
        return None
    llama = embedded.load()
    return lambda text: len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def as_chatml(messages: Sequence[dict[str, str]]) -> str:
    """The text SmolLM2's chat template makes of the messages (what its context holds)."""
    body = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return body + "<|im_start|>assistant\n"


async def scripted_scene(turns: int, workdir: Path) -> tuple[Path, list[ScriptedRequest]]:
    scene = new_scene(workdir / "prompts", "interrogation", config=Config.from_env(os.environ))
    add_fourth_actor(scene)
    # every role plays the "bench" script, through its own door (no environment involved)
    config = Config(model="scripted/bench", stage_manager_model="scripted/bench")
    scripted = ScriptedModels({"bench": realistic}, config=config)
    await Rehearsal(scene, models=scripted, config=config).run(turns)
    calls = [c for c in scripted.calls if c.shape.kind == "actor"]
    return scene, calls


async def rebuilt_for(model: str, scene: Path) -> list[tuple[str, list[dict[str, str]]]]:
    """Each turn's actor prompt as `model` would get it (needs ActorBrief.model)."""
    state = await Rehearsal(scene).state()
    out = []
    for i, turn in enumerate(state.turns):
        soul = state.souls[turn.actor]
        brief = prompts.ActorBrief(
            name=turn.actor,
            soul=soul.body,
            context=state.context,
            cast=tuple(state.cast),
            turns=tuple(state.turns[:i]),
            own_thoughts=state.thoughts.get(turn.actor, {}),
            whisper_all=state.whispers.everyone,
            whisper_private=state.whispers.for_actor(turn.actor),
            language=state.language,
            model=model,
        )
        out.append((turn.actor, list(prompts.actor_messages(brief))))
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--at", type=int, default=40, help="turn whose prompt is counted")
    args = parser.parse_args()
    counters = {
        "o200k": tiktoken_counter("o200k_base"),
        "cl100k": tiktoken_counter("cl100k_base"),
        "SmolLM2": embedded_counter(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        scene, calls = await scripted_scene(args.turns, Path(tmp))
        texts = [(c.shape.speaker, "\n".join(m["content"] for m in c.messages)) for c in calls]
        at = calls[min(args.at, len(calls)) - 1]
        print(f"### Prompt of the actor call at turn {args.at} (interrogation, 4 actors)\n")
        print("| tokenizer | tokens | max over the run |")
        print("| --------- | ------ | ---------------- |")
        for name, count in counters.items():
            if count is None:
                print(f"| {name} | not available offline | |")
                continue
            wrap = (
                as_chatml if name == "SmolLM2" else (lambda ms: "\n".join(m["content"] for m in ms))
            )
            peak = max(count(wrap(list(c.messages))) for c in calls)
            print(f"| {name} | {count(wrap(list(at.messages)))} | {peak} |")
        print("\n### Prefix share of consecutive prompts of one actor (scripted model)\n")
        print("| turns | median | p10 | min | calls < 0.75 | calls |")
        print("| ----- | ------ | --- | --- | ------------ | ----- |")
        for n in sorted({min(40, args.turns), args.turns}):
            print(f"| {n} " + distribution(shares(texts[:n])))
        fields = {f.name for f in dataclasses.fields(prompts.ActorBrief)}
        smol = counters["SmolLM2"]
        if "model" in fields and smol is not None:
            rebuilt = await rebuilt_for(embedded.MODEL_NAME, scene)
            sizes = [smol(as_chatml(ms)) for _, ms in rebuilt]
            print(f"\n### The same scene's prompts built for {embedded.MODEL_NAME}\n")
            print("| turns | median | p10 | min | calls < 0.75 | calls | max prompt tokens |")
            print("| ----- | ------ | --- | --- | ------------ | ----- | ----------------- |")
            for n in sorted({min(40, args.turns), args.turns}):
                joined = [(a, "\n".join(m["content"] for m in ms)) for a, ms in rebuilt[:n]]
                print(
                    f"| {n} " + distribution(shares(joined)) + f" {max(sizes[:n])} of "
                    f"{embedded.N_CTX} |"
                )


if __name__ == "__main__":
    asyncio.run(main())
