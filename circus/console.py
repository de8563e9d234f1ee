"""`circus console SCENE_DIR`: the director's interactive console (seed 000 §7).

Verbs are case-insensitive. A RUN (CUE, RESUME) plays in the background while a daemon thread
reads input, so CUT stops it mid-turn (nothing half-made lands) and the console never blocks the
event loop or hangs on exit. End of input waits for a run in progress; QUIT cuts it; Ctrl-C cuts
a run, or leaves when nothing is running. Leaving, the console gives the roles it played back to
their models (nobody is left to type their lines).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from typing import TYPE_CHECKING, TextIO

from circus.given import DEFAULT_TURNS, user  # the console's RUN and the CLI's --turns agree
from circus.render import Renderer
from circus.typed import (
    ConsoleError,
    looks_like_number,
    parse_count,
    parse_number,
    parse_played_line,
    split_actor,
    split_name,
    take_ref,
)
from circus.words import LANGUAGE, t
from engine import (  # CONSOLE: the player id of a person here
    CONSOLE,
    Actor,
    Cue,
    Order,
    Resume,
    Run,
    dropped_warning,
    is_everyone,
    redact,
    shown_number,
    whole_number,
)

if TYPE_CHECKING:  # hints only: nothing more is imported at run time
    from engine import Rehearsal


class Console:
    def __init__(
        self,
        rehearsal: Rehearsal,
        backstage: bool = False,
        stdin: TextIO | None = None,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.rehearsal = rehearsal
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.renderer = Renderer(backstage=backstage, out=self.out, err=self.err, live=False)
        self.interactive = self.stdin.isatty()
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._quit = False
        self.playing: str | None = None  # the actor whose lines plain input is
        self._eof = False
        self._held: tuple[str, str, str] | None = None  # a line typed before it was our turn

    # ----------------------------------------------------------------- plumbing
    def say(self, text: str) -> None:
        self.renderer.say(text)

    def _read_lines(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            try:
                line = self.stdin.readline()
            except (OSError, ValueError):
                line = ""
            if not line:
                loop.call_soon_threadsafe(self._lines.put_nowait, None)
                return
            loop.call_soon_threadsafe(self._lines.put_nowait, line)

    def _on_interrupt(self) -> None:
        if self.rehearsal.running:
            self.say(t("cli.console.ctrl_c"))
            asyncio.get_running_loop().create_task(self.rehearsal.cut())
        else:
            self._quit = True
            self._lines.put_nowait(None)

    def _prompt(self, force: bool = False) -> None:
        # While a run plays, its lines own the screen; the prompt comes back when it ends.
        if self.interactive and (force or not self.rehearsal.running):
            self.out.write("circus> ")
            self.out.flush()

    def _on_event(self, event: object) -> None:
        from engine import RunFinished, WaitingForPlayer

        if isinstance(event, RunFinished):
            self._prompt(force=True)
        elif isinstance(event, WaitingForPlayer) and event.player == CONSOLE:
            loop = asyncio.get_running_loop()
            if self._held is not None:  # typed ahead: it is the line the run waits for
                loop.create_task(self._say_held())
            elif self._eof:  # nobody is left to type the line: stop, do not hang
                loop.create_task(self.rehearsal.cut())
            else:
                self._prompt(force=True)
        if isinstance(event, RunFinished) and self._held is not None:
            self._held = None
            self.renderer.info(t("cli.console.held_unused", actor=self.playing))

    async def run(self) -> int:
        from engine import CircusError

        loop = asyncio.get_running_loop()
        unlisten = self.rehearsal.events.listen(self.renderer)
        unlisten_prompt = self.rehearsal.events.listen(self._on_event)
        threading.Thread(target=self._read_lines, args=(loop,), daemon=True).start()
        try:
            loop.add_signal_handler(signal.SIGINT, self._on_interrupt)
        except (NotImplementedError, RuntimeError):
            pass
        view = await self.rehearsal.view()
        self.renderer.language = view.language
        for actor, player in (await self.rehearsal.stage.players()).items():
            if player == CONSOLE:
                self.playing = actor
        self.say(
            t("cli.console.hello", scene=self.rehearsal.name, turns=view.turns, cast=view.cast)
        )
        for warning in await self.rehearsal.cast.warnings():  # a hand-built scene's problems
            said = warning.text(LANGUAGE, view.language)  # parts named as the files name them
            self.renderer.info("circus: " + t("cli.warning", warning=said))
        try:
            while not self._quit:
                self._prompt()
                line = await self._lines.get()
                if line is None:
                    self._eof = True
                    if self.rehearsal.stage.waiting_for == self.playing and self.playing:
                        self.say(t("cli.console.eof_waiting"))
                        await self.rehearsal.cut()
                    if not self._quit and self.rehearsal.running:
                        self.say(t("cli.console.eof_running"))
                        await self.rehearsal.wait()
                    break
                try:
                    await self.handle(line)
                except ConsoleError as exc:
                    self.renderer.info(f"circus: {exc}")
                except CircusError as exc:
                    self.renderer.info(f"circus: {exc}")
                except Exception as exc:  # a bug must not kill the console and the run with it
                    why = redact(str(exc), self.rehearsal.config.secrets)
                    self.renderer.info(t("cli.console.failed", kind=type(exc).__name__, why=why))
        finally:
            if self.rehearsal.running:
                await self.rehearsal.cut()
            await self._give_roles_back()
            try:
                loop.remove_signal_handler(signal.SIGINT)
            except (NotImplementedError, RuntimeError):
                pass
            unlisten_prompt()
            unlisten()
        return 0

    async def _give_roles_back(self) -> None:
        """Leaving (QUIT, end of input, Ctrl-C), the console gives back the roles it played:
        nobody is left here to type their lines, and a run elsewhere must not wait for them."""
        from engine import CircusError

        try:
            players = await self.rehearsal.stage.players()
            if CONSOLE not in players.values():
                return  # nothing to give back: the folder is left as it was
            freed = await self.rehearsal.stage.unplay(player=CONSOLE)
        except (CircusError, OSError) as exc:  # torn or read-only: said, never a traceback
            self.renderer.info(f"circus: {exc}")
            return
        self.playing = None
        if freed:
            self.say(t("cli.console.unplayed", names=tuple(freed)))

    # ----------------------------------------------------------------- verbs
    async def handle(self, line: str) -> None:
        text = line.strip()
        if not text or text.startswith("#"):
            return
        if self.playing and text[0] in ">＞":
            await self._say_line(text[1:])
            return
        if text[0] in "@＠":
            verb, rest = "CUE", text[1:]
        else:
            verb, _, rest = text.partition(" ")
            verb, rest = verb.upper(), rest.strip()
        handler = getattr(self, f"do_{verb.lower()}", None)
        if (handler is None or verb.lower() not in VERBS) and self.playing:
            await self._say_line(text)
            return
        if handler is None or verb.lower() not in VERBS:
            raise ConsoleError(t("cli.console.unknown", verb=repr(verb)))
        await handler(rest)

    async def _start(self, order: Order) -> None:
        await self.rehearsal.start_run(order)

    async def do_run(self, rest: str) -> None:
        tokens = rest.split(None, 1)
        turns, start = DEFAULT_TURNS, None
        if tokens and looks_like_number(tokens[0]):
            turns = parse_count(tokens[0])
            tokens = tokens[1:]
        if tokens:
            start = await self.rehearsal.resolve_actor(tokens[0].strip().lstrip("@＠"))
        await self._start(Run(turns, start))

    async def do_resume(self, rest: str) -> None:
        turns = parse_count(rest.split()[0]) if rest.split() else DEFAULT_TURNS
        await self._start(Resume(turns))

    async def do_cue(self, rest: str) -> None:
        if not rest.strip():
            raise ConsoleError(t("cli.console.cue_needs_actor"))
        actor = await self._actor_prefix(rest)
        await self._start(Cue(actor[0], actor[1]))

    async def _forms(self) -> dict[str, tuple[str, ...]]:
        view = await self.rehearsal.view()
        return {name: (name, *aliases) for name, aliases in view.aliases.items()}

    async def _actor_prefix(self, rest: str) -> tuple[Actor, str]:
        """The actor a line starts with, and the rest of the line (the direction), kept whole.

        An exact name or alias first ("林小姐 動作：拍桌子", "Carol Lindqvist sits"), then a
        `name: rest` head, then the first word matched loosely ("張律師 慢一點"). The loose match
        looks at the first word only, so it can never swallow the direction.
        """
        found = split_actor(rest, await self._forms())
        if found is not None:  # matched against the cast itself: that was the resolve
            return Actor(found[0]), found[1]
        name, remainder, colon = split_name(rest)
        if colon:
            return await self.rehearsal.resolve_actor(name), remainder
        first, _, remainder = rest.strip().lstrip("@＠").partition(" ")
        return await self.rehearsal.resolve_actor(first), remainder.strip()

    async def do_cut(self, rest: str) -> None:
        if not await self.rehearsal.cut():
            self.say(t("cli.console.nothing_running"))

    async def do_wait(self, rest: str) -> None:
        if self.rehearsal.running:
            await self.rehearsal.wait()

    async def do_note(self, rest: str) -> None:
        if not rest.strip():
            raise ConsoleError(t("cli.console.note_needs_text"))
        # The rule, in order: `@ACTOR text` and `ACTOR: text` are private; `all: text` (an
        # everyone-word before the colon) is for everyone; any other head before a colon must
        # name an actor or the note is refused; `ACTOR text` is private; a line that merely
        # starts with a name is refused as ambiguous; anything else is for everyone.
        actor: Actor | None = None
        text = rest
        stripped = rest.strip()
        if stripped[0] in "@＠":
            actor, text = await self._actor_prefix(stripped)
        else:
            name, remainder, colon = split_name(stripped)
            if colon:
                if is_everyone(name):  # never an actor's name or alias (engine.folder.names)
                    text = remainder
                else:
                    # A private whisper must never reach everyone because of a typo.
                    actor, text = await self._whisper_target(name), remainder
            else:
                actor, text = await self._leading_actor(stripped)
        if not text.strip():
            raise ConsoleError(t("cli.console.note_needs_text_after"))
        dropped = await self.rehearsal.notes.note(text, actor)
        self.say(t("cli.noted_for_actor", actor=actor) if actor else t("cli.noted_for_all"))
        if dropped:
            self.renderer.info(dropped_warning(str(actor or ""), dropped, LANGUAGE))

    async def _leading_actor(self, text: str) -> tuple[Actor | None, str]:
        """`NOTE 林小姐 text` whispers to 林小姐 (as `CUE 林小姐 text` cues her). A note that
        merely starts with a name ("林小姐你其實…") is ambiguous: refused, never sent to all."""
        view = await self.rehearsal.view()
        names = {n: n for n in view.cast} | {a: n for n, al in view.aliases.items() for a in al}
        first, _, remainder = text.partition(" ")
        if first in names and remainder.strip():
            return Actor(names[first]), remainder.strip()
        if any(text.startswith(n) for n in names):
            raise ConsoleError(t("cli.console.note_whom"))
        return None, text

    async def _whisper_target(self, name: str) -> Actor:
        from engine import UnknownActor

        try:
            return await self.rehearsal.resolve_actor(name)
        except UnknownActor as exc:
            raise ConsoleError(t("cli.console.note_unknown", why=exc)) from None

    async def do_take(self, rest: str) -> None:
        words = rest.split()
        sub = words[0].upper() if words else ""
        if sub == "SAVE":
            number = await self.rehearsal.takes.save()
            self.say(t("cli.take.saved", number=number))
        elif sub == "LIST":
            takes = await self.rehearsal.takes.saved()
            if not takes:
                self.say(t("cli.console.no_takes"))
            for info in takes:
                self.say(
                    t("cli.take.row", number=info.number, turns=info.turns, line=info.last_line)
                )
        elif sub == "DIFF":
            if len(words) != 3:
                raise ConsoleError(t("cli.console.diff_two"))
            self.say((await self.rehearsal.harvest.diff(words[1], words[2])).rstrip("\n"))
        elif sub == "SHOW":
            if len(words) < 2:
                raise ConsoleError(t("cli.console.show_one"))
            self.say((await self.rehearsal.takes.show(take_ref(words[1]))).rstrip("\n"))
        else:
            raise ConsoleError(t("cli.console.take_usage"))

    async def do_replay(self, rest: str) -> None:
        words = rest.split()
        if not words:
            raise ConsoleError(t("cli.console.replay_needs_take"))
        until = None
        tail = [w for w in words[1:] if w.lower() not in {"until", "to", "--until"}]
        if tail:
            until = parse_number(tail[0], t("cli.console.what.until"))
        result = await self.rehearsal.takes.replay(take_ref(words[0]), until)
        if result.autosaved:
            self.say(t("cli.autosaved", take=result.autosaved))
        replaying = t(
            "cli.replaying", take=result.from_take, turn=result.kept_turns, attempt=result.take
        )
        self.say(replaying + t("cli.console.play_on"))

    async def do_pick(self, rest: str) -> None:
        from circus.harvest_text import pick_line

        turn, note = self._turn_and_rest(rest, "PICK")
        pick = await self.rehearsal.harvest.pick(turn, by=user(), note=note)
        self.say(t("cli.picked", pick=pick_line(pick)))

    async def do_unpick(self, rest: str) -> None:
        turn, _ = self._turn_and_rest(rest, "UNPICK")
        await self.rehearsal.harvest.unpick(turn)
        self.say(t("cli.unpicked", turn=turn))

    async def do_picks(self, rest: str) -> None:
        from circus.harvest_text import pick_line

        picks = await self.rehearsal.harvest.picks()
        if not picks:
            self.say(t("cli.console.no_picks"))
        for pick in picks:
            self.say(pick_line(pick))

    @staticmethod
    def _turn_and_rest(rest: str, verb: str) -> tuple[int, str]:
        first, _, tail = rest.strip().partition(" ")
        turn = whole_number(first, 6)  # the one bounded reader: never int()'s refusal
        if turn is None:
            shown = t("cli.console.not_shown", shown=shown_number(first)) if first else ""
            raise ConsoleError(t("cli.console.needs_turn", verb=verb) + shown)
        return turn, tail.strip()

    async def do_status(self, rest: str) -> None:
        from circus.session import status_text

        self.say(await status_text(self.rehearsal))

    async def do_soul(self, rest: str) -> None:
        if not rest.strip():
            raise ConsoleError(t("cli.console.soul_needs_actor"))
        actor, _ = await self._actor_prefix(rest)
        self.say((await self.rehearsal.souls.text(actor)).rstrip("\n"))

    async def do_backstage(self, rest: str) -> None:
        word = rest.strip().lower()
        if word in {"on", "yes", "1", ""}:
            self.renderer.backstage = word != "" or not self.renderer.backstage
        elif word in {"off", "no", "0"}:
            self.renderer.backstage = False
        else:
            raise ConsoleError(t("cli.console.backstage_usage"))
        self.say(
            t(
                "cli.console.backstage_on"
                if self.renderer.backstage
                else "cli.console.backstage_off"
            )
        )

    async def do_help(self, rest: str) -> None:
        self.say(t("cli.console.help"))

    async def do_quit(self, rest: str) -> None:
        self._quit = True

    # ----------------------------------------------------------------- the stage
    async def do_enter(self, rest: str) -> None:
        if not rest.strip():
            raise ConsoleError(t("cli.console.enter_needs_actor"))
        actor, _ = await self._actor_prefix(rest)
        await self.rehearsal.stage.enter(actor)  # the renderer prints the entrance

    async def do_exit(self, rest: str) -> None:
        if not rest.strip():  # a bare EXIT still leaves the console
            await self.do_quit(rest)
            return
        actor, _ = await self._actor_prefix(rest)
        await self.rehearsal.stage.exit(actor)

    async def do_event(self, rest: str) -> None:
        if not rest.strip():
            raise ConsoleError(t("cli.console.event_needs_text"))
        await self.rehearsal.stage.event(rest)

    async def do_play(self, rest: str) -> None:
        if not rest.strip():
            raise ConsoleError(t("cli.console.play_needs_actor"))
        actor, _ = await self._actor_prefix(rest)
        self.playing = await self.rehearsal.stage.play(actor, CONSOLE)
        self.say(t("cli.console.you_play", actor=self.playing))

    async def do_unplay(self, rest: str) -> None:
        freed = await self.rehearsal.stage.unplay(player=CONSOLE)
        self.playing = None
        self.say(
            t("cli.console.unplayed", names=tuple(freed)) if freed else t("cli.console.play_nobody")
        )

    async def _say_line(self, text: str) -> None:
        assert self.playing is not None
        action, dialogue, cue = parse_played_line(text)
        if self.rehearsal.running and self.rehearsal.stage.waiting_for != self.playing:
            # Typed ahead while others play: held until the ball reaches our character.
            if self._held is not None:
                raise ConsoleError(t("cli.console.already_held"))
            self._held = (action, dialogue, cue)
            self.renderer.info(t("cli.console.held", actor=self.playing))
            return
        await self.rehearsal.stage.say(Actor(self.playing), dialogue, action, cue, player=CONSOLE)

    async def _say_held(self) -> None:
        from engine import CircusError

        held, self._held = self._held, None
        if held is None or self.playing is None:
            return
        action, dialogue, cue = held
        try:
            await self.rehearsal.stage.say(
                Actor(self.playing), dialogue, action, cue, player=CONSOLE
            )
        except CircusError as exc:
            self.renderer.info(f"circus: {exc}")


VERBS = {
    "run", "resume", "cue", "cut", "wait", "note", "take", "replay", "status", "soul",
    "pick", "unpick", "picks",
    "backstage", "help", "quit", "exit", "enter", "event", "play", "unplay",
}  # fmt: skip
