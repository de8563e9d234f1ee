"""The HELD-OUT reply corpus (tests/fixtures/replies/heldout.yaml), written blind of the reader.

Each case: no secret word from a private part in a public field (action, dialogue, cue): a hard
failure, never xfailed. Then exactness: the public fields equal `expect` (or the reader asks for a
repair when `repair: true`); a case with `known_gap` is xfail(strict=True).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from engine.reply import parse_reply

CORPUS = Path(__file__).parent / "fixtures" / "replies" / "heldout.yaml"
DATA = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
CASES = DATA["cases"]
PUBLIC = ("action", "dialogue", "cue")


def _read(case: dict):
    lang = case["lang"]
    cast = {name: tuple(aliases) for name, aliases in DATA["cast"][lang].items()}
    return parse_reply(case["reply"], speaker=DATA["speaker"][lang], cast=cast)


def _id(case: dict) -> str:
    return f"{case['lang']}:{case['style']}"


def leaks(case: dict, reply) -> list[str]:
    """Secret words found in a public field of `reply`."""
    found = []
    for secret in case.get("secrets") or ():
        for field in PUBLIC:
            if secret.lower() in (getattr(reply, field) or "").lower():
                found.append(f"{secret!r} in {field}")
    return found


def exact(case: dict, reply) -> list[str]:
    """How `reply` differs from what the case means (empty: exactly as meant)."""
    if case.get("repair"):
        return [] if reply.problems else ["no repair asked"]
    misses = []
    if reply.problems:
        misses.append(f"problems {reply.problems}")
    expect = case.get("expect") or {}
    for field in PUBLIC:
        want, got = expect.get(field, "") or "", getattr(reply, field) or ""
        if got != want:
            misses.append(f"{field}: {got!r} != {want!r}")
    if case.get("thought") and case["thought"] not in (reply.thought or ""):
        misses.append(f"thought lacks {case['thought']!r}")
    if case.get("others") and not reply.wrote_for_others:
        misses.append("wrote_for_others not flagged")
    return misses


def test_heldout_size() -> None:
    assert len(CASES) >= 60
    assert sum(1 for c in CASES if c.get("secrets")) >= 25
    assert {c["lang"] for c in CASES} == {"en", "zh"}


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_heldout_no_leak(case: dict) -> None:
    assert leaks(case, _read(case)) == []


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c["known_gap"]))
        if c.get("known_gap")
        else c
        for c in CASES
    ],
    ids=_id,
)
def test_heldout_exact(case: dict) -> None:
    assert exact(case, _read(case)) == []
