"""Saved prompt states of the embedded model, one per role, bounded in counted bytes.

An entry holds only what resuming a role's prompt needs: the prompt's token ids and llama.cpp's
KV cells of that one sequence (`llama_state_seq_get_data`: no logits, no score matrix, unlike
llama-cpp-python's LlamaRAMCache). Its size is the length of exactly those two buffers, so
`PrefixCache.nbytes` counts every byte of saved state and never exceeds the capacity: the
least recently used role is evicted first, and a state larger than the whole bound is not kept.
"""

from __future__ import annotations

import ctypes
from array import array
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, eq=False)
class SavedPrefix:
    """A sequence's KV cells (`data`) and the tokens they encode, position 0 onward."""

    tokens: array  # array("i"): llama token ids
    data: Any  # a ctypes c_uint8 array, or bytes

    @property
    def nbytes(self) -> int:
        return len(self.data) + self.tokens.itemsize * len(self.tokens)


class PrefixCache:
    """Role → SavedPrefix, least recently used evicted first, total bytes ≤ capacity."""

    def __init__(self, capacity_bytes: int) -> None:
        self._entries: OrderedDict[Hashable, SavedPrefix] = OrderedDict()
        self._nbytes = 0
        self._capacity = 0
        self.capacity_bytes = capacity_bytes

    @property
    def capacity_bytes(self) -> int:
        return self._capacity

    @capacity_bytes.setter
    def capacity_bytes(self, value: int) -> None:
        """A smaller bound evicts least recently used states until the rest fit."""
        self._capacity = max(0, int(value))
        self.make_room(0)

    @property
    def nbytes(self) -> int:
        """Bytes held by the saved states (their KV data and token ids)."""
        return self._nbytes

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[Hashable]:
        """Roles from least to most recently used."""
        return list(self._entries)

    def get(self, key: Hashable) -> SavedPrefix | None:
        saved = self._entries.get(key)
        if saved is not None:
            self._entries.move_to_end(key)
        return saved

    def clear(self) -> None:
        self._entries.clear()
        self._nbytes = 0

    def discard(self, key: Hashable) -> None:
        saved = self._entries.pop(key, None)
        if saved is not None:
            self._nbytes -= saved.nbytes

    def make_room(self, nbytes: int) -> bool:
        """Evict least recently used states until `nbytes` more fit; False if they never can
        (then nothing is evicted)."""
        if nbytes > self._capacity:
            return False
        while self._entries and self._nbytes + nbytes > self._capacity:
            _, oldest = self._entries.popitem(last=False)
            self._nbytes -= oldest.nbytes
        return True

    def put(self, key: Hashable, saved: SavedPrefix) -> bool:
        """Keep `saved` as `key`'s only state; False (and nothing kept) when it cannot fit."""
        self.discard(key)
        if not self.make_room(saved.nbytes):
            return False
        self._entries[key] = saved
        self._nbytes += saved.nbytes
        return True


# ---------------------------------------------------------------------------------------------
# Moving a state between a llama_cpp.Llama (sequence 0, the one it decodes) and the cache


def save(llama: Any, llama_cpp: Any, cache: PrefixCache, key: Hashable, keep: int) -> bool:
    """Save the first `keep` tokens of `llama`'s context as `key`'s state.

    The context is cut to those tokens first (what follows them, e.g. the reply, is never
    reused), and room is made before the buffer is allocated, so memory never holds a role's
    old and new state at once.
    """
    cache.discard(key)
    keep = max(0, min(int(keep), int(llama.n_tokens)))
    if keep == 0:
        return False
    if keep < llama.n_tokens:
        llama._ctx.kv_cache_seq_rm(-1, keep, -1)
        llama.n_tokens = keep
        llama._requires_eval = True  # the logits belong to a token that is gone
    ctx = llama._ctx.ctx
    size = int(llama_cpp.llama_state_seq_get_size(ctx, 0))
    tokens = array("i", llama.input_ids[:keep].tolist())
    if size <= 0 or not cache.make_room(size + tokens.itemsize * len(tokens)):
        return False
    data = (ctypes.c_uint8 * size)()
    written = int(llama_cpp.llama_state_seq_get_data(ctx, data, size, 0))
    if written != size:
        return False
    return cache.put(key, SavedPrefix(tokens, data))


def restore(llama: Any, llama_cpp: Any, saved: SavedPrefix) -> bool:
    """Make `saved` the context's only sequence; on failure leave an empty context."""
    llama._ctx.kv_cache_clear()
    llama.n_tokens = 0
    llama._requires_eval = True
    data = saved.data
    if isinstance(data, (bytes, bytearray)):
        data = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if int(llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, data, len(data), 0)) == 0:
        llama._ctx.kv_cache_clear()
        return False
    count = len(saved.tokens)
    llama.input_ids[:count] = saved.tokens
    llama.n_tokens = count
    return True


Role = tuple[str, str]  # (reply kind, speaker): ("actor", "林小姐"), ("stage_manager", "")


class RoleStates:
    """Which role's prompt the one llama context holds, and each role's saved state.

    Before a call, `resume` puts the role's state back (unless the context holds it already);
    llama-cpp-python then re-evaluates only what follows the longest prefix the new prompt
    shares with it (Llama.generate's prefix match). After it, `keep` saves the prompt part.
    Not thread-safe: the caller serializes calls (engine.providers.embedded's run lock).
    """

    def __init__(self, capacity_bytes: int = 0) -> None:
        self.cache = PrefixCache(capacity_bytes)
        self.live: Role | None = None

    def resume(self, llama: Any, llama_cpp: Any, role: Role | None) -> None:
        live, self.live = self.live, None  # unknown until this call completes
        if role is None or role == live:
            return
        saved = self.cache.get(role)
        if saved is not None:
            restore(llama, llama_cpp, saved)

    def keep(self, llama: Any, llama_cpp: Any, role: Role | None, prompt_tokens: int) -> None:
        """Save the prompt part of the context as `role`'s state (the reply is never reused)."""
        if role is None:
            return
        if self.cache.capacity_bytes:
            save(llama, llama_cpp, self.cache, role, prompt_tokens)
        self.live = role  # the context still holds this role's prompt, saved or not

    def forget(self) -> None:
        self.cache.clear()
        self.live = None
