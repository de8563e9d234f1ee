"""How the terminal shows the harvest: one line per pick (take, turn, actor, line, votes, note).

The catalog's words only; the engine's Pick is read by attribute, never imported at the top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from circus.words import t

if TYPE_CHECKING:  # hints only: nothing is imported at run time
    from engine import Pick


def _flat(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def pick_line(pick: Pick) -> str:
    said = _flat(pick.dialogue) if pick.dialogue else f"({_flat(pick.action)})"
    voters = ", ".join(pick.votes)
    note = f" — {_flat(pick.note)}" if pick.note else ""
    return t(
        "cli.pick_line",
        take=pick.take,
        turn=pick.turn,
        actor=pick.actor,
        said=said,
        votes=len(pick.votes),
        voters=voters,
        note=note,
    )
