"""Named errors for people: each message says what went wrong and what to do next.

Frontends translate these once at their edge (an exit code and one line in the console, a
private reply in Discord). Anything else escaping the engine is a bug.
"""

from __future__ import annotations

from collections.abc import Iterable


class CircusError(Exception):
    """Base for every error a director can act on."""


class BadName(CircusError):
    def __init__(self, what: str, name: str, why: str) -> None:
        super().__init__(f"{what} name {name!r} is not allowed: {why}.")


class SceneNotFound(CircusError):
    def __init__(self, path: object) -> None:
        super().__init__(
            f"No scene at {path} (no context.md there) — create one with `circus new {path}`."
        )


class SceneExists(CircusError):
    def __init__(self, path: object) -> None:
        super().__init__(f"{path} already exists — choose another name; nothing was written.")


class BadSceneFile(CircusError):
    def __init__(self, path: object, why: str) -> None:
        super().__init__(f"{path}: {why}")


class UnknownActor(CircusError):
    def __init__(self, name: str, cast: Iterable[str]) -> None:
        names = ", ".join(cast) or "(nobody)"
        super().__init__(f"No actor called {name} in this scene — the cast is {names}.")


class SceneBusy(CircusError):
    def __init__(self, scene: str) -> None:
        super().__init__(
            f"Scene {scene} is already running — wait for it to finish or cut it first."
        )


class TakeNotFound(CircusError):
    def __init__(self, take: object, available: Iterable[int]) -> None:
        have = ", ".join(f"take_{n}" for n in available) or "none yet (save one with take save)"
        super().__init__(f"No take {take} in this scene — takes: {have}.")


class BadRequest(CircusError):
    """A command's arguments make no sense (a negative turn count, an empty note...)."""


class ModelError(CircusError):
    def __init__(self, model: str, why: str, actor: str | None = None) -> None:
        self.model = model
        self.why = why
        self.actor = actor
        super().__init__(
            f"Model {model} failed: {why}. Check the model name, its API key or api_base, "
            "or set a fallback_model in the actor's soul.md."
        )
