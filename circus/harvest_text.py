"""How the terminal shows the harvest: one line per pick (take, turn, actor, line, votes, note),
and each noted line with its notes under it.

The catalog's words only; the engine's Pick is read by attribute, never imported at the top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from circus.words import t

if TYPE_CHECKING:  # hints only: nothing is imported at run time
    from collections.abc import Sequence

    from engine import NotedLine, Pick


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


def noted_lines(noted: Sequence[NotedLine]) -> list[str]:
    """`circus notes`: each noted turn (turn, actor, the line's first words), its notes under it."""
    out: list[str] = []
    for line in noted:
        said = _flat(line.line, 50) or "—"
        out.append(t("cli.line_note_row", turn=line.turn, actor=line.actor, said=said))
        out += [t("cli.line_note_note", text=n.text, by=n.by) for n in line.notes]
    return out
