"""Lines that nearly repeat an earlier line of the take: the report's search, bit-parallel.

Invariant: the answer is exactly that of comparing every pair of lines (a parity test holds
it): each bitset filter below is a necessary condition of a match, tried before the next, and
difflib's ratio decides last. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from functools import lru_cache

from engine.folder.turns import Turn
from engine.harvest.textstats import ngrams, tokens

Tokenize = Callable[[str], Sequence[str]]  # a line's tokens (textstats.tokens, or a memo of it)
NEAR_REPEAT_RATIO = 0.8  # token-level similarity of two lines
NEAR_REPEAT_MIN_TOKENS = 4
NEAR_REPEAT_PREFILTER = 0.5  # token-bigram overlap below which two lines cannot be near repeats
# The prefilter's 2·shared ≥ ½·(size + other) in integers: 4·shared ≥ size + other, 4 = 1 << 2
# (a test holds DicePrefilter to the comparison itself).
_SHIFT = round(2 / NEAR_REPEAT_PREFILTER).bit_length() - 1


def _counts(bitsets: Iterable[int]) -> list[int]:
    """Bit-sliced counters of how many of `bitsets` hold each line: bit k of a line's count is
    its bit in planes[k]. Bitsets of one weight are added three at a time (a full adder: the
    sum keeps the weight, the carry doubles it) until one is left: about five big-integer
    operations a bitset however many lines carry, where adding them one by one rippled a
    carry through every plane."""
    planes: list[int] = []
    column = list(bitsets)
    while column:
        carries = []
        while len(column) > 2:
            a, b, c = column.pop(), column.pop(), column.pop()
            either = a ^ b
            column.append(either ^ c)
            carries.append((a & b) | (either & c))
        if len(column) == 2:
            a, b = column
            column = [a ^ b]
            carries.append(a & b)
        planes.append(column[0] if column else 0)
        column = [c for c in carries if c]
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


class _Occurrences:
    """A line's tokens as a bitset with one bit per (token, its k-th occurrence), each bit given
    on first need: the popcount of two lines' AND is the size of their multiset intersection,
    difflib's quick_ratio matches. A token's first occurrence, by far the commonest, costs one
    dictionary lookup."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}  # token → the bit of its first occurrence in a line
        self.more: dict[tuple[str, int], int] = {}  # (token, k ≥ 2) → the bit of its k-th
        self.given = 0

    def bits(self, toks: Sequence[str]) -> int:
        first, bits = self.first, 0
        for tok in toks:
            if (mask := first.get(tok)) is None:
                mask = first[tok] = self._new()
            elif bits & mask:  # said again within the line
                mask = self._again(tok, bits)
            bits |= mask
        return bits

    def _again(self, tok: str, bits: int) -> int:
        k = 2
        while True:
            if (mask := self.more.get((tok, k))) is None:
                mask = self.more[tok, k] = self._new()
            if not bits & mask:
                return mask
            k += 1

    def _new(self) -> int:
        self.given += 1
        return 1 << (self.given - 1)


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
    where: dict[str, int] = {}
    get = where.get  # not a defaultdict: three times slower at this
    for k, tok in enumerate(toks):
        where[tok] = get(tok, 0) | 1 << k
    return where


@lru_cache(maxsize=1024)
def _needed(total: int) -> int:
    """The fewest tokens two lines of `total` tokens between them must match for a ratio of
    NEAR_REPEAT_RATIO, by the very comparison the ratio is held to (2·matches / total)."""
    matches = 0
    while 2.0 * matches / total < NEAR_REPEAT_RATIO:
        matches += 1
    return matches


def _lcs_reaches(a: Sequence[str], b: Sequence[str], where: Mapping[str, int], need: int) -> bool:
    """Whether the longest common subsequence of two token lists reaches `need`, bit-parallel
    (Hyyrö), `where` being _positions(b) (built once per line, compared with many): an upper
    bound of difflib's matches, whose blocks are one common subsequence. Every fourth token it
    stops once even matching all the rest of `a` could not reach `need`."""
    full = (1 << len(b)) - 1
    v = full
    for k, tok in enumerate(a, 1):
        if mask := where.get(tok):  # a token `b` lacks leaves the row as it is
            u = v & mask
            v = ((v + u) | (v - u)) & full
        if not k & 3 and len(b) - v.bit_count() + len(a) - k < need:
            return False
    return len(b) - v.bit_count() >= need


def _add(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The bit-sliced sum of two bit-sliced numbers (plane k: every line's bit k), rippled."""
    out, carry = [], 0
    for k in range(max(len(a), len(b))):
        x = a[k] if k < len(a) else 0
        y = b[k] if k < len(b) else 0
        either = x ^ y
        out.append(either ^ carry)
        carry = (x & y) | (carry & either)
    if carry:
        out.append(carry)
    return out


class DicePrefilter:
    """Which earlier lines pass the Dice prefilter with a line, all at once, as a bitset.

    Lines of s and o bigrams sharing `shared` pass iff 4·shared ≥ s + o, i.e. iff
    4·shared + (BIG − o) ≥ s + BIG, BIG a power of two above every o. Each earlier line's
    BIG − o is kept bit-sliced (`spare`); a line's bigrams' bitsets of earlier lines are added
    into bit-sliced counters (every earlier line's shared bigrams at once), shifted by two
    planes (·4), added to `spare` and compared with s + BIG: a few big-integer operations a
    plane, whatever the number of earlier lines."""

    def __init__(self) -> None:
        # bigram → the bitset of earlier lines holding it; a bigram said in one line so far
        # (most of them, in ordinary dialogue) is kept as that line's number instead, so that
        # a 1,000-turn take does not hold thousands of thousand-bit integers of one bit each
        self.holding: dict[tuple[str, ...], int] = {}
        self.once: dict[tuple[str, ...], int] = {}
        self.sizes: dict[int, int] = {}  # bigram-set size → earlier lines (to rebuild `spare`)
        self.big = 1
        self.spare: list[int] = []
        self.indexed = 0  # every earlier line, as a bitset
        self.fewest = 0  # the fewest bigrams of an earlier line

    def passing(self, grams: set, fewest: int = 0) -> int:
        """`fewest`: the fewest bigrams a line the caller will keep has (it drops the others
        after): no line shares more than len(held) bigrams, nor has fewer than that, so a
        line that could not pass with one of them stops here, before any big-integer work."""
        holding, once = self.holding, self.once
        held = [
            h if (h := holding.get(g)) else 1 << once[g] for g in grams if g in holding or g in once
        ]
        if not held or len(held) << _SHIFT < len(grams) + max(fewest, self.fewest):
            return 0
        total = _add([0] * _SHIFT + _counts(held), self.spare)
        return _at_least(total, len(grams) + self.big, self.indexed)

    def index(self, i: int, grams: set) -> None:
        me, holding, once = 1 << i, self.holding, self.once
        for g in grams:
            if g in holding:
                holding[g] |= me
            elif (first := once.pop(g, None)) is not None:
                holding[g] = 1 << first | me
            else:
                once[g] = i
        size = len(grams)
        self.sizes[size] = self.sizes.get(size, 0) | 1 << i
        self.indexed |= 1 << i
        self.fewest = min(self.fewest, size) if self.fewest else size
        if size >= self.big:  # rare: BIG doubles and every line's BIG − o is laid out again
            while size >= self.big:
                self.big <<= 1
            self.spare = []
            for other, lines in self.sizes.items():
                self._lay(self.big - other, lines)
        else:
            self._lay(self.big - size, 1 << i)

    def _lay(self, value: int, lines: int) -> None:
        while len(self.spare) < value.bit_length():
            self.spare.append(0)
        for k in range(value.bit_length()):
            if value >> k & 1:
                self.spare[k] |= lines


def near_repeats(
    turns: Sequence[Turn], tokenize: Tokenize = tokens
) -> list[tuple[Turn, Turn, float]]:
    """(later, earlier, similarity): lines that nearly repeat an earlier line of the take.

    For each line, the first earlier line (in take order) whose token-bigram sets overlap with
    Dice ≥ NEAR_REPEAT_PREFILTER and whose difflib ratio over tokens is ≥ NEAR_REPEAT_RATIO.
    Bit-parallel, so a take's report grows about linearly: the lines passing the Dice test are
    found as one bitset (DicePrefilter), then tried in order, after difflib's cheap upper bounds
    of the ratio (lengths, the multiset of tokens as an AND of bitsets). Every skip is a
    necessary condition of a match, so the result is exactly that of comparing every pair.
    """
    # Each line's tokens are kept (an earlier line's are compared again); its bigram set is
    # built when its turn comes and dropped after: a 1,000-turn take's search holds a
    # half to a fifth of the memory, and more of it stays in the processor's cache.
    lines = [
        (t, toks) for t in turns if len(toks := tokenize(t.dialogue)) >= NEAR_REPEAT_MIN_TOKENS
    ]
    dice = DicePrefilter()
    lengths: dict[int, int] = {}  # token count → bitset of earlier lines of that many tokens
    pairs = _Pairs([toks for _, toks in lines])
    fewest: dict[int, int] = {}  # token count → the fewest bigrams of a line that long
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
        # Only lines of a near length can match (difflib's first bound, applied after): the
        # fewest bigrams among them is a sharper stop for the prefilter than any line's.
        near = [fewest[n] for n in _lengths_near(len(toks)) if n in fewest]
        passing = dice.passing(grams, min(near)) if near else 0
        if passing:
            passing &= _near_in_length(len(toks), lengths)
        found = pairs.first_match(i, _members(passing)) if passing else None
        answer = (lines[found[0]][0], found[1]) if found else None
        if answer:
            out.append((turn, *answer))
        said[key] = (i, answer)
        dice.index(i, grams)
        lengths[len(toks)] = lengths.get(len(toks), 0) | 1 << i
        fewest[len(toks)] = min(fewest.get(len(toks), len(grams)), len(grams))
    return out


class _Pairs:
    """difflib's bounds and ratio for a line and its candidates, cheapest first: the multiset
    of tokens (an AND of bitsets, built once a line is first compared), the longest common
    subsequence (bit-parallel), then the ratio itself."""

    def __init__(self, lines: Sequence[Sequence[str]]) -> None:
        self.lines = lines
        self.multisets = [0] * len(lines)  # 0: not built yet (a line has ≥ 4 tokens)
        self.occurrences = _Occurrences()
        self.matcher = SequenceMatcher(None, autojunk=False)

    def multiset(self, k: int) -> int:
        if not (bits := self.multisets[k]):
            bits = self.multisets[k] = self.occurrences.bits(self.lines[k])
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
            if not _lcs_reaches(theirs, toks, where, _needed(total)):
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
