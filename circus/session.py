"""One scene driven from the terminal: open it, check its models, play a run, describe it.

Shared by the one-shot commands and the console. Opening reads every file before anything is
written (a broken scene fails first); a run played in the foreground is cut by Ctrl-C, the turn
in flight dropped whole. The engine is imported inside the functions, never at the top.
"""

from __future__ import annotations

import os

from circus.exits import EXIT_CUT, EXIT_FAILURE, EXIT_OK, print_error


async def open_scene(path: str, config=None):  # -> engine.Rehearsal
    """A Rehearsal on an existing, readable scene folder (SceneNotFound otherwise), with the
    operator's `config` (engine.Config) read once at startup."""
    from pathlib import Path

    from engine import Rehearsal, SceneNotFound, is_scene

    root = Path(path)
    if not is_scene(root):
        raise SceneNotFound(root)
    rehearsal = Rehearsal(root, config=config)
    await rehearsal.view()  # a broken file is reported now, before anything is written
    return rehearsal


async def warning_lines(rehearsal) -> list[str]:
    """One line per problem of a hand-built scene (engine `warnings()`), for the terminal."""
    return [f"warning: {w.text('en')}" for w in await rehearsal.cast.warnings()]


async def print_warnings(rehearsal) -> None:
    """Say, before a run, what is wrong with the scene that does not stop it (stderr)."""
    for line in await warning_lines(rehearsal):
        print_error(line)


def describe_models(view) -> list[str]:  # view: engine.SceneView
    lines = [f"{name} → {model}" for name, model in view.models.items()]
    lines.append(f"stage manager → {view.stage_manager_model}")
    return lines


def check_embedded(view) -> None:  # view: engine.SceneView
    """Fail early, with the fix, if a role needs the embedded model and it is not installed."""
    from engine import EMBEDDED_MODEL, EmbeddedModelUnavailable, embedded_available

    models = {*view.models.values(), view.stage_manager_model}
    if EMBEDDED_MODEL in models and not embedded_available():
        raise EmbeddedModelUnavailable(f"this scene plays on {EMBEDDED_MODEL}")


async def play(rehearsal, start_run, backstage: bool, renderer=None) -> int:
    """Run a started-on-demand rehearsal run in the foreground; Ctrl-C cuts it."""
    import asyncio
    import signal

    from circus.render import Renderer

    renderer = renderer or Renderer(backstage=backstage)
    renderer.language = (await rehearsal.view()).language
    unlisten = rehearsal.events.listen(renderer)
    loop = asyncio.get_running_loop()
    cutting: list[asyncio.Task] = []

    def on_interrupt() -> None:
        if cutting:  # a second Ctrl-C: stop waiting
            loop.remove_signal_handler(signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            return
        renderer.info("cutting… (the turn in flight is dropped)")
        cutting.append(loop.create_task(rehearsal.cut()))

    try:
        task = await start_run()
        try:
            loop.add_signal_handler(signal.SIGINT, on_interrupt)
        except (NotImplementedError, RuntimeError):  # not the main thread / not Unix
            pass
        result = await task
        if cutting:
            await cutting[0]
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass
        unlisten()
    if result.reason == "cut":
        return EXIT_CUT
    if result.reason in ("error", "budget"):
        last = renderer.errors[-1] if renderer.errors else "the model failed"
        print_error(f"the run stopped after {renderer.landed} of {renderer.total} turns: {last}")
        return EXIT_FAILURE
    return EXIT_OK


async def status_text(rehearsal) -> str:
    from circus.render import format_budget, format_cost
    from engine import dropped_warning

    s = await rehearsal.status()
    view = await rehearsal.view()
    saved = ", ".join(f"take_{n}" for n in s.saved_takes) or "none"
    lines = [
        f"scene:   {s.scene}  ({rehearsal.root})",
        f"take:    {s.take} (in progress, unsaved)  ·  saved: {saved}",
        f"turns:   {s.turns} on record  ·  mode: {s.mode}"
        + (f" ({s.progress})" if s.progress else "")
        + (f" (in another process: pid {s.held_by[0]} on {s.held_by[1]})" if s.held_by else ""),
        f"cast:    {', '.join(s.cast)}",
        f"on stage: {', '.join(s.on_stage) or 'nobody'}"
        + "".join(f"  ·  {a} played by {p}" for a, p in s.players),
        "models:  " + "\n         ".join(describe_models(view)),
        f"usage:   {s.model_calls} model calls  ·  {s.prompt_tokens:,} prompt + "
        f"{s.completion_tokens:,} completion tokens  ·  {format_cost(s.cost_usd)}",
    ]
    if s.repairs or s.fallbacks:
        lines.append(
            f"marks:   {s.repairs} turns repaired by a re-ask  ·  {s.fallbacks} played by a "
            "stand-in (the reply could not be read)"
        )
    for b in s.budgets:
        lines.append("budget:  " + format_budget(b.scope, b.unit, b.setting, b.limit, b.spent))
    if view.last_turn is not None:
        last = view.last_turn
        line = (last.dialogue or last.action).split("\n")[0][:100]
        lines.append(f"last:    [{last.number}] {last.actor}: {line}")
    lines += await warning_lines(rehearsal)
    for section, count in s.notes_dropped:
        lines.append(dropped_warning(section, count, "en"))
    if view.unknown_note_sections:
        lines.append(
            "warning: director_notes.md has sections nobody reads (not in the cast): "
            + ", ".join(view.unknown_note_sections)
        )
    return "\n".join(lines)
