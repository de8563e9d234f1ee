"""Provider prompt caching: where an explicitly cached prefix may end, and what a reply's cache did.

A prompt's message may arrive as `Pieces`: texts whose join is exactly that message's text, cut
where the prompt stays identical from call to call. Every consumer but the request reads the
joined text; only for Anthropic-family models (which cache a prefix only up to a `cache_control`
breakpoint, on a content-block boundary) do the pieces become content blocks, with at most
MAX_BREAKPOINTS marked. Other providers cache a repeated prefix by themselves. Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_BREAKPOINTS = 4  # Anthropic refuses a request with more (a 400)
EPHEMERAL = {"type": "ephemeral"}


@dataclass(frozen=True)
class Pieces:
    """One message's text cut where it stays identical call to call; `marks` are indexes of
    pieces a cached prefix may end at, the most useful first (only the first few are used)."""

    parts: tuple[str, ...]
    marks: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        return "".join(self.parts)


def takes_breakpoints(model: str) -> bool:
    """Anthropic's Messages API and Claude on Bedrock and Vertex AI: caching needs breakpoints."""
    name = model.lower()
    provider, _, rest = name.partition("/")
    if not rest:
        return name.startswith("claude")
    if provider == "anthropic":
        return True
    if provider == "bedrock":
        return "anthropic" in rest or "claude" in rest
    if provider in ("vertex_ai", "vertex_ai_beta"):
        return "claude" in rest
    return False


def request_messages(
    messages: Sequence[Mapping[str, str]], pieces: Sequence[Pieces | None], model: str
) -> list[dict[str, Any]]:
    """The messages as litellm is sent them: plain text, or for a model that takes breakpoints
    content blocks (one per piece, none empty) with `cache_control` on the marked ones."""
    plain = [dict(m) for m in messages]
    if not takes_breakpoints(model) or not any(pieces):
        return plain
    left = MAX_BREAKPOINTS
    out: list[dict[str, Any]] = []
    for i, message in enumerate(plain):
        cut = pieces[i] if i < len(pieces) else None
        if cut is None or cut.text != message.get("content"):
            out.append(message)  # no pieces, or they no longer match the text: send it whole
            continue
        marked = {m for m in cut.marks if 0 <= m < len(cut.parts)}
        chosen = [m for m in dict.fromkeys(cut.marks) if m in marked][:left]
        left -= len(chosen)
        blocks: list[dict[str, Any]] = []
        for j, part in enumerate(cut.parts):
            if part:  # Anthropic refuses an empty text block; an empty piece adds nothing
                blocks.append({"type": "text", "text": part})
            if j in chosen and blocks:  # a prefix ending at an empty piece ends a block earlier
                blocks[-1]["cache_control"] = dict(EPHEMERAL)
        out.append({**message, "content": blocks})
    return out


def _count(value: Any) -> int:
    """A token count from a provider: a whole number ≥ 0, or 0 for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return max(0, int(value))


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def cache_tokens(usage: Any) -> tuple[int, int]:
    """(prompt tokens read from the cache, prompt tokens written to it) of one response's usage.

    OpenAI-style providers report reads as `prompt_tokens_details.cached_tokens`; Anthropic as
    `cache_read_input_tokens` and writes as `cache_creation_input_tokens` (litellm copies both).
    """
    if usage is None:
        return 0, 0
    details = _field(usage, "prompt_tokens_details")
    read = max(
        _count(_field(details, "cached_tokens")), _count(_field(usage, "cache_read_input_tokens"))
    )
    written = _count(_field(usage, "cache_creation_input_tokens"))
    if not written:
        written = _count(_field(details, "cache_creation_tokens"))
    return read, written
