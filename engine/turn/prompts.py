"""What each model is told. The walls between roles are enforced here and nowhere else.

An actor's prompt holds its own soul, the public context, the public record with *its own*
thoughts interleaved, whispers for everyone and for it, and a one-off direction. The stage
manager's prompt holds only public text. The unchanging part comes first and the record grows
append-only, so providers' prompt caches hit; long scenes drop the oldest turns rarely and in
one large block (see window_start), counted in the reading model's own tokens, so a prompt
never outgrows that model's context. The record cannot be forged: what anyone said is `quote`d
(one JSON string per field, on its turn's one line), so no line an actor writes can pose as a
turn, a private thought or a director's note in another prompt. Pure functions of the brief.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from engine.catalog import say
from engine.door import tokens
from engine.door.caching import Pieces
from engine.folder.sanitize import ELLIPSIS, clean_text
from engine.folder.stage import (
    ENTER,
    EVENT,
    EXIT,
    OPENING,
    Item,
    StageBlock,
    merge,
    since_last_turn,
    walk,
)
from engine.folder.turns import Turn, labels_for
from engine.folder.whispers import fit_whisper, whisper_budget
from engine.turn.casting import silence

# The record may grow to HISTORY_BUDGET tokens of the reading model (≈ 100 turns of a Chinese
# scene in o200k tokens, far past a 5-minute one; less where the model's context is smaller);
# the turn that would pass it drops the oldest turns down to WINDOW_KEEP of it in one block. So
# the prompt's start changes about once per 60 turns on a hosted model, and every other prompt
# of an actor begins with all of its previous one (providers' prompt caches and the embedded
# model's saved state reuse it). Measured in bench/bench_prompts.py.
HISTORY_BUDGET = 6000
WINDOW_KEEP = 0.4
DEFAULT_CONTEXT = 8192  # tokens, for a model whose context size nobody stated
REPLY_RESERVE = 512  # context tokens left for the reply
TAIL_RESERVE = 384  # context tokens set aside for whispers and the turn's direction
CHAT_OVERHEAD = 32  # chat-template tokens around the messages (role markers)


@lru_cache(maxsize=65536)
def estimate_tokens(text: str) -> int:
    """A rough size (one token per CJK character, four chars otherwise), for describing text.

    Budgets do not use it: it undercounts most tokenizers (engine.door.tokens counts for real).
    """
    wide = sum(1 for ch in text if ord(ch) > 0x2E7F)
    return wide + (len(text) - wide + 3) // 4


# What one turn may contribute to a prompt, in estimated tokens per field, so one huge turn
# (a 100 KB reply, a long paste into transcript.md) never pushes every other turn out of the
# bounded window: a full turn with its thought stays within about a third of HISTORY_BUDGET.
RECORD_CAPS = {"action": 150, "dialogue": 450, "cue": 20, "thought": 300}


def clip_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` whose estimate fits `budget` tokens (marked if cut)."""
    if estimate_tokens(text) <= budget:
        return text
    used, end = 0.0, 0
    while end < len(text) and used + (1 if ord(text[end]) > 0x2E7F else 0.25) <= budget - 1:
        used += 1 if ord(text[end]) > 0x2E7F else 0.25
        end += 1
    return text[:end].rstrip() + ELLIPSIS


def quote(text: str) -> str:
    """What someone said, as one double-quoted, escaped line (contract §7: reuse it).

    Line breaks become `\\n`, quotes and backslashes are escaped, invisible controls are gone,
    so nothing inside can end the quote, start a line, or pose as the prompt's own structure.
    """
    return json.dumps(clean_text(text), ensure_ascii=False)


@lru_cache(maxsize=65536)
def public_line(turn: Turn, language: str) -> str:
    """One turn of the public record as every role sees it: always exactly one line."""
    labels = labels_for(language)
    parts = [f"[{turn.number}] {turn.actor}:"]
    if turn.action:
        parts.append(
            f"({labels['action']}) " + quote(clip_tokens(turn.action, RECORD_CAPS["action"]))
        )
    if turn.dialogue:
        parts.append(quote(clip_tokens(turn.dialogue, RECORD_CAPS["dialogue"])))
    cue = clean_text(turn.cue).split("\n")[0].strip()
    if cue:
        parts.append("→ " + quote(clip_tokens(cue, RECORD_CAPS["cue"])))
    return " ".join(parts)


@lru_cache(maxsize=65536)
def block_line(block: StageBlock, language: str) -> str:
    """A stage block on the public record, as everyone present sees it."""
    at = f"[{block.after}.{block.seq}]"
    if block.kind == ENTER:
        return say("prompt.enters", language, at=at, actor=block.actor)
    if block.kind == EXIT:
        return say("prompt.exits", language, at=at, actor=block.actor)
    if block.kind in (EVENT, OPENING):
        return say(f"prompt.{block.kind}", language, at=at, text=_event_text(block))
    return say("prompt.present", language, at=at, names=tuple(block.names))


def _event_text(block: StageBlock) -> str:
    """An event's text as one quoted line (contract §7): it cannot forge prompt structure."""
    return quote(clip_tokens(block.text, RECORD_CAPS["dialogue"]))


def record_lines(items: Sequence[Item], language: str) -> list[str]:
    """The whole public record, one entry per turn or stage block (the stage manager's view)."""
    return [
        public_line(i, language) if isinstance(i, Turn) else block_line(i, language) for i in items
    ]


def _missed_line(turns: int, language: str) -> str:
    return say("prompt.missed", language, turns=turns)


def _witnessed(brief: ActorBrief) -> list[tuple[str, bool]]:
    """The record as `brief.name` witnessed it, each line with whether it is one of its own
    turns: what happened while it was on stage (with its own thoughts), and for a stretch it
    missed only how many turns passed — never what."""
    lines: list[tuple[str, bool]] = []
    missed = 0
    me = brief.name
    for item, before, after in walk(brief.cast, merge(brief.turns, brief.stage)):
        if me not in before and me not in after:
            missed += isinstance(item, Turn)
            continue
        if missed:
            lines.append((_missed_line(missed, brief.language), False))
            missed = 0
        if isinstance(item, StageBlock):
            lines.append((block_line(item, brief.language), False))
            continue
        text = public_line(item, brief.language)
        thought = brief.own_thoughts.get(item.number) if item.actor == me else None
        if thought:
            text += "\n" + _thought_line(thought, brief.language)
        lines.append((text, item.actor == me))
    if missed:
        lines.append((_missed_line(missed, brief.language), False))
    return lines


def _thought_line(thought: str, language: str) -> str:
    label = say("prompt.thought_then", language)
    return f"    {label} {quote(clip_tokens(thought, RECORD_CAPS['thought']))}"


def window_start(
    costs: Sequence[int], budget: int = HISTORY_BUDGET, keep: float = WINDOW_KEEP
) -> int:
    """Index of the first turn shown; the turns from there on cost at most `budget`.

    The record grows turn by turn; a turn that takes it past `budget` drops the oldest turns
    down to `keep` × budget, in one block. A pure function of the costs, so the start of
    consecutive prompts stays put between those rare trims.
    """
    low = budget * keep
    start = total = 0
    for i, cost in enumerate(costs):
        total += cost
        if total > budget:
            while start <= i and total > low:
                total -= costs[start]
                start += 1
    return start


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


def actor_prompt(brief: ActorBrief) -> Prompt:
    """An actor's messages. The user message's pieces are the record's heading, one per line of
    the record, then the turn's tail; the cached prefix may end after the system message, where
    this actor's previous call ended (just before its own last turn), and at the record's end
    (where its next call will find this one's)."""
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
    count = tokens.counter(brief.model)
    witnessed = _witnessed(brief)
    lines = [text for text, _own in witnessed]
    costs = [count(text) + 1 for text in lines]  # + its newline

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
    heading = say("prompt.scene_so_far", lang)
    omitted = say("prompt.omitted", lang, count="{}")  # its size, before a count fills it
    fixed = _fixed_cost(count, system + heading + omitted, "\n".join(tail))
    start = window_start(costs, record_budget(fixed, brief.context_tokens))
    head = heading + ("\n" + say("prompt.omitted", lang, count=start) if start else "")
    shown = lines[start:]
    parts = (head, *("\n" + line for line in shown), "\n\n" + "\n".join(tail))
    own = [i for i, (_text, mine) in enumerate(witnessed[start:]) if mine]
    # Part k + 1 holds shown line k: the previous call ended with the part before its own turn.
    marks = (len(shown), own[-1]) if own else (len(shown),)
    user = "".join(parts)
    return Prompt(
        ({"role": "system", "content": system}, {"role": "user", "content": user}),
        (Pieces((system,), (0,)), Pieces(parts, marks)),
    )


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
    lang = brief.language
    speakers = [t.actor for t in brief.turns]
    quiet = silence(brief.cast, speakers) if brief.quiet is None else brief.quiet
    system = say(_key(brief.reply_format, "sm.system"), lang)
    count = tokens.counter(brief.model)
    items = merge(brief.turns, brief.stage)
    lines = record_lines(items, brief.language)
    cast_lines = [say("prompt.sm.silent_for", lang, actor=a, turns=quiet[a]) for a in brief.cast]
    # Silence counts change every turn, so they come after the record (prompt caches hit).
    parts = [say("prompt.sm.stage", lang, context=brief.context)]
    whisper_all = _bounded(brief.whisper_all, brief.context_tokens, count)
    if whisper_all:
        parts.append(say("prompt.sm.note_everyone", lang, note=whisper_all))
    tail = [say("prompt.on_stage", lang, cast="\n".join(cast_lines))]
    last = brief.turns[-1] if brief.turns else None
    happened = [b for b in since_last_turn(items) if b.kind in (EVENT, OPENING)]
    if happened:  # the scheduler asks "who reacts first" after any event since the last turn
        what = _event_text(happened[-1])
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
    start = window_start(
        [count(line) + 1 for line in lines], record_budget(fixed, brief.context_tokens)
    )
    shown = ([say("prompt.omitted", lang, count=start)] if start else []) + lines[start:]
    record = [line if i == 0 else "\n" + line for i, line in enumerate(shown)]
    pieces = (
        "\n\n".join(parts) + "\n\n" + heading,
        *(record or [say("prompt.sm.nothing_yet", lang)]),
        "\n\n" + "\n\n".join(tail),
    )
    user = "".join(pieces)
    return Prompt(
        ({"role": "system", "content": system}, {"role": "user", "content": user}),
        (Pieces((system,), (0,)), Pieces(pieces, (len(pieces) - 2,))),
    )


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


def summarize_messages(
    actor: str, bio: str, full_history: str, language: str
) -> tuple[dict[str, str], ...]:
    """Ask for the part of a full backstory that `actor` actually knows (seed §6.2)."""
    system = say("prompt.summarize.system", language, actor=actor)
    user = say("prompt.summarize.user", language, actor=actor, bio=bio, history=full_history)
    return ({"role": "system", "content": system}, {"role": "user", "content": user})
