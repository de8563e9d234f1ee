"""The module that touches a scene folder on disk (with its two helpers: engine/folder/state_files.py
for the small JSON files under .circus/, engine/folder/relocate.py for moving a whole folder).

Whole-file writes are atomic (temp file + rename). A turn's appends to transcript.md, the
actor's backstage log and the usage log go through a redo journal (.circus/pending.json,
written atomically first): after a crash at any moment, `recover` truncates each file to where
the turn began and re-applies it, so a turn lands whole or not at all. A replay's rewrite of
several logs goes through the same journal. A frontend's own small file in a scene (the bot's
thread binding, .circus/discord.json) is written by the engine too, never by the frontend.

Reading is defensive because the folder is also a writer's workspace (Obsidian, Syncthing, an
old editor): text is UTF-8 (a BOM is dropped; anything else is refused naming the file), and
every problem reading a file becomes a BadSceneFile, never a raw OSError. Snapshots skip hidden
entries and never follow a symlink out of the scene.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
import socket
import stat
from collections.abc import AsyncIterator, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import aiofiles
import aiofiles.os

from engine.errors import BadSceneFile, SceneBusy, SceneNotFound

STATE_DIR = ".circus"
JOURNAL = f"{STATE_DIR}/pending.json"
Signature = tuple[int, int] | None
# One asyncio lock per (event loop, scene folder, lock name): see SceneStore.file_lock.
_FILE_LOCKS: dict[tuple[int, str, str], asyncio.Lock] = {}
_BOM = b"\xef\xbb\xbf"
_HOST = socket.gethostname()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


def decode(data: bytes, path: object, rel: str | None = None) -> str:
    """UTF-8 text without a leading BOM; any other encoding is refused naming the file."""
    try:
        return data.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError:
        raise BadSceneFile(path, "error.file.not_utf8", rel=rel) from None


def unreadable(path: Path, rel: str | None, exc: OSError) -> BadSceneFile:
    if isinstance(exc, IsADirectoryError):
        return BadSceneFile(path, "error.file.is_folder", rel=rel)
    if isinstance(exc, FileExistsError):
        return BadSceneFile(path, "error.file.is_file", rel=rel)
    if isinstance(exc, NotADirectoryError):
        return BadSceneFile(path, "error.file.under_file", rel=rel)
    why = exc.strerror or type(exc).__name__
    return BadSceneFile(path, "error.file.unreadable", rel=rel, why=why)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def parse_jsonl(text: str) -> list[dict[str, Any]]:
    """The objects of an append-only .jsonl log; a torn last line (a crash) or a writer's stray
    edit is skipped, never fatal."""
    rows = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


class SceneStore:
    """Reads and writes files under one scene folder; paths are relative to it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock_fd: int | None = None
        self._announced = False  # whether this holder wrote its name into run.lock

    def path(self, rel: str) -> Path:
        return self.root / rel

    async def read(self, rel: str, *, limit: int | None = None) -> str | None:
        """The file's text (None if it does not exist). `limit` caps its size in bytes."""
        path = self.root / rel
        try:
            mode = os.stat(path).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(path)
            if not stat.S_ISREG(mode):  # a FIFO or a device would hang a read
                raise BadSceneFile(path, "error.file.not_regular", rel=rel)
            async with aiofiles.open(path, "rb") as f:
                data = await (f.read(limit + 1) if limit is not None else f.read())
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise unreadable(path, rel, exc) from None
        if limit is not None and len(data) > limit:
            raise BadSceneFile(path, "error.file.too_big", rel=rel, kb=limit // 1024)
        return decode(data, path, rel)

    def _mkdirs(self, rel_dir: Path | str) -> None:
        """Create a folder inside the scene, or say which file stands in the way."""
        path = self.root / rel_dir
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise unreadable(path, str(rel_dir), exc) from None

    async def write_atomic(self, rel: str, text: str) -> None:
        target = self.root / rel
        self._mkdirs(Path(rel).parent)
        tmp = target.with_name(f".{target.name}.tmp")
        async with aiofiles.open(tmp, "w", encoding="utf-8", newline="") as f:
            await f.write(text)
            await f.flush()
            await asyncio.to_thread(os.fsync, f.fileno())
        await aiofiles.os.replace(tmp, target)

    # ------------------------------------------------------------------ binary files
    # The table read's line cache and its audio (engine.voice): whole files, atomically.
    async def read_bytes(self, rel: str) -> bytes | None:
        """The file's bytes, None if it does not exist (or is not a regular file)."""
        return await asyncio.to_thread(self._read_bytes_sync, rel)

    def _read_bytes_sync(self, rel: str) -> bytes | None:
        path = self.root / rel
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            data = path.read_bytes()
            os.utime(path)  # the cache forgets the files read least recently first
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise unreadable(path, rel, exc) from None
        return data

    async def write_bytes_atomic(self, rel: str, data: bytes) -> Path:
        """Write a whole binary file: the old one or the new one, never half of either."""
        target = self.root / rel
        self._mkdirs(Path(rel).parent)
        await asyncio.to_thread(self._write_bytes_sync, target, data)
        return target

    @staticmethod
    def _write_bytes_sync(target: Path, data: bytes) -> None:
        tmp = target.with_name(f".{target.name}.tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise unreadable(target, None, exc) from None

    def sizes(self, rel: str) -> list[tuple[float, int, str]]:
        """(mtime, bytes, name) of each regular file in folder `rel`, oldest first."""
        out = []
        try:
            with os.scandir(self.root / rel) as entries:
                for entry in entries:
                    if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                        st = entry.stat(follow_symlinks=False)
                        out.append((st.st_mtime, st.st_size, entry.name))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(out)

    def signatures(self, rels: Iterable[str]) -> dict[str, Signature]:
        """(size, mtime) of each file, to notice a writer's edits without re-reading."""
        out: dict[str, Signature] = {}
        for rel in rels:
            try:
                st = os.stat(self.root / rel)
                out[rel] = (st.st_size, st.st_mtime_ns)
            except OSError:  # missing, or unreadable: `read` says which
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
        for rel, text in appends:  # every check before the journal: a refused turn leaves nothing
            path = self.root / rel
            self._mkdirs(Path(rel).parent)
            if path.is_dir():
                raise unreadable(path, rel, IsADirectoryError())
            size = 0 if rewrite or not path.exists() else path.stat().st_size
            entries.append({"path": rel, "offset": size, "text": text})
        journal = self.root / JOURNAL
        self._mkdirs(STATE_DIR)
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

    def lock(self, scene: str, *, announce: bool = False) -> bool:
        """Take this scene's run lock across processes (or raise SceneBusy), then finish any
        turn a crashed holder left half-written. Returns True if one was recovered.
        `announce` (a run): write who holds it, for `status` in another process."""
        if self._lock_fd is not None:
            raise SceneBusy(scene)
        path = self.root / STATE_DIR / "run.lock"
        if not self.root.is_dir():  # moved away (a server's /scene open): never make it again
            raise SceneNotFound(self.root)
        self._mkdirs(STATE_DIR)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SceneBusy(scene) from None
        if not _same_file(fd, path):  # the folder moved between our open and our flock
            os.close(fd)
            raise SceneNotFound(self.root)
        self._lock_fd = fd
        # Who holds it, for `status` in another process (it must not probe the flock: a probe
        # would make a real run's start fail as busy). Cleared again by unlock. A moment's hold
        # (a take, a reading command's recovery check) leaves the file untouched.
        self._announced = announce
        with contextlib.suppress(OSError):
            if announce:
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": _HOST}).encode(), 0)
            elif os.fstat(fd).st_size:  # a crashed holder's name: nobody holds it now
                os.ftruncate(fd, 0)
        return self.recover()

    def lock_owner(self) -> tuple[int, str] | None:
        """(pid, host) of the process holding this scene's run lock, or None if nobody does.
        Read from what the holder wrote; a holder on this host that is gone (a crash: the
        flock went with it) holds nothing."""
        try:
            with open(self.root / STATE_DIR / "run.lock", "rb") as f:
                data = json.loads(f.read(4096) or b"null")
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        pid, host = data.get("pid"), data.get("host")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            return None
        if not isinstance(host, str):
            return None
        if host == _HOST and not _alive(pid):
            return None
        return pid, host[:64]

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

    @contextlib.asynccontextmanager
    async def file_lock(self, name: str) -> AsyncIterator[None]:
        """Serialise one file's read-modify-write (picks.md, director_notes.md), briefly.

        Across processes by flock; within this process first by an asyncio lock, because two
        coroutines blocking on the same flock would freeze the event loop. The flock is taken
        in a thread so a holder in another process never blocks the loop either.
        """
        key = (id(asyncio.get_running_loop()), str(self.root.resolve()), name)
        async with _FILE_LOCKS.setdefault(key, asyncio.Lock()):
            path = self.root / STATE_DIR / f"{name}.lock"
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                taking = asyncio.ensure_future(asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX))
                try:
                    await asyncio.shield(taking)
                except asyncio.CancelledError:
                    await asyncio.wait([taking])  # the thread takes it anyway: release below
                    raise
                yield
            finally:
                with contextlib.suppress(OSError):
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

    def append_now(self, rel: str, line: str, first: str = "") -> None:
        """Append one line at once, synchronously, for a caller that cannot await (the spend
        gate records a call in a `finally` a cut may be unwinding). One O_APPEND write, begun
        on a fresh line if a crash left the last one torn (so that row costs only itself).
        `first` goes before it only if this call creates the file: it is written once, by
        whichever process comes first. (No fsync, as for the daily ledger.)"""
        path = self.root / rel
        self._mkdirs(Path(rel).parent)
        text = line.rstrip("\n") + "\n"
        fd = -1
        if first:
            try:
                fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
                text = first.rstrip("\n") + "\n" + text
            except FileExistsError:
                pass
        if fd < 0:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                text = "\n" + text
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)

    def unlock(self) -> None:
        if self._lock_fd is not None:
            if self._announced:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._lock_fd, 0)  # nobody holds it any more
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def move(self, src_rel: str, dst_rel: str) -> None:
        """Rename a file or folder inside the scene in one step (an actor's folder renamed);
        never over something that exists."""
        src, dst = self.root / src_rel, self.root / dst_rel
        if dst.exists() or dst.is_symlink():
            raise unreadable(dst, dst_rel, FileExistsError())
        self._mkdirs(Path(dst_rel).parent)
        try:
            os.rename(src, dst)
        except OSError as exc:
            raise unreadable(src, src_rel, exc) from None

    def remove(self, rel: str) -> None:
        """Delete a file or folder inside the scene: first renamed aside (hidden) in one step,
        so a crash midway never leaves half an actor folder where the loader looks."""
        path = self.root / rel
        if not (path.exists() or path.is_symlink()):
            return
        aside = path.with_name(f".{path.name}.removed")
        shutil.rmtree(aside, ignore_errors=True)
        try:
            os.rename(path, aside)
        except OSError as exc:
            raise unreadable(path, rel, exc) from None
        if aside.is_dir() and not aside.is_symlink():
            shutil.rmtree(aside, ignore_errors=True)
        else:
            aside.unlink(missing_ok=True)

    async def listdir(self, rel: str) -> list[str]:
        try:
            return sorted(await aiofiles.os.listdir(self.root / rel))
        except (FileNotFoundError, NotADirectoryError):
            return []

    async def snapshot(
        self, dest_rel: str, exclude: set[str], extra: dict[str, str] | None = None
    ) -> None:
        """Copy the scene folder (minus `exclude` top-level names) to `dest_rel`, atomically,
        with `extra` files (name → text) written into the copy before it is renamed into place.

        Hidden entries (.circus, .obsidian, .stversions, editor swap files) are not part of a
        take. A symlink to a file inside the scene is copied as that file; one pointing out of
        the scene is kept as a link and never followed; links to folders (a loop) are skipped.
        """
        await asyncio.to_thread(self._snapshot_sync, dest_rel, exclude, extra or {})

    def _snapshot_sync(self, dest_rel: str, exclude: set[str], extra: dict[str, str]) -> None:
        dest = self.root / dest_rel
        self._mkdirs(Path(dest_rel).parent)
        tmp = dest.with_name(f".{dest.name}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            self._copy_dir(self.root, tmp, exclude)
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            where = Path(exc.filename or self.root)
            raise unreadable(where, _inside(where, self.root), exc) from None
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

    def _copy_dir(self, src: Path, dst: Path, exclude: Collection[str] = ()) -> None:
        with os.scandir(src) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.startswith(".") or entry.name in exclude:
                    continue
                target = dst / entry.name
                if entry.is_symlink():
                    self._copy_link(Path(entry.path), target, exclude)
                elif entry.is_dir(follow_symlinks=False):
                    target.mkdir()
                    self._copy_dir(Path(entry.path), target)
                elif entry.is_file(follow_symlinks=False):
                    shutil.copy2(entry.path, target, follow_symlinks=False)
                # sockets, FIFOs and devices are not part of a scene

    def _copy_link(self, link: Path, target: Path, exclude: Collection[str]) -> None:
        root = self.root.resolve()
        real = Path(os.path.realpath(link))
        rel = _inside(real, root)
        if rel is None:
            # Out of the scene: keep the link (absolute, so it still points there), unread.
            os.symlink(os.path.normpath(link.parent / os.readlink(link)), target)
            return
        parts = Path(rel).parts
        hidden = any(p.startswith(".") for p in parts) or (parts and parts[0] in exclude)
        try:
            regular = stat.S_ISREG(os.stat(real).st_mode)
        except OSError:  # dangling, or a loop
            regular = False
        if regular and not hidden:
            shutil.copy2(real, target)


def _inside(path: Path, root: Path) -> str | None:
    """`path` relative to `root` if it lies inside it, else None."""
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return None


# --- continuity: a new scene folder written whole (engine/continuity/next_scene.py)
def create_folder(root: Path, files: Mapping[str, str]) -> None:
    """Write a new folder at `root` with `files` (relative path → text): built beside it under a
    hidden name, then renamed into place in one step, so it appears whole or not at all. Refused
    (FileExistsError, nothing changed) if `root` exists by then."""
    root = Path(root)
    tmp = root.with_name(f".{root.name}.new")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for rel, text in files.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        os.rename(tmp, root)  # refused if root now exists (a non-empty folder) or is a file
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise unreadable(Path(exc.filename or root), root.name, exc) from None
