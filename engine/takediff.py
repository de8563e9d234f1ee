"""Two takes compared: the shared opening, the turn where they part, and both continuations.

Pure. Two turns are "the same" when their number, actor, action, line and cue are identical;
the shared opening is the longest run of such turns from the start. Without `full` the opening
is a count and its last turn; per take a few numbers (turns, picks, lines and words per actor).
"""

from __future__ import annotations

from collections.abc import Sequence

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
    zh = language.lower().startswith("zh")

    def t(en: str, zh_text: str) -> str:
        return zh_text if zh else en

    def name(side: TakeSide) -> str:
        label = t(f"take {side[0]}", f"排演 {side[0]}")
        return label + ("" if side[1] else t(" (current)", "（目前）"))

    ta, tb = list(a[2]), list(b[2])
    shared = shared_opening(ta, tb)
    out = [f"{name(a)} ⇄ {name(b)}", ""]
    if shared:
        first, last = ta[0].number, ta[shared - 1].number
        out.append(
            t(
                f"Shared opening: {shared} turn{'s' if shared != 1 else ''} ({first}–{last}).",
                f"共同開頭：{shared} 輪（第 {first}–{last} 輪）。",
            )
        )
        shown = ta[:shared] if full else ta[shared - 1 : shared]
        if not full and shared > 1:
            out.append(t("The last shared turn:", "最後一個共同的輪次："))
        out += [format_turn(x) for x in shown]
    else:
        out.append(t("No shared opening.", "沒有共同的開頭。"))
    out.append("")
    rest_a, rest_b = ta[shared:], tb[shared:]
    if not rest_a and not rest_b:
        out.append(t("The takes are identical.", "兩次排演完全一樣。"))
    else:
        part = (rest_a or rest_b)[0].number
        out.append(t(f"They part at turn {part}.", f"從第 {part} 輪開始分岔。"))
        for side, rest in ((a, rest_a), (b, rest_b)):
            out += ["", f"## {name(side)}" + t(f" from turn {part}", f"，第 {part} 輪起"), ""]
            out += [format_turn(x) for x in rest] or [t("(nothing more)", "（沒有更多）")]
    out += ["", f"## {t('Numbers', '數字')}", ""]
    out.append(f"| | {name(a)} | {name(b)} |")
    out.append("|---|---:|---:|")
    out.append(f"| {t('turns', '輪數')} | {len(ta)} | {len(tb)} |")
    out.append(f"| {t('picks', '精選')} | {a[3]} | {b[3]} |")
    actors = list(dict.fromkeys([x.actor for x in ta] + [x.actor for x in tb]))
    for actor in actors:
        ca, cb = actor_counts(ta, actor), actor_counts(tb, actor)
        out.append(
            f"| {actor} {t('lines / words', '台詞／字數')} | {ca.lines} / {ca.words} | "
            f"{cb.lines} / {cb.words} |"
        )
    return "\n".join(out) + "\n"
