"""Circus's rehearsal engine: scene folders on disk, actor turns, the stage manager, takes.

No frontend lives here: the console and the Discord bot call `Rehearsal` commands and render
the events it emits. Importing the engine is cheap; litellm loads on the first model call.
"""

from engine.catalog import is_zh, lang_of, say
from engine.errors import (
    BadName,
    BadSceneFile,
    CircusError,
    NotPlaying,
    SceneBusy,
    SceneNotFound,
    UnknownActor,
)
from engine.events import Event, EventHub, StageChanged, WaitingForPlayer
from engine.llm import litellm_module
from engine.picks import Pick, render_picks
from engine.rehearsal import Rehearsal, RunResult
from engine.scene_commands import ReplayResult, Status
from engine.settings import MAX_FILE_BYTES
from engine.templates import list_templates
from engine.view import Actor, LastTurn, SceneView

__all__ = [
    "Actor",
    "BadName",
    "BadSceneFile",
    "CircusError",
    "Event",
    "EventHub",
    "LastTurn",
    "MAX_FILE_BYTES",
    "NotPlaying",
    "Pick",
    "Rehearsal",
    "ReplayResult",
    "RunResult",
    "SceneBusy",
    "SceneNotFound",
    "SceneView",
    "StageChanged",
    "Status",
    "UnknownActor",
    "WaitingForPlayer",
    "is_zh",
    "lang_of",
    "list_templates",
    "litellm_module",
    "render_picks",
    "say",
]
