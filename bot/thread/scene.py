"""A scene as it plays in its Discord thread: the engine's events rendered, in order.

Invariant (the walls): an event's private fields go only to `Backstage` (DMs): a turn's
thought to the directors and that actor's captains (read when the turn is rendered, so a
captain added or removed counts from the next turn), everything else private to the directors;
the thread receives only `render_turn_message` of a turn's frontstage fields and public status
lines. Events are handled in the order the engine emitted them, by one queue per scene
(bot.serial), so a scene's turns reach the webhook queue in order; the engine never waits on
Discord.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from pathlib import Path

import discord

from bot.binding import Binding, write_binding
from bot.errors import BotProblem
from bot.i18n import lang_of, t
from bot.render import (
    render_turn_message,
    sanitise_webhook_name,
    scrub,
    split_message,
    stage_manager_dm,
    thought_dm,
    turn_marks,
)
from bot.serial import Serial
from bot.server_folders import account_of, scene_key
from bot.thread.backstage import Backstage
from bot.thread.blocks import block_message, mention_of, say_text
from bot.thread.delivery import POSTED, Mark, landed, mark_of, read_mark, unposted, write_mark
from bot.thread.personas import Personas, Post
from bot.thread.reports import report_message
from bot.thread.votes import Votes
from engine import (
    CircusError,
    Config,
    Cut,
    ErrorEvent,
    Event,
    Models,
    Rehearsal,
    RunFinished,
    RunStarted,
    StageChanged,
    StageManagerDecided,
    StillWaiting,
    TakeSaved,
    Turn,
    TurnCompleted,
    TurnStarted,
    WaitingForPlayer,
    redact,
    say,
    watch,
    whole_number,
)

log = logging.getLogger("circus.bot")

STATUS_PERSONA = "Circus"
LINKS_KEPT = 500  # lines whose first message an alert may still link to
LINK_WAIT = 30.0  # seconds an alert waits for its line to land before it goes without a link


class SceneThread:
    """One scene bound to one thread; owns the scene's Rehearsal and renders its events."""

    def __init__(
        self,
        root: Path,
        binding: Binding,
        client: discord.Client,
        personas: Personas,
        backstage: Backstage,
        models: Models | None = None,
        config: Config | None = None,
    ) -> None:
        account = account_of(binding.guild_id)
        self.rehearsal = Rehearsal(root, models=models, config=config, account=account)
        watch(self.rehearsal.events, config or self.rehearsal.config)  # scale: /metrics
        self.name = self.rehearsal.name
        self.votes = Votes(self.rehearsal)  # which message is which line, for ⭐ votes
        self.binding = binding
        self.client = client
        self.personas = personas
        self.backstage = backstage
        self.lang = "zh"
        self.lang_known = False  # until the scene has loaded once: replies use the locale
        self.stopping = False  # the bot is shutting down: a cut is the operator's, not a director's
        self.avatars: dict[str, str | None] = {}
        self.run_interaction: discord.Interaction | None = None
        # seconds from a turn's event to its post being queued (the bot's own overhead)
        self.overhead: deque[float] = deque(maxlen=2000)
        self._reported = False
        self._run = 0  # which run's posts may move the thread's mark (bot.thread.delivery)
        self._run_marked: int | None = None  # the run whose start has been marked
        # (when emitted, event), rendered one at a time in emit order
        self._events: Serial[str, tuple[float, Event]] = Serial(self._render, name="stage")
        self._typing: asyncio.Task[None] | None = None
        # told of each event once it is rendered (its posts queued): the alerts (bot.panel.alerts)
        self.after: list[Callable[[Event], None]] = []
        self._firsts: OrderedDict[tuple[int, int, int], Post] = OrderedDict()
        self._unlisten: Callable[[], None] = self.rehearsal.events.listen(self._on_event)

    # ------------------------------------------------------------------ binding
    @property
    def key(self) -> str:
        """Which of the bot's scenes this is: its server and name (bot.server_folders)."""
        return scene_key(self.binding.guild_id, self.name)

    def rebind(self, binding: Binding) -> None:
        """Replace the binding and persist it in the scene folder."""
        write_binding(self.rehearsal.root, binding)
        self.binding = binding

    async def refresh(self) -> None:
        """Re-read what rendering needs (language, avatars) from the scene folder."""
        view = await self.rehearsal.view()
        self.lang = lang_of(view.language)
        self.lang_known = True
        self.avatars = dict(view.avatars)

    # ------------------------------------------------------------------ events
    def _on_event(self, event: Event) -> None:
        self._events.put(self.name, (time.perf_counter(), event))

    async def _render(self, _scene: str, events: list[tuple[float, Event]]) -> None:
        for emitted, event in events:  # one at a time: Serial hands over a single event
            await self._handle(emitted, event)
            for hook in self.after:
                hook(event)

    async def _handle(self, emitted: float, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._reported = False
            self._run += 1  # marks of the last run's posts still queued must not land after
            await self.refresh()
            self.backstage.reopen(await self.thought_readers())
        elif isinstance(event, TurnStarted):
            self._start_typing()
        elif isinstance(event, StillWaiting):
            if self._typing is None or self._typing.done():  # typing stopped (e.g. a 429)
                self._start_typing()
        elif isinstance(event, TurnCompleted):
            self._stop_typing()
            if self._run_marked != self._run:  # this run's first turn: mark what came before
                self._run_marked = self._run
                self._write_mark(Mark(event.turn - 1))
            self._post_turn(event, await self.thought_readers(event.actor))
            self.overhead.append(time.perf_counter() - emitted)
        elif isinstance(event, StageManagerDecided):
            self._whisper(
                stage_manager_dm(
                    self.name, event.take, event.turn, event.actor, event.reason, self.lang
                )
            )
        elif isinstance(event, ErrorEvent):
            actor = f" · {event.actor}" if event.actor else ""
            self._whisper(
                t(
                    "run_error_dm",
                    self.lang,
                    scene=self.name,
                    turn=event.turn or "?",
                    actor=actor,
                    message=scrub(
                        say(event.code, event.language, **event.fields), self.rehearsal.root.parent
                    ),
                )
            )
        elif isinstance(event, (Cut, RunFinished)):
            self._run_ended(event)
        elif isinstance(event, TakeSaved):
            self.status_line(t("line_take_saved", self.lang, take=event.take, turns=event.turns))
            await self._send_report(event.take)  # to the directors only, by DM
        elif isinstance(event, StageChanged):
            self._post_block(event)
        elif isinstance(event, WaitingForPlayer):
            await self._call_player(event)
        # NoteAdded and any other private event: nothing leaves the bot.

    async def thought_readers(self, actor: str | None = None) -> tuple[int, ...]:
        """Who reads `actor`'s thoughts by DM: the directors, and the actor's captains (None:
        every character's captains — whose closed DMs a new run tries again)."""
        readers = list(self.binding.directors)
        captains: Mapping[str, tuple[str, ...]] = {}
        try:
            captains = await self.rehearsal.room.readers()  # one stat while it is unchanged
        except CircusError as exc:  # a torn captains.json: the directors still get it
            log.warning("scene %s: captains unreadable: %s", self.name, exc)
        for character, writers in captains.items():
            if actor is not None and character != actor:
                continue
            for writer in writers:
                user = whole_number(writer.removeprefix("discord:"), 20)
                if writer.startswith("discord:") and user is not None and user not in readers:
                    readers.append(user)
        return tuple(readers)

    def _post_turn(self, event: TurnCompleted, readers: tuple[int, ...]) -> None:
        turn = Turn(event.turn, event.actor, event.action, event.dialogue, event.cue)
        posts = self._post_lines(turn, self._messages_of(turn))
        for post in posts:
            self.votes.remember(post, event.take, event.turn)
        if posts:
            self._first((event.take, event.turn, 0), posts[0])
        if event.played and not event.thought:  # a person's line may carry no thought
            return
        marks = turn_marks(event.repaired, event.fallback, event.cut, self.lang)
        text = thought_dm(
            self.name, event.take, event.turn, event.actor, event.thought, self.lang, marks
        )
        self.backstage.send(readers, self.name, self.lang, text)

    def _run_ended(self, event: Cut | RunFinished) -> None:
        """The thread's line when a run stops (and the directors' DM if the bot stopped it)."""
        self._stop_typing()
        if isinstance(event, Cut):
            if self.stopping:
                self.status_line(t("line_shutdown", self.lang, turn=event.turn))
                self._whisper(t("shutdown_dm", self.lang, scene=self.name, turn=event.turn))
            else:
                self.status_line(t("line_cut", self.lang, turn=event.turn))
        elif event.reason == "completed":
            self.status_line(t("line_finished", self.lang, take=event.take, done=event.turns_done))
        elif event.reason == "error":
            self.status_line(t("line_error", self.lang))
        elif event.reason == "budget":
            self.status_line(t("line_budget", self.lang))

    def _post_block(self, event: StageChanged) -> None:
        persona = say_text("persona", self.lang)
        for i, chunk in enumerate(split_message(block_message(event, self.lang))):
            post = self.personas.post(
                self.binding.channel_id, self.binding.thread_id, persona, None, chunk
            )
            if i == 0:
                self._first((event.take, event.after, event.seq), post)

    def _first(self, line: tuple[int, int, int], post: Post) -> None:
        """Remember the first message of a line (take, turn, stage block or 0) for a link."""
        self._firsts[line] = post
        while len(self._firsts) > LINKS_KEPT:
            self._firsts.popitem(last=False)

    async def link_of(self, take: int, turn: int, block: int = 0) -> str | None:
        """A jump link to a line's first message in the thread, once it has landed (waited
        for); None if this bot did not post it or it never landed."""
        post = self._firsts.get((take, turn, block))
        if post is None:
            return None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(post.done), LINK_WAIT)
        if post.message_id is None:
            return None
        b = self.binding
        return f"https://discord.com/channels/{b.guild_id}/{b.thread_id}/{post.message_id}"

    async def _call_player(self, event: WaitingForPlayer) -> None:
        """Mention the member whose line the run waits for, once, from the bot itself."""
        self._stop_typing()
        # Everything before the wait must be in the thread first (the webhook queue is FIFO).
        await self.personas.drain()
        mention, user = mention_of(event.player)
        text = say_text("waiting", self.lang, actor=event.actor, mention=mention)
        allowed = discord.AllowedMentions(
            everyone=False, roles=False, users=[discord.Object(user)] if user else False
        )
        channel = self.client.get_partial_messageable(
            self.binding.thread_id, guild_id=self.binding.guild_id
        )
        with contextlib.suppress(discord.HTTPException):
            await channel.send(text, allowed_mentions=allowed)

    async def _send_report(self, take: int) -> None:
        """DM a just-saved take's report to the scene's directors (never to the thread)."""
        try:
            embed, enclosure = await report_message(self.rehearsal, self.lang, take, take)
        except CircusError as exc:  # the take is saved either way; the report can be asked for
            log.warning("scene %s: no report for take %s: %s", self.name, take, exc)
            return
        text = t("report_dm", self.lang, scene=self.name, take=take)
        self.backstage.send(self.binding.directors, self.name, self.lang, text, enclosure)

    def status_line(self, text: str) -> None:
        """A public line in the thread (in order with the actors' posts)."""
        for chunk in split_message(text):
            self._watch(
                self.personas.post(
                    self.binding.channel_id, self.binding.thread_id, STATUS_PERSONA, None, chunk
                ),
                None,
            )

    def _whisper(self, text: str) -> None:
        self.backstage.send(self.binding.directors, self.name, self.lang, text)

    # ------------------------------------------------------------------ delivery
    def _delivered(self, mark: Mark, run: int, thread: int, fut: asyncio.Future[None]) -> None:
        """A turn's last message landed: the thread has it (bot.thread.delivery) — unless a newer run
        has marked its start since, or the scene has moved to another thread."""
        if fut.cancelled() or fut.exception() is not None:
            return
        if run == self._run and thread == self.binding.thread_id:
            self._write_mark(mark)

    def _write_mark(self, mark: Mark) -> None:
        try:
            write_mark(self.rehearsal.root, mark)
        except OSError as exc:  # the turn is posted either way; a restart may post it again
            log.warning("scene %s: could not mark turn %s as posted: %s", self.name, mark.turn, exc)

    def _mark_when_posted(self, post: Post, turn: int) -> None:
        mark = functools.partial(self._delivered, Mark(turn), self._run, self.binding.thread_id)
        post.done.add_done_callback(mark)

    async def mark_all_posted(self) -> None:
        """What is on the record now is not for the thread (a new thread, a replay's cut)."""
        self._run += 1  # posts still queued for the old record must not move the mark back
        self._write_mark(mark_of(await self.rehearsal.record()))

    async def catch_up(self) -> int:
        """Post the turns a killed bot left unposted, once each (bot.thread.delivery); how many. Held
        until they landed: a second process on the same shards (by mistake) waits, then finds
        the mark moved and posts nothing."""
        async with self.rehearsal.frontend_lock(POSTED):
            posts: list[Post] = []
            count = await self._catch_up(posts)
            await asyncio.gather(*(p.done for p in posts), return_exceptions=True)
        return count

    async def _catch_up(self, posts: list[Post]) -> int:
        turns = await self.rehearsal.record()
        mark = read_mark(self.rehearsal.root)
        if mark is None:  # bound before marks were kept: nothing to go on, so nothing posted
            self._write_mark(mark_of(turns))
            return 0
        pending = unposted(turns, mark)
        if not pending:
            return 0
        first = self._messages_of(pending[0])
        tail = await self._thread_tail(len(first))
        if tail is None:  # the thread is gone: nothing can be posted (and no DM every restart)
            log.warning(
                "scene %s: its thread is gone; %d turn(s) not posted", self.name, len(pending)
            )
            return 0
        skip = landed(first, tail)  # what reached Discord just before the kill
        if skip == len(first):  # all of the first one did, unmarked
            self._write_mark(Mark(pending[0].number))
        for i, turn in enumerate(pending):
            posts += self._post_lines(turn, self._messages_of(turn)[skip if i == 0 else 0 :])
        log.info(
            "scene %s: posting what a stopped bot had not (%d turn(s))", self.name, len(pending)
        )
        return len(pending) - (skip == len(first))

    def _post_lines(self, turn: Turn, messages: list[tuple[str, str]]) -> list[Post]:
        """Queue a turn's messages for its thread; the mark moves when the last one landed."""
        avatar = self.avatars.get(turn.actor)
        posts = [
            self.personas.post(
                self.binding.channel_id, self.binding.thread_id, persona, avatar, chunk
            )
            for persona, chunk in messages
        ]
        for post in posts:
            self._watch(post, turn.number)
        if posts:
            self._mark_when_posted(posts[-1], turn.number)
        return posts

    def _messages_of(self, turn: Turn) -> list[tuple[str, str]]:
        """A turn as the thread shows it: (persona, text) per message."""
        text = render_turn_message(turn.action, turn.dialogue, turn.cue, self.lang)
        persona = sanitise_webhook_name(turn.actor)
        return [(persona, chunk) for chunk in split_message(text)]

    async def _thread_tail(self, count: int) -> list[tuple[str, str]] | None:
        """The thread's last `count` messages, oldest first; None if the thread is gone ([] if
        it cannot be read: then a turn that landed unmarked may be posted twice)."""
        channel = self.client.get_partial_messageable(
            self.binding.thread_id, guild_id=self.binding.guild_id
        )
        try:
            newest = [(m.author.name, m.content) async for m in channel.history(limit=count)]
        except discord.NotFound:
            return None
        except discord.HTTPException:
            return []
        return newest[::-1]

    # ------------------------------------------------------------------ failures
    def _watch(self, post: Post, turn: int | None) -> None:
        post.done.add_done_callback(lambda fut: self._posted(fut, turn))

    def _posted(self, fut: asyncio.Future[None], turn: int | None) -> None:
        if fut.cancelled() or fut.exception() is None:
            return
        exc = fut.exception()
        if self._reported:
            return
        self._reported = True
        if isinstance(exc, BotProblem):
            why = t(exc.key, self.lang, **exc.values)
        else:  # Discord's or aiohttp's words: a webhook URL carries its token
            why = redact(str(exc), self.rehearsal.config.secrets)
        message = t("post_failed", self.lang, scene=self.name, turn=turn or "—", why=why)
        self._whisper(message)
        if self.run_interaction is not None:
            asyncio.create_task(self._tell_runner(message))

    async def _tell_runner(self, message: str) -> None:
        if self.run_interaction is None:
            return
        with contextlib.suppress(discord.HTTPException):
            await self.run_interaction.followup.send(message, ephemeral=True)

    # ------------------------------------------------------------------ typing
    def _start_typing(self) -> None:
        self._stop_typing()
        self._typing = asyncio.create_task(self._keep_typing(), name=f"typing-{self.name}")

    def _stop_typing(self) -> None:
        if self._typing is not None:
            self._typing.cancel()
            self._typing = None

    async def _keep_typing(self) -> None:
        channel = self.client.get_partial_messageable(
            self.binding.thread_id, guild_id=self.binding.guild_id
        )
        with contextlib.suppress(discord.HTTPException):
            async with channel.typing():
                await asyncio.Event().wait()

    # ------------------------------------------------------------------ lifecycle
    async def stop_for_shutdown(self) -> bool:
        """Cut a running scene because the bot is stopping; its directors are told (thread
        line and DM, rendered from the Cut event). True if a run was cut."""
        if not self.rehearsal.running:
            return False
        self.stopping = True
        return await self.rehearsal.cut()

    async def drain(self) -> None:
        """Wait until every event emitted so far has been rendered."""
        await self._events.drain()

    async def close(self) -> None:
        self._unlisten()
        self._stop_typing()
        with contextlib.suppress(Exception):
            await self.rehearsal.cut()
        await self._events.close()
