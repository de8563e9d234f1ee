"""The harvest (pan for gold): picks, the Discord message map, exports, take reports and diffs.

A command group of Rehearsal over the scene on disk (engine.rehearsal.scene_access) alone: no run
lock and no models, so a saved take's report or export is built while the scene plays. "current"
is the working transcript,
numbered last saved take + 1; any other number must be a saved take. picks.md is
read-modify-written under its own short lock; a pick of the current take keeps its number, which
the take gets when it is saved, and a replay re-points it at the saved take it equals (never at
the new attempt's turns). Every refusal is raised before anything is written. Building a
report, a diff or the exports is pure CPU work that grows with the take: it runs in a worker
thread, so a bot's event loop keeps answering other scenes meanwhile.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engine.catalog import say
from engine.errors import (
    BadRequest,
    BadSceneFile,
    BadScript,
    NotPicked,
    TakeNotFound,
    TurnNotFound,
    UnknownFormat,
)
from engine.folder import frontmatter
from engine.folder.line_notes import LINE_NOTES, LineNote, notes_by_turn, parse_line_notes
from engine.folder.numbers import whole_number
from engine.folder.scene import CONTEXT, TRANSCRIPT, USAGE_LOG, backstage_path
from engine.folder.stage import Item, StageBlock, merge, parse_blocks
from engine.folder.store import STATE_DIR, SceneStore, parse_jsonl
from engine.folder.turns import Turn, parse_backstage, parse_transcript
from engine.harvest.export import (
    FORMATS,
    ExportLine,
    ScriptMeta,
    render_exports,
    scene_title,
    stage_line,
)
from engine.harvest.picks import (
    PICKS,
    Pick,
    add_vote,
    parse_picks,
    remove_vote,
    render_picks,
    retarget,
)
from engine.rehearsal.scene_access import SceneAccess
from engine.takes.folders import parse_take_ref, take_dir, take_numbers
from engine.takes.meta import TURNS_FILE, carried_rows, parse_rows, render_rows, rows_for_take

POSTS = f"{STATE_DIR}/posts.jsonl"
REPORT_FILE = "report.md"
TakeRef = int | str


@dataclass(frozen=True)
class TakeView:
    """One take as the harvest reads it: the working transcript or a saved take's folder."""

    number: int
    saved: bool
    turns: tuple[Turn, ...]
    rows: tuple[dict, ...]
    context: str
    blocks: tuple[StageBlock, ...] = ()  # entrances, exits, events between the turns

    @property
    def folder(self) -> str:
        return take_dir(self.number) + "/" if self.saved else ""

    @property
    def items(self) -> list[Item]:
        """Turns and stage blocks in the order they happened."""
        return merge(self.turns, self.blocks)

    def turn(self, number: int) -> Turn | None:
        return next((t for t in self.turns if t.number == number), None)


@dataclass(frozen=True)
class Spliced:
    """Where `export --into` wrote the script, from which take, how many lines, after which
    line of the file (an FDX: which paragraph), or in place of which range of them."""

    path: Path
    take: str
    count: int
    line: int
    replaced: tuple[int, int] | None = None  # the writer's range the lines went in place of


class Harvest:
    """Picks, the message map, exports, reports and diffs for one scene folder."""

    def __init__(self, scene: SceneAccess) -> None:
        self.scene = scene

    # ----------------------------------------------------------------- takes as read
    async def _take_number(self, take: TakeRef) -> tuple[int, bool]:
        """(number, saved) for "current" or a take number; TakeNotFound otherwise."""
        current = await self.scene.current_take()
        if take is None or str(take).strip().casefold() in {"current", "當前", "当前"}:
            return current, False
        number = parse_take_ref(take)
        if number == current:
            return current, False
        saved = await take_numbers(self.scene.store)
        if number is None or number not in saved:
            raise TakeNotFound(take, saved)
        return number, True

    async def _view(self, take: TakeRef) -> TakeView:
        number, saved = await self._take_number(take)
        store = self.scene.store
        base = take_dir(number) + "/" if saved else ""
        transcript = await store.read(base + TRANSCRIPT) or ""
        turns = parse_transcript(transcript)
        if saved and (text := await store.read(base + TURNS_FILE)) is not None:
            rows = parse_rows(text)
        else:  # the working take, or a take saved before takes carried their own rows
            rows = parse_rows(await store.read(USAGE_LOG) or "")
        rows = rows_for_take(rows, number, (t.number for t in turns))
        body = await self._context_body(base)
        blocks = tuple(parse_blocks(transcript))
        return TakeView(number, saved, tuple(turns), tuple(rows), body, blocks)

    async def take_view(self, take: TakeRef) -> TakeView:
        """A take as read (the table read's source, engine.rehearsal.read_commands)."""
        return await self._view(take)

    async def thoughts_of(self, view: TakeView) -> dict[int, str]:
        """Each turn's private thought in `view` (a director's thoughts read)."""
        return await self._thoughts(view)

    async def context_body(self) -> str:
        """The scene's public context.md text now."""
        return await self._context_body("")

    async def _context_body(self, base: str) -> str:
        """The public text of context.md in `base` ("" for the scene, or a take's folder)."""
        context_text = await self.scene.store.read(base + CONTEXT) or ""
        try:
            _, body = frontmatter.split(context_text)
        except BadSceneFile:  # a take's old context.md is only read for its public text
            body = context_text
        return body.strip()

    async def _line_notes(self, view: TakeView) -> list[LineNote]:
        """The room's notes on the take's lines (its own line-notes.md)."""
        return parse_line_notes(await self.scene.store.read(view.folder + LINE_NOTES) or "")

    async def _noted(self, view: TakeView) -> dict[int, tuple[tuple[str, str], ...]]:
        """Each noted turn's notes as an export writes them: (text, author)."""
        grouped = notes_by_turn(await self._line_notes(view))
        return {turn: tuple((n.text, n.by) for n in notes) for turn, notes in grouped.items()}

    async def _thoughts(self, view: TakeView) -> dict[int, str]:
        out: dict[int, str] = {}
        for actor in {t.actor for t in view.turns}:
            text = await self.scene.store.read(view.folder + backstage_path(actor)) or ""
            mine = {t.number for t in view.turns if t.actor == actor}
            out.update({n: th for n, th in parse_backstage(text).items() if n in mine})
        return out

    @staticmethod
    def _turn_of(view: TakeView, turn: int) -> Turn:
        found = view.turn(turn) if isinstance(turn, int) else None
        if found is None:
            raise TurnNotFound(view.number, turn, view.turns[-1].number if view.turns else 0)
        return found

    # ----------------------------------------------------------------- picks
    async def _pick_take(self, take: TakeRef) -> int:
        """The take a pick is filed under: the saved take the current one still equals (just
        saved, or replayed whole), else the take's own number."""
        number, saved = await self._take_number(take)
        if not saved:
            text = await self.scene.store.read(TRANSCRIPT) or ""
            if text.strip() and (same := await self.scene.is_saved(text)) is not None:
                return same
        return number

    async def picks(self) -> list[Pick]:
        """The line bin, in pick order."""
        return parse_picks(await self.scene.store.read(PICKS) or "")

    async def _write_picks(self, picks: list[Pick]) -> None:
        language = (await self.scene.state()).language
        await self.scene.store.write_atomic(PICKS, render_picks(picks, language))

    async def pick(self, turn: int, *, take: TakeRef = "current", by: str, note: str = "") -> Pick:
        """Pick a turn (or add `by`'s vote to it; the same voter twice changes nothing)."""
        by = _voter(by)
        view = await self._view(await self._pick_take(take))
        t = self._turn_of(view, turn)
        new = Pick(view.number, t.number, t.actor, t.action, t.dialogue)
        async with self.scene.store.file_lock("picks"):
            before = await self.picks()
            after, pick = add_vote(before, new, by, " ".join(note.split()))
            if after != before:
                await self._write_picks(after)
        return pick

    async def unpick(
        self, turn: int, *, take: TakeRef = "current", by: str | None = None
    ) -> Pick | None:
        """Remove a pick (by None) or one vote; returns what is left of the pick, if anything."""
        number = await self._pick_take(take)
        by = _voter(by) if by is not None else None
        if remove_vote(await self.picks(), number, turn, by) is None:
            raise NotPicked(number, turn, by)  # refused before even the lock file is made
        async with self.scene.store.file_lock("picks"):
            result = remove_vote(await self.picks(), number, turn, by)
            if result is None:
                raise NotPicked(number, turn, by)
            await self._write_picks(result[0])
        return result[1]

    # ----------------------------------------------------------------- Discord message map
    async def remember_post(self, message_id: int, take: int, turn: int) -> None:
        """Remember which (take, turn) a posted message shows, across restarts."""
        if not all(
            isinstance(v, int) and not isinstance(v, bool) for v in (message_id, take, turn)
        ):
            raise BadRequest("error.remember_post")
        line = json.dumps({"message": message_id, "take": take, "turn": turn})
        await self.scene.store.append_line(POSTS, line)

    async def post_of(self, message_id: int) -> tuple[int, int] | None:
        """(take, turn) of a message posted for an actor's turn, or None."""
        found: tuple[int, int] | None = None
        for row in parse_jsonl(await self.scene.store.read(POSTS) or ""):
            # posts.jsonl is a file a person can edit: a row that is not numbers is skipped
            if "retake" in row and found is not None and found[0] == row["retake"]:
                to = whole_number(row.get("to"))
                found = (to, found[1]) if to is not None else found
            elif row.get("message") == message_id:
                take, turn = whole_number(row.get("take")), whole_number(row.get("turn"))
                found = (take, turn) if take is not None and turn is not None else found
        return found

    async def line_of(self, take: int, turn: int) -> tuple[str, str]:
        """(actor, private thought) of one turn of a take — the thought is for its directors'
        eyes only (the Discord "💭 Thought" menu). TakeNotFound / TurnNotFound otherwise."""
        view = await self._view(take)
        found = self._turn_of(view, turn)
        return found.actor, (await self._thoughts(view)).get(turn, "")

    # ----------------------------------------------------------------- what takes carry
    async def take_files(self, number: int) -> dict[str, str]:
        """What a saved take carries in its own folder: its turns' metadata and its report
        (engine.rehearsal.take_commands saves it, with the run lock held)."""
        view = await self._view("current")
        report = await self._report_text(view)
        return {TURNS_FILE: render_rows(view.rows), REPORT_FILE: report}

    async def before_replay(
        self, current: int, saved_as: int | None, source: int, until: int, new_take: int
    ) -> dict[str, str]:
        """Before a replay (lock held): move the working take's picks and posts to the saved
        take it equals, and the files the new attempt carries over (its kept turns' rows)."""
        store = self.scene.store
        if saved_as is not None and saved_as != current:
            # The working take is already saved as take_<saved_as>: its picks and posts move
            # there, before the new attempt (which keeps this number) replaces its turns.
            async with store.file_lock("picks"):
                before = await self.picks()
                after = retarget(before, current, saved_as)
                if after != before:
                    await self._write_picks(after)
            await store.append_line(POSTS, json.dumps({"retake": current, "to": saved_as}))
        source_view = await self._view(source)
        carried = carried_rows(list(source_view.rows), until, new_take, source)
        if not carried:
            return {}
        return {USAGE_LOG: (await store.read(USAGE_LOG) or "") + render_rows(carried)}

    # ----------------------------------------------------------------- report, diff, export
    async def _report_text(self, view: TakeView, only: frozenset[str] | None = None) -> str:
        # the report's modules (and the prompt builder the secrets ledger uses) load here,
        # not for every command that opens a scene
        from engine.harvest.report import ReportInput, build_report
        from engine.takes.reading import report_sections

        state = await self.scene.state()
        data = ReportInput(
            scene=scene_title(view.context, self.scene.name)[0],
            take=view.number,
            saved=view.saved,
            turns=view.turns,
            rows=view.rows,
            picks=tuple(p for p in await self.picks() if p.take == view.number),
            line_notes=tuple(await self._line_notes(view)),
            aliases=state.aliases(),
            language=state.language,
        )
        text = await asyncio.to_thread(build_report, data)
        return text + await report_sections(self.scene.root, view.number, view.saved, only)

    async def report(self, take: TakeRef = "current", *, only: frozenset[str] | None = None) -> str:
        """The take report (markdown); a saved take's whole report is also written to its
        report.md. `only`: the actors whose secrets a captain may read (None: everyone's)."""
        view = await self._view(take)
        text = await self._report_text(view, only)
        if view.saved and only is None:
            await self.scene.store.write_atomic(view.folder + REPORT_FILE, text)
        return text

    async def diff(self, a: TakeRef, b: TakeRef, *, full: bool = False) -> str:
        """Two takes side by side: the shared opening, where they part, both continuations."""
        from engine.harvest.diff import diff_takes

        va, vb = await self._view(a), await self._view(b)
        state = await self.scene.state()
        picks = await self.picks()
        return await asyncio.to_thread(
            diff_takes,
            (va.number, va.saved, va.items, sum(p.take == va.number for p in picks)),
            (vb.number, vb.saved, vb.items, sum(p.take == vb.number for p in picks)),
            full=full,
            language=state.language,
        )

    async def export(
        self,
        *,
        take: TakeRef = "current",
        formats: tuple[str, ...] | str = FORMATS,
        picks: bool = False,
        thoughts: bool = False,
        out: Path | None = None,
    ) -> list[Path]:
        """Write the take (or the picked lines) as screenplay files; returns their paths."""
        wanted = _formats(formats)
        state = await self.scene.state()
        if picks:
            lines = await self._picked_lines(thoughts)
            label, folder = "picks", "picks"
            title = scene_title(await self._context_body(""), self.scene.name)[0]
            context = ""
        else:
            view = await self._view(take)
            if not view.turns:
                raise BadRequest("error.take_empty", take=view.number)
            lines = await self._take_lines(view, thoughts, state.language)
            label, folder = str(view.number), f"take_{view.number}"
            title, context = scene_title(view.context, self.scene.name)
        meta = ScriptMeta(
            scene=title,
            take=label,
            date=datetime.now(UTC).date().isoformat(),
            context=context,
            language=state.language,
            aliases=state.aliases(),
        )
        texts = await asyncio.to_thread(render_exports, meta, lines, wanted, thoughts)
        target = Path(out) if out is not None else self.scene.root / "exports" / folder
        return await SceneStore(target).write_files(texts)

    async def splice(
        self,
        *,
        into: Path,
        take: TakeRef = "current",
        picks: bool = False,
        out: Path | None = None,
        data: bytes | None = None,
        replace: str | None = None,
    ) -> Spliced:
        """`export --into`: the writer's script (only read) with the take's rehearsed lines, or
        the picked ones, set in after the imported scene's last line, written to `out`
        (default: exports/take_<n>/<the script's name>). Refused, writing nothing, unless the
        scene was imported and the file still holds it as imported. `data`: the file's bytes
        (an upload called `into`), read instead of the file. `replace`: FROM-TO, lines (FDX:
        paragraphs) of the scene the take's lines go in place of, instead of after it."""
        # The script wing loads here, for a splice, not for every command that reads a scene.
        from engine.harvest.splice import rehearsed, replaced, spliced
        from engine.script.reading import load_script, parse_script
        from engine.script.splicing import check_anchor

        anchor = await self._anchor()
        into = Path(into)
        if data is None:
            script, raw = await asyncio.to_thread(load_script, into)
        else:
            script, raw = await asyncio.to_thread(parse_script, into.name, data), data
        scene, last = check_anchor(anchor, script, into.name)
        state = await self.scene.state()
        if picks:
            chosen = await self._picked_lines(False)
            lines = [line for line in chosen if line.turn > int(anchor.get("turns", 0))]
            label, folder = "picks", "picks"
        else:
            view = await self._view(take)
            lines = rehearsed(view.turns, view.blocks, anchor, state.language)
            label, folder = str(view.number), f"take_{view.number}"
        name = (
            say("export.picked_lines", state.language)
            if picks
            else say("export.take", state.language, take=label)
        )
        where: tuple[int, int] | None = None
        if replace is None:
            text = await asyncio.to_thread(spliced, script, raw, last, lines, name)
        else:
            text, where = await asyncio.to_thread(
                replaced, script, raw, scene, replace, lines, name
            )
        target = Path(out) if out is not None else self.scene.root / "exports" / folder / into.name
        await SceneStore(target.parent).write_files({target.name: text})
        return Spliced(target, label, len(lines), last + 1, where)

    async def _anchor(self) -> dict:
        from engine.script.splicing import ANCHOR

        text = await self.scene.store.read(ANCHOR)
        try:
            anchor = json.loads(text or "")
        except ValueError:
            raise BadScript("not_imported") from None
        if not isinstance(anchor, dict):
            raise BadScript("not_imported")
        return anchor

    async def _picked_lines(self, thoughts: bool) -> list[ExportLine]:
        """The picked lines in pick order (a pick whose take is gone keeps its own text)."""
        chosen = await self.picks()
        if not chosen:
            raise BadRequest("error.nothing_picked")
        lines: list[ExportLine] = []
        views: dict[int, TakeView | None] = {}
        noted: dict[int, dict[int, tuple[tuple[str, str], ...]]] = {}
        for p in chosen:
            if p.take not in views:
                try:
                    views[p.take] = await self._view(p.take)
                except TakeNotFound:
                    views[p.take] = None
                found = views[p.take]
                noted[p.take] = await self._noted(found) if found is not None else {}
            view = views[p.take]
            turn = view.turn(p.turn) if view else None
            thought = (await self._thoughts(view)).get(p.turn, "") if view and thoughts else ""
            lines.append(
                ExportLine(
                    p.turn, p.actor, p.action, p.dialogue, turn.cue if turn else "",
                    thought, take=p.take, notes=noted[p.take].get(p.turn, ()),
                )
            )  # fmt: skip
        return lines

    async def _take_lines(self, view: TakeView, thoughts: bool, language: str) -> list[ExportLine]:
        """A take's turns and stage directions, in the order they happened."""
        found = await self._thoughts(view) if thoughts else {}
        noted = await self._noted(view)
        keyed = [
            ((t.number, 0), ExportLine(t.number, t.actor, t.action, t.dialogue, t.cue,
                                       found.get(t.number, ""), notes=noted.get(t.number, ())))
            for t in view.turns
        ]  # fmt: skip
        keyed += [
            (b.key, line) for b in view.blocks if (line := stage_line(b, language)) is not None
        ]
        return [line for _, line in sorted(keyed, key=lambda pair: pair[0])]


def _voter(by: object) -> str:
    name = " ".join(str(by or "").split())
    if not name:
        raise BadRequest("error.pick_needs_voter")
    return name[:100]


def _formats(formats: tuple[str, ...] | str) -> tuple[str, ...]:
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    out: list[str] = []
    for item in items:
        name = str(item).strip().lower().lstrip(".")
        if name not in FORMATS:
            raise UnknownFormat(str(item).strip(), FORMATS)
        if name not in out:
            out.append(name)
    if not out:
        raise UnknownFormat("", FORMATS)
    return tuple(out)
