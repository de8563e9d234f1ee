"""Lines that nearly repeat an earlier line of the take: the report's search, bit-parallel.

Invariant: the answer is exactly that of comparing every pair of lines (a parity test holds
it): each bitset filter below is a necessary condition of a match, tried before the next, and
difflib's ratio decides last. Pure.
"""

from __future__ import annotations

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
_QUARTERS = round(2 / NEAR_REPEAT_PREFILTER)  # its Dice test: shared ≥ (size + other) / 4


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


def least_shared(size: int, other: int) -> int:
    """The fewest shared bigrams with which sets of these sizes pass the Dice prefilter,
    2·shared ≥ NEAR_REPEAT_PREFILTER·(size + other): ⌈(size + other) / _QUARTERS⌉ (a test
    holds it to that very comparison; _dice_passing computes it inline)."""
    return (size + other + _QUARTERS - 1) // _QUARTERS


def _multiset_bits(toks: Sequence[str], bit: dict[tuple[str, int], int]) -> int:
    """A line's tokens as a bitset with one bit per (token, its k-th occurrence): the popcount of
    two lines' AND is the size of their multiset intersection, difflib's quick_ratio matches."""
    seen: dict[str, int] = {}
    bits = 0
    for tok in toks:
        k = seen[tok] = seen.get(tok, 0) + 1
        bits |= 1 << bit.setdefault((tok, k), len(bit))  # each (token, k) once: one bit each
    return bits


def _members(bits: int) -> list[int]:
    """The positions of the set bits of `bits`, lowest first (read from its binary digits:
    one C-level scan, not three big-integer operations a member)."""
    digits = bin(bits)[:1:-1]  # reversed, so character k is bit k
    out = []
    k = digits.find("1")
    while k >= 0:
        out.append(k)
        k = digits.find("1", k + 1)
    return out


def _positions(toks: Sequence[str]) -> dict[str, int]:
    """Each token of a line with the bitset of where it stands in it (bit k: token k)."""
    where: dict[str, int] = defaultdict(int)
    for k, tok in enumerate(toks):
        where[tok] |= 1 << k
    return where


def _lcs(a: Sequence[str], b: Sequence[str], where: Mapping[str, int]) -> int:
    """The length of the longest common subsequence of two token lists, bit-parallel (Hyyrö),
    `where` being _positions(b) (built once per line, compared with many): an upper bound of
    difflib's matches, whose blocks are one common subsequence."""
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
    found = len(held)  # no earlier line can share more of the line's bigrams than this
    among: dict[int, int] = defaultdict(int)  # fewest shared bigrams → lines of such sizes
    size, quarters = len(grams), _QUARTERS
    for other, lines in sizes.items():
        shared = (size + other + quarters - 1) // quarters  # least_shared, inline: hot
        if shared > found:
            break  # larger sets need still more
        among[shared] |= lines
    if not among:
        return 0  # too few of its bigrams were ever said before: no counting needed
    planes = _counts(held)
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
    lengths: dict[int, int] = {}  # token count → bitset of earlier lines of that many tokens
    pairs = _Pairs([toks for _, toks in lines])
    out = []
    # A line said word for word before gets that line's answer, or that line itself (a ratio
    # of 1): every test is a function of the two token lists. It is never indexed, for its
    # first saying passes wherever it would and comes first.
    said: dict[tuple[str, ...], tuple[int, tuple[Turn, float] | None]] = {}
    for i, (turn, toks) in enumerate(lines):
        if (before := said.get(key := tuple(toks))) is not None:
            first, answer = before
            out.append((turn, *(answer or (lines[first][0], 1.0))))
            continue
        grams = set(ngrams(toks, 2))
        passing = _dice_passing(grams, holding, sizes)
        if passing:
            passing &= _near_in_length(len(toks), lengths)
        found = pairs.first_match(i, _members(passing)) if passing else None
        answer = (lines[found[0]][0], found[1]) if found else None
        if answer:
            out.append((turn, *answer))
        said[key] = (i, answer)
        for g in grams:
            holding[g] |= 1 << i
        if len(grams) not in sizes:
            sizes = dict(sorted({**sizes, len(grams): 0}.items()))
        sizes[len(grams)] |= 1 << i
        lengths[len(toks)] = lengths.get(len(toks), 0) | 1 << i
    return out


class _Pairs:
    """difflib's bounds and ratio for a line and its candidates, cheapest first: the multiset
    of tokens (an AND of bitsets, built once a line is first compared), the longest common
    subsequence (bit-parallel), then the ratio itself."""

    def __init__(self, lines: Sequence[Sequence[str]]) -> None:
        self.lines = lines
        self.multisets = [0] * len(lines)  # 0: not built yet (a line has ≥ 4 tokens)
        self.bit: dict[tuple[str, int], int] = {}
        self.matcher = SequenceMatcher(None, autojunk=False)

    def multiset(self, k: int) -> int:
        if not (bits := self.multisets[k]):
            bits = self.multisets[k] = _multiset_bits(self.lines[k], self.bit)
        return bits

    def first_match(self, i: int, candidates: Iterable[int]) -> tuple[int, float] | None:
        """The first of `candidates` (earlier lines, in order) that line `i` nearly repeats, and
        the ratio; their lengths already pass difflib's first bound (_near_in_length)."""
        toks, lines, multisets, least = self.lines[i], self.lines, self.multisets, NEAR_REPEAT_RATIO
        mine = self.multiset(i)
        where: dict[str, int] | None = None  # the line's token positions, for its first LCS
        indexed = False
        for j in candidates:
            theirs = lines[j]
            total = len(toks) + len(theirs)
            if 2.0 * (mine & (multisets[j] or self.multiset(j))).bit_count() / total < least:
                continue
            where = where or _positions(toks)
            if 2.0 * _lcs(theirs, toks, where) / total < least:
                continue
            if not indexed:
                self.matcher.set_seq2(toks)  # indexed once per line, compared with the rest
                indexed = True
            self.matcher.set_seq1(theirs)
            if (ratio := self.matcher.ratio()) >= least:
                return j, ratio
        return None


def _near_in_length(size: int, lengths: Mapping[int, int]) -> int:
    """The earlier lines whose token counts pass difflib's first bound with a line of `size`
    tokens (the very test the search makes of each pair), as one bitset: in a take that goes
    in circles most lines pass the bigram test, and this drops them a length at a time."""
    near = 0
    for length in _lengths_near(size):
        near |= lengths.get(length, 0)
    return near


@lru_cache(maxsize=1024)
def _lengths_near(size: int) -> range:
    """The token counts whose lines may nearly repeat a line of `size` tokens: those for which
    2·min / (sum) reaches NEAR_REPEAT_RATIO, a range around `size` (found by that very test)."""
    fits = [
        n for n in range(1, 2 * size + 2) if 2.0 * min(size, n) / (size + n) >= NEAR_REPEAT_RATIO
    ]
    return range(fits[0], fits[-1] + 1) if fits else range(0)
