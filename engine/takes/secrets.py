"""The secrets ledger: when each secret a writer marked (`secrets:` in a soul) came out in a take,
and every place it was seen where it should not have been. Pure functions.

Matching (`mentions`): both texts are NFKC-folded (full-width Ｂｒｉｂｅ → bribe, ＡＢＣ１２ →
abc12), case-folded, and every punctuation mark or symbol becomes a space; then each CJK
character is one token (Chinese is matched as characters: 收了錢 in 「她收了、錢」 too) and
each Latin word is one token cut to a light stem (bribe / bribed / bribes / bribing → brib;
diary / diaries → diari; running / run → run). A secret is mentioned when its tokens appear
in a row. Irregular forms (stole / stolen) and synonyms are not matched: a ledger says what was
said, not what was meant.

Surfaced: the first turn whose public line or action mentions the secret, whoever said it.
Breaches: another actor's line, action or thought mentioning it before it surfaced (a model
guessed — the writer judges), and a prompt of another actor holding it where nothing that actor
may see does (a wall broke — with Circus's walls always zero; `prompt_breaches`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from engine.folder.turns import Turn

_CJK = r"[\u2e80-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]"


@cache
def _cjk() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a CJK character, the splitter around one): compiled on first use, for a class this
    large costs milliseconds, and kept (re's own cache may drop it in a long-lived bot)."""
    return re.compile(_CJK), re.compile(f"({_CJK})")


_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(" " if unicodedata.category(ch)[0] in "PSZC" else ch for ch in text)


def stem(word: str) -> str:
    """A light English stem: plural, past and -ing endings off, a final e/y folded."""
    if len(word) <= 3 or not word.isascii():
        return word
    if word.endswith(("ies", "ied")):
        word = word[:-3] + "i"
    else:
        for suffix in ("ing", "ed", "es", "s"):
            if suffix == "s" and word.endswith("ss"):
                break
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]  # running → runn → run
    if len(word) > 3 and word[-1] == "e":
        word = word[:-1]
    if len(word) > 3 and word[-1] == "y":
        word = word[:-1] + "i"
    return word


@lru_cache(maxsize=4096)
def tokens(text: str) -> tuple[str, ...]:
    """The matching tokens of `text`: CJK characters one by one, other words stemmed."""
    return _tokens(text)


def _tokens(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for chunk in _fold(text).split():
        cjk, around = _cjk()
        for piece in around.split(chunk):
            if not piece:
                continue
            if cjk.fullmatch(piece):
                out.append(piece)
            else:
                out += [stem(w) for w in _WORD.findall(piece)]
    return tuple(out)


def mentions(text: str, secret: str) -> bool:
    """True if `text` says `secret` (module docstring: how loosely): its tokens in a row."""
    want = _in_a_row(secret)
    if not want or not text:
        return False
    return want in _in_a_row(text)


@lru_cache(maxsize=64)  # a prompt is asked about each secret in turn: kept that long
def _in_a_row(text: str) -> str:
    """`text`'s tokens joined by a control character, and one before and after ("" for none).
    Tokens never hold one (_fold made them spaces), so "these tokens in a row" is a substring
    search, at C speed, rather than a comparison at every token of a long prompt. A line
    break is a boundary nothing folds across (NFKC composes nothing with it), so a text's
    tokens are its lines' tokens in order: a prompt's lines, most of them in every prompt of
    a take, are each tokenized once."""
    rows = [row for row in map(_line_in_a_row, text.split("\n")) if row]
    return "\x00" + "\x00".join(rows) + "\x00" if rows else ""


@lru_cache(maxsize=16384)
def _line_in_a_row(line: str) -> str:
    return "\x00".join(_tokens(line))


@dataclass(frozen=True)
class Breach:
    turn: int
    actor: str  # whose line, action, thought or prompt
    where: str  # line | action | thought | prompt


@dataclass(frozen=True)
class SecretEntry:
    owner: str
    secret: str
    surfaced: Turn | None  # the turn that first said it in public
    field: str = ""  # line | action
    before: Turn | None = None  # the turn before it: what got it out
    breaches: tuple[Breach, ...] = ()


def _said(turn: Turn, secret: str) -> str:
    if mentions(turn.dialogue, secret):
        return "line"
    if mentions(turn.action, secret):
        return "action"
    return ""


def entry(
    owner: str, secret: str, turns: Sequence[Turn], thoughts: Mapping[str, Mapping[int, str]]
) -> SecretEntry:
    """One secret's row of the ledger over one take's turns and every actor's thoughts."""
    at = next(((i, f) for i, t in enumerate(turns) if (f := _said(t, secret))), None)
    limit = turns[at[0]].number if at else None
    breaches: list[Breach] = []
    for turn in turns:  # up to the surfacing turn: another actor saying it first is a guess
        if limit is not None and turn.number > limit:
            break
        field = _said(turn, secret) if turn.actor != owner else ""
        if field:
            breaches.append(Breach(turn.number, turn.actor, field))
    for actor, own in thoughts.items():
        if actor == owner:
            continue
        for number, thought in own.items():
            if (limit is None or number < limit) and mentions(thought, secret):
                breaches.append(Breach(number, actor, "thought"))
    breaches.sort(key=lambda b: (b.turn, b.actor, b.where))
    if at is None:
        return SecretEntry(owner, secret, None, breaches=tuple(breaches))
    index, field = at
    before = turns[index - 1] if index else None
    return SecretEntry(owner, secret, turns[index], field, before, tuple(breaches))


def ledger(
    secrets: Mapping[str, Sequence[str]],
    turns: Sequence[Turn],
    thoughts: Mapping[str, Mapping[int, str]],
) -> tuple[SecretEntry, ...]:
    """Every marked secret of every actor (cast order, then as written) over one take."""
    return tuple(
        entry(owner, secret, turns, thoughts) for owner, mine in secrets.items() for secret in mine
    )


@dataclass(frozen=True)
class SeenPrompt:
    """One prompt an actor was sent (or would be, rebuilt from the take), with every text that
    actor may see at that turn: its own soul, the public context and record it witnessed, its
    own thoughts and the whispers meant for it."""

    actor: str
    turn: int
    text: str
    allowed: tuple[str, ...]


def prompt_breaches(
    secrets: Mapping[str, Sequence[str]], prompts: Iterable[SeenPrompt]
) -> dict[tuple[str, str], tuple[Breach, ...]]:
    """(owner, secret) → each prompt of another actor that holds it where none of what that
    actor may see does: a wall broke. Empty when the walls hold."""
    found: dict[tuple[str, str], list[Breach]] = {}
    for prompt in prompts:
        for owner, mine in secrets.items():
            if owner == prompt.actor:
                continue
            for secret in mine:
                if mentions(prompt.text, secret) and not any(
                    mentions(text, secret) for text in prompt.allowed
                ):
                    found.setdefault((owner, secret), []).append(
                        Breach(prompt.turn, prompt.actor, "prompt")
                    )
    return {key: tuple(value) for key, value in found.items()}


def with_prompt_breaches(
    entries: Sequence[SecretEntry], found: Mapping[tuple[str, str], Sequence[Breach]]
) -> tuple[SecretEntry, ...]:
    """The ledger with the prompt audit's breaches added to each secret's own."""
    out = []
    for e in entries:
        extra = tuple(found.get((e.owner, e.secret), ()))
        breaches = tuple(sorted(e.breaches + extra, key=lambda b: (b.turn, b.actor, b.where)))
        out.append(SecretEntry(e.owner, e.secret, e.surfaced, e.field, e.before, breaches))
    return tuple(out)
