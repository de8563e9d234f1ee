"""The only module that touches a scene folder on disk.

Whole-file writes are atomic (temp file + rename). A turn's appends to transcript.md, the
actor's backstage log and the usage log go through a redo journal (.circus/pending.json,
written atomically first): after a crash at any moment, `recover` truncates each file to where
the turn began and re-applies it, so a turn lands whole or not at all. A replay's rewrite of
several logs goes through the same journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import aiofiles
import aiofiles.os

from engine.errors import SceneBusy

STATE_DIR = ".circus"
JOURNAL = f"{STATE_DIR}/pending.json"
Signature = tuple[int, int] | None


class SceneStore:
    """Reads and writes files under one scene folder; paths are relative to it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock_fd: int | None = None

    def path(self, rel: str) -> Path:
        return self.root / rel

    async def read(self, rel: str) -> str | None:
        try:
            async with aiofiles.open(self.root / rel, encoding="utf-8", newline="") as f:
                return await f.read()
        except FileNotFoundError:
            return None

    async def write_atomic(self, rel: str, text: str) -> None:
        target = self.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        async with aiofiles.open(tmp, "w", encoding="utf-8", newline="") as f:
            await f.write(text)
            await f.flush()
            await asyncio.to_thread(os.fsync, f.fileno())
        await aiofiles.os.replace(tmp, target)

    def signatures(self, rels: Iterable[str]) -> dict[str, Signature]:
        """(size, mtime) of each file, to notice a writer's edits without re-reading."""
        out: dict[str, Signature] = {}
        for rel in rels:
            try:
                st = os.stat(self.root / rel)
                out[rel] = (st.st_size, st.st_mtime_ns)
            except FileNotFoundError:
                out[rel] = None
        return out

    async def commit_appends(self, appends: list[tuple[str, str]]) -> None:
        """Append every (file, text) pair as one all-or-nothing step."""
        await asyncio.to_thread(self._commit_sync, appends)

    async def commit_rewrites(self, files: dict[str, str]) -> None:
        """Replace several files' whole text as one all-or-nothing step."""
        await asyncio.to_thread(self._commit_sync, list(files.items()), True)

    def _commit_sync(self, appends: list[tuple[str, str]], rewrite: bool = False) -> None:
        entries = []
        for rel, text in appends:
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            size = 0 if rewrite or not path.exists() else path.stat().st_size
            entries.append({"path": rel, "offset": size, "text": text})
        journal = self.root / JOURNAL
        journal.parent.mkdir(parents=True, exist_ok=True)
        tmp = journal.with_name("pending.json.tmp")
        tmp.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, journal)
        self._apply(entries)
        journal.unlink()

    def _apply(self, entries: list[dict]) -> None:
        for entry in entries:
            path = self.root / entry["path"]
            with open(path, "a+b") as f:
                f.truncate(entry["offset"])
                f.seek(entry["offset"])
                f.write(entry["text"].encode("utf-8"))

    def recover(self) -> bool:
        """Finish (or discard) a turn interrupted by a crash. True if there was one.

        Only the holder of the run lock may call this: a journal seen without the lock may be a
        live turn being committed by another process.
        """
        journal = self.root / JOURNAL
        (self.root / STATE_DIR / "pending.json.tmp").unlink(missing_ok=True)
        if not journal.exists():
            return False
        try:
            entries = json.loads(journal.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            # A torn journal was never renamed into place, so nothing was appended yet.
            journal.unlink()
            return False
        self._apply(entries)
        journal.unlink()
        return True

    def lock(self, scene: str) -> bool:
        """Take this scene's run lock across processes (or raise SceneBusy), then finish any
        turn a crashed holder left half-written. Returns True if one was recovered."""
        if self._lock_fd is not None:
            raise SceneBusy(scene)
        path = self.root / STATE_DIR / "run.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SceneBusy(scene) from None
        self._lock_fd = fd
        return self.recover()

    def recover_if_idle(self, scene: str) -> bool:
        """Recover a crashed turn now if nobody holds the scene; never wait for a holder."""
        if not (self.root / STATE_DIR).is_dir():
            return False
        try:
            recovered = self.lock(scene)
        except SceneBusy:
            return False
        self.unlock()
        return recovered

    @contextlib.contextmanager
    def held(self, scene: str) -> Iterator[None]:
        """The run lock for a short whole-scene operation (a take, a replay)."""
        self.lock(scene)
        try:
            yield
        finally:
            self.unlock()

    @contextlib.contextmanager
    def short_lock(self, name: str) -> Iterator[None]:
        """Serialise one file's read-modify-write across processes (briefly), e.g. picks.md."""
        path = self.root / STATE_DIR / f"{name}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    async def append_line(self, rel: str, line: str) -> None:
        """Append one short line with a single O_APPEND write (no journal: it may run beside a
        turn's commit). A crash can leave at most a torn last line, which readers skip."""
        await asyncio.to_thread(self._append_line_sync, rel, line)

    def _append_line_sync(self, rel: str, line: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = (line.rstrip("\n") + "\n").encode("utf-8")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def notes_lock(self) -> Iterator[None]:
        """Serialise read-modify-write of director_notes.md across processes (briefly)."""
        path = self.root / STATE_DIR / "notes.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def unlock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    async def listdir(self, rel: str) -> list[str]:
        try:
            return sorted(await aiofiles.os.listdir(self.root / rel))
        except FileNotFoundError:
            return []

    async def snapshot(
        self, dest_rel: str, exclude: set[str], extra: dict[str, str] | None = None
    ) -> None:
        """Copy the scene folder (minus `exclude` top-level names) to `dest_rel`, atomically,
        with `extra` files (name → text) written into the copy before it is renamed into place."""
        await asyncio.to_thread(self._snapshot_sync, dest_rel, exclude, extra or {})

    def _snapshot_sync(self, dest_rel: str, exclude: set[str], extra: dict[str, str]) -> None:
        dest = self.root / dest_rel
        tmp = dest.with_name(f".{dest.name}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for child in self.root.iterdir():
            if child.name in exclude or child.name.startswith("."):
                continue
            if child.is_dir():
                shutil.copytree(child, tmp / child.name)
            else:
                shutil.copy2(child, tmp / child.name)
        for name, text in extra.items():
            with open(tmp / name, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        os.replace(tmp, dest)

    async def write_files(self, files: dict[str, str]) -> list[Path]:
        """Write several whole files (atomically each), after every text is ready: an export
        either has all its texts or writes nothing."""
        paths = []
        for rel, text in files.items():
            await self.write_atomic(rel, text)
            paths.append(self.root / rel)
        return paths
