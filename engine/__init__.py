"""Circus's rehearsal engine: scene folders on disk, actor turns, the stage manager, takes.

No frontend lives here: the console and the Discord bot call `Rehearsal` commands and render
the events it emits. Importing the engine is cheap; litellm loads on the first model call.
"""

from engine.catalog import is_zh, lang_of, say
from engine.config import DEFAULT_TURNS, MAX_TURNS, Config
from engine.errors import CircusError
from engine.events import Event, EventHub
from engine.llm import LiteLLMModels, Models
from engine.picks import Pick
from engine.rehearsal import Rehearsal, RunResult
from engine.scene_commands import ReplayResult, Status
from engine.view import Actor, LastTurn, SceneView

__all__ = [
    "DEFAULT_TURNS", "MAX_TURNS",
    "Actor", "CircusError", "Config", "Event", "EventHub", "LastTurn", "LiteLLMModels", "Models",
    "Pick", "Rehearsal", "ReplayResult", "RunResult", "SceneView", "Status",
    "is_zh",
    "lang_of",
    "say",
]  # fmt: skip
