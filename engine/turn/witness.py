"""What one actor witnessed in a take: the record it may carry into the next scene (seed 000 §14.1).

Invariant: the public turns and stage blocks while the actor was on stage (its own exit is the
last thing it sees until it comes back), and its own thoughts on its own turns — never another
actor's thought, and no whisper or direction at all, its own included (directions are rewritten
for each scene). The same walk and the same one-line quoting as the actor's prompt
(engine.turn.prompts), so nothing carried can forge structure in the soul it lands in. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.catalog import say
from engine.folder.stage import StageBlock, merge, walk
from engine.folder.turns import Turn
from engine.turn.record_lines import RECORD_CAPS, block_line, clip_tokens, public_line, quote


def witnessed(
    actor: str,
    cast: Sequence[str],
    turns: Sequence[Turn],
    blocks: Sequence[StageBlock],
    own_thoughts: Mapping[int, str],
    language: str,
) -> list[str]:
    """The lines `actor` witnessed, in order, one per turn or stage block (its own turns with
    its thought on the next line). A stretch off stage leaves nothing, not even its length."""
    lines: list[str] = []
    for item, before, after in walk(cast, merge(turns, blocks)):
        if actor not in before and actor not in after:
            continue
        if isinstance(item, StageBlock):
            lines.append(block_line(item, language))
            continue
        lines.append(public_line(item, language))
        thought = own_thoughts.get(item.number) if item.actor == actor else None
        if thought:
            text = quote(clip_tokens(thought, RECORD_CAPS["thought"]))
            lines.append(f"    {say('prompt.thought_then', language)} {text}")
    return lines
