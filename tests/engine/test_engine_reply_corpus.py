"""The reply corpus (tests/fixtures/replies/corpus.yaml, also bench/bench_replies.py): every
realistic reply style reads as its case says, and no secret from a private part is published."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from engine.reply.read import parse_reply

CORPUS = yaml.safe_load(
    (Path(__file__).parents[1] / "fixtures" / "replies" / "corpus.yaml").read_text(encoding="utf-8")
)
CASES = CORPUS["cases"]


def read(case: dict):
    lang = case["lang"]
    cast = {name: tuple(aliases) for name, aliases in CORPUS["cast"][lang].items()}
    return parse_reply(case["reply"], speaker=CORPUS["speaker"][lang], cast=cast)


def test_the_corpus_is_big_enough_and_covers_both_languages() -> None:
    assert len(CASES) >= 80
    assert {c["lang"] for c in CASES} == {"en", "zh"}
    assert sum(bool(c.get("secrets")) for c in CASES) >= 40
    assert sum(bool(c.get("others")) for c in CASES) >= 10


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{i}-{c['style']}-{c['lang']}" for i, c in enumerate(CASES)]
)
def test_each_reply_reads_as_meant_and_leaks_nothing(case: dict) -> None:
    reply = read(case)
    public = {"action": reply.action, "dialogue": reply.dialogue, "cue": reply.cue}
    for secret in case.get("secrets", []):
        assert secret not in "\n".join(public.values()), f"{secret} was published"
    expected = {f: str(case.get("expect", {}).get(f, "")) for f in public}
    assert public == expected
    assert reply.ok is not case.get("repair", False), reply.problems
    assert reply.wrote_for_others is bool(case.get("others", False))
    if "thought" in case:
        assert case["thought"] in reply.thought


def test_the_share_read_without_repair_is_at_least_95_percent() -> None:
    readable = [c for c in CASES if not c.get("repair")]
    read_ok = sum(read(c).ok for c in readable)
    assert read_ok / len(readable) >= 0.95
