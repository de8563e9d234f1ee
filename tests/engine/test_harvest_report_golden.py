"""The take report is byte-for-byte what it was before its voice signals were made faster.

The goldens in tests/fixtures/reports/ were captured from the report code before that work, on
the takes bench/bench_harvest.py times (its three kinds of take, 300 and 1,000 turns, in both
languages); any change to what a report says must be a change to these files, made on purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.bench_harvest import CAST, KINDS
from engine.harvest.report import ReportInput, build_report

GOLDENS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


@pytest.mark.parametrize(
    ("kind", "turns", "language"),
    [
        ("words", 1000, "zh"),
        ("circles", 1000, "zh"),
        ("prose", 1000, "zh"),
        ("circles", 300, "en"),
        ("words", 300, "en"),
    ],
)
def test_the_report_of_a_bench_take_is_its_golden(kind: str, turns: int, language: str) -> None:
    take = KINDS[kind](turns)
    rows = [{"turn": t.number, "role": t.actor, "model": "m", "take": 1} for t in take]
    data = ReportInput("bench", 1, True, take, rows, (), {a: () for a in CAST}, language)
    golden = (GOLDENS / f"{kind}-{turns}-{language}.md").read_bytes().decode("utf-8")
    assert build_report(data) == golden
