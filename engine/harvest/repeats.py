"""Lines that nearly repeat an earlier line of the take: the report's search, bit-parallel.

Invariant: the answer is exactly that of comparing every pair of lines (a parity test holds
it): each bitset filter below is a necessary condition of a match, tried before the next, and
difflib's ratio decides last. Pure.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from functools import lru_cache

from engine.folder.turns import Turn
from engine.harvest.textstats import ngrams, tokens

Tokenize = Callable[[str], Sequence[str]]  # a line's tokens (textstats.tokens, or a memo of it)
NEAR_REPEAT_RATIO = 0.8  # token-level similarity of two lines
NEAR_REPEAT_MIN_TOKENS = 4
NEAR_REPEAT_PREFILTER = 0.5  # token-bigram overlap below which two lines cannot be near repeats


def _counts(bitsets: Iterable[int]) -> list[int]:
    """Bit-sliced counters of how many of `bitsets` hold each line: bit k of a line's count is
    its bit in planes[k], so adding a bitset is a few big-integer operations, not one per line.
    """
    planes: list[int] = []
    for carry in bitsets:
        for k, plane in enumerate(planes):
            planes[k], carry = plane ^ carry, plane & carry
            if not carry:
                break
        else:
            planes.append(carry)
    return planes


def _at_least(planes: list[int], least: int, among: int) -> int:
    """The lines of `among` whose bit-sliced count is ≥ `least`."""
    if least >= 1 << len(planes):
        return 0
    above, equal = 0, among
    for k in range(len(planes) - 1, -1, -1):
        if least >> k & 1:
            equal &= planes[k]
        else:
            above |= equal & planes[k]
            equal ^= equal & planes[k]  # not `&= ~plane`: a negative int is slower
    return above | equal


@lru_cache(maxsize=4096)
def _least_shared(size: int, other: int) -> int:
    """The fewest shared bigrams that pass the Dice prefilter for sets of these sizes, by the
    very comparison the prefilter makes (so no rounding can differ from it)."""
    shared = max(0, math.floor(NEAR_REPEAT_PREFILTER * (size + other) / 2) - 1)
    while 2 * shared < NEAR_REPEAT_PREFILTER * (size + other):
        shared += 1
    return shared


def _multiset_bits(toks: Sequence[str], bit: dict[tuple[str, int], int]) -> int:
    """A line's tokens as a bitset with one bit per (token, its k-th occurrence): the popcount of
    two lines' AND is the size of their multiset intersection, difflib's quick_ratio matches."""
    seen: dict[str, int] = {}
    bits = 0
    for tok in toks:
        k = seen[tok] = seen.get(tok, 0) + 1
        bits |= 1 << bit.setdefault((tok, k), len(bit))  # each (token, k) once: one bit each
    return bits


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of the longest common subsequence of two token lists, bit-parallel (Hyyrö):
    an upper bound of difflib's matches, whose blocks are one common subsequence."""
    where: dict[str, int] = defaultdict(int)
    for k, tok in enumerate(b):
        where[tok] |= 1 << k
    full = (1 << len(b)) - 1
    v = full
    for tok in a:
        u = v & where.get(tok, 0)
        v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def _dice_passing(
    grams: set, holding: Mapping[tuple[str, ...], int], sizes: Mapping[int, int]
) -> int:
    """The earlier lines whose bigram sets pass the Dice prefilter with `grams`, as a bitset:
    each bigram's bitset of earlier lines is added into bit-sliced counters (every earlier
    line's shared bigrams at once), then compared with the fewest shared bigrams each size of
    set needs. `sizes` maps a bigram-set size to its earlier lines, smallest first."""
    held = [holding[g] for g in grams if g in holding]
    planes = _counts(held)
    found = len(held)  # no earlier line can share more of the line's bigrams than this
    among: dict[int, int] = defaultdict(int)  # fewest shared bigrams → lines of such sizes
    for other, lines in sizes.items():
        shared = _least_shared(len(grams), other)
        if shared > found:
            break  # larger sets need still more
        among[shared] |= lines
    passing = 0
    for shared, lines in among.items():
        passing |= _at_least(planes, shared, lines)
    return passing


def near_repeats(
    turns: Sequence[Turn], tokenize: Tokenize = tokens
) -> list[tuple[Turn, Turn, float]]:
    """(later, earlier, similarity): lines that nearly repeat an earlier line of the take.

    For each line, the first earlier line (in take order) whose token-bigram sets overlap with
    Dice ≥ NEAR_REPEAT_PREFILTER and whose difflib ratio over tokens is ≥ NEAR_REPEAT_RATIO.
    Bit-parallel, so a take's report grows about linearly: the lines passing the Dice test are
    found as one bitset (_dice_passing), then tried in order, after difflib's cheap upper bounds
    of the ratio (lengths, the multiset of tokens as an AND of bitsets). Every skip is a
    necessary condition of a match, so the result is exactly that of comparing every pair.
    """
    # Each line's tokens are kept (an earlier line's are compared again); its bigram set is
    # built when its turn comes and dropped after: a 1,000-turn take's search holds a
    # half to a fifth of the memory, and more of it stays in the processor's cache.
    lines = [
        (t, toks) for t in turns if len(toks := tokenize(t.dialogue)) >= NEAR_REPEAT_MIN_TOKENS
    ]
    holding: dict[tuple[str, ...], int] = defaultdict(int)  # bigram → bitset of earlier lines
    sizes: dict[int, int] = {}  # bigram-set size → bitset of earlier lines, smallest first
    bit: dict[tuple[str, int], int] = {}
    multisets: dict[int, int] = {}  # built only for the lines that get that far
    out = []
    matcher = SequenceMatcher(None, autojunk=False)
    least = NEAR_REPEAT_RATIO
    lengths: dict[int, int] = {}  # token count → bitset of earlier lines of that many tokens
    for i, (turn, toks) in enumerate(lines):
        grams = set(ngrams(toks, 2))
        passing = _dice_passing(grams, holding, sizes) & _near_in_length(len(toks), lengths)
        indexed = False
        while passing:
            j = (passing & -passing).bit_length() - 1
            passing &= passing - 1
            theirs = lines[j][1]
            total = len(toks) + len(theirs)
            if 2.0 * min(len(toks), len(theirs)) / total < least:
                continue
            for k in (i, j):
                if k not in multisets:
                    multisets[k] = _multiset_bits(lines[k][1], bit)
            if 2.0 * (multisets[i] & multisets[j]).bit_count() / total < least:
                continue
            if 2.0 * _lcs(toks, theirs) / total < least:
                continue
            if not indexed:
                matcher.set_seq2(toks)  # indexed once per line, compared with the passing ones
                indexed = True
            matcher.set_seq1(theirs)
            if (ratio := matcher.ratio()) >= least:
                out.append((turn, lines[j][0], ratio))
                break
        for g in grams:
            holding[g] |= 1 << i
        if len(grams) not in sizes:
            sizes = dict(sorted({**sizes, len(grams): 0}.items()))
        sizes[len(grams)] |= 1 << i
        lengths[len(toks)] = lengths.get(len(toks), 0) | 1 << i
    return out


def _near_in_length(size: int, lengths: Mapping[int, int]) -> int:
    """The earlier lines whose token counts pass difflib's first bound with a line of `size`
    tokens (the very test the search makes of each pair), as one bitset: in a take that goes
    in circles most lines pass the bigram test, and this drops them a length at a time."""
    near = 0
    for length, lines in lengths.items():
        if 2.0 * min(size, length) / (size + length) >= NEAR_REPEAT_RATIO:
            near |= lines
    return near
