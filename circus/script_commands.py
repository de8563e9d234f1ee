"""`circus import` and `circus export --into`: a scene from the writer's own script, and a
take set back into it.

Handlers only: the engine reads, refuses and writes (engine.import_script,
rehearsal.harvest.splice); every sentence comes from the catalog in the scene's language. A
refusal is an engine error: one line, exit 2, nothing written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from circus.exits import EXIT_OK


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(n.strip() for n in (text or "").replace("，", ",").split(",") if n.strip())


async def cmd_import(args: argparse.Namespace) -> int:
    from circus.exits import UsageError
    from circus.words import t
    from engine import ImportAsk, import_script, say

    if args.number is not None and args.heading is not None:
        raise UsageError(t("cli.import.scene_or_heading"))
    ask = ImportAsk(
        scene=args.number,
        heading=args.heading,
        until=args.until,
        language=args.language,
        cast=_names(args.cast),
    )
    done = await import_script(args.script, args.scene, ask, draft=args.draft, config=args.config)
    lang = done.language
    print(
        say(
            "cli.import.done", lang, scene=done.scene, heading=done.heading or "—",
            source=Path(args.script).name, path=done.root, cast=done.cast, turns=done.turns,
            events=done.events, line=done.line,
        )
    )  # fmt: skip
    if done.cut:
        print(say("cli.import.cut", lang, count=done.cut))
    if done.notes:
        print(say("cli.import.notes", lang))
        for line, text in done.notes:
            print(say("cli.import.note", lang, line=line, text=text))
    if done.drafted:
        print(say("cli.next.drafted", lang))
    elif done.draft_failed:
        print(say("cli.next.draft_failed", lang, reason=done.draft_failed))
    print(say("cli.import.next", lang, path=done.root))
    return EXIT_OK


async def cmd_splice(args: argparse.Namespace, rehearsal) -> int:  # engine.Rehearsal
    from engine import say

    done = await rehearsal.harvest.splice(
        into=Path(args.into),
        take=args.take,
        picks=args.picks,
        out=Path(args.out) if args.out else None,
        replace=args.replace,
    )
    language = (await rehearsal.view()).language
    if done.replaced:
        first, last = done.replaced
        print(say("cli.export.replaced", language, path=done.path, take=done.take,
                  count=done.count, first=first, last=last))  # fmt: skip
        return EXIT_OK
    print(say("cli.export.spliced", language, path=done.path, take=done.take, count=done.count,
              line=done.line))  # fmt: skip
    return EXIT_OK
