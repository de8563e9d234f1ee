"""What a frontend may read about a scene: a frozen snapshot, never the engine's own state.

`SceneView` is built by one pure function (`view_of`) from the loaded scene; its fields are
tuples, strings and read-only mappings, so a frontend holding one can neither change the
scene nor see it change under it. Writes go through `Rehearsal` commands only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from engine.config import Config
from engine.folder.names import Actor
from engine.folder.role_models import actor_model, stage_manager_model
from engine.folder.scene import SceneFiles, SceneState

__all__ = ["Actor", "LastTurn", "SceneView", "load_view", "view_of"]


@dataclass(frozen=True)
class LastTurn:
    number: int
    actor: str
    dialogue: str
    action: str
    cue: str = ""


@dataclass(frozen=True)
class SceneView:
    name: str
    language: str
    context: str  # the public context (context.md's body)
    cast: tuple[str, ...]
    aliases: Mapping[
        str, tuple[str, ...]
    ]  # actor -> its aliases (private nicknames: directors only)
    avatars: Mapping[str, str | None]  # actor -> avatar_url
    models: Mapping[str, str]  # actor -> model that plays it
    stage_manager_model: str
    on_stage: tuple[str, ...]
    players: Mapping[str, str]  # actor -> who plays them
    turns: int  # turns in the current take
    last_turn: LastTurn | None
    unknown_note_sections: tuple[str, ...]  # director_notes.md headings naming nobody in the cast
    spectators_read: bool = False  # context.md `spectators_read:`: anyone in the thread may /read
    line_notes: str = "everyone"  # context.md `line_notes:`: who may note a line (or "crew")
    # actor -> the writers who captain them (.circus/captains.json); `captains_cue:` in
    # context.md lets them cue their own character
    captains: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    captains_cue: bool = False


def view_of(state: SceneState, config: Config) -> SceneView:
    """A frozen view of a loaded scene (pure; `config`: the operator's default models)."""
    last = state.turns[-1] if state.turns else None
    return SceneView(
        name=state.name,
        language=state.language,
        context=state.context,
        cast=tuple(state.cast),
        aliases=MappingProxyType({n: tuple(s.aliases) for n, s in state.souls.items()}),
        avatars=MappingProxyType({n: s.avatar_url for n, s in state.souls.items()}),
        models=MappingProxyType(
            {n: actor_model(s, state.settings, config) for n, s in state.souls.items()}
        ),
        stage_manager_model=stage_manager_model(state.settings, config),
        on_stage=tuple(state.on_stage),
        players=MappingProxyType({a: p for a, p in state.players.items() if a in state.souls}),
        turns=len(state.turns),
        last_turn=(
            LastTurn(last.number, last.actor, last.dialogue, last.action, last.cue)
            if last
            else None
        ),
        unknown_note_sections=tuple(state.whispers.unknown_sections),
        spectators_read=state.settings.get("spectators_read") is True,
        line_notes="crew" if state.settings.get("line_notes") == "crew" else "everyone",
        captains=MappingProxyType(dict(state.captains)),
        captains_cue=state.settings.get("captains_cue") is True,
    )


async def load_view(root: Path | str, config: Config) -> SceneView:
    """A frozen view of a scene folder read without a rehearsal on it (a template, a scene
    just made): nothing is locked, recovered or written. `config`: the operator's models."""
    return view_of(await SceneFiles(Path(root)).load(), config)
