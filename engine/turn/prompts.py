"""What each model is told. The walls between roles are enforced here and nowhere else.

An actor's prompt holds its own soul, the public context, the public record with *its own*
thoughts interleaved, whispers for everyone and for it, and a one-off direction. The stage
manager's prompt holds only public text. The unchanging part comes first and the record grows
append-only, so providers' prompt caches hit; long scenes drop the oldest turns rarely and in
one large block (engine.turn.record_memo.window_start), counted in the reading model's own
tokens, so a prompt never outgrows that model's context. The record cannot be forged: what anyone said is `quote`d
(one JSON string per field, on its turn's one line; engine.turn.record_lines), so no line an
actor writes can pose as a turn, a private thought or a director's note in another prompt. Pure
functions of the brief: the record's lines are rendered once and extended per turn
(engine.turn.record_memo), byte for byte what rendering them afresh gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine.catalog import say
from engine.door import tokens
from engine.door.caching import Pieces
from engine.folder.record_walk import walked
from engine.folder.sanitize import clean_text
from engine.folder.stage import EVENT, OPENING, StageBlock
from engine.folder.turns import Turn
from engine.folder.whispers import fit_whisper, whisper_budget
from engine.turn.casting import silence
from engine.turn.record_lines import RECORD_CAPS, clip_tokens, event_text, quote
from engine.turn.record_memo import HISTORY_BUDGET, actor_record, stage_record

DEFAULT_CONTEXT = 8192  # tokens, for a model whose context size nobody stated
REPLY_RESERVE = 512  # context tokens left for the reply
TAIL_RESERVE = 384  # context tokens set aside for whispers and the turn's direction
CHAT_OVERHEAD = 32  # chat-template tokens around the messages (role markers)


def record_budget(fixed_tokens: int, context_tokens: int = 0) -> int:
    """Tokens the record may use beside `fixed_tokens` of other prompt text, in a model context
    of `context_tokens` (0: unknown, DEFAULT_CONTEXT), leaving room for the reply."""
    context = context_tokens if context_tokens > 0 else DEFAULT_CONTEXT
    room = context - fixed_tokens - REPLY_RESERVE - CHAT_OVERHEAD
    return max(0, min(HISTORY_BUDGET, room))


def _bounded(text: str, context_tokens: int, count: tokens.Counter) -> str:
    """A whisper section (or a direction) cut to its share of the reader's context
    (engine.folder.whispers: the oldest notes go first)."""
    budget = whisper_budget(context_tokens if context_tokens > 0 else DEFAULT_CONTEXT)
    return fit_whisper(text, budget, count)[0]


def _fixed_cost(count: tokens.Counter, stable: str, tail: str) -> int:
    """The prompt's own text, with the tail at least TAIL_RESERVE: the record's budget then
    moves only when the soul, the stage or a long whisper changes, not from turn to turn."""
    return count(stable) + max(count(tail), TAIL_RESERVE)


@dataclass(frozen=True)
class ActorBrief:
    """Everything one actor may know for one turn (and nothing it may not)."""

    name: str
    soul: str
    context: str
    cast: tuple[str, ...]
    turns: tuple[Turn, ...]
    own_thoughts: Mapping[int, str]
    whisper_all: str = ""
    whisper_private: str = ""
    direction: str = ""
    neglected: bool = False
    language: str = "zh"
    stage: tuple[StageBlock, ...] = ()  # entrances, exits and events between the turns
    on_stage: tuple[str, ...] | None = None  # who is on stage now (default: the cast)
    model: str = ""  # who reads the prompt: its tokenizer measures the window ("": estimate)
    context_tokens: int = 0  # that model's context size (0: DEFAULT_CONTEXT)
    reply_format: str = (
        "tags"  # or "json" (engine.door.structured): only the format paragraph differs
    )


# The format paragraph and the lines that name the format, per reply format (engine.door.structured).
_FORMAT = {
    "tags": {
        "format": "prompt.format.tags",
        "own_turn": "prompt.own_turn.tags",
        "your_turn": "prompt.your_turn",
        "repair": "prompt.repair",
        "sm.system": "prompt.sm.system",
        "sm.reask": "prompt.sm.reask",
    },
    "json": {
        "format": "prompt.format.json",
        "own_turn": "prompt.own_turn.json",
        "your_turn": "prompt.your_turn.json",
        "repair": "prompt.repair.json",
        "sm.system": "prompt.sm.system.json",
        "sm.reask": "prompt.sm.reask.json",
    },
}


def _key(reply_format: str, what: str) -> str:
    return _FORMAT.get(reply_format, _FORMAT["tags"])[what]


@dataclass(frozen=True)
class Prompt:
    """The messages a model reads, and each one cut into pieces that stay identical from call
    to call (engine.door.caching: what a provider's explicit prompt cache is told to keep)."""

    messages: tuple[dict[str, str], ...]
    pieces: tuple[Pieces | None, ...]


def actor_messages(brief: ActorBrief) -> tuple[dict[str, str], ...]:
    return actor_prompt(brief).messages


def _actor_tail(brief: ActorBrief, count: tokens.Counter) -> list[str]:
    """What follows an actor's record: the whispers, the direction, the nudge, the ask."""
    lang, fmt = brief.language, brief.reply_format
    tail: list[str] = []
    # Whispers and the direction take a bounded share of the context, newest notes kept.
    whisper_all, whisper_private, direction = (
        _bounded(text, brief.context_tokens, count)
        for text in (brief.whisper_all, brief.whisper_private, brief.direction)
    )
    if whisper_all:
        tail.append(say("prompt.note_everyone", lang, note=whisper_all))
    if whisper_private:
        tail.append(say("prompt.note_you", lang, note=whisper_private))
    if direction:
        tail.append(say("prompt.direction", lang, direction=direction))
    if brief.neglected:
        tail.append(say("prompt.neglected", lang))
    tail.append(say(_key(fmt, "your_turn"), lang, name=brief.name))
    return tail


def _measured(build: Callable[[tokens.Counter], tuple[Prompt, bool]], model: str) -> Prompt:
    """The prompt `build` makes, measured in `model`'s own tokens — counted first with the
    conservative estimate, which over-counts every tokenizer: when nothing had to be cut by
    it, nothing would be by the model's own count either, and the prompt is the same text
    without loading a tokenizer (nor litellm). The model's counter, once loaded, is used."""
    exact = tokens.loaded(model)
    if exact is None:
        prompt, whole = build(tokens.conservative)
        if whole:
            return prompt
        exact = tokens.counter(model)
    return build(exact)[0]


def actor_prompt(brief: ActorBrief) -> Prompt:
    """An actor's messages. The user message's pieces are the record's heading, one per line of
    the record, then the turn's tail; the cached prefix may end after the system message, where
    this actor's previous call ended (just before its own last turn), and at the record's end
    (where its next call will find this one's)."""
    return _measured(lambda count: _actor_prompt(brief, count), brief.model)


def _uncut(brief_texts: Sequence[str], context_tokens: int, count: tokens.Counter) -> bool:
    """Whether every whisper section fits its share whole (none of its notes left out)."""
    return all(_bounded(t, context_tokens, count) == t for t in brief_texts)


def _actor_prompt(brief: ActorBrief, count: tokens.Counter) -> tuple[Prompt, bool]:
    """An actor's prompt measured with `count`, and whether nothing had to be cut."""
    lang = brief.language
    present = brief.cast if brief.on_stage is None else brief.on_stage
    fmt = brief.reply_format
    rules = say(
        "prompt.rules",
        lang,
        name=brief.name,
        format=say(_key(fmt, "format"), lang),
        own_turn=say(_key(fmt, "own_turn"), lang),
    )
    system = "\n\n".join(
        [
            rules,
            say("prompt.your_character", lang, soul=brief.soul),
            say("prompt.public_stage", lang, context=brief.context),
            say("prompt.on_stage", lang, cast=tuple(present)),
        ]
    )
    tail = _actor_tail(brief, count)
    heading = say("prompt.scene_so_far", lang)
    omitted = say("prompt.omitted", lang, count="{}")  # its size, before a count fills it
    fixed = _fixed_cost(count, system + heading + omitted, "\n".join(tail))
    record = actor_record(
        brief.name,
        brief.cast,
        (brief.turns, brief.stage),
        brief.own_thoughts,
        lang,
        count,
        record_budget(fixed, brief.context_tokens),
    )
    start, shown, own = record.start, record.lines, record.own
    head = heading + ("\n" + say("prompt.omitted", lang, count=start) if start else "")
    parts = (head, *("\n" + line for line in shown), "\n\n" + "\n".join(tail))
    # Part k + 1 holds shown line k: the previous call ended with the part before its own turn.
    marks = (len(shown), own[-1]) if own else (len(shown),)
    user = "".join(parts)
    whispers = (brief.whisper_all, brief.whisper_private, brief.direction)
    whole = not start and _uncut(whispers, brief.context_tokens, count)
    return Prompt(
        ({"role": "system", "content": system}, {"role": "user", "content": user}),
        (Pieces((system,), (0,)), Pieces(parts, marks)),
    ), whole


def repair_messages(
    messages: Sequence[Mapping[str, str]],
    bad_reply: str,
    problems: Sequence[str],
    language: str,
    reply_format: str = "tags",
) -> tuple[dict[str, str], ...]:
    """The one re-ask after a malformed reply, naming exactly what was wrong."""
    ask = say(_key(reply_format, "repair"), language, problems="; ".join(problems))
    return tuple(dict(m) for m in messages) + (
        {"role": "assistant", "content": bad_reply},
        {"role": "user", "content": ask},
    )


@dataclass(frozen=True)
class StageBrief:
    """The stage manager's whole view: public facts only."""

    context: str
    cast: tuple[str, ...]
    turns: tuple[Turn, ...]
    whisper_all: str = ""
    language: str = "zh"
    stage: tuple[StageBlock, ...] = ()  # entrances, exits and events between the turns
    quiet: Mapping[str, int] | None = None  # turns silent while on stage (default: silence)
    model: str = ""  # who reads the prompt: its tokenizer measures the window ("": estimate)
    context_tokens: int = 0  # that model's context size (0: DEFAULT_CONTEXT)
    reply_format: str = "tags"  # or "json" (engine.door.structured)


def stage_manager_prompt(brief: StageBrief) -> Prompt:
    """The stage manager's messages; the user message's pieces are the stage (with the note to
    everyone) and the record's heading, one per line of the record, then the question. The
    cached prefix ends at the record's end (its next call finds it within a few lines)."""
    return _measured(lambda count: _stage_manager_prompt(brief, count), brief.model)


def _stage_manager_prompt(brief: StageBrief, count: tokens.Counter) -> tuple[Prompt, bool]:
    """The stage manager's prompt measured with `count`, and whether nothing had to be cut."""
    lang = brief.language
    quiet = brief.quiet
    if quiet is None:
        quiet = silence(brief.cast, [t.actor for t in brief.turns])
    system = say(_key(brief.reply_format, "sm.system"), lang)
    cast_lines = [say("prompt.sm.silent_for", lang, actor=a, turns=quiet[a]) for a in brief.cast]
    # Silence counts change every turn, so they come after the record (prompt caches hit).
    parts = [say("prompt.sm.stage", lang, context=brief.context)]
    whisper_all = _bounded(brief.whisper_all, brief.context_tokens, count)
    if whisper_all:
        parts.append(say("prompt.sm.note_everyone", lang, note=whisper_all))
    tail = [say("prompt.on_stage", lang, cast="\n".join(cast_lines))]
    last = brief.turns[-1] if brief.turns else None
    since = walked((), brief.turns, brief.stage).since_last_turn()
    happened = [b for b in since if b.kind in (EVENT, OPENING)]
    if happened:  # the scheduler asks "who reacts first" after any event since the last turn
        what = event_text(happened[-1])
        tail.append(say("prompt.sm.just_now", lang, what=what))
    elif last is not None:
        cue = clip_tokens(clean_text(last.cue).split("\n")[0].strip(), RECORD_CAPS["cue"])
        cue_said = quote(cue) if cue else say("prompt.sm.no_cue", lang)
        tail.append(say("prompt.sm.cued", lang, actor=last.actor, cue=cue_said))
    else:
        tail.append(say("prompt.sm.not_started", lang))
    heading = say("prompt.scene_so_far", lang) + "\n"
    omitted = say("prompt.omitted", lang, count="{}")  # its size, before a count fills it
    fixed = _fixed_cost(count, system + "\n\n".join(parts) + heading + omitted, "\n\n".join(tail))
    budget = record_budget(fixed, brief.context_tokens)
    window = stage_record(brief.turns, brief.stage, lang, count, budget)
    start = window.start
    shown = ([say("prompt.omitted", lang, count=start)] if start else []) + window.lines
    record = [line if i == 0 else "\n" + line for i, line in enumerate(shown)]
    pieces = (
        "\n\n".join(parts) + "\n\n" + heading,
        *(record or [say("prompt.sm.nothing_yet", lang)]),
        "\n\n" + "\n\n".join(tail),
    )
    user = "".join(pieces)
    whole = not start and _uncut((brief.whisper_all,), brief.context_tokens, count)
    return Prompt(
        ({"role": "system", "content": system}, {"role": "user", "content": user}),
        (Pieces((system,), (0,)), Pieces(pieces, (len(pieces) - 2,))),
    ), whole


def stage_manager_reask(
    messages: Sequence[Mapping[str, str]],
    answer: str,
    names: Sequence[str],
    language: str,
    reply_format: str = "tags",
) -> tuple[dict[str, str], ...]:
    """The stage manager's one re-ask after naming nobody on stage, listing who may answer."""
    said = answer.strip()[:80]
    ask = say(_key(reply_format, "sm.reask"), language, said=said, names=tuple(names))
    return tuple(dict(m) for m in messages) + (
        {"role": "assistant", "content": answer},
        {"role": "user", "content": ask},
    )


def bio_messages(actor: str, witnessed: str, language: str) -> tuple[dict[str, str], ...]:
    """Ask for a draft of `actor`'s bio from the pages — only what `actor` said, did and
    witnessed there (an imported script's scene: `circus import --draft`)."""
    system = say("prompt.bio.system", language, actor=actor)
    user = say("prompt.bio.user", language, actor=actor, record=witnessed)
    return ({"role": "system", "content": system}, {"role": "user", "content": user})


def summarize_messages(
    actor: str, bio: str, full_history: str, language: str
) -> tuple[dict[str, str], ...]:
    """Ask for the part of a full backstory that `actor` actually knows (seed §6.2)."""
    system = say("prompt.summarize.system", language, actor=actor)
    user = say("prompt.summarize.user", language, actor=actor, bio=bio, history=full_history)
    return ({"role": "system", "content": system}, {"role": "user", "content": user})
