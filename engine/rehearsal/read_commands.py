"""The table read (`circus read`, /read): a take heard in its characters' voices, written as
one audio file (or numbered parts) and a cue sheet.

A command group of Rehearsal over the scene on disk: no run lock, so a saved take is read
while the scene plays. The voices are the scene's as they are now (souls' `voice:`, the
narrator's and the thoughts' in context.md, else engine.folder.voices' defaults); the engine
is context.md's `read_model`, else CIRCUS_TTS_MODEL, else the offline voices. Every refusal
(an unknown take, a range with no lines, an unknown voice, no engine) comes before a line is
made; the files are written only once every line is in hand (engine.voice.table_read).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine.catalog import say
from engine.clock import utcnow
from engine.config import Config
from engine.errors import BadRequest, UnknownFormat
from engine.folder.scene import SceneState
from engine.folder.soul import bio_part
from engine.folder.stage import Item
from engine.folder.store import SceneStore
from engine.folder.turns import Turn
from engine.folder.voices import Casting, cast_voices, leaning, voice_of
from engine.harvest.export import scene_title
from engine.rehearsal.harvest import Harvest, TakeRef, TakeView
from engine.rehearsal.scene_access import SceneAccess
from engine.rehearsal.spending import Spending
from engine.spend.call_log import CallLog
from engine.spend.speech_meter import SpeechMeter
from engine.voice import audio
from engine.voice.cache import LineCache
from engine.voice.script import Line, take_script, thoughts_script
from engine.voice.table_read import (
    Engine,
    Files,
    Progress,
    Rendered,
    encoded,
    engine_for,
    files_of,
    render,
)

READS = "exports/read"  # the default folder of a scene's reads (not part of a take)


@dataclass(frozen=True)
class ReadResult:
    """What a read wrote and what it took: the audio (one file, or numbered parts), the cue
    sheet, the thoughts' file (a director's read), the audio's length, lines made by the
    engine and lines from the cache, characters billed and their cost (None: unpriced)."""

    take: int
    audio: tuple[Path, ...]
    cue_sheet: Path
    thoughts: Path | None  # the thoughts' audio (its first part)
    seconds: float
    lines: int
    made: int
    cached: int
    characters: int
    cost_usd: float | None
    engine: str
    thoughts_files: tuple[Path, ...] = ()  # every thoughts' file: audio parts, then cue sheet


@dataclass(frozen=True)
class ReadOrder:
    """What to read: a take (or the picked lines), the turns `first`…`last` of it, with the
    thoughts' file; where (`out`: the audio's path), in which format, what a file may weigh."""

    take: TakeRef = "current"
    first: int | None = None
    last: int | None = None
    picks: bool = False
    thoughts: bool = False
    out: Path | None = None
    fmt: str = "ogg"
    cache: bool = True
    limit: int | None = None


def in_range(items: Sequence[Item], first: int | None, last: int | None) -> list[Item]:
    """The turns numbered first…last and the stage blocks among them (the opening only when
    the range starts at the beginning). Pure."""
    lo, hi = first or 0, last if last is not None else 10**9
    out: list[Item] = []
    for item in items:
        if isinstance(item, Turn):
            keep = lo <= item.number <= hi
        else:  # a block after turn N happened before turn N + 1
            keep = lo <= item.after + 1 <= hi or (item.after == 0 and lo <= 1)
        if keep:
            out.append(item)
    return out


class Reading:
    """Table reads of one scene folder."""

    def __init__(
        self, scene: SceneAccess, harvest: Harvest, spending: Spending, config: Config
    ) -> None:
        self.scene, self.harvest, self.spending, self.config = scene, harvest, spending, config

    def casting(self, state: SceneState, engine: str, extra: Sequence[str] = ()) -> Casting:
        """The voices of this scene's read, as its files set them now."""
        cast = list(dict.fromkeys([*state.cast, *extra]))
        chosen = {a: voice_of(state.souls[a].settings.get("voice")) for a in state.souls}
        leanings = {a: leaning(bio_part(state.souls[a].body)) for a in state.souls}
        return cast_voices(
            cast,
            chosen,
            engine,
            state.language,
            voice_of(state.settings.get("narrator_voice")),
            voice_of(state.settings.get("thoughts_voice")),
            leanings,
        )

    def checked(self, state: SceneState, engine: Engine, extra: Sequence[str]) -> Casting:
        """The casting, every voice in it known to `engine` (UnknownVoice names the first
        that is not: a wrong voice in the files is refused even for an actor who is silent)."""
        casting = self.casting(state, engine.name, extra)
        voices = [*casting.actors.values(), casting.narrator, casting.thoughts]
        engine.check(list(dict.fromkeys(voices)))
        return casting

    async def engine(self, state: SceneState) -> Engine:
        model = state.settings.get("read_model")
        return engine_for(str(model) if model else None, self.config)

    async def read(self, order: ReadOrder, progress: Progress | None = None) -> ReadResult:
        """Render the take as `order` says and write its files (module docstring)."""
        if order.fmt not in audio.FORMATS:
            raise UnknownFormat(order.fmt, tuple(audio.FORMATS))
        if order.first is not None and order.last is not None and order.first > order.last:
            raise BadRequest("error.read.range", first=order.first, last=order.last)
        state = await self.scene.state()
        engine = await self.engine(state)
        view, title, lines, thought_lines = await self._script(order, state, engine)
        cache = LineCache(self.scene.store, self.config.read_cache_mb * 1024 * 1024)
        meter = await self._meter(state, view.number if view else None)
        total = len(lines) + len(thought_lines)

        async def main_progress(n: int, _: int) -> None:
            if progress is not None:
                await progress(n, total)

        async def thoughts_progress(n: int, _: int) -> None:
            if progress is not None:
                await progress(len(lines) + n, total)

        use = cache if order.cache else None
        rendered = await render(lines, engine, use, meter, main_progress)
        heard = None
        if thought_lines:
            heard = await render(thought_lines, engine, use, meter, thoughts_progress)
        files = await self._files(rendered, lines, title, order, state.language, use)
        extra = None
        if heard is not None:  # every file ready before the first is written
            whole = replace(order, limit=None)
            extra = await self._files(heard, thought_lines, title, whole, state.language, use)
        stem = self._target(order, view)
        paths, cue_path = await self._write(stem, order.fmt, files.audio, files.cues)
        thoughts_path: Path | None = None
        thoughts_files: tuple[Path, ...] = ()
        if extra is not None:
            thoughts_stem = stem.with_name(stem.name + ".thoughts")
            written, sheet = await self._write(thoughts_stem, order.fmt, extra.audio, extra.cues)
            thoughts_path, thoughts_files = written[0], (*written, sheet)
        await asyncio.to_thread(cache.trim)
        made = rendered.made + (heard.made if heard else 0)
        cached = rendered.cached + (heard.cached if heard else 0)
        chars = rendered.characters + (heard.characters if heard else 0)
        return ReadResult(
            take=view.number if view else 0,
            audio=tuple(paths),
            cue_sheet=cue_path,
            thoughts=thoughts_path,
            thoughts_files=thoughts_files,
            seconds=files.seconds,
            lines=total,  # every line read, the thoughts' too: made + from the cache
            made=made,
            cached=cached,
            characters=chars,
            cost_usd=None if meter.unpriced else meter.spent.usd,
            engine=engine.name,
        )

    async def _files(
        self,
        rendered: Rendered,
        lines: list[Line],
        title: str,
        order: ReadOrder,
        language: str,
        cache: LineCache | None,
    ) -> Files:
        """The audio and cue sheet of `rendered` (CPU work: in a worker thread)."""
        opus = await encoded(rendered, order.fmt, cache)
        return await asyncio.to_thread(
            files_of, rendered, lines, title, order.fmt, order.limit, language, opus
        )

    async def _meter(self, state: SceneState, take: int | None) -> SpeechMeter:
        calls = await CallLog.open(self.scene.store, utcnow())
        return SpeechMeter(
            self.scene.name,
            take,
            self.spending.limits(state),
            await self.spending.scene_spent(state),
            ledger=self.spending.ledger,
            calls=calls,
        )

    async def _script(
        self, order: ReadOrder, state: SceneState, engine: Engine
    ) -> tuple[TakeView | None, str, list[Line], list[Line]]:
        """(the take, its heading (the cue sheet's title), the lines read aloud, the thoughts'
        lines) — BadRequest when nothing would be read."""
        if order.picks:
            return await self._picks_script(state, engine)
        view = await self.harvest.take_view(order.take)
        title, _ = scene_title(view.context, self.scene.name)
        items = in_range(view.items, order.first, order.last)
        turns = [i for i in items if isinstance(i, Turn)]
        if not turns:
            raise BadRequest("error.read.no_lines", take=view.number)
        casting = self.checked(state, engine, [t.actor for t in turns])
        heading = say("read.heading", state.language, title=title, take=view.number)
        lines = take_script(heading, items, casting, state.language)
        thought_lines: list[Line] = []
        if order.thoughts:
            found = await self.harvest.thoughts_of(view)
            thought_lines = thoughts_script(turns, found, casting, state.language)
        return view, heading, lines, thought_lines

    async def _picks_script(
        self, state: SceneState, engine: Engine
    ) -> tuple[TakeView | None, str, list[Line], list[Line]]:
        picks = await self.harvest.picks()
        if not picks:
            raise BadRequest("error.nothing_picked")
        title, _ = scene_title(await self.harvest.context_body(), self.scene.name)
        turns = [Turn(p.turn, p.actor, p.action, p.dialogue) for p in picks]
        casting = self.checked(state, engine, [p.actor for p in picks])
        heading = say("read.heading_picks", state.language, title=title)
        lines = take_script(heading, turns, casting, state.language)
        return None, heading, lines, []

    def _target(self, order: ReadOrder, view: TakeView | None) -> Path:
        """The audio's path without its suffix: `out`, else exports/read/<take or picks>."""
        if order.out is not None:
            out = Path(order.out)
            return out.with_suffix("") if out.suffix else out
        name = "picks" if view is None else f"take_{view.number}"
        if view is not None and (order.first is not None or order.last is not None):
            name += f"_turns_{order.first or 1}-{order.last if order.last is not None else 'end'}"
        return self.scene.root / READS / name

    async def _write(
        self, stem: Path, fmt: str, parts: Sequence[bytes], cues: str
    ) -> tuple[list[Path], Path]:
        """The audio (numbered `.part1`… when there are several) and the cue sheet beside it."""
        store = SceneStore(stem.parent)
        suffix = audio.FORMATS[fmt][2]
        paths = []
        for i, data in enumerate(parts, 1):
            name = stem.name + (f".part{i}" if len(parts) > 1 else "") + suffix
            paths.append(await store.write_bytes_atomic(name, data))
        cue_name = stem.name + ".txt"
        await store.write_atomic(cue_name, cues)
        return paths, stem.parent / cue_name
