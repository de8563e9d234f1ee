"""One scene driven from the terminal: open it, check its models, play a run, describe it.

Shared by the one-shot commands and the console. Opening reads every file before anything is
written (a broken scene fails first); a run played in the foreground is cut by Ctrl-C, the turn
in flight dropped whole. The engine is imported inside the functions, never at the top.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from circus.exits import EXIT_CUT, EXIT_FAILURE, EXIT_OK, print_error
from circus.words import LANGUAGE, t

if TYPE_CHECKING:  # hints only: nothing is imported at run time
    import asyncio
    from collections.abc import Awaitable, Callable, Sequence
    from pathlib import Path

    from circus.render import Renderer
    from engine import Condition, Config, Rehearsal, RunResult, SceneView, Status


async def open_scene(
    path: str, config: Config, players_here: frozenset[str] = frozenset()
) -> Rehearsal:
    """A Rehearsal on an existing, readable scene folder (SceneNotFound otherwise), with the
    operator's `config` (engine.Config) read once at startup. `players_here`: who can type a
    played line into this process — nobody in a one-shot command (a run plays a person's role
    by its model rather than wait for a line no one here can give), the console itself."""
    import glob
    from pathlib import Path

    from engine import Rehearsal, SceneNotFound, is_scene

    root = Path(path)
    if not is_scene(root):
        given = sorted(
            p
            for p in root.parent.glob(f"*/{glob.escape(root.name)}")
            if p.parent.name.isdigit() and is_scene(p)
        )  # `circus scene give` moved it into a server's folder: say where it went
        if given:
            from circus.exits import UsageError

            raise UsageError(t("cli.scene.given_away", scene=root, dest=given[0]))
        raise SceneNotFound(root)
    rehearsal = Rehearsal(root, config=config, players_here=players_here)
    await rehearsal.view()  # a broken file is reported now, before anything is written
    return rehearsal


async def warning_lines(rehearsal: Rehearsal) -> list[str]:
    """One line per problem of a hand-built scene (engine `warnings()`), for the terminal."""
    files_in = (await rehearsal.view()).language  # part names as the scene's files say them
    return [
        t("cli.warning", warning=w.text(LANGUAGE, files_in))
        for w in await rehearsal.cast.warnings()
    ]


async def print_warnings(rehearsal: Rehearsal) -> None:
    """Say, before a run, what is wrong with the scene that does not stop it (stderr)."""
    for line in await warning_lines(rehearsal):
        print_error(line)


def describe_models(view: SceneView) -> list[str]:
    lines = [f"{name} → {model}" for name, model in view.models.items()]
    lines.append(t("cli.status.stage_manager_model", model=view.stage_manager_model))
    return lines


def check_embedded(view: SceneView) -> None:
    """Fail early, with the fix, if a role needs the embedded model and it is not installed."""
    from engine import EMBEDDED_MODEL, EmbeddedModelUnavailable, embedded_available

    models = {*view.models.values(), view.stage_manager_model}
    if EMBEDDED_MODEL in models and not embedded_available():
        raise EmbeddedModelUnavailable(t("cli.plays_on", model=EMBEDDED_MODEL))


async def until_conditions(rehearsal: Rehearsal, texts: Sequence[str]) -> tuple[Condition, ...]:
    """`--until` as conditions, each actor it names resolved against the cast (a name or an
    alias; UnknownActor otherwise)."""
    from circus.exits import UsageError
    from engine import parse_conditions, say

    conditions = tuple([await rehearsal.alerts.resolve(c) for c in parse_conditions(texts)])
    never = [c for c in conditions if not await rehearsal.alerts.can_fire(c)]
    if never:
        lang = (await rehearsal.view()).language
        said = [
            say(
                "cli.until.no_secret_of" if c.actor else "cli.until.no_secret",
                lang, condition=c.text, actor=c.actor,
            )
            for c in never
        ]  # fmt: skip
        if len(never) == len(conditions):
            # refused before a model is paid for a run that could only play to its end
            raise UsageError(said[0])
        for line in said:
            print_error(line)
    return conditions


async def play(
    rehearsal: Rehearsal,
    start_run: Callable[[], Awaitable[asyncio.Task[RunResult]]],
    backstage: bool,
    renderer: Renderer | None = None,
) -> int:
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
        renderer.info(t("cli.cutting"))
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
        last = renderer.errors[-1] if renderer.errors else t("cli.model_failed")
        print_error(t("cli.run_stopped", landed=renderer.landed, total=renderer.total, last=last))
        return EXIT_FAILURE
    return EXIT_OK


async def status_text(rehearsal: Rehearsal) -> str:
    """`circus status` / STATUS: the scene, its take, turns, cast, models, usage and problems."""
    s = await rehearsal.status()
    view = await rehearsal.view()
    return "\n".join(
        _status_lines(s, view, rehearsal.root) + await _status_problems(rehearsal, s, view)
    )


def _status_lines(s: Status, view: SceneView, root: Path) -> list[str]:
    from circus.figures import format_budget, format_cost

    saved = tuple(f"take_{n}" for n in s.saved_takes) or t("cli.status.none")
    mode = s.mode + (f" ({s.progress})" if s.progress else "")
    if s.held_by:
        mode += t("cli.status.held", pid=s.held_by[0], host=s.held_by[1])
    players = "".join(t("cli.status.played_by", actor=a, player=p) for a, p in s.players)
    lines = [
        t("cli.status.scene", scene=s.scene, root=root),
        t("cli.status.take", take=s.take, saved=saved),
        t("cli.status.turns", turns=s.turns, mode=mode),
        t("cli.status.cast", cast=tuple(s.cast)),
        t("cli.status.on_stage", names=tuple(s.on_stage) or t("cli.status.nobody")) + players,
        t("cli.status.models", models="\n         ".join(describe_models(view))),
        t(
            "cli.status.usage",
            calls=s.model_calls,
            prompt=s.prompt_tokens,
            completion=s.completion_tokens,
            cost=format_cost(s.cost_usd),
        ),
    ]
    for actor, writers in s.captains:
        lines.append(t("cli.status.captains", actor=actor, names=", ".join(writers)))
    if s.repairs or s.fallbacks:
        lines.append(t("cli.status.marks", repairs=s.repairs, fallbacks=s.fallbacks))
    for b in s.budgets:
        budget = format_budget(b.scope, b.unit, b.setting, b.limit, b.spent)
        lines.append(t("cli.status.budget", budget=budget))
    if view.last_turn is not None:
        last = view.last_turn
        line = (last.dialogue or last.action).split("\n")[0][:100]
        lines.append(t("cli.status.last", number=last.number, actor=last.actor, line=line))
    return lines


async def _status_problems(rehearsal: Rehearsal, s: Status, view: SceneView) -> list[str]:
    from engine import dropped_warning

    lines = await warning_lines(rehearsal)
    for section, count in s.notes_dropped:
        lines.append(dropped_warning(section, count, LANGUAGE))
    if view.unknown_note_sections:
        sections = tuple(view.unknown_note_sections)
        lines.append(t("cli.status.unknown_sections", sections=sections))
    return lines
