"""One actor's turn and one stage-manager decision, from scene state to a finished result.

Both ask their model through the door they are handed (engine.door.llm.Models, with the run's spend
gate), re-ask once naming the exact problem, and otherwise
fall back deterministically, so a run never stalls on a malformed reply. Nothing here writes
to disk: the caller commits the result whole.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from engine.catalog import say
from engine.config import Config
from engine.door import llm, structured
from engine.door.llm import ModelCall, Models, ReplyShape, SpendGate
from engine.folder.role_models import (
    actor_model,
    api_base,
    context_tokens,
    extra_params,
    reply_format,
    schema_support,
    sent_reply_cap,
    stage_manager_model,
    turn_timeout,
)
from engine.folder.sanitize import clean_text, clip
from engine.folder.scene import SceneState
from engine.folder.stage import after_event
from engine.folder.turns import Turn
from engine.reply.read import MAX_REPLY_CHARS, Reply, parse_reply
from engine.turn.casting import longest_silent, read_stage_manager, stage_manager_candidates
from engine.turn.prompts import (
    ActorBrief,
    StageBrief,
    actor_prompt,
    repair_messages,
    stage_manager_prompt,
    stage_manager_reask,
)

REASON_CAP = 1000  # characters of a stage-manager reason kept for the log and the director


@dataclass(frozen=True)
class Usage:
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    calls: int = 1
    cached_tokens: int = 0  # of prompt_tokens, read from the provider's prompt cache
    cache_write_tokens: int = 0  # of prompt_tokens, written to it
    cache_saved_usd: float = 0.0  # the uncached price minus cost_usd (engine.door.llm)

    def __add__(self, other: Usage) -> Usage:
        cost = (
            None
            if self.cost_usd is None and other.cost_usd is None
            else (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        )
        return Usage(
            self.model,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            cost,
            self.calls + other.calls,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_saved_usd + other.cache_saved_usd,
        )


def _usage(reply: llm.ModelReply) -> Usage:
    return Usage(
        reply.model,
        reply.prompt_tokens,
        reply.completion_tokens,
        reply.cost_usd,
        cached_tokens=reply.cached_tokens,
        cache_write_tokens=reply.cache_write_tokens,
        cache_saved_usd=reply.cache_saved_usd,
    )


@dataclass(frozen=True)
class Performance:
    reply: Reply
    usage: Usage
    repaired: bool = False
    fallback: bool = False
    raw: str = ""
    wrote_for_others: bool = False  # a reply held a line for another cast member (cut off)


def fallback_reply(best: Reply, raw: str, language: str) -> Reply:
    """A deterministic, harmless turn built from whatever parsed; raw text never goes public."""
    thought = best.thought
    if not thought:
        thought = say("prompt.unreadable", language)
        if raw.strip():
            thought += say("prompt.raw_reply", language, raw=clean_text(raw).strip()[:2000])
    action = best.action
    if not action and not best.dialogue:
        action = say("prompt.stays_silent", language)
    return Reply(
        thought, action, best.dialogue, best.cue, best.has_cue, (), best.cut, best.wrote_for_others
    )


def _score(reply: Reply) -> int:
    return (not reply.problems) * 4 + bool(reply.thought) * 2 + bool(reply.action or reply.dialogue)


def _fallback_extra(
    fallback: str | None, fmt: structured.Format, config: Config
) -> dict[str, Any] | None:
    """The fallback model's own provider options: its schema only where its provider holds one
    (the prompt already asks for `fmt`; the reader reads JSON either way)."""
    if not fallback:
        return None
    schema = structured.request_params("actor", fmt, schema_support(fallback))
    return {**extra_params(fallback, config), **schema}


def actor_call(
    state: SceneState, actor: str, direction: str, neglected: bool, config: Config
) -> tuple[ModelCall, structured.Format]:
    """The model call for `actor`'s turn (prompt, model, limits, reply format): pure."""
    soul = state.souls[actor]
    model = actor_model(soul, state.settings, config)
    schema = schema_support(model)
    fmt = reply_format(model, soul, state.settings, config, schema)
    brief = ActorBrief(
        name=actor,
        soul=soul.body,
        context=state.context,
        cast=tuple(state.cast),
        turns=tuple(state.turns),
        own_thoughts=state.thoughts.get(actor, {}),
        whisper_all=state.whispers.everyone,
        whisper_private=state.whispers.for_actor(actor),
        direction=direction,
        neglected=neglected,
        language=state.language,
        stage=tuple(state.blocks),
        on_stage=tuple(state.on_stage),
        model=model,
        context_tokens=context_tokens(model, config),
        reply_format=fmt,
    )
    prompt = actor_prompt(brief)
    call = ModelCall(
        model=model,
        messages=prompt.messages,
        temperature=soul.temperature,
        api_base=api_base(soul, state.settings, config),
        timeout=turn_timeout(state.settings, config),
        fallback_model=soul.fallback_model,
        shape=ReplyShape("actor", tuple(state.on_stage), actor),
        max_tokens=sent_reply_cap(model, "actor", config),
        extra={**extra_params(model, config), **structured.request_params("actor", fmt, schema)},
        fallback_extra=_fallback_extra(soul.fallback_model, fmt, config),
        retries=config.model_retries,
        pieces=prompt.pieces,
        purpose="actor",
    )
    return call, fmt


async def perform(
    state: SceneState,
    actor: str,
    direction: str = "",
    neglected: bool = False,
    *,
    models: Models,
    config: Config,
    gate: SpendGate | None = None,
) -> Performance:
    """Ask `actor`'s model for one turn; repair once; fall back so the turn always exists."""
    # Built off the event loop: a long scene's first prompt may load the model's tokenizer
    # (engine.turn.prompts), and every other scene and reply keeps going meanwhile.
    call, fmt = await asyncio.to_thread(actor_call, state, actor, direction, neglected, config)
    messages = call.messages
    first = await models.complete(call, gate=gate)
    usage = _usage(first)
    # Knowing who speaks and the cast, the reader strips "Name:" and cuts lines for others.
    cast = state.aliases()
    reply = parse_reply(first.text, speaker=actor, cast=cast)
    if reply.ok:
        return Performance(reply, usage, raw=first.text, wrote_for_others=reply.wrote_for_others)
    again = await models.complete(
        replace(
            call,
            messages=repair_messages(
                messages,
                clean_text(first.text)[:MAX_REPLY_CHARS],
                reply.problems,
                state.language,
                fmt,
            ),
            purpose="repair",
        ),
        gate=gate,
    )
    usage = usage + _usage(again)
    second = parse_reply(again.text, speaker=actor, cast=cast)
    others = reply.wrote_for_others or second.wrote_for_others
    if second.ok:
        return Performance(second, usage, repaired=True, raw=again.text, wrote_for_others=others)
    best, raw = (second, again.text) if _score(second) >= _score(reply) else (reply, first.text)
    return Performance(fallback_reply(best, raw, state.language), usage, True, True, raw, others)


@dataclass(frozen=True)
class Decision:
    actor: str
    reason: str  # the stage manager's own words (private: for the director)
    usage: Usage | None
    fallback: bool = False


def stage_manager_call(
    state: SceneState, barred: set[str], config: Config
) -> tuple[ModelCall, structured.Format]:
    """The stage manager's model call (public information only; `barred` may not be picked)."""
    model = stage_manager_model(state.settings, config)
    schema = schema_support(model)
    fmt = reply_format(model, None, state.settings, config, schema)
    brief = StageBrief(
        context=state.context,
        cast=tuple(state.on_stage),
        turns=tuple(state.turns),
        whisper_all=state.whispers.everyone,
        language=state.language,
        stage=tuple(state.blocks),
        quiet=state.quiet,
        model=model,
        context_tokens=context_tokens(model, config),
        reply_format=fmt,
    )
    prompt = stage_manager_prompt(brief)
    call = ModelCall(
        model=model,
        messages=prompt.messages,
        temperature=0.2,
        api_base=api_base(None, state.settings, config),
        timeout=turn_timeout(state.settings, config),
        shape=ReplyShape("stage_manager", tuple(a for a in state.cast if a not in barred)),
        max_tokens=sent_reply_cap(model, "stage_manager", config),
        extra={
            **extra_params(model, config),
            **structured.request_params("stage_manager", fmt, schema),
        },
        retries=config.model_retries,
        pieces=prompt.pieces,
        purpose="stage_manager",
    )
    return call, fmt


async def ask_stage_manager(
    state: SceneState,
    exclude: str | None = None,
    *,
    models: Models,
    config: Config,
    gate: SpendGate | None = None,
) -> Decision:
    """Let the stage manager pick from public information; validate; re-ask once; fall back.

    It picks among the actors on stage other than `exclude` and the one who just threw the
    ball open (an actor who wants the floor back cues themself by name); after a stage event
    anyone on stage may react first; after a person's line, never that person's actor.
    """
    items = state.record
    present = state.on_stage
    last = state.turns[-1].actor if state.turns else None
    event = after_event(items)
    played_last = bool(items) and isinstance(items[-1], Turn) and last in state.played
    candidates = stage_manager_candidates(
        present, last, exclude, after_event=event, last_played=played_last
    )
    barred = {a for a in state.cast if a not in candidates}
    if len(candidates) == 1:  # nothing to decide: no model call
        return Decision(candidates[0], say("sm.only_one", state.language), None)
    call, fmt = await asyncio.to_thread(stage_manager_call, state, barred, config)
    messages = call.messages
    speakers = [t.actor for t in state.turns]
    aliases = {a: s for a, s in state.aliases().items() if a not in barred}
    usage: Usage | None = None
    text = ""
    for _attempt in range(2):
        try:
            answer = await models.complete(call, gate=gate)
        except llm.ModelError as exc:
            text = str(exc)
            break
        usage = _usage(answer) if usage is None else usage + _usage(answer)
        said = clean_text(answer.text)  # the reason goes to a log and to the director: sanitise
        picked, reason = read_stage_manager(said, aliases)
        if picked is not None:
            return Decision(picked, clip(reason or said.strip(), REASON_CAP)[0], usage)
        text = said
        call = replace(
            call,
            messages=stage_manager_reask(
                messages, answer.text, tuple(aliases), state.language, fmt
            ),
        )
    chosen = longest_silent(candidates, speakers)
    said = text.strip()[:200] or say("sm.said_nothing", state.language)
    why = say("sm.fallback", state.language, said=said)
    return Decision(chosen, why, usage, fallback=True)
