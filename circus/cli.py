"""`circus`: the director's command line (and the door to the console and the Discord bot).

Exit codes: 0 success; 1 a runtime failure (a model that fails, a scene busy in another
process), with the cause on stderr; 2 bad input (a missing scene, an unknown actor, take or
template, a bad number), one line on stderr and nothing written; 130 a run cut with Ctrl-C
(the turn in flight is dropped whole, the turns before it stay on record).

Only argparse is imported at the top: `circus --help` must answer instantly, and the engine
(and litellm behind it, seconds to import) load only when a command needs them.
"""

from __future__ import annotations

import argparse
import os
import sys

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_CUT = 0, 1, 2, 130
DEFAULT_TURNS = 6
DEMO_TURNS = 4
# English by default: SmolLM2's tokenizer spends ~3 tokens per CJK character, so the Chinese
# interrogation scene takes several times longer per turn on the embedded model.
DEMO_TEMPLATE = "wake"
MAX_TURNS = 500  # engine.rehearsal.MAX_RUN


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _turns(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"the number of turns must be a whole number, not {text!r}"
        ) from None
    if not 1 <= value <= MAX_TURNS:
        raise argparse.ArgumentTypeError(
            f"the number of turns must be between 1 and {MAX_TURNS}, not {value}"
        )
    return value


def _turn_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a turn number must be a whole number, not {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a turn number cannot be negative ({value})")
    return value


DESCRIPTION = """\
Circus (馬戲團): a rehearsal sandbox for screenwriters. You direct a short scene; every
character is an independent LLM actor with private knowledge. The scene is a folder of
markdown files (context.md, director_notes.md, transcript.md, actors/<name>/soul.md).
"""

EPILOG = """\
quick start:
  circus demo                         make scenes/demo and rehearse 4 turns offline
  circus new scenes/s1 --template wake
  circus run scenes/s1 -n 6 --backstage
  circus console scenes/s1            interactive: RUN 6, CUE 刑警 拍桌子, CUT, NOTE ...

models: soul.md `model` > context.md `model` > $CIRCUS_MODEL > the embedded SmolLM2-135M
(circus-local/smollm2). Stage manager: context.md `stage_manager_model` >
$CIRCUS_STAGE_MANAGER_MODEL > the actors' default.

exit codes: 0 ok · 1 runtime failure (e.g. the model failed) · 2 bad input, nothing written ·
130 cut with Ctrl-C (the turn in flight is dropped; earlier turns stay).
"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="circus",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version="circus 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help: str, **kw: object) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, **kw)  # type: ignore[arg-type]

    def scene_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("scene", metavar="SCENE_DIR", help="the scene folder")

    def backstage_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--backstage",
            action="store_true",
            help="also print each actor's private thoughts (and the stage manager's picks)",
        )

    p = command("new", "create a scene folder from a template")
    scene_arg(p)
    p.add_argument("--template", "-t", default="interrogation", metavar="NAME")

    command("templates", "list the scene templates")

    p = command("run", "let the scene go N turns by itself (RUN mode)")
    scene_arg(p)
    p.add_argument("-n", "--turns", type=_turns, default=DEFAULT_TURNS, metavar="N")
    p.add_argument("--start", metavar="ACTOR", help="who opens (default: the scene decides)")
    backstage_arg(p)

    p = command("cue", "one turn by ACTOR, with an optional private DIRECTION (CUE mode)")
    scene_arg(p)
    p.add_argument("actor", metavar="ACTOR")
    p.add_argument("direction", metavar="DIRECTION", nargs="*", help="e.g. 動作：拍桌子")
    backstage_arg(p)

    p = command("note", "whisper to everyone, or to one actor with --to; used from the next turn")
    scene_arg(p)
    p.add_argument("--to", metavar="ACTOR", help="whisper to this actor only")
    p.add_argument("text", metavar="TEXT", nargs="+")

    p = command("resume", "back to RUN mode from where the scene stopped")
    scene_arg(p)
    p.add_argument("-n", "--turns", type=_turns, default=DEFAULT_TURNS, metavar="N")
    backstage_arg(p)

    p = command("take", "save the scene as a take, list the takes, or show one")
    scene_arg(p)
    p.add_argument("action", choices=["save", "list", "show"], metavar="save|list|show")
    p.add_argument("number", nargs="?", metavar="N", help="the take to show (3 or take_3)")

    p = command("replay", "start a new attempt from a saved take, with today's souls and notes")
    scene_arg(p)
    p.add_argument("take", metavar="TAKE", help="3 or take_3")
    p.add_argument("--until", type=_turn_number, metavar="TURN", help="keep turns 1..TURN")
    p.add_argument("-n", "--turns", type=_turns, default=DEFAULT_TURNS, metavar="N")
    p.add_argument(
        "--no-play", action="store_true", help="only set the replay up; play later with run/cue"
    )
    backstage_arg(p)

    p = command("status", "cast, models, turns, takes, tokens and cost so far")
    scene_arg(p)

    p = command("soul", "show an actor's soul.md, or replace it (from a file, or in $EDITOR)")
    scene_arg(p)
    p.add_argument("action", choices=["show", "set", "edit"], metavar="show|set|edit")
    p.add_argument("actor", metavar="ACTOR")
    p.add_argument("file", nargs="?", metavar="FILE", help="for set: the new soul.md (- = stdin)")

    p = command(
        "summarize",
        "draft ACTOR's prior story from a full backstory FILE (only what they know)",
    )
    scene_arg(p)
    p.add_argument("actor", metavar="ACTOR")
    p.add_argument("file", metavar="FILE", help="the full, omniscient backstory (- = stdin)")
    p.add_argument("--dry-run", action="store_true", help="print the draft without writing soul.md")

    p = command("console", "an interactive director console (RUN, CUE, CUT, NOTE, TAKE ...)")
    scene_arg(p)
    backstage_arg(p)

    command("bot", "start the Discord frontend (needs DISCORD_TOKEN)")

    p = command(
        "demo",
        "create scenes/demo from a template if missing, then rehearse a few turns",
    )
    p.add_argument("-n", "--turns", type=_turns, default=DEMO_TURNS, metavar="N")
    p.add_argument(
        "--template",
        "-t",
        default=DEMO_TEMPLATE,
        metavar="NAME",
        help=f"the template for a new demo scene (default {DEMO_TEMPLATE}; interrogation is "
        "the Chinese scene, slower on the embedded model)",
    )
    backstage_arg(p)
    return parser


# ----------------------------------------------------------------------------- helpers


def _me() -> str:
    """How to call circus again, as the director did (`.venv/bin/circus` stays copy-pasteable)."""
    argv0 = sys.argv[0] if sys.argv else ""
    return argv0 if os.path.basename(argv0) == "circus" else "circus"


def _err(message: str) -> None:
    print(f"circus: {message}", file=sys.stderr, flush=True)


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


async def open_scene(path: str):  # -> engine.rehearsal.Rehearsal
    """A Rehearsal on an existing, readable scene folder (SceneNotFound otherwise)."""
    from pathlib import Path

    from engine.errors import SceneNotFound
    from engine.rehearsal import Rehearsal

    root = Path(path)
    if not (root / "context.md").is_file():
        raise SceneNotFound(root)
    rehearsal = Rehearsal(root)
    await rehearsal.state()  # a broken file is reported now, before anything is written
    return rehearsal


def describe_models(state) -> list[str]:  # state: engine.scene.SceneState
    from engine.models import actor_model, stage_manager_model

    lines = [f"{name} → {actor_model(soul, state.settings)}" for name, soul in state.souls.items()]
    lines.append(f"stage manager → {stage_manager_model(state.settings)}")
    return lines


def check_embedded(state) -> None:
    """Fail early, with the fix, if a role needs the embedded model and it is not installed."""
    from engine.embedded import EmbeddedModelUnavailable, available
    from engine.llm import EMBEDDED_MODEL
    from engine.models import actor_model, stage_manager_model

    models = {actor_model(s, state.settings) for s in state.souls.values()}
    models.add(stage_manager_model(state.settings))
    if EMBEDDED_MODEL in models and not available():
        raise EmbeddedModelUnavailable(f"this scene plays on {EMBEDDED_MODEL}")


async def play(rehearsal, start_run, backstage: bool, renderer=None) -> int:
    """Run a started-on-demand rehearsal run in the foreground; Ctrl-C cuts it."""
    import asyncio
    import signal

    from circus.render import Renderer

    renderer = renderer or Renderer(backstage=backstage)
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
    if result.reason == "error":
        last = renderer.errors[-1] if renderer.errors else "the model failed"
        _err(f"the run stopped after {renderer.landed} of {renderer.total} turns: {last}")
        return EXIT_FAILURE
    return EXIT_OK


# ----------------------------------------------------------------------------- commands


async def cmd_new(args: argparse.Namespace) -> int:
    from engine.templates import new_scene

    dest = new_scene(args.scene, args.template)
    from engine.scene import SceneFiles

    cast = ", ".join((await SceneFiles(dest).load()).cast)
    print(f"Created {dest} from the {args.template} template — cast: {cast}.")
    print(f"Next: {_me()} run {dest}   (or: {_me()} console {dest})")
    return EXIT_OK


async def cmd_templates(args: argparse.Namespace) -> int:
    from engine.errors import CircusError
    from engine.templates import list_templates, template_summary, templates_dir

    names = list_templates()
    if not names:
        _err(f"no templates in {templates_dir()} (set CIRCUS_TEMPLATES_DIR?)")
        return EXIT_FAILURE
    from engine.scene import SceneFiles

    width = max(len(n) for n in names)
    for name in names:
        try:
            cast = ", ".join((await SceneFiles(templates_dir() / name).load()).cast)
        except CircusError as exc:
            cast = f"broken: {exc}"
        print(f"{name:<{width}}  {template_summary(name)}  [{cast}]")
    return EXIT_OK


async def cmd_run(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    start = await rehearsal.resolve_actor(args.start) if args.start else None
    state = await rehearsal.state()
    check_embedded(state)
    return await play(
        rehearsal, lambda: rehearsal.start_run(args.turns, start, "run"), args.backstage
    )


async def cmd_resume(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    check_embedded(await rehearsal.state())
    return await play(
        rehearsal, lambda: rehearsal.start_run(args.turns, None, "resume"), args.backstage
    )


async def cmd_cue(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    actor = await rehearsal.resolve_actor(args.actor)
    check_embedded(await rehearsal.state())
    direction = " ".join(args.direction).strip()
    return await play(
        rehearsal, lambda: rehearsal.start_run(1, actor, "cue", direction), args.backstage
    )


async def cmd_note(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    actor = await rehearsal.resolve_actor(args.to) if args.to else None
    await rehearsal.note(" ".join(args.text), actor)
    print(f"Noted for {actor + ' only' if actor else 'everyone'}; used from the next turn.")
    return EXIT_OK


async def cmd_take(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    if args.action == "save":
        if args.number is not None:
            raise UsageError("take save takes no number (takes are numbered in order)")
        number = await rehearsal.save_take()
        print(f"Saved take_{number}.")
    elif args.action == "list":
        if args.number is not None:
            raise UsageError("take list takes no number")
        takes = await rehearsal.list_takes()
        if not takes:
            print("No takes saved yet (save one with: circus take SCENE_DIR save).")
        for info in takes:
            word = "turn" if info.turns == 1 else "turns"
            print(f"take_{info.number}  {info.turns:>3} {word}  {info.last_line}")
    else:
        if args.number is None:
            raise UsageError("take show needs the take's number, e.g. take show 2")
        sys.stdout.write(await rehearsal.show_take(args.number))
    return EXIT_OK


async def cmd_replay(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    if not args.no_play:
        check_embedded(await rehearsal.state())
    result = await rehearsal.replay(args.take, args.until)
    if result.autosaved:
        print(f"(the unsaved work was saved first as take_{result.autosaved})")
    print(
        f"Replaying take_{result.from_take} up to turn {result.kept_turns}; "
        f"this attempt will be take {result.take}."
    )
    if args.no_play:
        return EXIT_OK
    return await play(
        rehearsal, lambda: rehearsal.start_run(args.turns, None, "replay"), args.backstage
    )


async def cmd_status(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    print(await status_text(rehearsal))
    return EXIT_OK


async def status_text(rehearsal) -> str:
    from circus.render import format_cost

    s = await rehearsal.status()
    state = await rehearsal.state()
    saved = ", ".join(f"take_{n}" for n in s.saved_takes) or "none"
    lines = [
        f"scene:   {s.scene}  ({rehearsal.root})",
        f"take:    {s.take} (in progress, unsaved)  ·  saved: {saved}",
        f"turns:   {s.turns} on record  ·  mode: {s.mode}"
        + (f" ({s.progress})" if s.progress else ""),
        f"cast:    {', '.join(s.cast)}",
        "models:  " + "\n         ".join(describe_models(state)),
        f"usage:   {s.model_calls} model calls  ·  {s.prompt_tokens:,} prompt + "
        f"{s.completion_tokens:,} completion tokens  ·  {format_cost(s.cost_usd)}",
    ]
    if state.turns:
        last = state.turns[-1]
        line = (last.dialogue or last.action).split("\n")[0][:100]
        lines.append(f"last:    [{last.number}] {last.actor}: {line}")
    if state.whispers.unknown_sections:
        lines.append(
            "warning: director_notes.md has sections nobody reads (not in the cast): "
            + ", ".join(state.whispers.unknown_sections)
        )
    return "\n".join(lines)


async def cmd_soul(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    actor = await rehearsal.resolve_actor(args.actor)
    if args.action == "show":
        if args.file is not None:
            raise UsageError("soul show takes no FILE")
        sys.stdout.write(await rehearsal.soul_text(actor))
        return EXIT_OK
    if args.action == "set":
        if args.file is None:
            raise UsageError("soul set needs a FILE with the new soul.md (- for stdin)")
        await rehearsal.set_soul(actor, _read_text(args.file))
        print(f"Updated {actor}'s soul.md; used from the next turn.")
        return EXIT_OK
    return await _edit_soul(rehearsal, actor)


async def _edit_soul(rehearsal, actor: str) -> int:
    import shlex
    import subprocess
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    before = await rehearsal.soul_text(actor)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "soul.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(before)
        code = subprocess.call([*shlex.split(editor), path])
        if code != 0:
            _err(f"{editor} exited with {code}; soul.md was not changed")
            return EXIT_FAILURE
        with open(path, encoding="utf-8") as f:
            after = f.read()
    if after == before:
        print("No change.")
        return EXIT_OK
    await rehearsal.set_soul(actor, after)
    print(f"Updated {actor}'s soul.md; used from the next turn.")
    return EXIT_OK


async def cmd_summarize(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene)
    actor = await rehearsal.resolve_actor(args.actor)
    history = _read_text(args.file)
    story = await rehearsal.summarize_for(actor, history, write=not args.dry_run)
    print(story)
    if not args.dry_run:
        _err(f"wrote this as the prior story in {actor}'s soul.md")
    return EXIT_OK


async def cmd_console(args: argparse.Namespace) -> int:
    from circus.console import Console

    rehearsal = await open_scene(args.scene)
    return await Console(rehearsal, backstage=args.backstage).run()


async def cmd_demo(args: argparse.Namespace) -> int:
    from pathlib import Path

    from engine.models import actor_model
    from engine.templates import new_scene

    scenes = Path(os.environ.get("CIRCUS_SCENES_DIR") or "scenes")
    dest = scenes / "demo"
    if not (dest / "context.md").is_file():
        scenes.mkdir(parents=True, exist_ok=True)
        new_scene(dest, args.template)
        print(f"Created {dest} from the {args.template} template.")
    rehearsal = await open_scene(str(dest))
    state = await rehearsal.state()
    check_embedded(state)
    models = sorted({actor_model(s, state.settings) for s in state.souls.values()})
    print(
        f"Rehearsing {dest} ({len(state.turns)} turns on record) — {args.turns} more turns on "
        f"{', '.join(models)}."
    )
    if "circus-local/smollm2" in models:
        print(
            "The embedded SmolLM2-135M is a smoke-test model: expect rough lines. Set "
            "CIRCUS_MODEL for a real one (see README)."
        )
    code = await play(
        rehearsal, lambda: rehearsal.start_run(args.turns, None, "run"), args.backstage
    )
    if code == EXIT_OK:
        print(
            f"\nThe scene is on disk: {dest}/transcript.md (frontstage), {dest}/backstage/ "
            f"(thoughts). Go on with: {_me()} console {dest}"
        )
    return code


def cmd_bot(args: argparse.Namespace) -> int:
    import asyncio
    import importlib
    import inspect

    try:
        bot = importlib.import_module("bot")
    except ImportError as exc:
        _err(f"the Discord frontend is not installed with this copy of Circus ({exc})")
        return EXIT_FAILURE
    entry = getattr(bot, "main", None) or getattr(bot, "run_bot", None)
    if entry is None:
        for module in ("bot.main", "bot.app"):
            try:
                mod = importlib.import_module(module)
            except ImportError:
                continue
            entry = getattr(mod, "main", None) or getattr(mod, "run_bot", None)
            if entry is not None:
                break
    if inspect.ismodule(entry):
        entry = getattr(entry, "main", None) or getattr(entry, "run_bot", None)
    if not callable(entry):
        _err("the Discord frontend is not available yet (bot.main / bot.run_bot not found)")
        return EXIT_FAILURE
    result = entry()
    if inspect.isawaitable(result):
        result = asyncio.run(result)  # type: ignore[arg-type]
    return int(result) if isinstance(result, int) else EXIT_OK


COMMANDS = {
    "new": cmd_new,
    "templates": cmd_templates,
    "run": cmd_run,
    "resume": cmd_resume,
    "cue": cmd_cue,
    "note": cmd_note,
    "take": cmd_take,
    "replay": cmd_replay,
    "status": cmd_status,
    "soul": cmd_soul,
    "summarize": cmd_summarize,
    "console": cmd_console,
    "demo": cmd_demo,
}


def exit_code_for(exc: BaseException) -> int:
    """2 for input the director can fix; 1 for failures at run time."""
    from engine.errors import ModelError, SceneBusy

    if isinstance(exc, (ModelError, SceneBusy)):
        return EXIT_FAILURE
    if type(exc).__module__ == "engine.embedded":  # model unavailable / prompt too long
        return EXIT_FAILURE
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        _err(str(exc))
        return EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command == "bot":
        try:
            return cmd_bot(args)
        except KeyboardInterrupt:
            return EXIT_CUT

    import asyncio

    from engine.errors import CircusError

    try:
        return asyncio.run(COMMANDS[args.command](args))
    except UsageError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except CircusError as exc:
        _err(str(exc))
        return exit_code_for(exc)
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_CUT
    except BrokenPipeError:
        # `circus take show 3 | head`: the reader left; that is not a failure.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return EXIT_OK
