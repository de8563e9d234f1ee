"""The engine's one clock: aware UTC datetimes, so a day boundary is the same in every process.

Budgets, call records and the moments a turn is written all read it; a test hands a part its own
clock instead of patching this one.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
