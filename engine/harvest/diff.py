"""Two takes compared: the shared opening, the turn where they part, and both continuations.

Pure. Two turns are "the same" when their number, actor, action, line and cue are identical,
two stage blocks (entrances, exits, events) when their number, kind and text are; the shared
opening is the longest run of such items from the start. Without `full` the opening is a count
of its turns and its last item; per take a few numbers (turns, picks, lines and words per actor).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.catalog import lang_of, say
from engine.folder.stage import ENTER, EXIT, LABELS, PRESENT, Item, StageBlock
from engine.folder.turns import Turn
from engine.harvest.report import actor_counts

TakeSide = tuple[int, bool, Sequence[Item], int]  # number, saved, turns and blocks, picks


def number(item: Item) -> str:
    return str(item.number) if isinstance(item, Turn) else f"{item.after}.{item.seq}"


def format_block(block: StageBlock, language: str = "zh") -> str:
    label = LABELS[lang_of(language)][block.kind]
    if block.kind in (ENTER, EXIT):
        return f"[{number(block)}] {label} · {block.actor}"
    body = block.names if block.kind == PRESENT else block.text.split("\n")
    return "\n".join([f"[{number(block)}] {label}"] + [f"    {x}" if x else "" for x in body])


def format_item(item: Item, language: str = "zh") -> str:
    return format_turn(item) if isinstance(item, Turn) else format_block(item, language)


def format_turn(turn: Turn) -> str:
    out = [f"[{turn.number}] {turn.actor}"]
    if turn.action:
        out += [f"    ({line})" if line else "" for line in turn.action.split("\n")]
    if turn.dialogue:
        out += [f"    {line}" if line else "" for line in turn.dialogue.split("\n")]
    if turn.cue:
        out.append(f"    → {turn.cue}")
    return "\n".join(out)


def shared_opening(a: Sequence[Item], b: Sequence[Item]) -> int:
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
        first, last = number(ta[0]), number(ta[shared - 1])
        count = sum(isinstance(x, Turn) for x in ta[:shared])
        key = "shared.one" if count == 1 else "shared.many"
        out.append(t(key, count=count, first=first, last=last))
        shown = ta[:shared] if full else ta[shared - 1 : shared]
        if not full and shared > 1:
            out.append(t("last_shared"))
        out += [format_item(x, language) for x in shown]
    else:
        out.append(t("no_shared"))
    out.append("")
    rest_a, rest_b = ta[shared:], tb[shared:]
    if not rest_a and not rest_b:
        out.append(t("identical"))
    else:
        part = number((rest_a or rest_b)[0])
        out.append(t("part", turn=part))
        for side, rest in ((a, rest_a), (b, rest_b)):
            out += ["", f"## {name(side)}" + t("from_turn", turn=part), ""]
            out += [format_item(x, language) for x in rest] or [t("nothing_more")]
    out += ["", t("numbers"), ""]
    out.append(f"| | {name(a)} | {name(b)} |")
    out.append("|---|---:|---:|")
    turns_a = [x for x in ta if isinstance(x, Turn)]
    turns_b = [x for x in tb if isinstance(x, Turn)]
    out.append(f"| {t('turns')} | {len(turns_a)} | {len(turns_b)} |")
    out.append(f"| {t('picks')} | {a[3]} | {b[3]} |")
    actors = list(dict.fromkeys([x.actor for x in turns_a] + [x.actor for x in turns_b]))
    for actor in actors:
        ca, cb = actor_counts(turns_a, actor), actor_counts(turns_b, actor)
        out.append(
            f"| {actor} {t('lines_words')} | {ca.lines} / {ca.words} | {cb.lines} / {cb.words} |"
        )
    return "\n".join(out) + "\n"
