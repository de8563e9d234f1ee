"""What the budget tests share: a scene's records as read back from disk, a writer's edit to
context.md, a usage row at a given time. The fixtures (`priced`, `no_operator_budgets`) are in
conftest.py."""

from __future__ import annotations

import json
from pathlib import Path

from engine import Rehearsal
from engine.turns import parse_transcript

REPO = Path(__file__).resolve().parent.parent


def transcript(scene: Path):
    path = scene / "transcript.md"
    return parse_transcript(path.read_text(encoding="utf-8")) if path.exists() else []


def usage(scene: Path) -> list[dict]:
    path = scene / ".circus" / "usage.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def set_context(scene: Path, **settings) -> None:
    """Add `key: value` lines to context.md's front matter, as a writer would."""
    path = scene / "context.md"
    text = path.read_text(encoding="utf-8")
    lines = "".join(f"{k}: {v}\n" for k, v in settings.items())
    path.write_text(text.replace("---\n", "---\n" + lines, 1), encoding="utf-8")


def collect(rehearsal: Rehearsal) -> list:
    events: list = []
    rehearsal.events.listen(events.append)
    return events


def cheap_input_costly_output(priced, name: str = "scripted/priced") -> str:
    # Replies are capped at 2048 tokens: each call must be able to afford a whole reply.
    return priced(name, 0.0, 10.0)  # $10 per million output tokens: a full reply ≈ $0.02


def at(text: str, cost: float = 1.0, tokens: int = 10) -> dict:
    """A usage row written at `text` (an ISO time)."""
    return {"at": text, "cost_usd": cost, "prompt_tokens": tokens, "completion_tokens": 0}
