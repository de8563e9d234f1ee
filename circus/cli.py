"""`circus`: the director's command line (and the door to the console and the Discord bot).

Argument parsing and `main()` only: the subcommands live in circus.commands, the exit codes in
circus.exits, and engine errors become exit codes here, at the edge. Only argparse is imported at
the top: `circus --help` must answer instantly; the engine (and litellm behind it, seconds to
import) loads only when a command needs it.
"""

from __future__ import annotations

import argparse
import os
import sys

from circus.exits import EXIT_CUT, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, print_error

# The terminal's documented default for run/resume/replay/RUN (README); Discord and the
# engine's own default is engine.DEFAULT_TURNS (5). Kept apart on purpose: no behaviour changes.
DEFAULT_TURNS = 6
DEMO_TURNS = 4
# English by default: SmolLM2's tokenizer spends ~3 tokens per CJK character, so the Chinese
# interrogation scene takes several times longer per turn on the embedded model.
DEMO_TEMPLATE = "wake"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _whole(text: str, what: str) -> int:
    # The engine's one bounded reader; imported here, not at the top: `--help` must not load
    # the engine. int() would take "١٢" and "1_0" and refuse 5,000 digits with a ValueError.
    from engine import shown_number, whole_number

    value = whole_number(text, signed=True)
    if value is None:
        raise argparse.ArgumentTypeError(f"{what} must be a whole number, not {shown_number(text)}")
    return value


def _turns(text: str) -> int:
    value = _whole(text, "the number of turns")
    from engine import MAX_TURNS  # not at import: `--help` must not load the engine

    if not 1 <= value <= MAX_TURNS:
        raise argparse.ArgumentTypeError(
            f"the number of turns must be between 1 and {MAX_TURNS}, not {value}"
        )
    return value


def _turn_number(text: str) -> int:
    value = _whole(text, "a turn number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"a turn number cannot be negative ({value})")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a timeout is a number of seconds, not {text!r}"
        ) from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(
            f"a timeout must be more than 0 and at most 3600 s, not {text}"
        )
    return value


DESCRIPTION = """\
Circus (馬戲團): a rehearsal sandbox for screenwriters. You direct a short scene; every
character is an independent LLM actor with private knowledge. The scene is a folder of
markdown files (context.md, director_notes.md, transcript.md, actors/<name>/soul.md).
"""

EPILOG = """\
quick start:
  circus demo                         make scenes/demo and rehearse 4 turns offline
  circus new scenes/s1 --template wake   (or your own: circus new scenes/s2 --cast "Eddie, Rose")
  circus run scenes/s1 -n 6 --backstage
  circus console scenes/s1            interactive: RUN 6, CUE 刑警 拍桌子, CUT, NOTE ...
  circus exit scenes/s1 律師 · circus event scenes/s1 電話響了 · circus say scenes/s1 林小姐 我沒有
  circus pick scenes/s1 5 --note 好句  then: circus export scenes/s1 --picks

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

    # --- setup: new scenes, the cast and the context (circus.setup_commands)
    p = command("new", "create a scene folder from a template, or a blank one with your own --cast")
    scene_arg(p)
    p.add_argument("--template", "-t", metavar="NAME", help="a template (default: interrogation)")
    p.add_argument(
        "--cast", metavar="NAMES", help='a blank scene with these actors: "林小姐, Eddie, Rose"'
    )
    p.add_argument("--title", metavar="TEXT", help="with --cast: the scene's title line")
    p.add_argument(
        "--language",
        choices=["zh", "en"],
        help="with --cast: the scene's language (default: zh if a name is Chinese)",
    )

    p = command("actor", "add, remove or rename an actor (rename: before the first turn)")
    actions = p.add_subparsers(dest="action", metavar="add|remove|rename", parser_class=_Parser)
    actions.required = True
    a = actions.add_parser("add", help="a new actor: a blank three-part soul, or --from FILE")
    scene_arg(a)
    a.add_argument("name", metavar="NAME")
    a.add_argument("--from", dest="soul_file", metavar="FILE", help="their soul.md (- = stdin)")
    a = actions.add_parser("remove", help="take an actor out (their lines stay on record)")
    scene_arg(a)
    a.add_argument("name", metavar="NAME")
    a = actions.add_parser("rename", help="rename an actor, before the first turn of the take")
    scene_arg(a)
    a.add_argument("name", metavar="OLD")
    a.add_argument("new_name", metavar="NEW")

    p = command("context", "show context.md, edit it in $EDITOR, or replace it from a FILE")
    scene_arg(p)
    p.add_argument(
        "action",
        nargs="?",
        default="show",
        choices=["show", "edit", "set"],
        metavar="show|edit|set",
    )
    p.add_argument(
        "file", nargs="?", metavar="FILE", help="for set: the new context.md (- = stdin)"
    )

    p = command(
        "backstory",
        "draft every actor's prior story from a full backstory FILE; accept each one",
    )
    scene_arg(p)
    p.add_argument("file", metavar="FILE", help="the full, omniscient backstory (- = stdin)")
    p.add_argument(
        "--accept-all", action="store_true", help="write every draft without asking (scripts)"
    )
    # --- end of setup

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

    p = command(
        "take", "save the scene as a take, list the takes, show one, or compare two (diff A B)"
    )
    scene_arg(p)
    p.add_argument(
        "action", choices=["save", "list", "show", "diff"], metavar="save|list|show|diff"
    )
    p.add_argument(
        "number",
        nargs="*",
        metavar="N",
        help="show: the take (3 or take_3); diff: two takes (numbers or `current`)",
    )
    p.add_argument("--full", action="store_true", help="diff: print the shared opening in full")
    p.add_argument("--tree", action="store_true", help="list: the takes as a tree (replays branch)")
    # --- continuity (issue 21): circus.continuity
    p = command("next", "start the next scene from a take: same cast, each one's witnessed record")
    scene_arg(p)
    p.add_argument("new", metavar="NEW_DIR", help="the new scene folder (must not exist)")
    p.add_argument("--take", metavar="N", help="the take to carry (default: the last saved)")
    p.add_argument("--draft", action="store_true", help="draft each record with a model")
    p = command("secrets", "when each marked secret surfaced in a take, and every breach")
    scene_arg(p)
    p.add_argument("--take", metavar="N", help="a saved take or current (default: last saved)")

    def take_opt(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--take", default="current", metavar="N", help="a saved take, or current (the default)"
        )

    def by_opt(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument("--by", metavar="NAME", help=f"who {what} (default: your user name)")

    p = command("pick", "put a turn in the line bin (picks.md), with an optional note")
    scene_arg(p)
    p.add_argument("turn", type=_turn_number, metavar="TURN")
    take_opt(p)
    p.add_argument("--note", default="", metavar="TEXT")
    by_opt(p, "picks it")

    p = command("unpick", "take a turn out of the line bin (or only your vote, with --by)")
    scene_arg(p)
    p.add_argument("turn", type=_turn_number, metavar="TURN")
    take_opt(p)
    p.add_argument("--by", metavar="NAME", help="remove only this person's vote")

    p = command("picks", "list the line bin, with votes and notes")
    scene_arg(p)

    p = command(
        "export",
        "write a take as screenplay.fountain, screenplay.fdx, screenplay.md and storyboard.csv",
    )
    scene_arg(p)
    take_opt(p)
    p.add_argument("--picks", action="store_true", help="only the picked lines, in pick order")
    p.add_argument(
        "--format",
        default="fountain,fdx,md,csv",
        metavar="LIST",
        help="comma-separated: fountain, fdx, md, csv (default: all four)",
    )
    p.add_argument(
        "--thoughts", action="store_true", help="add each line's private thought (as a note)"
    )
    p.add_argument("--out", metavar="DIR", help="default: SCENE_DIR/exports/take_<n>/")

    p = command("report", "the take report: who spoke, how, cost, picks, converging voices")
    scene_arg(p)
    take_opt(p)

    p = command("replay", "start a new attempt from a saved take, with today's souls and notes")
    scene_arg(p)
    p.add_argument("take", metavar="TAKE", help="3 or take_3")
    p.add_argument("--until", type=_turn_number, metavar="TURN", help="keep turns 1..TURN")
    p.add_argument("-n", "--turns", type=_turns, default=DEFAULT_TURNS, metavar="N")
    p.add_argument(
        "--no-play", action="store_true", help="only set the replay up; play later with run/cue"
    )
    backstage_arg(p)

    p = command("enter", "ACTOR walks on stage (everyone present sees it)")
    scene_arg(p)
    p.add_argument("actor", metavar="ACTOR")

    p = command("exit", "ACTOR walks off stage (they learn only that time passes)")
    scene_arg(p)
    p.add_argument("actor", metavar="ACTOR")

    p = command("event", "a public stage event (a phone rings); the stage manager picks who reacts")
    scene_arg(p)
    p.add_argument("text", metavar="TEXT", nargs="+")

    p = command("say", "a line for ACTOR, written by you instead of a model (lands as their turn)")
    scene_arg(p)
    p.add_argument("actor", metavar="ACTOR")
    p.add_argument("text", metavar="TEXT", nargs="*", help="the spoken line")
    p.add_argument("--action", default="", metavar="TEXT", help="what they visibly do")
    p.add_argument("--cue", default="", metavar="NAME", help="who should speak next")
    p.add_argument("--thought", default="", metavar="TEXT", help="private, to their backstage")

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

    # --- models: check a model before the room starts (engine/probe.py)
    p = command(
        "check-model",
        "try MODEL on a short fixed rehearsal, in memory (nothing is written): reachable, "
        "latency, replies read, tokens and cost; exit 1 when it is unusable",
    )
    p.add_argument(
        "model", metavar="MODEL", help="a litellm model string, e.g. ollama_chat/llama3.1"
    )
    p.add_argument(
        "--api-base", metavar="URL", help="the server to ask (default: $CIRCUS_API_BASE)"
    )
    p.add_argument(
        "--timeout", type=_seconds, default=60.0, metavar="SECONDS", help="per call (default 60)"
    )
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    return parser


def exit_code_for(exc: BaseException) -> int:
    """2 for input the director can fix; 1 for failures at run time."""
    from engine import BudgetExceeded, ModelError, SceneBusy

    if isinstance(exc, (ModelError, SceneBusy, BudgetExceeded)):
        return EXIT_FAILURE
    if type(exc).__module__ == "engine.embedded":  # model unavailable / prompt too long
        return EXIT_FAILURE
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        leave_quickly()


def leave_quickly() -> None:
    """Let the process end as soon as the command is done — after a cut too, whatever model.

    The interpreter's last garbage collection walks every object litellm made: 5 s on an idle
    machine, 20 s on a busy one, after the cut's summary was already printed. Nothing left then
    needs collecting (the OS takes the memory back), so every object is frozen out of it.
    The embedded model's thread is a daemon that nobody waits for (engine.worker). A Ctrl-C
    from here on ends the process at once, as a signal does, never with a traceback from
    whichever exit handler it interrupted."""
    import gc
    import signal

    gc.freeze()
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # not the main thread: nothing to reset
        pass


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print_error(str(exc))
        return EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE

    from circus import commands

    if args.command == "bot":
        try:
            return commands.cmd_bot(args)
        except KeyboardInterrupt:
            return EXIT_CUT

    import asyncio

    from engine import CircusError, Config

    try:
        args.config = Config.from_env(os.environ)  # the one read; commands pass it down
        from circus.continuity import CONTINUITY_COMMANDS
        from circus.setup_commands import SETUP_COMMANDS

        table = {**commands.COMMANDS, **SETUP_COMMANDS, **CONTINUITY_COMMANDS}
        return asyncio.run(table[args.command](args))
    except UsageError as exc:
        print_error(str(exc))
        return EXIT_USAGE
    except CircusError as exc:
        print_error(str(exc))
        return exit_code_for(exc)
    except KeyboardInterrupt:
        print_error("interrupted")
        return EXIT_CUT
    except BrokenPipeError:
        # `circus take show 3 | head`: the reader left; that is not a failure.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return EXIT_OK
