"""The `circus` subcommands that set a scene up: `new` (a template or your own cast), `actor`
add/remove/rename, `context` show/edit/set, `backstory` (each actor's prior story, accepted one
by one) and `soul edit` (a failed edit is kept, never thrown away).

Thin frontends over the engine's cast commands, like circus.commands: nothing is written here
but through a Rehearsal, and nothing is written without the writer's accept.
"""

from __future__ import annotations

import argparse
import os
import sys

from circus.commands import _me, _read_text
from circus.exits import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, print_error
from circus.session import open_scene


def _editor() -> str:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"


def edit_text(text: str, name: str = "text.md") -> str | None:
    """`text` after the writer's $EDITOR (None if the editor failed: nothing to use)."""
    import shlex
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        code = subprocess.call([*shlex.split(_editor()), path])
        if code != 0:
            print_error(f"{_editor()} exited with {code}; nothing was changed")
            return None
        with open(path, encoding="utf-8") as f:
            return f.read()


# ----------------------------------------------------------------------------- new
async def cmd_new(args: argparse.Namespace) -> int:
    from engine import load_view, new_scene, split_cast

    if args.cast is not None:
        cast = split_cast(args.cast)
        if not cast:
            raise UsageError('--cast needs names, e.g. --cast "林小姐, Eddie, Rose"')
        dest = new_scene(
            args.scene,
            args.template,
            args.config,
            cast=cast,
            title=args.title,
            language=args.language,
        )
        print(f"Created {dest} — a blank scene; cast: {', '.join(cast)}.")
        print(f"Fill in {dest}/context.md and each actors/<name>/soul.md (three parts each).")
    else:
        if args.title is not None or args.language is not None:
            raise UsageError("--title and --language go with --cast (a blank scene)")
        dest = new_scene(args.scene, args.template, args.config)
        cast = tuple((await load_view(dest)).cast)
        template = args.template or "interrogation"
        print(f"Created {dest} from the {template} template — cast: {', '.join(cast)}.")
    print(f"Next: {_me()} run {dest}   (or: {_me()} console {dest})")
    return EXIT_OK


# ----------------------------------------------------------------------------- actor
async def cmd_actor(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    if args.action == "add":
        soul = _read_text(args.soul_file) if args.soul_file else None
        actor = await rehearsal.cast.add_actor(args.name, soul)
        print(f"Added {actor} ({rehearsal.root}/actors/{actor}/soul.md).")
        if soul is None:
            print(f"Write who they are: {_me()} soul {rehearsal.root} edit {actor}")
    elif args.action == "remove":
        actor = await rehearsal.resolve_actor(args.name)
        await rehearsal.cast.remove_actor(actor)
        print(f"Removed {actor}; their lines stay in the transcript and the saved takes.")
    else:
        actor = await rehearsal.resolve_actor(args.name)
        new = await rehearsal.cast.rename_actor(actor, args.new_name)
        print(f"Renamed {actor} to {new}.")
    for warning in await rehearsal.cast.warnings():
        print_error(f"warning: {warning.text('en')}")
    return EXIT_OK


# ----------------------------------------------------------------------------- context
async def cmd_context(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    if args.action != "set" and args.file is not None:
        raise UsageError(f"context {args.action} takes no FILE")
    if args.action == "show":
        sys.stdout.write(await rehearsal.cast.context_text())
        return EXIT_OK
    if args.action == "set":
        if args.file is None:
            raise UsageError("context set needs a FILE with the new context.md (- for stdin)")
        await rehearsal.cast.set_context(_read_text(args.file))
    else:
        before = await rehearsal.cast.context_text()
        after = edit_text(before, "context.md")
        if after is None:
            return EXIT_FAILURE
        if after == before:
            print("No change.")
            return EXIT_OK
        await rehearsal.cast.set_context(after)
    print("Updated context.md; used from the next turn.")
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
        print(f"Please answer one of: {', '.join(choices)}.")


async def cmd_backstory(args: argparse.Namespace) -> int:
    rehearsal = await open_scene(args.scene, args.config)
    history = _read_text(args.file)
    interactive = not args.accept_all and sys.stdin.isatty() and args.file != "-"
    drafts = await rehearsal.souls.backstory_drafts(history)
    accepted = 0
    for name, draft in drafts.items():
        print(f"\n== {name}: prior story (only what {name} knows) ==\n{draft}\n")
        if not draft.strip():
            print_error(f"the draft for {name} came back empty; kept the soul as it is")
            continue
        choice = "a" if args.accept_all else None
        if choice is None and interactive:
            choice = _ask(f"{name}: [a]ccept, [e]dit, [d]rop?", "aed")
        if choice == "e":
            edited = edit_text(draft, f"{name}.prior_story.md")
            choice, draft = ("a", edited) if edited and edited.strip() else ("d", draft)
        if choice == "a":
            actor = await rehearsal.resolve_actor(name)
            await rehearsal.souls.accept_prior_story(actor, draft)
            accepted += 1
            print(f"Wrote it as {name}'s prior story.")
    if not args.accept_all and not interactive:
        print_error(
            "nothing was written: run this on a terminal to accept each draft, or add --accept-all"
        )
    elif accepted < len(drafts):
        print_error(f"wrote {accepted} of {len(drafts)} prior stories; the others are unchanged")
    return EXIT_OK


# ----------------------------------------------------------------------------- soul edit
async def edit_soul(rehearsal, actor) -> int:  # actor: engine.Actor
    """$EDITOR on the soul; an edit that cannot be used is kept in drafts/, never lost, and
    the next edit starts from it."""
    from engine import CircusError

    before = await rehearsal.souls.soul_text(actor)
    draft = await rehearsal.souls.soul_draft(actor)
    if draft is not None:
        print(f"(continuing from your kept draft, drafts/{actor}.soul.md)")
    after = edit_text(draft if draft is not None else before, "soul.md")
    if after is None:
        return EXIT_FAILURE
    if after == before:
        if draft is not None:
            await rehearsal.souls.drop_soul_draft(actor)
        print("No change.")
        return EXIT_OK
    try:
        await rehearsal.souls.set_soul(actor, after)
    except CircusError as exc:
        rel = await rehearsal.souls.save_soul_draft(actor, after)
        print_error(
            f"{exc} — your edit is kept in {rehearsal.root / rel}; `{_me()} soul "
            f"{rehearsal.root} edit {actor}` reopens it (soul.md is unchanged)"
        )
        return EXIT_USAGE
    if draft is not None:
        await rehearsal.souls.drop_soul_draft(actor)
    print(f"Updated {actor}'s soul.md; used from the next turn.")
    return EXIT_OK


SETUP_COMMANDS = {
    "new": cmd_new,
    "actor": cmd_actor,
    "context": cmd_context,
    "backstory": cmd_backstory,
}
