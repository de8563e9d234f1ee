"""The indexed voice signals equal the plain all-pairs ones they replaced, on random takes.

The reference functions below are the report's algorithms before they were indexed (kept here
verbatim): every line compared with every earlier one, every actor's 4-grams with the union of
everyone else's. Takes are drawn from a small vocabulary of phrases, so that lines do repeat,
nearly repeat and share phrasing, and the thresholds are crossed both ways.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.folder.turns import Turn
from engine.harvest.repeats import (
    NEAR_REPEAT_MIN_TOKENS,
    NEAR_REPEAT_PREFILTER,
    NEAR_REPEAT_RATIO,
    DicePrefilter,
    near_repeats,
)
from engine.harvest.report import ReportInput, _grams4, build_report, shared_shares
from engine.harvest.textstats import ngrams, tokens


def reference_near_repeats(turns: Sequence[Turn]) -> list[tuple[Turn, Turn, float]]:
    seen: list[tuple[Turn, list[str], frozenset]] = []
    out = []
    matcher = SequenceMatcher(None, autojunk=False)
    for turn in turns:
        toks = tokens(turn.dialogue)
        if len(toks) < NEAR_REPEAT_MIN_TOKENS:
            continue
        grams = frozenset(ngrams(toks, 2))
        matcher.set_seq2(toks)
        for earlier, etoks, egrams in seen:
            if 2 * len(grams & egrams) < NEAR_REPEAT_PREFILTER * (len(grams) + len(egrams)):
                continue
            matcher.set_seq1(etoks)
            if (ratio := matcher.ratio()) >= NEAR_REPEAT_RATIO:
                out.append((turn, earlier, ratio))
                break
        seen.append((turn, toks, grams))
    return out


def reference_shared_shares(by_actor: Mapping[str, Sequence[str]]) -> dict[str, float | None]:
    grams = {a: _grams4(lines) for a, lines in by_actor.items()}
    out: dict[str, float | None] = {}
    for actor, mine in grams.items():
        others = set().union(*(g for a, g in grams.items() if a != actor))
        out[actor] = len(mine & others) / len(mine) if mine else None
    return out


CAST = ("林小姐", "刑警", "Ruth")
PHRASES = ["你那天晚上在哪裡", "我說過了", "監視器拍到你", "我不記得", "你在說謊", "十一點",
           "I was at home", "you lied to me", "the file", "again", "哈哈哈哈", "對", "no"]  # fmt: skip
line = st.lists(st.sampled_from(PHRASES), max_size=7).map("，".join)
takes = st.lists(st.tuples(st.sampled_from(CAST), line), max_size=60).map(
    lambda said: [Turn(i + 1, actor, "", text, "") for i, (actor, text) in enumerate(said)]
)


@settings(max_examples=300, deadline=None)
@given(takes)
def test_near_repeats_equal_the_all_pairs_search(turns: list[Turn]) -> None:
    assert near_repeats(turns) == reference_near_repeats(turns)


bigram_sets = st.lists(
    st.frozensets(st.tuples(st.sampled_from("abcdef"), st.sampled_from("abc")), min_size=1),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(bigram_sets)
def test_the_dice_prefilter_passes_exactly_the_lines_the_pairwise_test_passes(
    lines: list[frozenset],
) -> None:
    dice = DicePrefilter()
    for i, grams in enumerate(lines):
        expected = {
            j
            for j, theirs in enumerate(lines[:i])
            if 2 * len(grams & theirs) >= NEAR_REPEAT_PREFILTER * (len(grams) + len(theirs))
        }
        passing = dice.passing(set(grams))
        assert {j for j in range(i) if passing >> j & 1} == expected and passing >> i == 0
        dice.index(i, set(grams))


@settings(max_examples=200, deadline=None)
@given(takes)
def test_shared_phrasing_equals_the_union_of_the_others(turns: list[Turn]) -> None:
    by_actor = {a: [t.dialogue for t in turns if t.actor == a] for a in CAST}
    assert shared_shares(by_actor) == reference_shared_shares(by_actor)


def test_a_take_going_round_in_circles_is_found_the_same_way() -> None:
    # long enough that most lines are compared with every earlier one, not via the postings
    turns = [
        Turn(i + 1, CAST[i % 3], "", "，".join(PHRASES[(i * k) % 11] for k in range(1, 6)), "")
        for i in range(300)
    ]
    found = near_repeats(turns)
    assert found == reference_near_repeats(turns) and len(found) > 50
    report = build_report(ReportInput("s", 1, True, turns, [], (), {a: () for a in CAST}, "en"))
    assert f"⚠ {len(found)} lines nearly repeat an earlier line" in report
