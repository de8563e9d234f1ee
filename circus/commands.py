"""The `circus` subcommands: one `cmd_<name>(args)` per command, each returning an exit code.

Thin frontends over engine/: argparse (circus.cli) has already checked the arguments; a command
raises `UsageError` for input the director can fix and lets engine errors reach circus.cli,
which turns them into exit codes. The engine is imported inside each command, never at the top.
"""

from __future__ import annotations

import argparse
import sys

from circus import continuity
from circus.editing import edit_soul
from circus.exits import EXIT_FAILURE, EXIT_OK, UsageError, print_error
from circus.given import demo_folder, me, read_backstory, read_text, user
from circus.session import (
    check_embedded,
    open_scene,
    play,
    print_warnings,
    status_text,
    until_conditions,
)
from circus.words import LANGUAGE, t


async def cmd_templates(args: argparse.Namespace) -> int:
    from engine import (
        CircusError,
        list_templates,
        load_view,
        template_path,
        template_summary,
        templates_dir,
    )

    names = list_templates(args.config)
    if not names:
        print_error(t("cli.no_templates", folder=templates_dir(args.config)))
        return EXIT_FAILURE
    width = max(len(n) for n in names)
    for name in names:
        try:
            cast = ", ".join((await load_view(template_path(name, args.config), args.config)).cast)
        except CircusError as exc:
            cast = t("cli.template_broken", why=exc)
        print(f"{name:<{width}}  {template_summary(name, args.config)}  [{cast}]")
    return EXIT_OK


async def cmd_run(args: argparse.Namespace) -> int:
    from engine import Run

    rehearsal = await open_scene(args.scene, args.config)
    start = await rehearsal.resolve_actor(args.start) if args.start else None
    until = await until_conditions(rehearsal, args.until)
    check_embedded(await rehearsal.view())
    await print_warnings(rehearsal)
    order = Run(args.turns, start, until=until)
    return await play(rehearsal, lambda: rehearsal.start_run(order), args.backstage)


async def cmd_resume(args: argparse.Namespace) -> int:
    from engine import Resume

    rehearsal = await open_scene(args.scene, args.config)
    until = await until_conditions(rehearsal, args.until)
    check_embedded(await rehearsal.view())
    await print_warnings(rehearsal)
    order = Resume(args.turns, until=until)
    return await play(rehearsal, lambda: rehearsal.start_run(order), args.backstage)


async def cmd_cue(args: argparse.Namespace) -> int:
    from engine import Cue, UnknownActor, is_everyone

    rehearsal = await open_scene(args.scene, args.config)
    try:
        actor = await rehearsal.resolve_actor(args.actor)
    except UnknownActor as exc:
        if not is_everyone(args.actor):
            raise
        raise UsageError(t("cli.cue.everyone", why=exc, me=me(), scene=args.scene)) from None
    check_embedded(await rehearsal.view())
    await print_warnings(rehearsal)
    direction = " ".join(args.direction).strip()
    # --by NAME: a captain of the actor cues as such (if the scene lets captains cue).
    by = await rehearsal.room.author(args.by, actor, cue=True) if args.by else None
    order = Cue(actor, direction, by=by)
    return await play(rehearsal, lambda: rehearsal.start_run(order), args.backstage)


async def cmd_note(args: argparse.Namespace) -> int:
    from engine import UnknownActor

    rehearsal = await open_scene(args.scene, args.config)
    try:
        actor = await rehearsal.resolve_actor(args.to) if args.to else None
    except UnknownActor as exc:  # a private note never reaches everyone because of a typo
        raise UsageError(t("cli.note.unknown", why=exc)) from None
    # --by NAME: a captain of the actor is named as such; a captain of another is refused.
    by = await rehearsal.room.author(args.by, actor) if args.by else None
    dropped = await rehearsal.notes.note(" ".join(args.text), actor, by=by)
    print(t("cli.noted_for_actor", actor=actor) if actor else t("cli.noted_for_all"))
    if dropped:
        from engine import dropped_warning

        print_error(dropped_warning(str(actor or ""), dropped, LANGUAGE))  # as every error here
    return EXIT_OK


async def cmd_captain(args: argparse.Namespace) -> int:
    """`circus captain SCENE add|remove ACTOR NAME`, `circus captain SCENE list`."""
    rehearsal = await open_scene(args.scene, args.config)
    if args.action == "list":
        captains = await rehearsal.room.captains()
        for actor, writers in captains.items():
            print(t("cli.captain.line", actor=actor, names=", ".join(writers)))
        if not captains:
            print(t("cli.captain.none"))
        return EXIT_OK
    if not args.actor or not args.name:
        raise UsageError(t("cli.captain.usage"))
    cast_member = await rehearsal.resolve_actor(args.actor)
    if args.action == "add":
        name = await rehearsal.room.add(cast_member, args.name)
        print(t("cli.captain.added", name=args.name, actor=name))
    elif await rehearsal.room.remove(cast_member, args.name):
        print(t("cli.captain.removed", name=args.name, actor=cast_member.name))
    else:
        print(t("cli.captain.not", name=args.name, actor=cast_member.name))
    return EXIT_OK


async def cmd_take(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    if continuity.wants_more(args):  # --tree, and diff against the parent
        return await continuity.cmd_take_more(args, rehearsal)
    if args.full and args.action != "diff":
        raise UsageError(t("cli.take.full_with_diff"))
    if args.action == "save":
        if args.number:
            raise UsageError(t("cli.take.save_no_number"))
        number = await rehearsal.takes.save()
        print(t("cli.take.saved", number=number))
    elif args.action == "diff":
        if len(args.number) != 2:
            raise UsageError(t("cli.take.diff_two"))
        a, b = args.number
        sys.stdout.write(await rehearsal.harvest.diff(a, b, full=args.full))
    elif args.action == "list":
        if args.number:
            raise UsageError(t("cli.take.list_no_number"))
        takes = await rehearsal.takes.saved()
        if not takes:
            print(t("cli.take.none"))
        for info in takes:
            key = "cli.take.row_one" if info.turns == 1 else "cli.take.row"
            print(t(key, number=info.number, turns=info.turns, line=info.last_line))
    else:
        if len(args.number) != 1:
            raise UsageError(t("cli.take.show_one"))
        sys.stdout.write(await rehearsal.takes.show(args.number[0]))
    return EXIT_OK


async def cmd_pick(args: argparse.Namespace) -> int:
    from circus.harvest_text import pick_line

    rehearsal = await open_scene(args.scene, args.config)
    pick = await rehearsal.harvest.pick(
        args.turn, take=args.take, by=args.by or user(), note=args.note
    )
    print(t("cli.picked", pick=pick_line(pick)))
    return EXIT_OK


async def cmd_unpick(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    left = await rehearsal.harvest.unpick(args.turn, take=args.take, by=args.by)
    if left is None:
        print(t("cli.unpicked", turn=args.turn))
    else:
        print(t("cli.vote_removed", by=args.by, left=len(left.votes)))
    return EXIT_OK


async def cmd_picks(args: argparse.Namespace) -> int:
    from circus.harvest_text import pick_line

    rehearsal = await open_scene(args.scene, args.config)
    picks = await rehearsal.harvest.picks()
    if not picks:
        print(t("cli.no_picks", me=me()))
    for pick in picks:
        print(pick_line(pick))
    return EXIT_OK


async def cmd_line_note(args: argparse.Namespace) -> int:
    from engine import CONSOLE  # who types at this terminal, as the console names them

    rehearsal = await open_scene(args.scene, args.config)
    note = await rehearsal.line_notes.add(args.turn, " ".join(args.text), args.by or CONSOLE)
    print(t("cli.line_noted", turn=note.turn, actor=note.actor, text=note.text, by=note.by))
    return EXIT_OK


async def cmd_notes(args: argparse.Namespace) -> int:
    from circus.harvest_text import noted_lines

    rehearsal = await open_scene(args.scene, args.config)
    noted = await rehearsal.line_notes.list(args.take)
    if not noted:
        number = await rehearsal.harvest.take_view(args.take)
        print(t("cli.no_line_notes", take=number.number, me=me()))
    for line in noted_lines(noted):
        print(line)
    return EXIT_OK


async def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from circus.exits import UsageError
    from circus.words import t

    if args.replace and not args.into:
        raise UsageError(t("cli.export.replace_needs_into"))
    if args.into and (args.format is not None or args.thoughts):
        raise UsageError(t("cli.export.into_own_format"))
    rehearsal = await open_scene(args.scene, args.config)
    if args.into:
        from circus.script_commands import cmd_splice

        return await cmd_splice(args, rehearsal)
    paths = await rehearsal.harvest.export(
        take=args.take,
        formats="fountain,fdx,md,csv" if args.format is None else args.format,
        picks=args.picks,
        thoughts=args.thoughts,
        out=Path(args.out) if args.out else None,
    )
    for path in paths:
        print(path)
    return EXIT_OK


async def cmd_report(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    sys.stdout.write(await rehearsal.harvest.report(args.take))
    return EXIT_OK


async def cmd_replay(args: argparse.Namespace) -> int:
    from engine import Replay

    rehearsal = await open_scene(args.scene, args.config)
    if not args.no_play:
        check_embedded(await rehearsal.view())
        await print_warnings(rehearsal)
    result = await rehearsal.takes.replay(args.take, args.until)
    if result.autosaved:
        print(t("cli.autosaved", take=result.autosaved))
    print(
        t(
            "cli.replaying",
            take=result.from_take,
            turn=result.kept_turns,
            attempt=result.take,
        )
    )
    if args.no_play:
        return EXIT_OK
    return await play(rehearsal, lambda: rehearsal.start_run(Replay(args.turns)), args.backstage)


async def cmd_enter(args: argparse.Namespace) -> int:
    from circus.render import format_block

    rehearsal = await open_scene(args.scene, args.config)
    block = await rehearsal.stage.enter(await rehearsal.resolve_actor(args.actor))
    print(format_block(block, (await rehearsal.view()).language))
    return EXIT_OK


async def cmd_exit(args: argparse.Namespace) -> int:
    from circus.render import format_block

    rehearsal = await open_scene(args.scene, args.config)
    block = await rehearsal.stage.exit(await rehearsal.resolve_actor(args.actor))
    print(format_block(block, (await rehearsal.view()).language))
    return EXIT_OK


async def cmd_event(args: argparse.Namespace) -> int:
    from circus.render import format_block

    rehearsal = await open_scene(args.scene, args.config)
    block = await rehearsal.stage.event(" ".join(args.text))
    print(format_block(block, (await rehearsal.view()).language))
    return EXIT_OK


async def cmd_say(args: argparse.Namespace) -> int:
    from circus.render import format_turn

    rehearsal = await open_scene(args.scene, args.config)
    line = " ".join(args.text).strip()
    actor = await rehearsal.resolve_actor(args.actor)
    number = await rehearsal.stage.say(actor, line, args.action, args.cue, args.thought)
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
            raise UsageError(t("cli.soul.show_no_file"))
        sys.stdout.write(await rehearsal.souls.text(actor))
        return EXIT_OK
    if args.action == "set":
        if args.file is None:
            raise UsageError(t("cli.soul.set_needs_file"))
        await rehearsal.souls.set(actor, read_text(args.file))
        print(t("cli.soul.updated", actor=actor))
        return EXIT_OK
    return await edit_soul(rehearsal, actor)


async def cmd_summarize(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    actor = await rehearsal.resolve_actor(args.actor)
    history = read_backstory(args.file)
    story = await rehearsal.souls.summarize_for(actor, history, write=False)
    print(story)
    if not args.dry_run:
        kept = await rehearsal.souls.accept_prior_story(actor, story)
        print_error(t("cli.summarize.wrote", actor=actor))
        if kept is not None:
            print_error(t("cli.prior_story.kept", path=rehearsal.root / kept))
    return EXIT_OK


async def cmd_console(args: argparse.Namespace) -> int:
    from circus.console import Console
    from engine import CONSOLE

    rehearsal = await open_scene(args.scene, args.config, frozenset({CONSOLE}))
    return await Console(rehearsal, backstage=args.backstage).run()


async def cmd_demo(args: argparse.Namespace) -> int:
    from engine import Run, is_scene, list_templates, new_scene

    templates = list_templates(args.config)
    if args.template not in templates:  # refused even when a demo scene is already there
        available = tuple(templates) or t("error.no_templates")
        raise UsageError(t("error.no_template", template=args.template, available=available))
    scenes = args.config.scenes_dir
    dest = scenes / demo_folder(args.template)
    if not is_scene(dest):
        scenes.mkdir(parents=True, exist_ok=True)
        new_scene(dest, args.template, config=args.config)
        print(t("cli.demo.created", dest=dest, template=args.template))
    rehearsal = await open_scene(str(dest), args.config)
    view = await rehearsal.view()
    check_embedded(view)
    models = sorted(set(view.models.values()))
    print(t("cli.demo.rehearsing", dest=dest, turns=view.turns, more=args.turns, models=models))
    if "circus-local/smollm2" in models:
        print(t("cli.demo.smoke_model"))
    code = await play(rehearsal, lambda: rehearsal.start_run(Run(args.turns)), args.backstage)
    if code == EXIT_OK:
        print(t("cli.demo.on_disk", dest=dest, me=me()))
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
        print_error(verdict.reason.render(LANGUAGE))
        return EXIT_FAILURE
    return EXIT_OK


def cmd_bot(args: argparse.Namespace) -> int:
    try:
        import bot.app  # noqa: F401 — fails here if discord.py is missing
        from bot import main as run_bot
    except ImportError as exc:  # discord.py is missing from this install
        print_error(t("cli.no_bot", why=exc))
        return EXIT_FAILURE
    return run_bot(shards=args.shards, shard_count=args.shard_count)


async def cmd_scene(args: argparse.Namespace) -> int:
    """`circus scene give SCENE_DIR --server ID`: the operator hands a terminal scene to one
    Discord server (bot.server_folders.give_scene); no server can take one by itself."""
    import os
    from pathlib import Path

    from bot.server_folders import give_scene, terminal_servers
    from engine import CircusError

    try:
        servers = terminal_servers(args.server)
    except CircusError:  # its words name the environment variable; this was --server
        servers = frozenset()
    if len(servers) != 1:
        raise UsageError(t("cli.scene.one_server", text=args.server[:40]))
    (server,) = servers
    scenes = args.config.scenes_dir
    root = Path(os.path.abspath(args.scene))  # not resolved: a scene may be a link to a vault
    if root.parent.resolve() != Path(scenes).resolve():
        raise UsageError(t("cli.scene.not_loose", scene=args.scene, scenes=scenes))
    dest = give_scene(scenes, root.name, server)
    print(t("cli.scene.given", scene=root.name, dest=dest, server=server))
    return EXIT_OK


async def cmd_sort_scenes(args: argparse.Namespace) -> int:
    from bot.server_folders import sort_scenes

    # Each move is printed as it is made: a scene that cannot move stops the sort with an
    # error, and the ones moved before it must not go unsaid.
    moved, ledgers = sort_scenes(
        args.config.scenes_dir,
        lambda scene, dest: print(t("cli.sort.moved", scene=scene, dest=dest), flush=True),
    )
    for guild, days in ledgers:
        print(t("cli.sort.ledger", guild=guild, days=days))
    if not moved and not ledgers:
        print(t("cli.sort.nothing"))
    return EXIT_OK
