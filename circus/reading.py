"""`circus read`: a take heard aloud — one audio file and its cue sheet, paths printed.

While it renders, the line being read is counted on one line of the terminal (stderr, only
when it is a terminal); what a read made, took from the cache and cost is said once at the end.
"""

from __future__ import annotations

import argparse
import sys

from circus.exits import EXIT_OK
from circus.session import open_scene
from circus.words import t


async def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        end = "\n" if done == total else ""
        sys.stderr.write("\r" + t("cli.read.progress", done=done, total=total) + end)
        sys.stderr.flush()


FORMATS = ("ogg", "mp3", "wav")
_OTHER_AUDIO = ("m4a", "aac", "flac", "opus", "oga", "weba", "webm", "aiff", "aif", "wma")


def audio_format(out: str | None, asked: str | None) -> str:
    """The format a read writes: --format, else the one --out's name ends in, else ogg; a
    --format that --out's name contradicts (`--out x.mp3 --format wav`) is a UsageError."""
    from pathlib import Path

    from circus.exits import UsageError

    named = Path(out).suffix.lower().lstrip(".") if out else ""
    if named in _OTHER_AUDIO:  # a sound file it cannot write is refused, never renamed
        raise UsageError(t("cli.read.format_clash", out=out, format=asked or "ogg|mp3|wav"))
    if named in FORMATS:
        if asked and asked != named:
            raise UsageError(t("cli.read.format_clash", out=out, format=asked))
        return named
    return asked or "ogg"


async def cmd_read(args: argparse.Namespace) -> int:
    from pathlib import Path

    from engine import ReadOrder

    rehearsal = await open_scene(args.scene, args.config)
    order = ReadOrder(
        take=args.take,
        first=args.first,
        last=args.last,
        picks=args.picks,
        thoughts=args.thoughts,
        out=Path(args.out) if args.out else None,
        fmt=audio_format(args.out, args.format),
        cache=not args.no_cache,
    )
    result = await rehearsal.read.read(order, _progress)
    for path in result.audio:
        print(path)
    print(result.cue_sheet)
    for path in result.thoughts_files:  # the thoughts' audio and their own cue sheet
        print(path)
    minutes, seconds = divmod(round(result.seconds), 60)
    cost = (
        t("cli.read.cost", usd=f"{result.cost_usd:.4f}")
        if result.cost_usd
        else t("cli.read.unpriced")
        if result.cost_usd is None
        else ""
    )
    print(
        t(
            "cli.read.done",
            length=f"{minutes}:{seconds:02d}",
            lines=result.lines,
            made=result.made,
            cached=result.cached,
            engine=result.engine,
            cost=cost,
        )
    )
    return EXIT_OK
