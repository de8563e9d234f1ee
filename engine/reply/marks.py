"""How a turn was made, as the director must know it: played by Circus (a fallback), repaired by
a re-ask, or cut at a field's cap. Decided once here; each frontend says it in its own words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engine.reply.read import CAPS


@dataclass(frozen=True)
class TurnMarks:
    made: Literal["fallback", "repaired"] | None  # None: the actor's own first reply
    reply_cut: bool  # the whole reply ran past what is read of it
    fields_cut: tuple[tuple[str, int], ...]  # (field, its cap), in the order they were cut


def turn_marks(repaired: bool, fallback: bool, cut: Sequence[str] = ()) -> TurnMarks:
    """The marks of a landed turn (TurnCompleted's repaired, fallback and cut). A fallback is
    marked as such even when a re-ask came first: the actor's silence was not its choice."""
    made: Literal["fallback", "repaired"] | None = (
        "fallback" if fallback else "repaired" if repaired else None
    )
    fields = tuple((f, CAPS[f]) for f in cut if f in CAPS)
    return TurnMarks(made, "reply" in cut, fields)
