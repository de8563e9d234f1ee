"""A scene's armed alerts ("page me when…"): kept in .circus/alerts.json, armed, listed and
cleared here, and checked against the engine's events.

Invariants: the file is written atomically, under its own lock, and only here; a file that is
not a list of alerts is refused naming it (BadSceneFile), never read as "no alerts". An alert
stays armed until it is cleared. Which alerts an event meets is decided by
engine.rehearsal.alerts.fired, on facts read from the scene as it stands.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from engine.clock import utcnow
from engine.errors import BadRequest, BadSceneFile, CircusError
from engine.events import Event, RunFinished, TurnCompleted
from engine.folder.scene import SceneState
from engine.folder.state_files import read_state_json
from engine.rehearsal.alerts import (
    WITH_ACTOR,
    Condition,
    Facts,
    Match,
    fired,
    parse_condition,
)
from engine.rehearsal.scene_access import SceneAccess
from engine.takes.reading import secrets_of

ALERTS = ".circus/alerts.json"
MOST_ALERTS = 50  # per scene: members are untrusted, and every event is checked against each
WHO_MOST_CHARS = 64


@dataclass(frozen=True)
class Alert:
    """One armed alert: `by` is who armed it (`discord:<id>`, or a console name) and is paged
    when it fires; `condition.actor` is the actor it is for ("" = any)."""

    id: str
    by: str
    condition: Condition
    created: str

    @property
    def actor(self) -> str:
        return self.condition.actor

    def row(self) -> dict[str, str]:
        return {
            "id": self.id,
            "by": self.by,
            "condition": self.condition.text,
            "actor": self.actor,
            "created": self.created,
        }


def parse_alerts(text: str | None, path: object) -> tuple[Alert, ...]:
    """The alerts in alerts.json (absent or empty: none); BadSceneFile if it is anything else."""
    if text is None or not text.strip():
        return ()
    data = read_state_json(path, ALERTS, text)  # type: ignore[arg-type]
    rows = (data or {}).get("alerts")
    try:
        if not isinstance(rows, list):
            raise ValueError(rows)
        return tuple(_alert(row) for row in rows)
    except (ValueError, TypeError, KeyError, CircusError):
        raise BadSceneFile(path, "error.file.state_unreadable", rel=ALERTS) from None


def _alert(row: Any) -> Alert:
    keys = ("id", "by", "condition", "created")
    if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in keys):
        raise ValueError(row)
    return Alert(row["id"], row["by"], parse_condition(row["condition"]), row["created"])


class Alerts:
    """Arm, list, clear and check one scene's alerts."""

    def __init__(self, scene: SceneAccess) -> None:
        self.scene = scene

    async def all(self) -> tuple[Alert, ...]:
        """The scene's alerts (re-read only when alerts.json changed: the bot asks per event)."""
        path = self.scene.store.path(ALERTS)
        return await self.scene.files.small_file(ALERTS, lambda text: parse_alerts(text, path), ())

    async def resolve(
        self, condition: Condition, aliases_of: Collection[str] | None = None
    ) -> Condition:
        """`condition` with the actor it names as the cast member it means (an alias of
        `aliases_of`, None: anyone's; `@` and honorifics tolerated; UnknownActor or
        AmbiguousActor otherwise)."""
        if condition.kind in WITH_ACTOR and condition.actor:
            actor = await self.scene.resolve_actor(condition.actor, aliases_of)
            return Condition(condition.kind, actor=actor.name)
        return condition

    async def can_fire(self, condition: Condition) -> bool:
        """False when the scene as it stands can never meet `condition`: a secret alert while
        no soul (or not that actor's) marks a secret. Every other kind may yet be met."""
        if condition.kind != "secret":
            return True
        marked = secrets_of(await self.scene.state())
        return any(s for owner, s in marked.items() if condition.actor in ("", owner))

    async def arm(self, condition: Condition, by: str) -> Alert:
        """Arm `condition` for `by` (its actor resolved against the cast); the same condition
        armed twice by the same person is the one alert."""
        by = " ".join(by.split())[:WHO_MOST_CHARS]
        if not by:
            raise BadRequest("error.alert.nobody")
        condition = await self.resolve(condition)
        made: list[Alert] = []

        def add(current: tuple[Alert, ...]) -> tuple[Alert, ...]:
            same = [a for a in current if a.by == by and a.condition == condition]
            if same:
                made.append(same[0])
                return current
            if len(current) >= MOST_ALERTS:
                raise BadRequest("error.alert.too_many", most=MOST_ALERTS)
            number = max((int(a.id[1:]) for a in current if a.id[1:].isdigit()), default=0) + 1
            created = utcnow().isoformat(timespec="seconds")
            made.append(Alert(f"a{number}", by, condition, created))
            return (*current, made[-1])

        await self._rewrite(add)
        return made[0]

    async def clear(self, by: str | None = None) -> tuple[Alert, ...]:
        """Disarm `by`'s alerts, or every alert (`by` None); the alerts cleared."""
        gone: list[Alert] = []

        def keep(current: tuple[Alert, ...]) -> tuple[Alert, ...]:
            gone.extend(a for a in current if by is None or a.by == by)
            return tuple(a for a in current if a not in gone)

        await self._rewrite(keep)
        return tuple(gone)

    async def _rewrite(self, change: Any) -> None:
        store = self.scene.store
        async with store.file_lock("alerts"):  # a short read-modify-write
            updated = change(await self.all())
            rows = [a.row() for a in updated]
            text = json.dumps({"alerts": rows}, ensure_ascii=False, indent=2)
            await store.write_atomic(ALERTS, text + "\n")

    # ----------------------------------------------------------------- checking
    async def facts(self, event: Event) -> Facts:
        """What `fired` needs beyond the event: read only for a turn or a run's end."""
        if not isinstance(event, (TurnCompleted, RunFinished)):
            return Facts()
        return facts_of(await self.scene.state())

    async def check(self, event: Event, conditions: Sequence[Condition]) -> tuple[Match, ...]:
        """Which of `conditions` `event` meets (engine.rehearsal.alerts.fired)."""
        if not conditions:
            return ()
        return fired(conditions, event, await self.facts(event))


def facts_of(state: SceneState) -> Facts:
    """The marked secrets of today's souls and the working take's turns."""
    return Facts(secrets_of(state), tuple(state.turns))
