"""Who speaks next: director's cue > neglect protection > the actor's cue > stage manager.

Everything here is a pure function of public facts (the cast, who spoke when, the last cue),
so the rules are tested by tables. Only the stage manager's choice needs a model; this module
decides when to ask it and how to read and validate its answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from engine.names import is_everyone
from engine.turns import ANY

_HONORIFICS = (
    "mr.", "mrs.", "ms.", "miss", "dr.", "mr", "mrs", "ms", "dr", "sir", "madam",
    "先生", "女士", "小姐", "太太", "老師", "大人", "警官", "律師", "同學", "san", "さん",
)  # fmt: skip
_STRIP = re.compile(r"[\s@＠「」『』\"'“”‘’()（）\[\]【】<>《》.,，。:：;；!！?？~`*_-]+")


@dataclass(frozen=True)
class Choice:
    """The next speaker, why they were chosen, or that the stage manager must decide."""

    actor: str | None
    reason: str  # director_cue | neglect | cue | self_cue | stage_manager | fallback


def _norm(text: str) -> str:
    return _STRIP.sub("", unicodedata.normalize("NFKC", text)).casefold()


def _is_latin(ch: str) -> bool:
    """A letter or digit of an alphabetic script: such names match only as whole words."""
    return ch.isalnum() and ord(ch) < 0x2E80  # CJK, kana and hangul start at U+2E80


def _spaced(text: str) -> str:
    """NFKC, casefold, and every run of separators as one space (word edges kept)."""
    return " " + _STRIP.sub(" ", unicodedata.normalize("NFKC", text)).casefold().strip() + " "


def _in_words(form: str, text: str) -> bool:
    """True if `form` (spaced) occurs in `text` (spaced) without a Latin letter or digit
    touching either end: "Lin" is not in "Linda", "Rose" not in "Primrose", but "林" is in
    "林太太" (a CJK name needs no spaces around it)."""
    needle = form.strip()
    if not needle:
        return False
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        before, after = text[start - 1 : start], text[end : end + 1]
        if not (
            (_is_latin(needle[0]) and before and _is_latin(before))
            or (_is_latin(needle[-1]) and after and _is_latin(after))
        ):
            return True
        start = text.find(needle, start + 1)
    return False


def cue_candidates(raw: str, cast: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Every cast name a cue as written may mean, best rule first: (ANY,) for an everyone
    word, () for nobody, one name when it is clear, several when it is ambiguous.

    `cast` maps each actor's name to its aliases. Tolerates `@`, brackets, punctuation, case,
    full-width forms and honorifics ("張律師" → 律師 when 律師 is the only match). A name or
    alias in Latin letters is found inside a longer cue only as a whole word.
    """
    text = (raw or "").strip()
    if not text:
        return ()
    key = _norm(text)
    if not key:
        return ()
    if is_everyone(text):  # engine.names.EVERYONE_WORDS: the stage manager decides
        return (ANY,)
    names = {name: (name, *aliases) for name, aliases in cast.items()}
    forms = {name: {_norm(n) for n in ns} - {""} for name, ns in names.items()}
    exact = [name for name, keys in forms.items() if key in keys]
    if exact:
        return tuple(exact)
    stripped = key
    for honorific in _HONORIFICS:
        h = _norm(honorific)
        if stripped.startswith(h) and len(stripped) > len(h):
            stripped = stripped[len(h) :]
        if stripped.endswith(h) and len(stripped) > len(h):
            stripped = stripped[: -len(h)]
    exact = [name for name, keys in forms.items() if stripped in keys]
    if exact:
        return tuple(exact)
    spaced = _spaced(text)
    return tuple(
        name for name, ns in names.items() if any(_in_words(_spaced(n), spaced) for n in ns)
    )


def match_cue(raw: str, cast: Mapping[str, Sequence[str]]) -> str | None:
    """Map a cue as written to a cast name, ANY, or None (empty, nobody, or ambiguous: a
    model's unclear cue goes to the stage manager; a director is asked, see
    `cue_candidates`)."""
    found = cue_candidates(raw, cast)
    return found[0] if len(found) == 1 else None


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


def next_speaker(
    cast: Sequence[str],
    speakers: Sequence[str],
    last_cue: str | None,
    director_cue: str | None = None,
    neglect_turns: int = 3,
) -> Choice:
    """Decide the next speaker without a model where the rules allow it.

    `speakers` lists who spoke each turn so far; `last_cue` is the previous turn's cue
    already matched to the cast (a name, ANY or None). A Choice with actor None means the
    stage manager must decide.
    """
    if director_cue is not None:
        return Choice(director_cue, "director_cue")
    if neglect_turns > 0 and len(cast) > 1 and speakers:
        counts = silence(cast, speakers)
        neglected = [a for a in cast if counts[a] >= neglect_turns and a != speakers[-1]]
        if neglected:
            return Choice(max(neglected, key=lambda a: (counts[a], -cast.index(a))), "neglect")
    if last_cue and last_cue != ANY and last_cue in cast:
        reason = "self_cue" if speakers and last_cue == speakers[-1] else "cue"
        return Choice(last_cue, reason)
    return Choice(None, "stage_manager")


_NEXT = re.compile(r"(?:NEXT|下一位|next speaker)\s*[:：]\s*(.+)", re.I)
_REASON = re.compile(r"(?:REASON|理由|原因)\s*[:：]\s*(.+)", re.I | re.S)


def read_stage_manager(text: str, cast: Mapping[str, Sequence[str]]) -> tuple[str | None, str]:
    """The stage manager's pick (a cast name or None when invalid) and its stated reason."""
    text = (text or "").strip()
    reason_match = _REASON.search(text)
    reason = reason_match.group(1).strip() if reason_match else ""
    next_match = _NEXT.search(text)
    candidate = next_match.group(1).split("\n")[0] if next_match else text.split("\n")[0]
    picked = match_cue(candidate, cast)
    if picked == ANY:
        picked = None
    return picked, reason


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
    """`next_speaker` for a stage whose cast comes and goes (no director's cue here).

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
