"""The line cache: each rendered line kept in the scene folder by (text, voice, engine), so a
re-read synthesises only the lines that changed — and, encoded with its pause, so it encodes
only those too (engine.voice.ogg joins the pieces).

Invariant: a cached file is a whole line (written atomically by the scene's store) named by
the SHA-256 of what made it, so a changed line, voice or engine can never hit an old file; the
folder is bounded (CIRCUS_READ_CACHE_MB) by forgetting the files read least recently.
"""

from __future__ import annotations

import hashlib
from typing import Any

from engine.folder.store import STATE_DIR, SceneStore
from engine.folder.voices import Voice
from engine.voice import audio

CACHE_DIR = f"{STATE_DIR}/voice"
KEEP = 0.8  # trimming leaves the cache at 80% of its bound: not a trim after every line


def line_key(engine: str, voice: Voice, text: str) -> str:
    """The name of a line's file: a digest of the engine, the voice (with pitch and rate) and
    the text, each length-prefixed so no two triples run together."""
    digest = hashlib.sha256()
    for part in (engine, voice.key, text):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:40]


class LineCache:
    """One scene's cached lines (`max_bytes` 0: none kept, none read)."""

    def __init__(self, store: SceneStore, max_bytes: int) -> None:
        self.store, self.max_bytes = store, max_bytes

    async def get(self, key: str) -> Any | None:
        """The line's samples, or None (not cached, or a file that is no longer audio)."""
        if self.max_bytes <= 0:
            return None
        data = await self.get_bytes(f"{key}.flac")
        if data is None:
            return None
        try:
            return audio.decode(data)
        except ValueError:
            return None

    async def put(self, key: str, samples: Any) -> None:
        await self.put_bytes(f"{key}.flac", audio.cache_bytes(samples))

    async def get_bytes(self, name: str) -> bytes | None:
        """A cached file as it was written (None: not cached, or no cache)."""
        if self.max_bytes <= 0:
            return None
        return await self.store.read_bytes(f"{CACHE_DIR}/{name}")

    async def put_bytes(self, name: str, data: bytes) -> None:
        if self.max_bytes > 0:
            await self.store.write_bytes_atomic(f"{CACHE_DIR}/{name}", data)

    def trim(self) -> int:
        """Forget the least recently read lines until the cache is within its bound; returns
        how many were forgotten."""
        files = self.store.sizes(CACHE_DIR)
        total = sum(size for _, size, _ in files)
        if total <= self.max_bytes:
            return 0
        gone = 0
        for _, size, name in files:
            if total <= self.max_bytes * KEEP:
                break
            self.store.remove(f"{CACHE_DIR}/{name}")
            total -= size
            gone += 1
        return gone
