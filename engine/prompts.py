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

from engine import tokens
from engine.casting import silence
from engine.sanitize import ELLIPSIS, clean_text
from engine.stage import (
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
from engine.turns import Turn, labels_for

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


def is_zh(language: str) -> bool:
    return language.lower().startswith("zh")


@lru_cache(maxsize=65536)
def estimate_tokens(text: str) -> int:
    """A rough size (one token per CJK character, four chars otherwise), for describing text.

    Budgets do not use it: it undercounts most tokenizers (engine.tokens counts for real).
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


def block_line(block: StageBlock, language: str) -> str:
    """A stage block on the public record, as everyone present sees it."""
    zh = is_zh(language)
    at = f"[{block.after}.{block.seq}]"
    if block.kind == ENTER:
        return f"{at} （{block.actor} 進場）" if zh else f"{at} ({block.actor} enters)"
    if block.kind == EXIT:
        return f"{at} （{block.actor} 退場）" if zh else f"{at} ({block.actor} exits)"
    if block.kind in (EVENT, OPENING):
        label = {EVENT: ("事件", "Event"), OPENING: ("開場", "Opening")}[block.kind]
        return (
            f"{at} 〔{label[0]}〕 {_event_text(block)}"
            if zh
            else f"{at} [{label[1]}] {_event_text(block)}"
        )
    names = "、".join(block.names) if zh else ", ".join(block.names)
    return f"{at} （在場：{names}）" if zh else f"{at} (On stage: {names})"


def _event_text(block: StageBlock) -> str:
    """An event's text as one quoted line (contract §7): it cannot forge prompt structure."""
    return quote(clip_tokens(block.text, RECORD_CAPS["dialogue"]))


def record_lines(items: Sequence[Item], language: str) -> list[str]:
    """The whole public record, one entry per turn or stage block (the stage manager's view)."""
    return [
        public_line(i, language) if isinstance(i, Turn) else block_line(i, language) for i in items
    ]


def _missed_line(turns: int, language: str) -> str:
    return (
        f"（你不在場的時候，過了 {turns} 輪。）"
        if is_zh(language)
        else f"(While you were out, {turns} turns happened.)"
    )


def witnessed_lines(brief: ActorBrief) -> list[str]:
    """The record as `brief.name` witnessed it: what happened while it was on stage (with
    its own thoughts), and for a stretch it missed only how many turns passed — never what."""
    lines: list[str] = []
    missed = 0
    me = brief.name
    for item, before, after in walk(brief.cast, merge(brief.turns, brief.stage)):
        if me not in before and me not in after:
            missed += isinstance(item, Turn)
            continue
        if missed:
            lines.append(_missed_line(missed, brief.language))
            missed = 0
        if isinstance(item, StageBlock):
            lines.append(block_line(item, brief.language))
            continue
        text = public_line(item, brief.language)
        thought = brief.own_thoughts.get(item.number) if item.actor == me else None
        if thought:
            text += "\n" + _thought_line(thought, brief.language)
        lines.append(text)
    if missed:
        lines.append(_missed_line(missed, brief.language))
    return lines


def _thought_line(thought: str, language: str) -> str:
    label = "（你當時的內心）" if is_zh(language) else "(your private thought then)"
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


def _fixed_cost(count: tokens.Counter, stable: str, tail: str) -> int:
    """The prompt's own text, with the tail at least TAIL_RESERVE: the record's budget then
    moves only when the soul, the stage or a long whisper changes, not from turn to turn."""
    return count(stable) + max(count(tail), TAIL_RESERVE)


_RULES = {
    "zh": (
        "你是即興劇排演中的演員，只扮演「{name}」。留在角色裡，不要跳出角色評論，不要替別人說話或行動。\n"
        "每次輪到你，依序輸出四個標籤，標籤裡只寫角色的內容：\n"
        "<thought>…</thought> 內心獨白，必填；只有你自己和導演看得到\n"
        "<action>…</action> 看得見的動作；動作與台詞至少要有一個，沉默也是動作\n"
        "<dialogue>…</dialogue> 說出口的台詞，可省略\n"
        "<cue>…</cue> 下一位說話者的名字；誰都可以就寫 ANY；可留空\n"
        "別人看不到你的內心、你的角色設定和導演私下給你的話。\n"
        "戲的紀錄裡，每個人的動作和台詞都放在引號裡（換行寫成 \\n）；你回覆時照常寫在標籤裡，不用加引號。"
    ),
    "en": (
        "You are an actor in an improvised rehearsal and you play {name} only. Stay in "
        "character; never comment on the scene or speak or act for anyone else.\n"
        "Each time it is your turn, write these four tags in order, with only the character's "
        "words inside them:\n"
        "<thought>…</thought> inner monologue, required; only you and the director see it\n"
        "<action>…</action> what you visibly do; give an action or a line, silence is an action\n"
        "<dialogue>…</dialogue> what you say aloud, optional\n"
        "<cue>…</cue> who should speak next, by name; ANY for anyone; may be empty\n"
        "Nobody else sees your thoughts, your character notes or the director's private words.\n"
        "In the record, what each person did and said is shown in quotes (line breaks as \\n); "
        "write your own turn in the tags as usual, without quotes."
    ),
}


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


def actor_messages(brief: ActorBrief) -> tuple[dict[str, str], ...]:
    zh = is_zh(brief.language)
    lang = "zh" if zh else "en"
    present = brief.cast if brief.on_stage is None else brief.on_stage
    cast = "、".join(present) if zh else ", ".join(present)
    system = "\n\n".join(
        [
            _RULES[lang].format(name=brief.name),
            ("# 你的角色（只有你知道）\n" if zh else "# Your character (only you know this)\n")
            + brief.soul,
            ("# 舞台（所有人都知道的事實）\n" if zh else "# The stage (public facts)\n")
            + brief.context,
            (f"# 在場角色\n{cast}" if zh else f"# On stage\n{cast}"),
        ]
    )
    count = tokens.counter(brief.model)
    lines = witnessed_lines(brief)
    costs = [count(text) + 1 for text in lines]  # + its newline

    tail: list[str] = []
    if brief.whisper_all:
        tail.append(
            ("導演對全體的耳語：" if zh else "Director's note to everyone: ") + brief.whisper_all
        )
    if brief.whisper_private:
        tail.append(
            ("導演只對你說：" if zh else "Director's note to you only: ") + brief.whisper_private
        )
    if brief.direction:
        tail.append(("導演指示你這一輪：" if zh else "Direction for this turn: ") + brief.direction)
    if brief.neglected:
        tail.append(
            "你已經沉默很久了，可以選擇說話或繼續保持沉默。"
            if zh
            else "You have been silent a long time; you may speak or stay silent."
        )
    tail.append(
        f"輪到你了，{brief.name}。請用四個標籤回覆。"
        if zh
        else f"It is your turn, {brief.name}. Reply with the four tags."
    )
    heading = "# 到目前為止的戲" if zh else "# The scene so far"
    omitted = "（前 {} 輪已省略）" if zh else "(the first {} turns are omitted)"
    fixed = _fixed_cost(count, system + heading + omitted, "\n".join(tail))
    start = window_start(costs, record_budget(fixed, brief.context_tokens))
    record = [heading]
    if start:
        record.append(omitted.format(start))
    record.extend(lines[start:])
    user = "\n".join(record) + "\n\n" + "\n".join(tail)
    return ({"role": "system", "content": system}, {"role": "user", "content": user})


def repair_messages(
    messages: Sequence[Mapping[str, str]], bad_reply: str, problems: Sequence[str], language: str
) -> tuple[dict[str, str], ...]:
    """The one re-ask after a malformed reply, naming exactly what was wrong."""
    zh = is_zh(language)
    listed = "; ".join(problems)
    ask = (
        f"你的回覆格式有問題：{listed}。請重新回覆，只用 <thought>、<action>、<dialogue>、<cue> 四個標籤。"
        if zh
        else f"Your reply had a problem: {listed}. Reply again using only the tags "
        "<thought>, <action>, <dialogue> and <cue>."
    )
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


def stage_manager_messages(brief: StageBrief) -> tuple[dict[str, str], ...]:
    zh = is_zh(brief.language)
    speakers = [t.actor for t in brief.turns]
    quiet = silence(brief.cast, speakers) if brief.quiet is None else brief.quiet
    system = (
        "你是排演的舞台監督。你只決定下一位由誰接話——誰接最自然。你不寫台詞，不做戲劇判斷。"
        "只回答：\nNEXT: 名字\nREASON: 一句理由"
        if zh
        else "You are the rehearsal's stage manager. You only decide who picks up next — who "
        "would most naturally answer. You never write lines and make no dramatic judgements. "
        "Answer only:\nNEXT: name\nREASON: one sentence"
    )
    count = tokens.counter(brief.model)
    items = merge(brief.turns, brief.stage)
    lines = record_lines(items, brief.language)
    cast_lines = [
        (f"- {a}（已 {quiet[a]} 輪沒說話）" if zh else f"- {a} (silent for {quiet[a]} turns)")
        for a in brief.cast
    ]
    # Silence counts change every turn, so they come after the record (prompt caches hit).
    parts = [("# 舞台\n" if zh else "# The stage\n") + brief.context]
    if brief.whisper_all:
        parts.append(
            ("# 導演對全體的耳語\n" if zh else "# Director's note to everyone\n")
            + brief.whisper_all
        )
    tail = [("# 在場角色\n" if zh else "# On stage\n") + "\n".join(cast_lines)]
    last = brief.turns[-1] if brief.turns else None
    happened = [b for b in since_last_turn(items) if b.kind in (EVENT, OPENING)]
    if happened:  # the scheduler asks "who reacts first" after any event since the last turn
        what = _event_text(happened[-1])
        tail.append(
            f"剛剛發生：{what}\n誰先反應？" if zh else f"Just now: {what}\nWho reacts first?"
        )
    elif last is not None:
        cue = clip_tokens(clean_text(last.cue).split("\n")[0].strip(), RECORD_CAPS["cue"])
        cue_said = quote(cue) if cue else ("（空白）" if zh else "(nobody)")
        tail.append(
            f"{last.actor} 把球丟給 {cue_said}。下一位是誰？"
            if zh
            else f"{last.actor} cued {cue_said}. Who speaks next?"
        )
    else:
        tail.append(
            "戲還沒開始。誰先開口？" if zh else "The scene has not started. Who speaks first?"
        )
    heading = "# 到目前為止的戲\n" if zh else "# The scene so far\n"
    omitted = "（前 {} 輪已省略）" if zh else "(the first {} turns are omitted)"
    fixed = _fixed_cost(count, system + "\n\n".join(parts) + heading + omitted, "\n\n".join(tail))
    start = window_start(
        [count(line) + 1 for line in lines], record_budget(fixed, brief.context_tokens)
    )
    shown = ([omitted.format(start)] if start else []) + lines[start:]
    parts.append(heading + ("\n".join(shown) or ("（尚未開始）" if zh else "(nothing yet)")))
    parts.extend(tail)
    return ({"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)})


def stage_manager_reask(
    messages: Sequence[Mapping[str, str]], answer: str, names: Sequence[str], language: str
) -> tuple[dict[str, str], ...]:
    """The stage manager's one re-ask after naming nobody on stage, listing who may answer."""
    said = answer.strip()[:80]
    ask = (
        f"「{said}」不是在場角色。只能從這些名字選一個：{'、'.join(names)}。回答 NEXT: 名字"
        if is_zh(language)
        else f"“{said}” is not on stage. Pick exactly one of: {', '.join(names)}. Answer NEXT: name"
    )
    return tuple(dict(m) for m in messages) + (
        {"role": "assistant", "content": answer},
        {"role": "user", "content": ask},
    )


def summarize_messages(
    actor: str, bio: str, full_history: str, language: str
) -> tuple[dict[str, str], ...]:
    """Ask for the part of a full backstory that `actor` actually knows (seed §6.2)."""
    zh = is_zh(language)
    system = (
        f"你幫編劇整理角色「{actor}」的前期劇本。從導演寫的完整前情中，只挑出{actor}親身經歷、親眼看見或"
        f"被告知的事，用{actor}的視角寫成一段。{actor}不知道的事一律不寫，也不要暗示。"
        if zh
        else f"You help a screenwriter prepare {actor}'s prior story. From the director's full "
        f"backstory, keep only what {actor} lived through, saw or was told, written from "
        f"{actor}'s point of view. Leave out, and do not hint at, anything {actor} does not know."
    )
    user = (
        f"# {actor} 的角色小傳\n{bio}\n\n# 完整前情（全知視角）\n{full_history}\n\n請寫出{actor}所知道的前期劇本。"
        if zh
        else f"# {actor}'s character\n{bio}\n\n# Full backstory (omniscient)\n{full_history}\n\n"
        f"Write the prior story as {actor} knows it."
    )
    return ({"role": "system", "content": system}, {"role": "user", "content": user})
