"""Who speaks next: director's cue > neglect protection > the actor's cue > stage manager.

Everything here is a pure function of public facts (the cast, who spoke when, the last cue),
so the rules are tested by tables. Only the stage manager's choice needs a model; this module
decides when to ask it and how to read and validate its answer.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from engine.folder.turns import ANY
from engine.reply.cue import match_cue
from engine.reply.json_form import parse
from engine.reply.private import split_private
from engine.vocabulary import TurnReason


@dataclass(frozen=True)
class Choice:
    """The next speaker, why they were chosen, or that the stage manager must decide."""

    actor: str | None
    reason: TurnReason


def silence(cast: Sequence[str], speakers: Sequence[str]) -> dict[str, int]:
    """Turns since each actor last spoke (never spoke: every turn so far)."""
    counts = {name: len(speakers) for name in cast}
    for age, speaker in enumerate(reversed(speakers)):
        if speaker in counts and counts[speaker] == len(speakers):
            counts[speaker] = age
    return counts


def longest_silent(cast: Sequence[str], speakers: Sequence[str]) -> str:
    """The actor silent longest who did not just speak (ties: cast order)."""
    counts = silence(cast, speakers)
    last = speakers[-1] if speakers else None
    candidates = [a for a in cast if a != last] or list(cast)
    return max(candidates, key=lambda a: (counts[a], -cast.index(a)))


# The stage manager's pick, as models write it: a `NEXT:` label (bold, a heading, Chinese), a
# JSON object, a name in bold, or a sentence naming who should speak.
_NEXT = re.compile(
    r"(?:^|\n)[ \t>*_#-]*(?:next(?:\s+speaker)?|pick|choice|下一位|下一個|下一个|接話|接话)"
    r"[ \t*_]*(?:is[ \t]*)?(?:[:：][ \t*_]*(.+)|\n+[ \t*_]*(.+))",
    re.I,
)
_REASON = re.compile(
    r"(?:^|\n)[ \t>*_#-]*(?:REASON|why|理由|原因)[ \t*_]*[:：][ \t*_]*(.+)", re.I | re.S
)
_BOLD = re.compile(r"\*\*([^*\n]{1,64})\*\*|__([^_\n]{1,64})__")
_NEXT_KEYS = {"next", "nextspeaker", "speaker", "pick", "choice", "actor", "name", "下一位"}
_REASON_KEYS = {"reason", "why", "because", "理由", "原因"}
# Words around a name that say "this one speaks next", in the sentences models write.
_AFTER = re.compile(
    r"\W{0,3}(?:should|would|could|must|needs? to|ought|is best|is next|speaks?|goes|answers?|"
    r"responds?|repl(?:y|ies)|takes? the floor|next|應該|应该|接|回答|回應|回应|發言|发言|說|说|來|来)",
    re.I,
)
_BEFORE = re.compile(
    r"(?:next (?:speaker )?(?:is|should be)|let|pick|choose|go with|over to|turn to|由|讓|让|請|请|"
    r"輪到|轮到|選|选|交給|交给|是)\W{0,3}$",
    re.I,
)


def _json_pick(text: str) -> tuple[str, str] | None:
    pos = text.find("{")
    for _ in range(10):
        if pos < 0:
            return None
        parsed = parse(text, pos)
        if parsed is not None and isinstance(parsed[0], dict):
            keys = {re.sub(r"[\W_]+", "", str(k)).casefold(): v for k, v in parsed[0].items()}
            pick = next(
                (v for k, v in keys.items() if k in _NEXT_KEYS and isinstance(v, str)), None
            )
            if pick is not None:
                why = next(
                    (v for k, v in keys.items() if k in _REASON_KEYS and isinstance(v, str)), ""
                )
                return pick, why.strip()
        pos = text.find("{", pos + 1)
    return None


def _named(text: str, cast: Mapping[str, Sequence[str]]) -> str | None:
    """The one cast member a sentence says should speak next (None when it is not clear)."""
    forms = sorted(
        ((form, name) for name, aliases in cast.items() for form in (name, *aliases) if form),
        key=lambda f: -len(f[0]),
    )
    seen: dict[str, int] = {}
    taken: list[tuple[int, int]] = []
    for form, name in forms:
        edge = r"(?<![A-Za-z])" if form[:1].isascii() else ""
        tail = r"(?![A-Za-z])" if form[-1:].isascii() else ""
        for m in re.finditer(edge + re.escape(form) + tail, text, re.I):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue  # part of a longer name already counted ("林小姐" holds "林")
            taken.append((m.start(), m.end()))
            score = bool(_AFTER.match(text, m.end())) + bool(_BEFORE.search(text[: m.start()]))
            seen[name] = max(seen.get(name, 0), score)
    if len(seen) == 1:
        return next(iter(seen))
    best = max(seen.values(), default=0)
    top = [name for name, score in seen.items() if score == best]
    return top[0] if best > 0 and len(top) == 1 else None


def read_stage_manager(text: str, cast: Mapping[str, Sequence[str]]) -> tuple[str | None, str]:
    """The stage manager's pick (a cast name or None when invalid) and its stated reason.

    Reads `NEXT:`/`REASON:` labels in any markdown, a JSON object (`next`, `reason`), a name in
    bold, or a sentence that names one cast member to speak. Private reasoning (`<think>`) is
    not read for names.
    """
    text, _ = split_private((text or "").strip())
    text = text.strip()
    reason_match = _REASON.search(text)
    reason = reason_match.group(1).strip() if reason_match else ""
    found = _json_pick(text)
    next_match = _NEXT.search(text) if found is None else None
    if found is not None:  # an explicit answer is the only candidate
        candidates, reason = [found[0]], found[1] or reason
    elif next_match is not None:
        candidates = [(next_match.group(1) or next_match.group(2)).split("\n")[0]]
    else:
        candidates = [text.split("\n")[0], *(a or b for a, b in _BOLD.findall(text))]
    for candidate in candidates:
        picked = match_cue(candidate, cast)
        if picked is not None:
            return (None if picked == ANY else picked), reason
    if found is not None or next_match is not None:
        return None, reason  # it named someone who cannot answer: ask again, do not guess
    body = text[: reason_match.start()] if reason_match and reason_match.start() else text
    return _named(body, cast), reason


def next_on_stage(
    on_stage: Sequence[str],
    quiet: Mapping[str, int],
    last_speaker: str | None,
    last_cue: str | None,
    neglect_turns: int = 3,
    *,
    after_event: bool = False,
    played: Collection[str] = (),
) -> Choice:
    """Who speaks next by the scene's own rules, on a stage whose cast comes and goes (the
    director's cue is the run's forced first turn, decided before this).

    Only actors on stage are candidates: a cue to someone off stage is a cue to nobody.
    After a stage event the stage manager picks who reacts first. Neglect protection counts
    only turns an actor spent on stage (`quiet`), and never hands the ball to an actor a
    person plays (the nudge is a prompt line; a person needs no nudge).
    """
    if after_event:
        return Choice(None, "stage_manager")
    if neglect_turns > 0 and len(on_stage) > 1 and last_speaker is not None:
        neglected = [
            a
            for a in on_stage
            if quiet.get(a, 0) >= neglect_turns and a != last_speaker and a not in played
        ]
        if neglected:
            order = list(on_stage)
            return Choice(max(neglected, key=lambda a: (quiet[a], -order.index(a))), "neglect")
    if last_cue and last_cue != ANY and last_cue in on_stage:
        return Choice(last_cue, "self_cue" if last_cue == last_speaker else "cue")
    return Choice(None, "stage_manager")


def stage_manager_candidates(
    on_stage: Sequence[str],
    last_speaker: str | None,
    exclude: str | None = None,
    *,
    after_event: bool = False,
    last_played: bool = False,
) -> list[str]:
    """Whom the stage manager may pick: those on stage, minus the actor whose model just
    failed and the actor who just threw the ball open — always barred after a person's line
    (seed 001's exclude guardrail), but free to react after a stage event."""
    barred = {exclude}
    if last_played or (not after_event and (len(on_stage) > 2 or exclude is None)):
        barred.add(last_speaker)
    # Nobody else can answer: the ball stays (and a run waits for the person, if played).
    return (
        [a for a in on_stage if a not in barred]
        or [a for a in on_stage if a != exclude]
        or list(on_stage)
    )
