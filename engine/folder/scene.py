"""A scene as read from its folder: settings, public context, cast, transcript, whispers.

`SceneFiles.load` is called before every turn. It re-reads only files whose size or mtime
changed since it last saw them, so a writer's edits between turns are honoured while an
unchanged 200-turn transcript is not re-parsed. Everything (turn numbers, who spoke when)
is derived from the files; nothing lives only in memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from engine.errors import BadSceneFile, SceneNotFound, UnknownActor
from engine.folder import frontmatter
from engine.folder.names import Actor, alias_clash, check_name, check_unique
from engine.folder.record_walk import merged, on_stage_now, quiet_now
from engine.folder.sanitize import clean_text
from engine.folder.settings import MAX_FILE_BYTES, context_settings_dict
from engine.folder.soul import Soul, parse_soul
from engine.folder.stage import Item, StageBlock, configured, parse_blocks
from engine.folder.state_files import read_state_json
from engine.folder.store import SceneStore, Signature
from engine.folder.turns import Turn, parse_backstage, parse_transcript
from engine.folder.whispers import Whispers, parse_notes

T = TypeVar("T")
CONTEXT = "context.md"
NOTES = "director_notes.md"
TRANSCRIPT = "transcript.md"
STAGE_MANAGER_LOG = "stage_manager.log"
PLAYERS = ".circus/players.json"
CAPTAINS = ".circus/captains.json"  # actor -> the writers who captain them (engine.rehearsal.room)
USAGE_LOG = (
    ".circus/usage.jsonl"  # one row per role per landed turn (engine.rehearsal.scene_access)
)
STAGE_KEY = "|stage"  # the transcript's stage blocks, cached beside its turns
DIRECTIONS = "directions.md"  # the director's cue directions, by take and turn (append-only)
DRAFTS = "drafts"  # soul edits that failed validation, kept for the writer (not in a take)
CONTEXT_DRAFT = f"{DRAFTS}/context.md"  # a context.md edit that failed validation, kept likewise


def is_scene(folder: Path | str) -> bool:
    """A scene folder is one with a context.md."""
    return (Path(folder) / CONTEXT).is_file()


def list_scenes(scenes_dir: Path | str) -> list[str]:
    """The scene folders in a scenes folder, by name: never a hidden one or the templates."""
    root = Path(scenes_dir)
    if not root.is_dir():
        return []
    return sorted(
        entry.name
        for entry in root.iterdir()
        if entry.is_dir()
        and not entry.name.startswith(".")
        and entry.name != "templates"
        and is_scene(entry)
    )


def soul_path(actor: str) -> str:
    return f"actors/{actor}/soul.md"


def draft_path(actor: str) -> str:
    """Where a soul edit that failed validation is kept for the writer."""
    return f"{DRAFTS}/{actor}.soul.md"


def refuse_alias_clash(root: Path, cast: Mapping[str, Iterable[str]]) -> None:
    """BadSceneFile naming the soul.md whose alias is another actor's name (a whisper to that
    actor would reach this one). The one rule, on every read and before every soul is written."""
    clash = alias_clash(cast)
    if clash is not None:
        actor, alias, other = clash
        rel = soul_path(actor)
        raise BadSceneFile(
            root / rel, "error.file.alias_is_name", rel=rel, alias=alias, other=other
        )


def backstage_path(actor: str) -> str:
    return f"backstage/{actor}.log"


@dataclass
class SceneState:
    name: str
    settings: dict[str, Any]
    context: str
    souls: dict[str, Soul]
    turns: list[Turn]
    thoughts: dict[str, dict[int, str]]
    whispers: Whispers
    extra: dict[str, Any] = field(default_factory=dict)
    blocks: list[StageBlock] = field(default_factory=list)
    players: dict[str, str] = field(default_factory=dict)  # actor -> who plays them
    captains: dict[str, tuple[str, ...]] = field(default_factory=dict)  # actor -> writers
    start: list[str] | None = None  # context.md's on_stage (seeds an empty record only)

    @property
    def cast(self) -> list[str]:
        return list(self.souls)

    @property
    def language(self) -> str:
        return str(self.settings.get("language") or "zh")

    @property
    def neglect_turns(self) -> int:
        return int(self.settings.get("neglect_turns", 3))

    @property
    def last_turn(self) -> int:
        return self.turns[-1].number if self.turns else 0

    def aliases(self) -> dict[str, tuple[str, ...]]:
        return {name: soul.aliases for name, soul in self.souls.items()}

    def member(self, actor: Actor) -> str:
        """The name of an actor resolved earlier (`Rehearsal.resolve_actor`), if they are still
        in the cast (the folder may have changed since); UnknownActor otherwise. Never matches
        names or aliases: that was the resolve's job, done once."""
        name = getattr(actor, "name", None)
        if not isinstance(name, str):  # a plain name here is a caller's bug, not a user's
            raise TypeError(f"expected an Actor (Rehearsal.resolve_actor), not {actor!r}")
        if name not in self.souls:
            raise UnknownActor(name, self.cast)
        return name

    # Derived from the record alone, walked once and extended as it grows
    # (engine.folder.record_walk): a writer's edit of the transcript walks it afresh.
    @property
    def record(self) -> list[Item]:
        """Turns and stage blocks in the order they happened."""
        return merged(self.cast, self.turns, self.blocks)

    @property
    def on_stage(self) -> list[str]:
        """Who is on stage now (cast order)."""
        start = self.cast if self.start is None else self.start
        return on_stage_now(self.cast, self.turns, self.blocks, start)

    @property
    def quiet(self) -> dict[str, int]:
        """Turns each actor has been silent while on stage (engine.folder.stage.quiet)."""
        return quiet_now(self.cast, self.turns, self.blocks)

    @property
    def played(self) -> set[str]:
        """Actors a person plays: no model ever writes their lines."""
        return {a for a in self.players if a in self.souls}


def parse_players(text: str, path: Path, rel: str = PLAYERS) -> dict[str, str]:
    """Who plays whom (.circus/players.json): actor -> player, both strings. Absent or empty
    means nobody plays; anything else that is not such an object is refused naming the file
    (silently "nobody" would hand a person's role back to a model without a word)."""
    if not text.strip():
        return {}
    data = read_state_json(path, rel, text)
    if not all(isinstance(v, str) for v in data.values()):  # type: ignore[union-attr]
        raise BadSceneFile(path, "error.file.state_unreadable", rel=rel)
    return dict(data)  # type: ignore[arg-type]


WRITER_MOST_CHARS = 100  # "discord:<id>" or a console name
CAPTAINS_MOST = 32  # writers per actor


def parse_captains(text: str, path: Path, rel: str = CAPTAINS) -> dict[str, tuple[str, ...]]:
    """Who captains whom (.circus/captains.json): actor -> [writer, ...]. Absent or empty means
    nobody captains; anything else that is not such an object is refused naming the file
    (silently "nobody" would end a captain's DMs without a word)."""
    if not text.strip():
        return {}
    data = read_state_json(path, rel, text) or {}
    out: dict[str, tuple[str, ...]] = {}
    for actor, writers in data.items():
        if not isinstance(writers, list) or len(writers) > CAPTAINS_MOST:
            raise BadSceneFile(path, "error.file.state_unreadable", rel=rel)
        if not all(isinstance(w, str) and 0 < len(w) <= WRITER_MOST_CHARS for w in writers):
            raise BadSceneFile(path, "error.file.state_unreadable", rel=rel)
        out[actor] = tuple(dict.fromkeys(writers))
    return out


class SceneFiles:
    """Loads a scene folder, caching each parsed file by its (size, mtime) signature."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.store = SceneStore(self.root)
        self.name = self.root.name
        self._cache: dict[str, tuple[Signature, Any]] = {}
        self.loads = 0  # how many times the scene was loaded (tests count reloads with it)

    def exists(self) -> bool:
        return (self.root / CONTEXT).is_file()

    def actor_names(self) -> list[str]:
        """Actor folders under actors/. Hidden folders (.obsidian, .stversions), symlinks (a
        loop, a link out of the scene) and stray files are not actors and never stop a load."""
        actors_dir = self.root / "actors"
        try:
            with os.scandir(actors_dir) as entries:
                return sorted(
                    entry.name
                    for entry in entries
                    if not entry.name.startswith(".")
                    and not entry.is_symlink()
                    and entry.is_dir(follow_symlinks=False)
                )
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise BadSceneFile(
                actors_dir, "error.file.actors_unreadable", rel="actors", why=exc.strerror
            ) from None

    async def _cached(
        self, rel: str, sig: Signature, parse: Any, key: str = "", limit: int | None = None
    ) -> Any:
        hit = self._cache.get(rel + key)
        if hit is not None and hit[0] == sig and sig is not None:
            return hit[1]
        text = await self.store.read(rel, limit=limit)
        value = parse(text if text is not None else "")
        self._cache[rel + key] = (sig, value)
        return value

    async def load(self) -> SceneState:
        self.loads += 1
        if not self.exists():
            raise SceneNotFound(self.root)
        folders = self.actor_names()
        for folder in folders:
            check_name(folder, "Actor")
        check_unique(folders)
        rels = [CONTEXT, NOTES, TRANSCRIPT]
        rels += [soul_path(a) for a in folders] + [backstage_path(a) for a in folders]
        sigs = self.store.signatures(rels)

        ctx_path = self.root / CONTEXT

        # What a writer wrote by hand reaches prompts clean: no control characters or bidi
        # overrides (engine.folder.sanitize), as text a command is given is saved.
        def parse_context(text: str) -> tuple[dict[str, Any], str]:
            raw, body = frontmatter.split(clean_text(text), ctx_path, CONTEXT)
            return context_settings_dict(raw, ctx_path, CONTEXT), body

        settings, context = await self._cached(
            CONTEXT, sigs[CONTEXT], parse_context, limit=MAX_FILE_BYTES
        )
        order = [a for a in settings.get("cast") or [] if a in folders]
        cast = list(dict.fromkeys(order)) + [a for a in folders if a not in order]

        souls = await self._load_souls(cast, sigs)
        turns = await self._cached(TRANSCRIPT, sigs[TRANSCRIPT], parse_transcript)
        blocks = await self._cached(TRANSCRIPT, sigs[TRANSCRIPT], parse_blocks, key=STAGE_KEY)
        start = configured(settings, cast, ctx_path) if "on_stage" in settings else None
        players = await self._cached(
            PLAYERS,
            self.store.signatures([PLAYERS])[PLAYERS],
            lambda text: parse_players(text, self.root / PLAYERS),
            limit=MAX_FILE_BYTES,
        )
        captains = await self._cached(
            CAPTAINS,
            self.store.signatures([CAPTAINS])[CAPTAINS],
            lambda text: parse_captains(text, self.root / CAPTAINS),
            limit=MAX_FILE_BYTES,
        )
        thoughts = {
            a: await self._cached(backstage_path(a), sigs[backstage_path(a)], parse_backstage)
            for a in cast
        }
        whispers = await self._cached(
            NOTES, sigs[NOTES], lambda t: parse_notes(clean_text(t), cast), key="|" + "|".join(cast)
        )
        return SceneState(
            self.name, settings, context.strip(), souls, turns, thoughts, whispers,
            blocks=blocks, players=players, start=start,
            captains={a: w for a, w in captains.items() if a in souls and w},
        )  # fmt: skip

    async def _load_souls(self, cast: list[str], sigs: dict[str, Any]) -> dict[str, Soul]:
        """Each actor's soul.md, parsed (cached by signature); refused on a missing soul or an
        alias that is another actor's name."""
        souls: dict[str, Soul] = {}
        for actor in cast:
            rel = soul_path(actor)
            path = self.root / rel
            if sigs[rel] is None and await self.store.read(rel, limit=MAX_FILE_BYTES) is None:
                raise BadSceneFile(path, "error.file.no_soul", rel=rel)

            def parse(text: str, actor: str = actor, path: Path = path, rel: str = rel) -> Soul:
                return parse_soul(actor, clean_text(text), path, rel)

            souls[actor] = await self._cached(rel, sigs[rel], parse, limit=MAX_FILE_BYTES)
        refuse_alias_clash(self.root, {a: soul.aliases for a, soul in souls.items()})
        return souls

    def last_turn_seen(self) -> int:
        """The last turn number in the transcript as last loaded (0 before any)."""
        hit = self._cache.get(TRANSCRIPT)
        turns = hit[1] if hit else []
        return turns[-1].number if turns else 0

    async def small_file(self, rel: str, parse: Callable[[str], T], empty: T) -> T:
        """One small state file alone, parsed, re-read only when its size or mtime changed
        (`empty` when it is absent): what a frontend asks on every event costs one stat."""
        sig = self.store.signatures([rel])[rel]
        if sig is None:
            return empty
        return await self._cached(rel, sig, parse, key="|small", limit=MAX_FILE_BYTES)

    def unchanged(self, rels: list[str]) -> bool:
        """True if none of `rels` changed on disk since they were last loaded (or appended)."""
        now = self.store.signatures(rels)
        return all(rel in self._cache and self._cache[rel][0] == now[rel] for rel in rels)

    def remember_append(self, rel: str, parsed: Any, key: str = "") -> None:
        """After our own append, record the new signature so the file is not re-parsed."""
        self._cache[rel + key] = (self.store.signatures([rel])[rel], parsed)

    def forget(self) -> None:
        self._cache.clear()
