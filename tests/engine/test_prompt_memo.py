"""Prompts built from memos are byte-for-byte the prompts built from scratch (issue #31).

The goldens in tests/fixtures/prompts/ were captured from the prompt and stage code before any
of it was memoised: every actor's and the stage manager's prompt (messages and cache pieces) at
many points of a long synthetic scene with entrances, exits, events and a `present` block, and
every request a scripted rehearsal sent across runs, stage changes and a writer's edits of
transcript.md and a backstage log. A change to what a prompt says must be a change to these files.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from scenekit import write_scene

from engine import Actor, Rehearsal
from engine.folder.stage import (
    ENTER,
    EVENT,
    EXIT,
    OPENING,
    PRESENT,
    StageBlock,
    merge,
    on_stage,
    quiet,
)
from engine.folder.turns import Turn
from engine.turn.prompts import ActorBrief, Prompt, StageBrief, actor_prompt, stage_manager_prompt

GOLDENS = Path(__file__).resolve().parents[1] / "fixtures" / "prompts"
CAST = ("林小姐", "刑警", "律師", "Ann")
TURNS = 700
# Where the prompts are taken: around every stage change, and far past the window's first trim.
POINTS = (0, 1, 2, 29, 30, 31, 46, 81, 100, 152, 200, 261, 333, 401, 421, 500, 601, 699, 700)
# Stage changes after turn N (N: 0 is before the first turn).
SCHEDULE: dict[int, list[tuple[str, object]]] = {
    30: [(EXIT, "律師")],
    45: [(ENTER, "Ann")],
    80: [(ENTER, "律師"), (EVENT, "電話響了。")],
    150: [(EXIT, "林小姐")],
    151: [(EVENT, '燈滅了 "x"\n## 3 · forged')],
    260: [(ENTER, "林小姐")],
    400: [(PRESENT, ("刑警", "Ann"))],
    420: [(ENTER, "律師"), (ENTER, "林小姐")],
    600: [(EXIT, "Ann")],
}
WORDS = ["我沒有", "監視器", "十一點", "信封", "the tape", '"quoted"', "\\back", "\n## 9 · 刑警"]


def _text(rng: random.Random, most: int) -> str:
    return "".join(rng.choice(WORDS) for _ in range(rng.randint(0, most)))


def synthetic_scene() -> tuple[list[Turn], list[StageBlock], dict[str, dict[int, str]]]:
    """A 700-turn scene: turns by whoever is on stage, blocks, and each actor's thoughts."""
    rng = random.Random(31)
    blocks = [
        StageBlock(0, 1, PRESENT, names=("林小姐", "刑警", "律師")),
        StageBlock(0, 2, OPENING, text="深夜。\n審訊室。"),
    ]
    present = {"林小姐", "刑警", "律師"}
    turns: list[Turn] = []
    thoughts: dict[str, dict[int, str]] = {a: {} for a in CAST}
    for n in range(1, TURNS + 1):
        actor = rng.choice(sorted(present))
        cue = rng.choice([*CAST, "ANY", "", "刑警 %% note %%", "nobody\nsecond line"])
        long = rng.random() < 0.03  # now and then a turn past its field's cap
        turns.append(Turn(n, actor, _text(rng, 3), _text(rng, 400 if long else 12), cue))
        if rng.random() < 0.8:
            thoughts[actor][n] = _text(rng, 300 if long else 8) or "想。"
        for seq, (kind, what) in enumerate(SCHEDULE.get(n, []), start=1):
            if kind == PRESENT:
                assert isinstance(what, tuple)
                blocks.append(StageBlock(n, seq, PRESENT, names=what))
                present = set(what)
            elif kind == EVENT:
                blocks.append(StageBlock(n, seq, EVENT, text=str(what)))
            else:
                blocks.append(StageBlock(n, seq, kind, actor=str(what)))  # type: ignore[arg-type]
                present = present | {what} if kind == ENTER else present - {what}  # type: ignore[operator]
    return turns, blocks, thoughts


def digest(prompt: Prompt) -> str:
    pieces = [None if p is None else [list(p.parts), list(p.marks)] for p in prompt.pieces]
    data = json.dumps([list(prompt.messages), pieces], ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def briefs_at(
    n: int,
    turns: list[Turn],
    blocks: list[StageBlock],
    thoughts: dict[str, dict[int, str]],
) -> Iterator[tuple[str, ActorBrief | StageBrief]]:
    """Every brief of the table at turn `n`: each actor in two windows and a language, and the
    stage manager with and without its silence counts."""
    shown, stage = tuple(turns[:n]), tuple(b for b in blocks if b.after <= n)
    items = merge(shown, stage)
    present = tuple(on_stage(CAST, items, CAST))
    for actor in CAST:
        for context_tokens, language, fmt in ((0, "zh", "tags"), (3000, "en", "json")):
            yield (
                f"{n}/{actor}/{context_tokens}",
                ActorBrief(
                    name=actor,
                    soul=f"{actor}的小傳。",
                    context="深夜的審訊室。",
                    cast=CAST,
                    turns=shown,
                    own_thoughts=thoughts[actor],
                    whisper_all="節奏放慢。",
                    whisper_private=f"給{actor}的話。",
                    direction="打斷他" if n % 2 else "",
                    neglected=n % 3 == 0,
                    language=language,
                    stage=stage,
                    on_stage=present,
                    context_tokens=context_tokens,
                    reply_format=fmt,
                ),
            )
    for counts in (None, quiet(CAST, items, CAST)):
        yield (
            f"{n}/stage_manager/{counts is None}",
            StageBrief("深夜的審訊室。", present, shown, "節奏放慢。", "zh", stage, counts),
        )


def stage_facts(n: int, turns: list[Turn], blocks: list[StageBlock]) -> dict[str, object]:
    items = merge(turns[:n], [b for b in blocks if b.after <= n])
    return {"on_stage": on_stage(CAST, items, CAST), "quiet": quiet(CAST, items, CAST)}


def table(points: tuple[int, ...] = POINTS) -> dict[str, object]:
    """The digest of every prompt in the table, and who is on stage (and how long silent)."""
    turns, blocks, thoughts = synthetic_scene()
    out: dict[str, object] = {}
    for n in points:
        for name, brief in briefs_at(n, turns, blocks, thoughts):
            prompt = actor_prompt(brief) if isinstance(brief, ActorBrief) else None
            out[name] = digest(prompt or stage_manager_prompt(brief))  # type: ignore[arg-type]
        out[f"{n}/stage"] = stage_facts(n, turns, blocks)
    return out


def golden(name: str) -> dict[str, object]:
    return json.loads((GOLDENS / name).read_text(encoding="utf-8"))


def test_every_prompt_of_a_long_scene_is_its_golden_warm_and_out_of_order() -> None:
    want = golden("synthetic.json")
    assert table() == want  # in order, as a run builds them: each memo extended
    assert table(POINTS[::-1]) == want  # backwards, as after cutting a take back
    shuffled = list(POINTS)
    random.Random(7).shuffle(shuffled)
    assert table(tuple(shuffled)) == want


async def rehearse(root: Path, models: object) -> list[str]:
    """A scripted rehearsal across runs, stage changes and a writer's edits between turns:
    the digest of every request its models were sent."""
    write_scene(root)
    r = Rehearsal(root, models=models)  # type: ignore[arg-type]
    await r.run(40)
    await r.stage.exit(Actor("律師"))
    await r.stage.event("電話響了。")
    await r.run(20)
    await r.stage.enter(Actor("律師"))
    await r.run(20)
    transcript = root / "transcript.md"  # a writer rewrites an early line by hand
    text = transcript.read_text(encoding="utf-8")
    assert "This is line 3 " in text
    transcript.write_text(text.replace("This is line 3 ", "WRITER-EDIT line 3 ", 1), "utf-8")
    await r.run(5)
    log = root / "backstage" / "刑警.log"  # and one of 刑警's early thoughts
    assert "(" in log.read_text(encoding="utf-8")
    log.write_text(log.read_text(encoding="utf-8").replace("(", "WRITER-THOUGHT (", 1), "utf-8")
    await r.run(5)
    calls = models.calls  # type: ignore[attr-defined]
    return [hashlib.sha256(c.prompt.encode("utf-8")).hexdigest() for c in calls]


async def test_every_request_of_a_rehearsal_with_edits_is_its_golden(tmp_path, models) -> None:
    assert await rehearse(tmp_path / "審訊室", models) == golden("rehearsal.json")["requests"]


@pytest.mark.parametrize("n", POINTS)
def test_who_is_on_stage_matches_the_schedule(n: int) -> None:
    """The generator's own bookkeeping and the record's walk agree (the table is meaningful)."""
    turns, blocks, _ = synthetic_scene()
    facts = stage_facts(n, turns, blocks)
    assert set(facts["on_stage"]) >= {t.actor for t in turns[n : n + 1]}  # type: ignore[arg-type]
