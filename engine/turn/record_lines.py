"""The public record line by line: each turn and stage block as one quoted line.

Invariant: whatever anyone said is `quote`d on its turn's one line (contract §7), each field
cut to its cap, so no text on the record can pose as a turn, a thought or a director's note in
a prompt, and one huge turn never crowds out the rest. Pure functions of their arguments (the
renderings of turns and blocks are cached by content: a Turn is its whole text).
"""

from __future__ import annotations

import json
from functools import lru_cache

from engine.catalog import say
from engine.folder.sanitize import ELLIPSIS, clean_text
from engine.folder.stage import ENTER, EVENT, EXIT, OPENING, StageBlock
from engine.folder.turns import Turn, labels_for


@lru_cache(maxsize=65536)
def estimate_tokens(text: str) -> int:
    """A rough size (one token per CJK character, four chars otherwise), for describing text.

    Budgets do not use it: it undercounts most tokenizers (engine.door.tokens counts for real).
    """
    wide = sum(1 for ch in text if ord(ch) > 0x2E7F)
    return wide + (len(text) - wide + 3) // 4


# What one turn may contribute to a prompt, in estimated tokens per field, so one huge turn
# (a 100 KB reply, a long paste into transcript.md) never pushes every other turn out of the
# bounded window: a full turn with its thought stays within about a third of HISTORY_BUDGET.
RECORD_CAPS = {"action": 150, "dialogue": 450, "cue": 20, "thought": 300}


def clip_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` whose estimate fits `budget` tokens (marked if cut)."""
    if estimate_tokens(text) <= budget:
        return text
    used, end = 0.0, 0
    while end < len(text) and used + (1 if ord(text[end]) > 0x2E7F else 0.25) <= budget - 1:
        used += 1 if ord(text[end]) > 0x2E7F else 0.25
        end += 1
    return text[:end].rstrip() + ELLIPSIS


def quote(text: str) -> str:
    """What someone said, as one double-quoted, escaped line (contract §7: reuse it).

    Line breaks become `\\n`, quotes and backslashes are escaped, invisible controls are gone,
    so nothing inside can end the quote, start a line, or pose as the prompt's own structure.
    """
    return json.dumps(clean_text(text), ensure_ascii=False)


@lru_cache(maxsize=65536)
def public_line(turn: Turn, language: str) -> str:
    """One turn of the public record as every role sees it: always exactly one line."""
    labels = labels_for(language)
    parts = [f"[{turn.number}] {turn.actor}:"]
    if turn.action:
        parts.append(
            f"({labels['action']}) " + quote(clip_tokens(turn.action, RECORD_CAPS["action"]))
        )
    if turn.dialogue:
        parts.append(quote(clip_tokens(turn.dialogue, RECORD_CAPS["dialogue"])))
    cue = clean_text(turn.cue).split("\n")[0].strip()
    if cue:
        parts.append("→ " + quote(clip_tokens(cue, RECORD_CAPS["cue"])))
    return " ".join(parts)


@lru_cache(maxsize=65536)
def block_line(block: StageBlock, language: str) -> str:
    """A stage block on the public record, as everyone present sees it."""
    at = f"[{block.after}.{block.seq}]"
    if block.kind == ENTER:
        return say("prompt.enters", language, at=at, actor=block.actor)
    if block.kind == EXIT:
        return say("prompt.exits", language, at=at, actor=block.actor)
    if block.kind in (EVENT, OPENING):
        return say(f"prompt.{block.kind}", language, at=at, text=event_text(block))
    return say("prompt.present", language, at=at, names=tuple(block.names))


def event_text(block: StageBlock) -> str:
    """An event's text as one quoted line (contract §7): it cannot forge prompt structure."""
    return quote(clip_tokens(block.text, RECORD_CAPS["dialogue"]))


def missed_line(turns: int, language: str) -> str:
    return say("prompt.missed", language, turns=turns)


def thought_line(thought: str, language: str) -> str:
    label = say("prompt.thought_then", language)
    return f"    {label} {quote(clip_tokens(thought, RECORD_CAPS['thought']))}"
