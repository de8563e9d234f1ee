"""`circus next`, `circus secrets`, `circus take list --tree` and `take diff N`.

Handlers only: the engine decides (engine.start_next, secrets_lines, tree_lines_of,
parent_take) and reads take folders without the run lock; every sentence comes from the
catalog in the scene's language. A refusal is an engine error: one line, exit 2, nothing
written (circus.cli turns it into the exit code).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from circus.exits import EXIT_OK
from circus.words import t

if TYPE_CHECKING:  # hints only: the engine loads inside each command
    from engine import Config


async def _language(scene: str, config: Config) -> str:
    from engine import load_view

    return (await load_view(scene, config)).language


async def cmd_next(args: argparse.Namespace) -> int:
    from engine import say, start_next

    done = await start_next(args.scene, args.new, args.take, draft=args.draft, config=args.config)
    language = await _language(str(done.root), args.config)
    print(
        say(
            "cli.next.done",
            language,
            path=done.root,
            take=done.take,
            scene=args.scene.rstrip("/").rsplit("/", 1)[-1],
            cast=done.cast,
        )
    )
    if done.drafted:
        print(say("cli.next.drafted", language))
    elif done.draft_failed:
        print(say("cli.next.draft_failed", language, reason=done.draft_failed))
    return EXIT_OK


async def cmd_secrets(args: argparse.Namespace) -> int:
    from engine import secrets_lines

    print("\n".join(await secrets_lines(args.scene, args.take)))
    return EXIT_OK


async def cmd_take_more(args: argparse.Namespace, rehearsal) -> int:  # engine.Rehearsal
    """`take list --tree`, and `take diff N` against the take N was made from."""
    from circus.exits import UsageError
    from engine import parent_take, tree_lines_of

    if args.tree:
        if args.action != "list" or args.number:
            raise UsageError(t("cli.take.tree_with_list"))
        print("\n".join(await tree_lines_of(args.scene)))
        return EXIT_OK
    take = args.number[0]
    parent = await parent_take(args.scene, take)
    sys.stdout.write(await rehearsal.harvest.diff(parent, take, full=args.full))
    return EXIT_OK


def wants_more(args: argparse.Namespace) -> bool:
    return bool(args.tree) or (args.action == "diff" and len(args.number) == 1)
