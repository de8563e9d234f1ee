"""How the terminal shows the harvest: one line per pick (take, turn, actor, line, votes, note).

Standard library only; the engine's Pick is read by attribute, never imported at the top.
"""

from __future__ import annotations


def _flat(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def pick_line(pick) -> str:  # pick: engine.picks.Pick
    said = _flat(pick.dialogue) if pick.dialogue else f"({_flat(pick.action)})"
    voters = ", ".join(pick.votes)
    note = f" — {_flat(pick.note)}" if pick.note else ""
    return (
        f"take_{pick.take} · turn {pick.turn} · {pick.actor}: {said}  "
        f"⭐{len(pick.votes)} ({voters}){note}"
    )
