"""Moving a scene folder (and an account's spend ledger) to another place in the scenes folder.

Invariant: a scene moves by one rename (atomic on one filesystem) while its run lock is held,
so no run in any process is writing into it as it goes, and two processes moving the same scene
at once cannot both have it: the second finds it gone (SceneNotFound). A move never replaces
anything at the destination; a scene behind a link moves as the link, still pointing at it.
Ledger day files move whole, or are appended whole to the day file already there under its
flock (engine.ledger), so no day's spend is lost or counted twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from engine.errors import SceneExists, SceneNotFound
from engine.ledger import SPEND_DIR, check_account
from engine.scene import is_scene
from engine.store import SceneStore


def move_scene(src: Path | str, dest: Path | str) -> Path:
    """Move the scene folder `src` to `dest` (its parent is made if missing) and return `dest`.
    SceneBusy if a run holds it, SceneNotFound if it is gone (another process moved it first),
    SceneExists if something is at `dest` already."""
    src, dest = Path(src), Path(dest)
    if not is_scene(src):
        raise SceneNotFound(src)
    if dest.exists() or dest.is_symlink():
        raise SceneExists(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    store = SceneStore(src)
    with store.held(src.name):  # the lock's file moves with the folder: held until done
        if not is_scene(src):  # moved by another process between our check and our lock
            raise SceneNotFound(src)
        try:
            # os.rename would silently replace an empty folder at dest: link-free check above,
            # and a non-empty one makes rename fail, which is what we want.
            if dest.exists():
                raise SceneExists(dest)
            # A scene kept elsewhere behind a link (a writer's vault) moves as the link, which
            # must still point at it from its new place: relative targets are made absolute.
            target = os.path.realpath(src) if src.is_symlink() else None
            os.rename(src, dest)
            if target is not None:
                _relink(dest, target)
        except FileNotFoundError:
            raise SceneNotFound(src) from None
        except OSError as exc:  # dest appeared meanwhile (ENOTEMPTY / EEXIST)
            raise SceneExists(dest) from exc
    return dest


def _relink(link: Path, target: str) -> None:
    """Point the link `link` at `target` (an absolute path), replacing it atomically."""
    tmp = link.with_name(f".{link.name}.{os.getpid()}.link")
    os.symlink(target, tmp)
    os.replace(tmp, link)


def move_ledger(src_dir: Path | str, dest_dir: Path | str, account: str) -> int:
    """Move `account`'s spend ledger from the scenes folder `src_dir` to `dest_dir` (e.g. a
    server's own folder). Returns how many day files moved. Safe to repeat."""
    src = Path(src_dir) / SPEND_DIR / check_account(account)
    dest = Path(dest_dir) / SPEND_DIR / account
    if not src.is_dir():
        return 0
    dest.mkdir(parents=True, exist_ok=True)
    moved = 0
    for day in sorted(src.glob("*.jsonl")):
        target = dest / day.name
        try:
            os.link(day, target)  # only if no day file is there: never replaces one
        except FileExistsError:
            _append_whole(day, target)
        day.unlink()
        moved += 1
    with contextlib.suppress(OSError):
        src.rmdir()  # only when nothing else is left in it
    return moved


def _append_whole(day: Path, target: Path) -> None:
    """Append `day`'s rows to `target` under target's exclusive flock, as engine.ledger does."""
    rows = day.read_bytes()
    if rows and not rows.endswith(b"\n"):
        rows += b"\n"  # a torn last line stays one line, which the reader skips
    fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_size and _last_byte(target) != b"\n":
            os.write(fd, b"\n")
        os.write(fd, rows)
    finally:
        os.close(fd)


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1)
