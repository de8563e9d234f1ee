"""Embedded-model benchmark: memory and turn time over a long rehearsal on SmolLM2.

Each scenario runs in its own child process (so peak RSS is its own) on the real embedded
model: the actors and the stage manager all use circus-local/smollm2. Per turn it records the
wall time, the resident memory after the turn, and how many prompt tokens llama.cpp evaluated
(llama_perf_context's n_p_eval) — the measure that load on a shared machine does not distort:
a turn that re-reads the whole prompt instead of resuming a cached prefix shows up there.

    python bench/bench_embedded.py                 # wake 40 turns, interrogation 20 turns
    python bench/bench_embedded.py --only wake:10  # one scenario
    python bench/bench_embedded.py --max-minutes 30  # stop a scenario early, report its turns
    python bench/bench_embedded.py --replay        # cheap: replay a scripted scene's prompts

--replay plays the scene on the scripted model first, then sends each turn's actor prompt (as
engine.turn.prompts builds it for the embedded model) to the embedded model with a 4-token reply:
the memory and the prompt re-evaluation of a long run at a fraction of its CPU time, for a
machine too loaded to generate whole turns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ("wake:40", "interrogation:20")
MARKS = (1, 10, 20, 40)


def _status_mib(field: str) -> float:
    """VmRSS (resident now) or VmHWM (peak resident so far) of this process, in MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _replay_prompts(template: str, turns: int, root: Path) -> list[tuple[str, list, tuple]]:
    """(speaker, messages, cast) of each turn of a scripted run, rebuilt for the embedded model."""
    import dataclasses

    from engine import Config, Rehearsal
    from engine.folder.templates import new_scene
    from engine.providers.scripted import ScriptedModels, ScriptedRequest
    from engine.turn import prompts

    def script(request: ScriptedRequest) -> str:
        others = [a for a in request.shape.cast if a != request.shape.speaker]
        if request.shape.kind == "stage_manager":
            return f"NEXT: {request.shape.cast[0]}"
        i = request.index
        if zh:
            return (
                f"<thought>第{i}輪：她在藏那封信，我現在確定了。</thought>\n"
                f"<action>把杯子重重放下，看向門口。</action>\n"
                f"<dialogue>你說九點，律師說八點，到底是幾點？</dialogue>\n"
                f"<cue>{others[i % len(others)]}</cue>"
            )
        return (
            f"<thought>Turn {i}: she is hiding the letter, I am sure of it now.</thought>\n"
            f"<action>Sets the cup down hard and looks at the door.</action>\n"
            f"<dialogue>You said nine o'clock. The lawyer says eight. Which is it?</dialogue>\n"
            f"<cue>{others[i % len(others)]}</cue>"
        )

    zh = template == "interrogation"
    config = Config(model="scripted/replay", stage_manager_model="scripted/replay")
    door = ScriptedModels({"replay": script}, config=config)
    scene = new_scene(root / template, template, config=Config.from_env(os.environ))
    asyncio.run(Rehearsal(scene, models=door, config=config).run(turns))
    state = asyncio.run(Rehearsal(scene, config=config).state())
    fields = {f.name for f in dataclasses.fields(prompts.ActorBrief)}
    extra = {"model": "circus-local/smollm2"} if "model" in fields else {}
    if "context_tokens" in fields:
        extra["context_tokens"] = 8192
    out = []
    for i, turn in enumerate(state.turns):
        brief = prompts.ActorBrief(
            name=turn.actor,
            soul=state.souls[turn.actor].body,
            context=state.context,
            cast=tuple(state.cast),
            turns=tuple(state.turns[:i]),
            own_thoughts=state.thoughts.get(turn.actor, {}),
            whisper_all=state.whispers.everyone,
            whisper_private=state.whispers.for_actor(turn.actor),
            language=state.language,
            **extra,
        )
        out.append((turn.actor, list(prompts.actor_messages(brief)), tuple(state.cast)))
    return out


def _replay_child(template: str, turns: int) -> None:
    sys.path.insert(0, str(ROOT))
    from engine.door import llm
    from engine.providers import embedded

    llm.litellm_module()
    with tempfile.TemporaryDirectory() as tmp:
        calls = _replay_prompts(template, turns, Path(tmp))
    embedded.warm_up()
    llama = embedded.load()
    llama_cpp = embedded.llama_cpp_module()
    cache = getattr(embedded, "cache_bytes", None)
    for number, (speaker, messages, cast) in enumerate(calls, 1):
        before = int(llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval)
        began = time.perf_counter()
        response = embedded.generate(
            messages, kind="actor", cast=cast, speaker=speaker, max_tokens=4
        )
        row = {
            "turn": number,
            "seconds": time.perf_counter() - began,
            "rss_mib": _status_mib("VmRSS"),
            "peak_mib": _status_mib("VmHWM"),
            "prompt_eval": int(llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval) - before,
            "prompt_tokens": response["usage"]["prompt_tokens"],
            "cache_mib": (cache() / 2**20) if cache else -1.0,
            "load": os.getloadavg()[0],
        }
        print("ROW " + json.dumps(row), flush=True)


async def _child(template: str, turns: int) -> None:
    import dataclasses

    sys.path.insert(0, str(ROOT))
    from engine import Config, Rehearsal
    from engine.door import llm
    from engine.events import TurnCompleted
    from engine.folder.templates import new_scene
    from engine.providers import embedded

    llm.litellm_module()
    embedded.warm_up()
    llama = embedded.load()
    llama_cpp = embedded.llama_cpp_module()

    def evaluated() -> int:
        return int(llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval)

    mark = {"t": time.perf_counter(), "eval": evaluated()}

    def on_event(event: object) -> None:
        if isinstance(event, TurnCompleted):
            now, done = time.perf_counter(), evaluated()
            cache = getattr(embedded, "cache_bytes", None)
            row = {
                "turn": event.turn,
                "seconds": now - mark["t"],
                "rss_mib": _status_mib("VmRSS"),
                "peak_mib": _status_mib("VmHWM"),
                "prompt_eval": done - mark["eval"],
                "prompt_tokens": event.prompt_tokens,
                "cache_mib": (cache() / 2**20) if cache else -1.0,
                "load": os.getloadavg()[0],
            }
            print("ROW " + json.dumps(row), flush=True)  # the parent may stop us any time
            mark["t"], mark["eval"] = now, done

    with tempfile.TemporaryDirectory() as tmp:
        scene = new_scene(Path(tmp) / template, template, config=Config.from_env(os.environ))
        # every role on the embedded model, whatever the environment names
        config = dataclasses.replace(
            Config.from_env(os.environ), model=None, stage_manager_model=None, api_base=None
        )
        rehearsal = Rehearsal(scene, config=config)
        rehearsal.events.listen(on_event)
        began = time.perf_counter()
        mark["t"] = began
        await rehearsal.run(turns)
        print(f"DONE {time.perf_counter() - began}", flush=True)


def _run(spec: str, max_seconds: float, replay: bool) -> dict[str, object]:
    """Run one scenario in a child; stop it after max_seconds and report the turns it did."""
    template, turns = spec.split(":")
    child = subprocess.Popen(
        [sys.executable, __file__, "--replay-child" if replay else "--child", spec],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    began = time.monotonic()
    rows: list[dict[str, float]] = []
    timer = threading.Timer(max_seconds, child.kill)
    timer.start()
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("ROW "):
            rows.append(json.loads(line[4:]))
            print(f"  {template} turn {rows[-1]['turn']}: {line[4:].strip()}", file=sys.stderr)
    timer.cancel()
    stopped = child.wait() != 0
    return {
        "template": template,
        "turns": turns,
        "rows": rows,
        "peak_rss_mib": max((r["peak_mib"] for r in rows), default=0.0),
        "total_seconds": time.monotonic() - began,
        "stopped": stopped,
    }


def _table(result: dict[str, object]) -> list[str]:
    rows = result["rows"]
    assert isinstance(rows, list)
    by_turn = {int(r["turn"]): r for r in rows}
    last_turn = int(rows[-1]["turn"])
    marks = sorted({m for m in MARKS if m in by_turn} | {last_turn})
    if len(rows) <= 12:  # a short run: every turn
        marks = sorted(by_turn)
    warm = rows[min(4, len(rows) - 1)]["rss_mib"] if rows else 0.0
    loads = [r["load"] for r in rows]
    done = f"{len(rows)} of {result['turns']} turns" + (" (stopped)" if result["stopped"] else "")
    lines = [
        f"### {result['template']} ({result['mode']}), {done}; 1-min load average {min(loads, default=0):.1f}–"
        f"{max(loads, default=0):.1f} on {os.cpu_count()} CPUs",
        "",
        "| turn | seconds | prompt tokens evaluated | prompt tokens | RSS MiB | cache MiB |",
        "| ---- | ------- | ----------------------- | ------------- | ------- | --------- |",
    ]
    for m in marks:
        r = by_turn[m]
        cache = f"{r['cache_mib']:.0f}" if r["cache_mib"] >= 0 else "n/a"
        lines.append(
            f"| {m} | {r['seconds']:.1f} | {r['prompt_eval']} | {r['prompt_tokens']} "
            f"| {r['rss_mib']:.0f} | {cache} |"
        )
    last = rows[-1] if rows else {"rss_mib": 0.0}
    lines += [
        "",
        f"peak RSS {result['peak_rss_mib']:.0f} MiB; RSS after turn 5 {warm:.0f} MiB, "
        f"at the end {last['rss_mib']:.0f} MiB; whole run {result['total_seconds']:.0f} s; "
        f"prompt tokens evaluated, total {sum(int(r['prompt_eval']) for r in rows)}",
        "",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", help="template:turns (repeatable)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--replay-child", help=argparse.SUPPRESS)
    parser.add_argument("--replay", action="store_true", help="replay prompts, 4-token replies")
    parser.add_argument("--json", action="store_true", help="print raw results as JSON too")
    parser.add_argument("--max-minutes", type=float, default=120.0, help="per scenario")
    args = parser.parse_args()
    if args.child:
        template, turns = args.child.split(":")
        asyncio.run(_child(template, int(turns)))
        return
    if args.replay_child:
        template, turns = args.replay_child.split(":")
        _replay_child(template, int(turns))
        return
    for spec in args.only or SCENARIOS:
        result = _run(spec, args.max_minutes * 60, args.replay)
        result["mode"] = "replayed prompts, 4-token replies" if args.replay else "rehearsal"
        if not result["rows"]:
            print(f"### {spec}: no turn finished", flush=True)
            continue
        print("\n".join(_table(result)), flush=True)
        if args.json:
            print(json.dumps(result))


if __name__ == "__main__":
    main()
