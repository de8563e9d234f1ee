"""The `circus` subcommands that set a scene up: `new` (a template or your own cast), `actor`
add/remove/rename, `context` show/edit/set, `backstory` (each actor's prior story, accepted one
by one); `soul edit` lives in circus.editing.

Thin frontends over the engine's cast commands, like circus.commands: nothing is written here
but through a Rehearsal, and nothing is written without the writer's accept.
"""

from __future__ import annotations

import argparse
import sys

from circus.editing import edit_context, edit_text
from circus.exits import EXIT_OK, UsageError, print_error
from circus.given import me, read_backstory, read_text
from circus.session import open_scene
from circus.words import LANGUAGE, t


# ----------------------------------------------------------------------------- new
async def cmd_new(args: argparse.Namespace) -> int:
    from engine import load_view, new_scene, split_cast

    if args.cast is not None:
        cast = split_cast(args.cast)
        if not cast:
            raise UsageError(t("cli.new.cast_needs_names"))
        dest = new_scene(
            args.scene,
            args.template,
            config=args.config,
            cast=cast,
            title=args.title,
            language=args.language,
        )
        print(t("cli.new.created_blank", dest=dest, cast=cast))
        print(t("cli.new.fill_in", dest=dest))
    else:
        if args.title is not None or args.language is not None:
            raise UsageError(t("cli.new.title_with_cast"))
        dest = new_scene(args.scene, args.template, config=args.config)
        cast = tuple((await load_view(dest, args.config)).cast)
        template = args.template or "interrogation"
        print(t("cli.new.created", dest=dest, template=template, cast=cast))
    print(t("cli.new.next", me=me(), dest=dest))
    return EXIT_OK


# ----------------------------------------------------------------------------- actor
async def cmd_actor(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    if args.action == "add":
        soul = read_text(args.soul_file) if args.soul_file else None
        actor = await rehearsal.cast.add(args.name, soul)
        print(t("cli.actor.added", actor=actor, root=rehearsal.root))
        if soul is None:
            print(t("cli.actor.write_soul", me=me(), root=rehearsal.root, actor=actor))
    elif args.action == "remove":
        actor = await rehearsal.resolve_actor(args.name)
        whispers = await rehearsal.cast.remove(actor)
        print(t("cli.actor.removed", actor=actor))
        if whispers:
            print(t("cli.actor.removed_whispers", count=whispers))
    else:
        actor = await rehearsal.resolve_actor(args.name)
        new = await rehearsal.cast.rename(actor, args.new_name)
        print(t("cli.actor.renamed", actor=actor, new=new))
    files_in = (await rehearsal.view()).language
    for warning in await rehearsal.cast.warnings():
        print_error(t("cli.warning", warning=warning.text(LANGUAGE, files_in)))
    return EXIT_OK


# ----------------------------------------------------------------------------- context
async def cmd_context(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    if args.action != "set" and args.file is not None:
        raise UsageError(t("cli.context.no_file", action=args.action))
    if args.action == "show":
        sys.stdout.write(await rehearsal.cast.context_text())
        return EXIT_OK
    if args.action == "edit":
        return await edit_context(rehearsal)
    if args.file is None:
        raise UsageError(t("cli.context.set_needs_file"))
    await rehearsal.cast.set_context(read_text(args.file))
    print(t("cli.context.updated"))
    return EXIT_OK


# ----------------------------------------------------------------------------- backstory
def _ask(question: str, choices: str) -> str:
    """One letter of `choices` typed on the terminal (the first is the default)."""
    while True:
        print(question, end=" ", flush=True)
        answer = sys.stdin.readline()
        if not answer:  # end of input: the safe answer is to write nothing
            return "d"
        answer = answer.strip().lower()[:1] or choices[0]
        if answer in choices:
            return answer
        print(t("cli.ask.again", choices=tuple(choices)))


async def cmd_backstory(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    history = read_backstory(args.file)
    interactive = not args.accept_all and sys.stdin.isatty() and args.file != "-"
    if not args.accept_all and not interactive:  # before any draft: each one is a billed call
        raise UsageError(t("cli.backstory.not_a_terminal"))
    drafts = await rehearsal.souls.backstory_drafts(history)
    accepted = 0
    for name, draft in drafts.items():
        print(t("cli.backstory.draft", name=name, draft=draft))
        if not draft.strip():
            print_error(t("cli.backstory.empty", name=name))
            continue
        choice = "a" if args.accept_all else None
        if choice is None and interactive:
            choice = _ask(t("cli.backstory.ask", name=name), "aed")
        if choice == "e":
            edited = edit_text(draft, f"{name}.prior_story.md")
            choice, draft = ("a", edited) if edited and edited.strip() else ("d", draft)
        if choice == "a":
            actor = await rehearsal.resolve_actor(name)
            kept = await rehearsal.souls.accept_prior_story(actor, draft)
            accepted += 1
            print(t("cli.backstory.wrote", name=name))
            if kept is not None:
                print(t("cli.prior_story.kept", path=rehearsal.root / kept))
    if accepted < len(drafts):
        print_error(t("cli.backstory.some", accepted=accepted, total=len(drafts)))
    return EXIT_OK
