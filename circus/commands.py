"""The `circus` subcommands: one `cmd_<name>(args)` per command, each returning an exit code.

Thin frontends over engine/: argparse (circus.cli) has already checked the arguments; a command
raises `UsageError` for input the director can fix and lets engine errors reach circus.cli,
which turns them into exit codes. The engine is imported inside each command, never at the top.
"""

from __future__ import annotations

import argparse
import os
import sys

from circus.exits import EXIT_FAILURE, EXIT_OK, UsageError, print_error
from circus.session import check_embedded, open_scene, play, print_warnings, status_text


def _me() -> str:
    """How to call circus again, as the director did (`.venv/bin/circus` stays copy-pasteable)."""
    argv0 = sys.argv[0] if sys.argv else ""
    return argv0 if os.path.basename(argv0) == "circus" else "circus"


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text — save it as UTF-8") from None


async def cmd_templates(args: argparse.Namespace) -> int:
    from engine import CircusError, list_templates, load_view, template_summary, templates_dir

    names = list_templates(args.config)
    if not names:
        print_error(f"no templates in {templates_dir(args.config)} (set CIRCUS_TEMPLATES_DIR?)")
        return EXIT_FAILURE
    width = max(len(n) for n in names)
    for name in names:
        try:
            cast = ", ".join((await load_view(templates_dir(args.config) / name)).cast)
        except CircusError as exc:
            cast = f"broken: {exc}"
        print(f"{name:<{width}}  {template_summary(name, args.config)}  [{cast}]")
    return EXIT_OK


async def cmd_run(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    start = await rehearsal.resolve_actor(args.start) if args.start else None
    check_embedded(await rehearsal.view())
    await print_warnings(rehearsal)
    return await play(
        rehearsal, lambda: rehearsal.start_run(args.turns, start, "run"), args.backstage
    )


async def cmd_resume(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    check_embedded(await rehearsal.view())
    await print_warnings(rehearsal)
    return await play(
        rehearsal, lambda: rehearsal.start_run(args.turns, None, "resume"), args.backstage
    )


async def cmd_cue(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    actor = await rehearsal.resolve_actor(args.actor)
    check_embedded(await rehearsal.view())
    await print_warnings(rehearsal)
    direction = " ".join(args.direction).strip()
    return await play(
        rehearsal, lambda: rehearsal.start_run(1, actor, "cue", direction), args.backstage
    )


async def cmd_note(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    actor = await rehearsal.resolve_actor(args.to) if args.to else None
    dropped = await rehearsal.note(" ".join(args.text), actor)
    print(f"Noted for {f'{actor} only' if actor else 'everyone'}; used from the next turn.")
    if dropped:
        from engine import dropped_warning

        print_error(dropped_warning(str(actor or ""), dropped, "en"))  # as every error here
    return EXIT_OK


async def cmd_take(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    if args.full and args.action != "diff":
        raise UsageError("--full goes with take diff")
    if args.action == "save":
        if args.number:
            raise UsageError("take save takes no number (takes are numbered in order)")
        number = await rehearsal.save_take()
        print(f"Saved take_{number}.")
    elif args.action == "diff":
        if len(args.number) != 2:
            raise UsageError("take diff needs two takes, e.g. take diff 2 current")
        a, b = args.number
        sys.stdout.write(await rehearsal.diff(a, b, full=args.full))
    elif args.action == "list":
        if args.number:
            raise UsageError("take list takes no number")
        takes = await rehearsal.list_takes()
        if not takes:
            print("No takes saved yet (save one with: circus take SCENE_DIR save).")
        for info in takes:
            word = "turn" if info.turns == 1 else "turns"
            print(f"take_{info.number}  {info.turns:>3} {word}  {info.last_line}")
    else:
        if len(args.number) != 1:
            raise UsageError("take show needs one take number, e.g. take show 2")
        sys.stdout.write(await rehearsal.show_take(args.number[0]))
    return EXIT_OK


def _user() -> str:
    import getpass

    try:
        return getpass.getuser() or "director"
    except Exception:  # no user name in this environment (e.g. a container)
        return "director"


async def cmd_pick(args: argparse.Namespace) -> int:
    from circus.harvest_text import pick_line

    rehearsal = await open_scene(args.scene, args.config)
    pick = await rehearsal.pick(args.turn, take=args.take, by=args.by or _user(), note=args.note)
    print(f"Picked: {pick_line(pick)}")
    return EXIT_OK


async def cmd_unpick(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    left = await rehearsal.unpick(args.turn, take=args.take, by=args.by)
    if left is None:
        print(f"Unpicked turn {args.turn}.")
    else:
        print(f"Removed {args.by}'s vote; {len(left.votes)} left.")
    return EXIT_OK


async def cmd_picks(args: argparse.Namespace) -> int:
    from circus.harvest_text import pick_line

    rehearsal = await open_scene(args.scene, args.config)
    picks = await rehearsal.picks()
    if not picks:
        print(f"Nothing picked yet (pick a line with: {_me()} pick SCENE_DIR TURN).")
    for pick in picks:
        print(pick_line(pick))
    return EXIT_OK


async def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    rehearsal = await open_scene(args.scene, args.config)
    paths = await rehearsal.export(
        take=args.take,
        formats=args.format,
        picks=args.picks,
        thoughts=args.thoughts,
        out=Path(args.out) if args.out else None,
    )
    for path in paths:
        print(path)
    return EXIT_OK


async def cmd_report(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    sys.stdout.write(await rehearsal.report(args.take))
    return EXIT_OK


async def cmd_replay(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    if not args.no_play:
        check_embedded(await rehearsal.view())
        await print_warnings(rehearsal)
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


async def cmd_enter(args: argparse.Namespace) -> int:
    from circus.render import format_block

    rehearsal = await open_scene(args.scene, args.config)
    block = await rehearsal.enter(await rehearsal.resolve_actor(args.actor))
    print(format_block(block, (await rehearsal.view()).language))
    return EXIT_OK


async def cmd_exit(args: argparse.Namespace) -> int:
    from circus.render import format_block

    rehearsal = await open_scene(args.scene, args.config)
    block = await rehearsal.exit(await rehearsal.resolve_actor(args.actor))
    print(format_block(block, (await rehearsal.view()).language))
    return EXIT_OK


async def cmd_event(args: argparse.Namespace) -> int:
    from circus.render import format_block

    rehearsal = await open_scene(args.scene, args.config)
    block = await rehearsal.event(" ".join(args.text))
    print(format_block(block, (await rehearsal.view()).language))
    return EXIT_OK


async def cmd_say(args: argparse.Namespace) -> int:
    from circus.render import format_turn

    rehearsal = await open_scene(args.scene, args.config)
    line = " ".join(args.text).strip()
    actor = await rehearsal.resolve_actor(args.actor)
    number = await rehearsal.say(actor, line, args.action, args.cue, args.thought)
    turn = (await rehearsal.view()).last_turn
    assert turn is not None and number == turn.number
    print(format_turn(turn.number, turn.actor, turn.action, turn.dialogue, turn.cue))
    return EXIT_OK


async def cmd_status(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    print(await status_text(rehearsal))
    return EXIT_OK


async def cmd_soul(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
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
    from circus.setup_commands import edit_soul

    return await edit_soul(rehearsal, actor)


async def cmd_summarize(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    actor = await rehearsal.resolve_actor(args.actor)
    history = _read_text(args.file)
    story = await rehearsal.summarize_for(actor, history, write=not args.dry_run)
    print(story)
    if not args.dry_run:
        print_error(f"wrote this as the prior story in {actor}'s soul.md")
    return EXIT_OK


async def cmd_console(args: argparse.Namespace) -> int:
    from circus.console import Console

    rehearsal = await open_scene(args.scene, args.config)
    return await Console(rehearsal, backstage=args.backstage).run()


async def cmd_demo(args: argparse.Namespace) -> int:

    from engine import is_scene, new_scene

    scenes = args.config.scenes_dir
    dest = scenes / "demo"
    if not is_scene(dest):
        scenes.mkdir(parents=True, exist_ok=True)
        new_scene(dest, args.template, args.config)
        print(f"Created {dest} from the {args.template} template.")
    rehearsal = await open_scene(str(dest), args.config)
    view = await rehearsal.view()
    check_embedded(view)
    models = sorted(set(view.models.values()))
    print(
        f"Rehearsing {dest} ({view.turns} turns on record) — {args.turns} more turns on "
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


async def cmd_check_model(args: argparse.Namespace) -> int:
    import json

    from engine import check_model, probe_json, probe_lines, probe_verdict

    result = await check_model(
        args.model, api_base=args.api_base, timeout=args.timeout, config=args.config
    )
    if args.json:
        print(json.dumps(probe_json(result), ensure_ascii=False, indent=2))
    else:
        print("\n".join(probe_lines(result)))
    verdict = probe_verdict(result)
    if not verdict.usable:
        print_error(verdict.reason.render("en"))
        return EXIT_FAILURE
    return EXIT_OK


def cmd_bot(args: argparse.Namespace) -> int:
    try:
        import bot.app  # noqa: F401 — fails here if discord.py is missing
        from bot import main as run_bot
    except ImportError as exc:  # discord.py is missing from this install
        print_error(f"the Discord frontend is not installed with this copy of Circus ({exc})")
        return EXIT_FAILURE
    return run_bot()


COMMANDS = {  # with circus.setup_commands.SETUP_COMMANDS (new, actor, context, backstory)
    "templates": cmd_templates,
    "run": cmd_run,
    "resume": cmd_resume,
    "cue": cmd_cue,
    "note": cmd_note,
    "take": cmd_take,
    "replay": cmd_replay,
    "status": cmd_status,
    "enter": cmd_enter,
    "exit": cmd_exit,
    "event": cmd_event,
    "say": cmd_say,
    "pick": cmd_pick,
    "unpick": cmd_unpick,
    "picks": cmd_picks,
    "export": cmd_export,
    "report": cmd_report,
    "soul": cmd_soul,
    "summarize": cmd_summarize,
    "console": cmd_console,
    "demo": cmd_demo,
    "check-model": cmd_check_model,
}
