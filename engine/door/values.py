"""The plain values every side of the model door shares: what a reply should look like, and what
a model costs per token.

Invariant: a leaf module (no engine imports), so the door (engine.door.llm), the providers behind it
(engine.providers.scripted, engine.providers.embedded) and the meters (engine.door.metering, engine.spend.budget) can all name
these without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

EMBEDDED_MODEL = "circus-local/smollm2"  # the in-process model a scene falls back to


@dataclass(frozen=True)
class ReplyShape:
    """What a well-formed reply looks like, for providers that can constrain decoding."""

    kind: Literal["actor", "stage_manager", "free"]
    cast: tuple[str, ...] = ()
    speaker: str = ""


@dataclass(frozen=True)
class Price:
    """US dollars per token, as litellm's local cost map knows it."""

    input: float
    output: float
