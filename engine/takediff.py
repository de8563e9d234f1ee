"""Two takes compared: the shared opening, the turn where they part, and both continuations.

Pure. Two turns are "the same" when their number, actor, action, line and cue are identical;
the shared opening is the longest run of such turns from the start. Without `full` the opening
is a count and its last turn; per take a few numbers (turns, picks, lines and words per actor).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.catalog import say
from engine.report import actor_counts
from engine.turns import Turn

TakeSide = tuple[int, bool, Sequence[Turn], int]  # number, saved, turns, picks


def format_turn(turn: Turn) -> str:
    out = [f"[{turn.number}] {turn.actor}"]
    if turn.action:
        out += [f"    ({line})" if line else "" for line in turn.action.split("\n")]
    if turn.dialogue:
        out += [f"    {line}" if line else "" for line in turn.dialogue.split("\n")]
    if turn.cue:
        out.append(f"    → {turn.cue}")
    return "\n".join(out)


def shared_opening(a: Sequence[Turn], b: Sequence[Turn]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def diff_takes(a: TakeSide, b: TakeSide, *, full: bool = False, language: str = "zh") -> str:
    def t(key: str, **values: object) -> str:
        return say(f"diff.{key}", language, **values)

    def name(side: TakeSide) -> str:
        return t("take", take=side[0]) + ("" if side[1] else t("current"))

    ta, tb = list(a[2]), list(b[2])
    shared = shared_opening(ta, tb)
    out = [f"{name(a)} ⇄ {name(b)}", ""]
    if shared:
        first, last = ta[0].number, ta[shared - 1].number
        key = "shared.one" if shared == 1 else "shared.many"
        out.append(t(key, count=shared, first=first, last=last))
        shown = ta[:shared] if full else ta[shared - 1 : shared]
        if not full and shared > 1:
            out.append(t("last_shared"))
        out += [format_turn(x) for x in shown]
    else:
        out.append(t("no_shared"))
    out.append("")
    rest_a, rest_b = ta[shared:], tb[shared:]
    if not rest_a and not rest_b:
        out.append(t("identical"))
    else:
        part = (rest_a or rest_b)[0].number
        out.append(t("part", turn=part))
        for side, rest in ((a, rest_a), (b, rest_b)):
            out += ["", f"## {name(side)}" + t("from_turn", turn=part), ""]
            out += [format_turn(x) for x in rest] or [t("nothing_more")]
    out += ["", t("numbers"), ""]
    out.append(f"| | {name(a)} | {name(b)} |")
    out.append("|---|---:|---:|")
    out.append(f"| {t('turns')} | {len(ta)} | {len(tb)} |")
    out.append(f"| {t('picks')} | {a[3]} | {b[3]} |")
    actors = list(dict.fromkeys([x.actor for x in ta] + [x.actor for x in tb]))
    for actor in actors:
        ca, cb = actor_counts(ta, actor), actor_counts(tb, actor)
        out.append(
            f"| {actor} {t('lines_words')} | {ca.lines} / {ca.words} | {cb.lines} / {cb.words} |"
        )
    return "\n".join(out) + "\n"
