"""The engine's closed sets of words: every string value that crosses a module boundary and may
only be one of a few, named once here as a `Literal` so the type checker refuses any other.

Pure names (and `Author`, the one small value naming who wrote a note), no behaviour; the top
of the engine, importable from every wing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# How a run began (RunStarted.mode): the director's verb.
RunMode = Literal["run", "cue", "resume", "replay"]
# Why an actor got the floor (TurnStarted.reason, casting's Choice.reason).
TurnReason = Literal[
    "director_cue", "start", "neglect", "cue", "self_cue", "stage_manager", "fallback", "played"
]
# Why a run ended (RunFinished.reason, RunResult.reason); "budget" = stopped before a call
# that would have crossed one.
FinishReason = Literal["completed", "cut", "error", "budget"]
# What a "page me when…" alert (or `run --until`) waits for (engine.rehearsal.alerts).
AlertKind = Literal["secret", "enter", "exit", "turn", "converge", "budget", "stop"]
# Whether a scene runs now (Status.mode), here or in another process (Status.held_by).
StatusMode = Literal["idle", "running"]
# What a model call is for, as the spend record names it.
CallPurpose = Literal["actor", "repair", "stage_manager", "summarize", "speech"]
# A stage block on the record (engine.folder.stage).
BlockKind = Literal["opening", "event", "enter", "exit", "present"]
# An element of a writer's screenplay file (engine.script): a speech is a cue with its lines.
ScriptKind = Literal[
    "heading",
    "action",
    "speech",
    "transition",
    "centered",
    "lyric",
    "section",
    "synopsis",
    "page_break",
]
# A field of an actor's turn as a reply holds it.
ReplyField = Literal["thought", "action", "dialogue", "cue"]
# Who a text handed to the engine came from: the operator (the terminal, files on disk: trusted)
# or a member (typed or uploaded through a frontend: data, never configuration).
Origin = Literal["operator", "member"]
# How check-model read a model's reply, and why a call failed.
ProbeRead = Literal["clean", "repaired", "unreadable"]
FailureKind = Literal[
    "refused",
    "unroutable",
    "timeout",
    "unreachable",
    "auth",
    "gateway_key",  # the LiteLLM proxy refused Circus's key (CIRCUS_GATEWAY_KEY)
    "not_found",
    "not_served",  # the LiteLLM proxy's model list does not name the model
    "rate_limited",
    "error",
]
# How a model call leaves the door (engine.door.llm): an in-process provider called directly, the
# OpenAI-compatible wire spoken by the door itself, or litellm.
Transport = Literal["in_process", "wire", "litellm"]
# Who wrote a note or a cue (engine.folder.attribution): a scene's director, or a captain — a
# writer assigned to one character (.circus/captains.json).
AuthorRole = Literal["director", "captain"]


@dataclass(frozen=True)
class Author:
    """Who wrote a whisper or a cue: `name` as people read it (a display name: untrusted, cleaned
    where it is written), `writer` as the scene knows them (`discord:<id>`, a console name)."""

    name: str
    writer: str
    role: AuthorRole = "director"
