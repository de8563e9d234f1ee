"""Reply-reading benchmark: how many real-world reply styles are read without a repair call.

Reads every reply of the corpus in tests/fixtures/replies/corpus.yaml (the styles hosted models
drift into, in English and Chinese, with adversarial ones: a secret behind each kind of private
marker, a line written for another character, a forged director's note) with
engine.reply.read.parse_reply, as engine.turn.performance does, and prints a markdown table, overall and
per style:

- read without repair: replies the reader took as a whole turn, of those meant to be readable;
- published as meant: the public fields (action, dialogue, cue) equal the expected ones;
- leaks: replies where a secret word from a private part appears in a public field (must be 0);
- wrote for others: replies flagged for a line written for another cast member, of those that
  hold one;

then a second table: milliseconds to read runaway replies of MAX_REPLY_CHARS characters (the
shapes that make a careless parser quadratic), by the actor reader and the stage manager's.

    python bench/bench_replies.py
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.reply.read import MAX_REPLY_CHARS, Reply, parse_reply  # noqa: E402
from engine.turn.casting import read_stage_manager  # noqa: E402

REPLIES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "replies"
CORPUS = REPLIES / "corpus.yaml"
# Written blind of the reader's code by another hand: the honest measure of unseen styles.
HELDOUT = REPLIES / "heldout.yaml"


@dataclass(frozen=True)
class Verdict:
    style: str
    readable: bool  # the corpus says it should be read without a repair
    read: bool  # the reader read it without a repair
    as_meant: bool  # public fields equal the expected ones, and the repair need is as expected
    leaked: bool
    others: bool  # the corpus says it holds a line for another cast member
    flagged: bool  # the reader flagged it (wrote_for_others)


def load(path: Path = CORPUS) -> tuple[dict, list[dict]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data, data["cases"]


def read(data: dict, case: dict) -> Reply:
    lang = case["lang"]
    cast = {name: tuple(aliases) for name, aliases in data["cast"][lang].items()}
    return parse_reply(case["reply"], speaker=data["speaker"][lang], cast=cast)


def public(reply: Reply) -> dict[str, str]:
    return {"action": reply.action, "dialogue": reply.dialogue, "cue": reply.cue}


def judge(data: dict, case: dict) -> Verdict:
    reply = read(data, case)
    expected = {f: str(case.get("expect", {}).get(f, "")) for f in ("action", "dialogue", "cue")}
    readable = not case.get("repair", False)
    said = "\n".join(public(reply).values())
    return Verdict(
        style=case["style"],
        readable=readable,
        read=reply.ok,
        as_meant=public(reply) == expected and reply.ok == readable,
        leaked=any(secret in said for secret in case.get("secrets", [])),
        others=bool(case.get("others", False)),
        flagged=reply.wrote_for_others,
    )


def _share(part: int, whole: int) -> str:
    return "—" if whole == 0 else f"{100 * part / whole:.0f}% ({part}/{whole})"


def row(label: str, verdicts: list[Verdict]) -> str:
    readable = [v for v in verdicts if v.readable]
    others = [v for v in verdicts if v.others]
    return (
        f"| {label} | {len(verdicts)} | {_share(sum(v.read for v in readable), len(readable))} | "
        f"{_share(sum(v.as_meant for v in verdicts), len(verdicts))} | "
        f"{sum(v.leaked for v in verdicts)} | {_share(sum(v.flagged for v in others), len(others))} |"
    )


N = MAX_REPLY_CHARS
RUNAWAY = {
    "40k blank lines": "\n" * N,
    "40k label lines": "Thought: x\n" * (N // 11),
    "4k opening tags": "<dialogue>" * (N // 10),
    "40k braces": "{" * N,
    "unterminated JSON strings": '{"a": "' * (N // 7),
    "a 10k-item JSON list": '{"dialogue": [' + '"a",' * (N // 4) + "]}",
    "40k open brackets": "(" * N,
    "40k asterisks": "*" * N,
    "40k name prefixes": "Alice:" * (N // 6),
    "quotes over 13k blank lines": 'Dialogue: "' + '"\n\n' * (N // 3),
    "a Final: mark in 3k open fields": "<cue>\nFinal:" * (N // 12),
    "a 1,500-character line": "<thought>t</thought><dialogue>" + "I told you. " * 125,
    "4k thinking stars": "<thought>t</thought><dialogue>" + ". *thinks " * (N // 10),
    "13k open brackets before a word": "<thought>t</thought><dialogue>" + "(x " * (N // 3),
}


def _ms(read, text: str) -> float:
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        read(text)
        runs.append(1000 * (time.perf_counter() - start))
    return statistics.median(runs)


def runaway_table(data: dict) -> list[str]:
    cast = {name: tuple(aliases) for name, aliases in data["cast"]["en"].items()}
    out = ["| runaway reply | actor reader (ms) | stage manager reader (ms) |", "|---|---:|---:|"]
    for name, text in RUNAWAY.items():
        actor = _ms(lambda t: parse_reply(t, speaker="Alice", cast=cast), text)
        out.append(
            f"| {name} | {actor:.0f} | {_ms(lambda t: read_stage_manager(t, cast), text):.0f} |"
        )
    return out


def main() -> None:
    data, cases = load()
    verdicts = [judge(data, case) for case in cases]
    by_style: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        by_style[verdict.style].append(verdict)
    print(
        "| style | replies | read without repair | published as meant | leaks | wrote for others flagged |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    print(row("**all**", verdicts))
    held_data, held_cases = load(HELDOUT)
    held = [judge(held_data, case) for case in held_cases]
    print(row("**held out (written blind)**", held))
    for style, group in by_style.items():
        print(row(style, group))
    print()
    print("\n".join(runaway_table(data)))
    missed = [(c, v) for c, v in zip(cases, verdicts, strict=True) if not v.as_meant or v.leaked]
    for case, _ in missed:
        print(f"\nnot as meant ({case['style']}, {case['lang']}): {case['reply'][:80]!r}")
        print(f"  read: {public(read(data, case))}")


if __name__ == "__main__":
    main()
