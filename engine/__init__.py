"""Circus's rehearsal engine — and the one surface its frontends (bot/, circus/) may use.

The wings below (door/, folder/, … probe/) are the engine's insides; a frontend imports only
the names listed here, always `from engine import X` (tests/house/test_seams.py refuses any
other way in):

- commands: `Rehearsal(root, models=…, config=…)`, one per scene folder. A run starts from a
  small frozen order — `start_run(Run(turns, start))`, `Cue(actor, direction)`, `Resume(turns)`,
  `Replay(turns)` — or with `run`/`cue`/`resume`, which wait for it; `cut` stops it. The rest is
  on its command groups (`takes.save()`, `cast.add()`, `souls.set()`, `stage`, `notes`,
  `line_notes` (the room's notes on lines: `add`, and `list` → `NotedLine`s),
  `room` (who captains whom; `author_of` and `captained_by` decide a captain's reach, an
  `Author` names who wrote a note or cue), `spend`, `harvest`; `read.read(ReadOrder(…))`, a table read of a take, → `ReadResult`).
  `models` is the model door (`LiteLLMModels` by default; tests pass a
  scripted one), `config` the operator's `Config`, read once from the environment. An `Actor`
  is a cast member already resolved (`rehearsal.resolve_actor`). `new_scene` and the
  templates; `list_scenes` and `is_scene` for a scenes folder. Commands return small frozen
  results (`RunResult`, `ReplayResult`, `Status`, `TakeInfo`, `Pick`).
- reads: `await rehearsal.view()` gives a frozen `SceneView` (cast, aliases, language,
  avatars, models, who is on stage, the `LastTurn`); `load_view` reads a folder with no
  rehearsal on it (a template).
- writes: only through `Rehearsal` commands, and a frontend's own small file in a scene
  (`write_frontend_file`: the bot's thread binding); a frontend never writes a scene folder.
  Text a member typed or uploaded goes in with `origin="member"`: data, never configuration.
  `redact(text, config.secrets)` masks keys in any outside text before a person reads it.
- alerts ("page me when…"): `rehearsal.alerts` arms, lists and clears a scene's `Alert`s and
  `check(event, conditions)` says which an event meets (`AlertMatch`); `parse_condition(s)`
  reads a `Condition`'s text form (`ALERT_KINDS`); `Run(…, until=…)`/`Resume` stop at the first
  match and say so with `UntilMet`.
- events: `rehearsal.events` (an `EventHub`) calls `listen(fn)`'s fn with each frozen event a
  run emits (`TurnCompleted`, …); `turn_marks` says how a landed turn was made (`TurnMarks`).
- errors: `CircusError` and its named kinds, each with an English and a Chinese message
  (`in_language`), translated once at the frontend's edge.
- words: `say(key, language, …)` speaks a sentence from the catalog (engine/catalog/);
  `is_zh`/`lang_of` decide which language a setting or a locale means.
- models: `check_model(MODEL, …)` plays a short fixed rehearsal on a model, in memory, and
  `probe_lines`/`probe_json`/`probe_verdict` say what it found (`circus check-model`).
- setup: `cast.add/remove/rename/set_context`, `souls.backstory_drafts/accept_prior_story`
  and `warnings()` (frozen `SceneWarning`s, one line each via `.text(language)`); `split_cast`
  reads a typed cast ("林小姐, Eddie"), at most `MAX_CAST` (`CastTooBig`); `AmbiguousActor` when
  a name could mean several; `is_template` (a template folder is copied by `new_scene`, never
  rehearsed).
- continuity: `start_next(root, new_root, take, draft=…)` starts the next scene from a take
  (`NextResult`); `secrets_lines(root, take)` is a take's secrets ledger with its prompt
  audit; `tree_lines_of(root)` draws the takes as a tree; `parent_take(root, take)` is the take
  a take was replayed from (`take diff N`). They read take folders, no run lock.
  `import_script(script, new_root, ImportAsk(scene=…, heading=…, until=…, language=…, cast=…),
  draft=…)` makes a scene from one scene of a writer's Fountain or FDX file (`ImportResult`);
  `rehearsal.harvest.splice(into=…, take=…)` sets a take's rehearsed lines back into it
  (`Spliced`); `BadScript` is why a file was refused; `SCRIPT_TYPES` the file types it reads
  and `MAX_SCRIPT_BYTES` the largest (a frontend checks an upload before fetching it).
- pure helpers for what a person typed (`check_name`, `is_everyone`, `whole_number`, the
  one bounded reader of a typed number, and `shown_number` to quote one); `litellm_module()`
  loads the model library ahead of the first turn (the bot warms it up off the event loop).

Importing the engine costs next to nothing: each name loads its module on first use (a scene
read pays for the folder code, asyncio and yaml; pydantic's settings schemas load only for
settings that are not plainly valid, or an edit); litellm, seconds more, loads on the first
model call, llama-cpp on the first embedded one.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

# `redact` is also the name of its own module, engine/redact.py: importing that module (as the
# engine's insides do) would set the package's attribute `redact` to the module. Bound here
# first, the name stays the function; the module is small and imports nothing of the engine.
from engine.redact import redact, redact_logs

if _TYPE_CHECKING:  # what the names are, for the type checker; at run time they load lazily
    from engine.catalog import is_zh, lang_of, picker_text, say
    from engine.config import DEFAULT_TURNS, MAX_TURNS, Config
    from engine.continuity.importing import ImportAsk, ImportResult, import_script
    from engine.continuity.next_scene import NextResult, start_next
    from engine.door.llm import EMBEDDED_MODEL, LiteLLMModels, Models, litellm_module
    from engine.door.metrics import discord_trace, metered, track_queue, watch
    from engine.errors import (
        AmbiguousActor,
        BadName,
        BadSceneFile,
        BadScript,
        BudgetExceeded,
        CastTooBig,
        CircusError,
        ModelError,
        NotPlaying,
        SceneBusy,
        SceneNotFound,
        UnknownActor,
    )
    from engine.events import (
        BudgetUsed,
        Cut,
        ErrorEvent,
        Event,
        EventHub,
        PlayerAway,
        RunFinished,
        RunStarted,
        StageChanged,
        StageManagerDecided,
        StillWaiting,
        TakeSaved,
        TurnCompleted,
        TurnStarted,
        UntilMet,
        VoicesConverged,
        WaitingForPlayer,
    )
    from engine.folder.checkup import SceneWarning
    from engine.folder.line_notes import LINE_NOTE_MOST_CHARS
    from engine.folder.names import MAX_CAST, check_name, is_everyone, split_cast
    from engine.folder.numbers import shown_number, whole_number
    from engine.folder.relocate import move_scene
    from engine.folder.scene import is_scene, list_scenes
    from engine.folder.settings import MAX_FILE_BYTES
    from engine.folder.state_files import read_frontend_file, write_frontend_file
    from engine.folder.templates import (
        DEFAULT_TEMPLATE,
        is_template,
        list_templates,
        new_scene,
        template_path,
        template_summary,
        templates_dir,
    )
    from engine.folder.turns import Turn
    from engine.folder.whispers import dropped_warning
    from engine.harvest.picks import Pick, render_picks
    from engine.probe.check import check_model
    from engine.probe.report import probe_json, probe_lines
    from engine.probe.report import verdict as probe_verdict
    from engine.providers.embedded import EmbeddedModelUnavailable
    from engine.providers.embedded import available as embedded_available
    from engine.rehearsal.alert_commands import Alert
    from engine.rehearsal.alerts import KINDS as ALERT_KINDS
    from engine.rehearsal.alerts import Condition, parse_condition, parse_conditions
    from engine.rehearsal.alerts import Match as AlertMatch
    from engine.rehearsal.facade import Rehearsal, preload
    from engine.rehearsal.harvest import Spliced
    from engine.rehearsal.line_note_commands import NotedLine
    from engine.rehearsal.orders import Cue, Order, Replay, Resume, Run
    from engine.rehearsal.read_commands import ReadOrder, ReadResult
    from engine.rehearsal.results import ReplayResult, Status
    from engine.rehearsal.room_commands import author_of, captained_by
    from engine.rehearsal.run_loop import RunResult
    from engine.rehearsal.stage_commands import CONSOLE
    from engine.rehearsal.view import Actor, LastTurn, SceneView, load_view
    from engine.reply.marks import TurnMarks, turn_marks
    from engine.script.elements import MAX_BYTES as MAX_SCRIPT_BYTES
    from engine.script.reading import TYPES as SCRIPT_TYPES
    from engine.spend.ledger import ledger_accounts, move_ledger
    from engine.takes.folders import TakeInfo
    from engine.takes.reading import parent_take, secrets_lines, tree_lines_of
    from engine.vocabulary import Author

# Where each name of the face lives, "module" or "module:attribute". A name is imported on its
# first use (PEP 562), so a command that only reads a scene folder pays for what it touches,
# not for the whole engine (tests/house/test_seams.py checks that every name is found).
_HOME: dict[str, str] = {
    "ALERT_KINDS": "engine.rehearsal.alerts:KINDS",
    "Actor": "engine.rehearsal.view",
    "Alert": "engine.rehearsal.alert_commands",
    "AlertMatch": "engine.rehearsal.alerts:Match",
    "Author": "engine.vocabulary",
    "AmbiguousActor": "engine.errors",
    "BadName": "engine.errors",
    "BadSceneFile": "engine.errors",
    "BadScript": "engine.errors",
    "BudgetExceeded": "engine.errors",
    "BudgetUsed": "engine.events",
    "CONSOLE": "engine.rehearsal.stage_commands",
    "CastTooBig": "engine.errors",
    "CircusError": "engine.errors",
    "Condition": "engine.rehearsal.alerts",
    "Config": "engine.config",
    "Cue": "engine.rehearsal.orders",
    "Cut": "engine.events",
    "DEFAULT_TEMPLATE": "engine.folder.templates",
    "DEFAULT_TURNS": "engine.config",
    "EMBEDDED_MODEL": "engine.door.llm",
    "EmbeddedModelUnavailable": "engine.providers.embedded",
    "ErrorEvent": "engine.events",
    "Event": "engine.events",
    "EventHub": "engine.events",
    "ImportAsk": "engine.continuity.importing",
    "ImportResult": "engine.continuity.importing",
    "LINE_NOTE_MOST_CHARS": "engine.folder.line_notes",
    "LastTurn": "engine.rehearsal.view",
    "LiteLLMModels": "engine.door.llm",
    "MAX_CAST": "engine.folder.names",
    "MAX_FILE_BYTES": "engine.folder.settings",
    "MAX_SCRIPT_BYTES": "engine.script.elements:MAX_BYTES",
    "MAX_TURNS": "engine.config",
    "ModelError": "engine.errors",
    "Models": "engine.door.llm",
    "NextResult": "engine.continuity.next_scene",
    "NotPlaying": "engine.errors",
    "NotedLine": "engine.rehearsal.line_note_commands",
    "Order": "engine.rehearsal.orders",
    "Pick": "engine.harvest.picks",
    "PlayerAway": "engine.events",
    "ReadOrder": "engine.rehearsal.read_commands",
    "ReadResult": "engine.rehearsal.read_commands",
    "Rehearsal": "engine.rehearsal.facade",
    "preload": "engine.rehearsal.facade",
    "Replay": "engine.rehearsal.orders",
    "ReplayResult": "engine.rehearsal.results",
    "Resume": "engine.rehearsal.orders",
    "Run": "engine.rehearsal.orders",
    "RunFinished": "engine.events",
    "RunResult": "engine.rehearsal.run_loop",
    "RunStarted": "engine.events",
    "SCRIPT_TYPES": "engine.script.reading:TYPES",
    "SceneBusy": "engine.errors",
    "SceneNotFound": "engine.errors",
    "SceneView": "engine.rehearsal.view",
    "SceneWarning": "engine.folder.checkup",
    "Spliced": "engine.rehearsal.harvest",
    "StageChanged": "engine.events",
    "StageManagerDecided": "engine.events",
    "Status": "engine.rehearsal.results",
    "StillWaiting": "engine.events",
    "TakeInfo": "engine.takes.folders",
    "TakeSaved": "engine.events",
    "Turn": "engine.folder.turns",
    "TurnCompleted": "engine.events",
    "TurnMarks": "engine.reply.marks",
    "TurnStarted": "engine.events",
    "UnknownActor": "engine.errors",
    "UntilMet": "engine.events",
    "VoicesConverged": "engine.events",
    "WaitingForPlayer": "engine.events",
    "check_model": "engine.probe.check",
    "author_of": "engine.rehearsal.room_commands",
    "captained_by": "engine.rehearsal.room_commands",
    "check_name": "engine.folder.names",
    "discord_trace": "engine.door.metrics",
    "dropped_warning": "engine.folder.whispers",
    "embedded_available": "engine.providers.embedded:available",
    "import_script": "engine.continuity.importing",
    "is_everyone": "engine.folder.names",
    "is_scene": "engine.folder.scene",
    "is_template": "engine.folder.templates",
    "is_zh": "engine.catalog",
    "lang_of": "engine.catalog",
    "ledger_accounts": "engine.spend.ledger",
    "list_scenes": "engine.folder.scene",
    "list_templates": "engine.folder.templates",
    "litellm_module": "engine.door.llm",
    "load_view": "engine.rehearsal.view",
    "metered": "engine.door.metrics",
    "move_ledger": "engine.spend.ledger",
    "move_scene": "engine.folder.relocate",
    "new_scene": "engine.folder.templates",
    "parent_take": "engine.takes.reading",
    "parse_condition": "engine.rehearsal.alerts",
    "parse_conditions": "engine.rehearsal.alerts",
    "picker_text": "engine.catalog",
    "probe_json": "engine.probe.report",
    "probe_lines": "engine.probe.report",
    "probe_verdict": "engine.probe.report:verdict",
    "read_frontend_file": "engine.folder.state_files",
    "render_picks": "engine.harvest.picks",
    "say": "engine.catalog",
    "secrets_lines": "engine.takes.reading",
    "shown_number": "engine.folder.numbers",
    "split_cast": "engine.folder.names",
    "start_next": "engine.continuity.next_scene",
    "template_path": "engine.folder.templates",
    "template_summary": "engine.folder.templates",
    "templates_dir": "engine.folder.templates",
    "track_queue": "engine.door.metrics",
    "tree_lines_of": "engine.takes.reading",
    "turn_marks": "engine.reply.marks",
    "watch": "engine.door.metrics",
    "whole_number": "engine.folder.numbers",
    "write_frontend_file": "engine.folder.state_files",
}

__all__ = [
    "ALERT_KINDS",
    "Actor",
    "Alert",
    "AlertMatch",
    "AmbiguousActor",
    "Author",
    "BadName",
    "BadSceneFile",
    "BadScript",
    "BudgetExceeded",
    "BudgetUsed",
    "CONSOLE",
    "CastTooBig",
    "CircusError",
    "Condition",
    "Config",
    "Cue",
    "Cut",
    "DEFAULT_TEMPLATE",
    "DEFAULT_TURNS",
    "EMBEDDED_MODEL",
    "EmbeddedModelUnavailable",
    "ErrorEvent",
    "Event",
    "EventHub",
    "ImportAsk",
    "ImportResult",
    "LINE_NOTE_MOST_CHARS",
    "LastTurn",
    "LiteLLMModels",
    "MAX_CAST",
    "MAX_FILE_BYTES",
    "MAX_SCRIPT_BYTES",
    "MAX_TURNS",
    "ModelError",
    "Models",
    "NextResult",
    "NotPlaying",
    "NotedLine",
    "Order",
    "Pick",
    "PlayerAway",
    "ReadOrder",
    "ReadResult",
    "Rehearsal",
    "Replay",
    "ReplayResult",
    "Resume",
    "Run",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "SCRIPT_TYPES",
    "SceneBusy",
    "SceneNotFound",
    "SceneView",
    "SceneWarning",
    "Spliced",
    "StageChanged",
    "StageManagerDecided",
    "Status",
    "StillWaiting",
    "TakeInfo",
    "TakeSaved",
    "Turn",
    "TurnCompleted",
    "TurnMarks",
    "TurnStarted",
    "UnknownActor",
    "UntilMet",
    "VoicesConverged",
    "WaitingForPlayer",
    "author_of",
    "captained_by",
    "check_model",
    "check_name",
    "discord_trace",
    "dropped_warning",
    "embedded_available",
    "import_script",
    "is_everyone",
    "is_scene",
    "is_template",
    "is_zh",
    "lang_of",
    "ledger_accounts",
    "list_scenes",
    "list_templates",
    "litellm_module",
    "load_view",
    "metered",
    "move_ledger",
    "move_scene",
    "new_scene",
    "parent_take",
    "parse_condition",
    "parse_conditions",
    "picker_text",
    "preload",
    "probe_json",
    "probe_lines",
    "probe_verdict",
    "read_frontend_file",
    "redact",
    "redact_logs",
    "render_picks",
    "say",
    "secrets_lines",
    "shown_number",
    "split_cast",
    "start_next",
    "template_path",
    "template_summary",
    "templates_dir",
    "track_queue",
    "tree_lines_of",
    "turn_marks",
    "watch",
    "whole_number",
    "write_frontend_file",
]


def __getattr__(name: str) -> _Any:
    where = _HOME.get(name)
    if where is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    module, _, attribute = where.partition(":")
    value = getattr(_importlib.import_module(module), attribute or name)
    globals()[name] = value  # once found, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
