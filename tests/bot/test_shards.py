"""bot.shards as a spec: which shard ids an operator's text names, which servers a process
owns, how the operator's logs name its shards, and how IDENTIFYs are paced by Discord's
session start limit. Every refusal is a CircusError whose sentence (in both catalogs) quotes
the text the operator typed."""

from __future__ import annotations

import asyncio
import types

import pytest

import bot.shards as shards_module
from bot.shards import (
    IDENTIFY_SECONDS,
    MAX_SHARDS,
    IdentifyPacer,
    ShardPlan,
    identify_delay,
    parse_shard_ids,
    ranges_text,
    shard_of,
    shard_plan,
)
from engine import CircusError

# ----------------------------------------------------------------------------- parse_shard_ids

IDS = [
    ("0-3", (0, 1, 2, 3)),
    ("5", (5,)),
    ("0", (0,)),
    ("0,2,5-7", (0, 2, 5, 6, 7)),
    (" 0 , 3-4 ", (0, 3, 4)),
    ("0-3,2-5", (0, 1, 2, 3, 4, 5)),  # overlapping ranges: each shard once
    ("7,1,4", (1, 4, 7)),  # any order: sorted
    ("3,3,3", (3,)),
    ("4-4", (4,)),
    ("65535", (65535,)),  # the last shard MAX_SHARDS allows
]


@pytest.mark.parametrize("text, expected", IDS)
def test_parse_shard_ids(text, expected):
    assert parse_shard_ids(text) == expected


BAD_IDS = ["3-1", "-1", "a-b", "", "1-", "70000", "65536", "0,,1", "0,", "1-2-3", "x", "0-3;5"]


@pytest.mark.parametrize("text", BAD_IDS)
def test_parse_shard_ids_refuses(text):
    with pytest.raises(CircusError) as err:
        parse_shard_ids(text)
    assert err.value.message_key == "error.shards.bad"
    assert err.value.values == {"text": text}


def test_a_long_bad_text_is_quoted_short():
    text = "0-3," + "z" * 100
    with pytest.raises(CircusError) as err:
        parse_shard_ids(text)
    assert err.value.values["text"] == text[:40]


# ----------------------------------------------------------------------------- shard_plan


def test_no_settings_is_one_process_owning_every_server():
    plan = shard_plan(None, None)
    assert plan == ShardPlan()
    assert plan.ids is None and plan.count is None
    assert all(plan.owns(g) for g in (0, 1, 175928847299117063, 2**63 - 1))
    assert plan.label == "all"


@pytest.mark.parametrize(
    "count, ids",
    [("1", (0,)), ("4", (0, 1, 2, 3)), (" 3 ", (0, 1, 2))],
)
def test_a_count_alone_connects_every_shard(count, ids):
    plan = shard_plan(None, count)
    assert plan == ShardPlan(ids, len(ids))


def test_the_largest_count_is_allowed():
    plan = shard_plan(None, str(MAX_SHARDS))
    assert plan.count == MAX_SHARDS and plan.ids == tuple(range(MAX_SHARDS))


PLANS = [
    ("0-3", "16", ShardPlan((0, 1, 2, 3), 16)),
    ("5", "6", ShardPlan((5,), 6)),
    ("0,2,5-7", "8", ShardPlan((0, 2, 5, 6, 7), 8)),
    (" 0 , 3-4 ", "5", ShardPlan((0, 3, 4), 5)),
]


@pytest.mark.parametrize("shards, count, expected", PLANS)
def test_shard_plan(shards, count, expected):
    assert shard_plan(shards, count) == expected


REFUSED = [
    # (shards, count, key, values)
    ("0-3", None, "error.shards.no_count", {"shards": "0-3"}),
    (None, "0", "error.shards.bad_count", {"text": "0"}),
    (None, "x", "error.shards.bad_count", {"text": "x"}),
    (None, "99999999", "error.shards.bad_count", {"text": "99999999"}),
    (None, "65537", "error.shards.bad_count", {"text": "65537"}),
    (None, "-4", "error.shards.bad_count", {"text": "-4"}),
    (None, "", "error.shards.bad_count", {"text": ""}),
    ("0-3", "0", "error.shards.bad_count", {"text": "0"}),
    ("0-3", "x", "error.shards.bad_count", {"text": "x"}),
    ("3-1", "16", "error.shards.bad", {"text": "3-1"}),
    ("3-1", None, "error.shards.bad", {"text": "3-1"}),  # a typo is named before the count
    ("0-4", "4", "error.shards.past_count", {"shards": "0-4", "count": 4, "last": 3}),
    ("16", "16", "error.shards.past_count", {"shards": "16", "count": 16, "last": 15}),
    ("0,9", "2", "error.shards.past_count", {"shards": "0,9", "count": 2, "last": 1}),
]


@pytest.mark.parametrize("shards, count, key, values", REFUSED)
def test_shard_plan_refuses(shards, count, key, values):
    with pytest.raises(CircusError) as err:
        shard_plan(shards, count)
    assert err.value.message_key == key
    assert err.value.values == values


# ----------------------------------------------------------------------------- the refusals, read

# (shards, count, what the sentence must name) in both catalogs
SAID = [
    ("3-1", "16", ["'3-1'"]),
    ("a-b", None, ["'a-b'"]),
    ("0-3", None, ["0-3", "--shard-count"]),
    (None, "x", ["'x'", "65536"]),
    (None, "99999999", ["'99999999'"]),
    ("0-4", "4", ["0-4", "4", "0", "3"]),
]


@pytest.mark.parametrize("shards, count, names", SAID)
def test_every_refusal_names_the_bad_text_in_both_languages(shards, count, names):
    with pytest.raises(CircusError) as err:
        shard_plan(shards, count)
    en, zh = str(err.value), err.value.in_language("zh")
    assert en != zh
    assert "{" not in en and "{" not in zh  # every placeholder filled
    for text in (en, zh):
        for name in names:
            assert name in text, (name, text)


def test_the_english_sentences_say_what_to_type():
    def said(shards, count):
        with pytest.raises(CircusError) as err:
            shard_plan(shards, count)
        return str(err.value)

    assert said("3-1", "16") == (
        "CIRCUS_SHARDS / --shards must be shard numbers and ranges such as 0-3 or 0,2,5-7, "
        "not '3-1'."
    )
    assert said(None, "0") == (
        "CIRCUS_SHARD_COUNT / --shard-count must be a whole number from 1 to 65536, not '0'."
    )
    assert said("0-4", "4") == (
        "--shards 0-4 goes past the shard count 4: shards are numbered 0 to 3."
    )
    assert "add --shard-count N (or CIRCUS_SHARD_COUNT)" in said("0-3", None)


# ----------------------------------------------------------------------------- owns / shard_of

# Real-looking server ids (Discord snowflakes) and the shard Discord's formula gives each,
# (id >> 22) % count, worked out by hand from id >> 22 (milliseconds since Discord's epoch).
SNOWFLAKES = [
    # (guild id, id >> 22, {count: shard})
    (175928847299117063, 41944705796, {1: 0, 2: 0, 4: 0, 16: 4, 100: 96}),
    (81384788765712384, 19403645698, {1: 0, 2: 0, 4: 2, 16: 2, 100: 98}),
    (1046825418375397446, 249582628816, {1: 0, 2: 0, 4: 0, 16: 0, 100: 16}),
    (613425648685547541, 146252071544, {1: 0, 2: 0, 4: 0, 16: 8, 100: 44}),
    (1234567890123456789, 294343922167, {1: 0, 2: 1, 4: 3, 16: 7, 100: 67}),
]


@pytest.mark.parametrize("guild, millis, shard_by_count", SNOWFLAKES)
def test_shard_of_is_discords_formula(guild, millis, shard_by_count):
    assert guild >> 22 == millis
    for count, shard in shard_by_count.items():
        assert shard_of(guild, count) == shard == millis % count


@pytest.mark.parametrize("guild, _millis, shard_by_count", SNOWFLAKES)
@pytest.mark.parametrize(
    "plan",
    [
        ShardPlan((0, 1, 2, 3), 16),
        ShardPlan((4, 8), 16),
        ShardPlan((7,), 16),
        ShardPlan((0, 1), 4),
        ShardPlan((2, 3), 4),
        ShardPlan((0,), 1),
        ShardPlan(tuple(range(50, 100)), 100),
    ],
    ids=lambda p: p.label,
)
def test_a_plan_owns_exactly_the_servers_of_its_shards(plan, guild, _millis, shard_by_count):
    assert plan.owns(guild) == (shard_by_count[plan.count] in plan.ids)


def test_the_processes_of_one_count_own_every_server_once():
    processes = [shard_plan(text, "16") for text in ("0-3", "4-7", "8-11", "12-15")]
    for guild, _millis, _shards in SNOWFLAKES:
        assert sum(p.owns(guild) for p in processes) == 1
    other = [shard_plan(text, "4") for text in ("0-1", "2,3")]
    for guild in range(0, 2**30, 2**22 - 1):  # ids whose shard walks through every bucket
        assert [p.owns(guild) for p in other].count(True) == 1


def test_a_plan_without_a_count_owns_everything():
    assert ShardPlan((0,), None).owns(1234567890123456789)


# ----------------------------------------------------------------------------- label / ranges


@pytest.mark.parametrize(
    "plan, label",
    [
        (ShardPlan(), "all"),
        (ShardPlan((0, 1, 2, 3), 16), "0-3 of 16"),
        (ShardPlan((5,), 6), "5 of 6"),
        (ShardPlan((0, 2, 5, 6, 7), 8), "0,2,5-7 of 8"),
        (ShardPlan((0, 1, 2, 3, 8), 16), "0-3,8 of 16"),
        (ShardPlan((0, 1), 2), "0-1 of 2"),
    ],
)
def test_label(plan, label):
    assert plan.label == label


RANGES = [
    ((0,), "0"),
    ((0, 1), "0-1"),
    ((0, 1, 2, 3), "0-3"),
    ((0, 1, 2, 3, 8), "0-3,8"),
    ((0, 2, 5, 6, 7), "0,2,5-7"),
    ((1, 3, 5), "1,3,5"),
    ((9, 10, 12, 13, 14, 20), "9-10,12-14,20"),
    ((65535,), "65535"),
]


@pytest.mark.parametrize("ids, text", RANGES)
def test_ranges_text_round_trips_with_parse_shard_ids(ids, text):
    assert ranges_text(ids) == text
    assert parse_shard_ids(text) == ids


@pytest.mark.parametrize("text", [t for t, _ in IDS])
def test_any_accepted_text_reads_back_the_same_from_its_ranges(text):
    ids = parse_shard_ids(text)
    assert parse_shard_ids(ranges_text(ids)) == ids


# ----------------------------------------------------------------------------- identify pacing

T = 1000.0  # a monotonic "now"

DELAYS = [
    # (shard, max_concurrency, last: bucket -> when it identified, now, delay)
    (0, 1, {}, T, 0.0),  # nobody identified yet
    (1, 1, {0: T}, T, 5.0),  # one bucket: shard 1 waits for shard 0's 5 s
    (1, 1, {0: T}, T + 2, 3.0),
    (1, 1, {0: T}, T + 5, 0.0),
    (1, 1, {0: T}, T + 60, 0.0),  # long ago: never a negative delay
    (1, 2, {0: T}, T, 0.0),  # two buckets: shard 1 is bucket 1, free
    (2, 2, {0: T}, T, 5.0),  # shard 2 shares bucket 0 with shard 0
    (3, 2, {0: T}, T, 0.0),
    (3, 2, {0: T, 1: T - 1}, T, 4.0),
    (17, 16, {0: T, 1: T}, T + 1.5, 3.5),  # 17 % 16 = bucket 1
    (16, 16, {1: T}, T, 0.0),  # 16 % 16 = bucket 0
    (5, 0, {0: T}, T, 5.0),  # a max_concurrency of 0 counts as 1
    (5, 1, {0: T + 5}, T, 10.0),  # a slot already reserved 5 s ahead
]


@pytest.mark.parametrize("shard, concurrency, last, now, delay", DELAYS)
def test_identify_delay(shard, concurrency, last, now, delay):
    assert identify_delay(shard, concurrency, dict(last), now) == pytest.approx(delay)


def test_a_bucket_allows_one_identify_per_five_seconds():
    assert IDENTIFY_SECONDS == 5.0


class Clock:
    """A monotonic clock and an asyncio.sleep for bot.shards alone: sleeping moves the clock
    (or, when `gate` is set, waits for the test to open it) and is recorded."""

    def __init__(self) -> None:
        self.now = T
        self.slept: list[float] = []
        self.gate: asyncio.Event | None = None
        self.sleeping = asyncio.Event()

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.sleeping.set()
        if self.gate is not None:
            await self.gate.wait()
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    # Only bot.shards sees the fake: the event loop keeps the real time and the real sleep.
    monkeypatch.setattr(shards_module, "time", types.SimpleNamespace(monotonic=fake.monotonic))
    monkeypatch.setattr(shards_module, "asyncio", types.SimpleNamespace(sleep=fake.sleep))
    return fake


async def test_shards_of_different_buckets_identify_at_once(clock):
    pacer = IdentifyPacer(max_concurrency=2)
    await pacer.wait(0)
    await pacer.wait(1)
    assert clock.slept == []
    assert clock.now == T


async def test_shards_of_one_bucket_identify_five_seconds_apart(clock):
    pacer = IdentifyPacer(max_concurrency=1)
    for shard in range(3):
        await pacer.wait(shard)
    assert clock.slept == [5.0, 5.0]
    assert clock.now == T + 10


async def test_four_shards_over_two_buckets_take_two_rounds(clock):
    pacer = IdentifyPacer(max_concurrency=2)
    for shard in range(4):
        await pacer.wait(shard)
    assert clock.slept == [5.0]  # shard 2 waits for bucket 0; shard 3's bucket 1 has waited
    assert clock.now == T + 5


async def test_shards_started_together_each_wait_their_own_bucket(clock):
    clock.gate = asyncio.Event()
    pacer = IdentifyPacer(max_concurrency=1)
    waits = [asyncio.create_task(pacer.wait(shard)) for shard in range(3)]
    for _ in range(100):  # let every task reach its sleep (a bounded number of loop turns)
        await asyncio.sleep(0)
    assert clock.slept == [5.0, 10.0]  # both sleeping at once, neither behind the other
    clock.gate.set()
    await asyncio.gather(*waits)
    # each reserves the next free slot of bucket 0: 0 s, 5 s, 10 s after the first
    assert clock.slept == [5.0, 10.0]


async def test_a_shard_waiting_for_its_bucket_does_not_hold_up_another_bucket(clock):
    clock.gate = asyncio.Event()  # shard 2's sleep lasts until the test opens the gate
    pacer = IdentifyPacer(max_concurrency=2)
    await pacer.wait(0)
    waiting = asyncio.create_task(pacer.wait(2))  # bucket 0 again: 5 s
    await clock.sleeping.wait()
    # bucket 1 is free: shard 1 identifies while shard 2 still sleeps. (The timeout only
    # keeps a regression from hanging the run; passing never waits for it.)
    await asyncio.wait_for(pacer.wait(1), timeout=10)
    assert not waiting.done()
    assert clock.slept == [5.0]
    clock.gate.set()
    await waiting
