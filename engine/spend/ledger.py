"""The daily spend ledger of one account (a Discord server), kept on disk beside the scenes.

`<scenes_dir>/.circus/spend/<account>/<YYYY-MM-DD>.jsonl`, one file per UTC day, append-only:
each row is written whole under an exclusive flock (after mending a line a crash left torn), so
processes sharing the folder never interleave rows, and a restart finds the day's spend intact.
Moving a ledger (move_ledger) links day files whole or appends them whole under the same flock.
Reads take a shared lock and are incremental: only bytes appended since the last read are parsed.
A row is read as data (engine.spend.call_log.read_rows): one whose spend is not finite numbers ≥ 0 —
a hand edit, a bad reply recorded by an older version — is skipped with a warning, never a refund.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from datetime import date
from pathlib import Path
from typing import Any

from engine.spend.call_log import read_rows

SPEND_DIR = ".circus/spend"
_ACCOUNT = re.compile(r"[A-Za-z0-9_-]{1,64}")


def check_account(account: str) -> str:
    """An account names a folder: letters, digits, `-` and `_` only (e.g. discord-1234)."""
    if not isinstance(account, str) or not _ACCOUNT.fullmatch(account):
        raise ValueError(f"account must be 1–64 letters, digits, - or _, not {account!r}")
    return account


def ledger_accounts(scenes_dir: Path | str) -> list[str]:
    """The accounts with a spend ledger in this scenes folder, sorted."""
    folder = Path(scenes_dir) / SPEND_DIR
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


class Ledger:
    """Append and read one account's spend rows, a file per UTC day."""

    def __init__(self, scenes_dir: Path | str, account: str) -> None:
        self.folder = Path(scenes_dir) / SPEND_DIR / check_account(account)
        # per day file: (bytes parsed so far, lines in them, the rows that count)
        self._seen: dict[Path, tuple[int, int, list[dict[str, Any]]]] = {}

    def path(self, day: date) -> Path:
        return self.folder / f"{day.isoformat()}.jsonl"

    def append(self, day: date, row: dict[str, Any]) -> None:
        """Append one row to `day`'s file, whole, under an exclusive lock."""
        path = self.path(day)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(row, ensure_ascii=False) + "\n"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            # A writer that died mid-line left no newline: start on a fresh line so the torn
            # row stays one unreadable line instead of swallowing this one.
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = "\n" + line
            # One write to an O_APPEND file: a process that dies after it leaves the whole row
            # in the page cache. (No fsync per call: losing one row to a power cut is cheaper
            # than a disk flush before every model call.)
            os.write(fd, line.encode("utf-8"))
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def rows(self, day: date) -> list[dict[str, Any]]:
        """Every row of `day` that counts (a torn, foreign or non-numeric line is skipped)."""
        path = self.path(day)
        offset, lines, rows = self._seen.get(path, (0, 0, []))
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            self._seen.pop(path, None)
            return []
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            size = os.fstat(fd).st_size
            if size < offset:  # replaced or truncated by hand: read it again
                offset, lines, rows = 0, 0, []
            data = os.pread(fd, size - offset, offset) if size > offset else b""
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        text = data[:end].decode("utf-8", errors="replace")
        rows = rows + read_rows(text, path, first_line=lines + 1)
        self._seen[path] = (offset + end, lines + text.count("\n"), rows)
        return list(rows)


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
    """Append `day`'s rows to `target` under target's exclusive flock, as Ledger.add does."""
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
