"""Provider prompt caching: breakpoints where Anthropic needs them, cache tokens on every usage row.

The prompt's text is unchanged for every reader; only a Claude request is cut into content blocks
(one per record line) with at most four `cache_control` breakpoints on the stable part. Checked
against loopback fakes (tests/fakeproviders) that apply the providers' own caching rules, over
litellm's real HTTP path.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fakeproviders import FakeAnthropic, FakeOpenAI, flatten
from scenekit import operator_config

from engine import Config, Rehearsal
from engine.door import llm
from engine.door.caching import Pieces, cache_tokens, request_messages, takes_breakpoints
from engine.folder.templates import new_scene
from engine.folder.turns import Turn
from engine.harvest.report import cache_lines
from engine.takes.meta import carried_rows
from engine.turn.prompts import ActorBrief, StageBrief, actor_prompt, stage_manager_prompt

CLAUDE = "anthropic/claude-sonnet-4-5"


@pytest.mark.parametrize(
    "model, marked",
    [
        ("anthropic/claude-sonnet-4-5", True),
        ("claude-3-5-haiku-20241022", True),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", True),
        ("bedrock/us.anthropic.claude-sonnet-4-5-v1:0", True),
        ("vertex_ai/claude-sonnet-4-5@20250929", True),
        ("bedrock/amazon.nova-pro-v1:0", False),
        ("vertex_ai/gemini-2.5-pro", False),
        ("openai/gpt-4o-mini", False),  # caches a repeated prefix by itself
        ("deepseek/deepseek-chat", False),
        ("gemini/gemini-2.5-flash", False),
        ("ollama_chat/qwen2.5:7b", False),
        ("scripted/improv", False),
    ],
)
def test_only_anthropic_family_models_take_breakpoints(model, marked):
    assert takes_breakpoints(model) is marked


MESSAGES = ({"role": "system", "content": "SYS"}, {"role": "user", "content": "ab\ncd\n\nend"})
PIECES = (Pieces(("SYS",), (0,)), Pieces(("ab", "\ncd", "\n\nend"), (1, 0)))


def blocks(messages):
    return [[(b["text"], "cache_control" in b) for b in m["content"]] for m in messages]


@pytest.mark.parametrize(
    "pieces, expected",
    [
        (PIECES, [[("SYS", True)], [("ab", True), ("\ncd", True), ("\n\nend", False)]]),
        # more marks than Anthropic allows: the first four over all messages, in order
        (
            (Pieces(("SYS",), (0,)), Pieces(("ab", "\n", "cd", "\n\n", "end"), (4, 3, 2, 1, 0))),
            [
                [("SYS", True)],
                [("ab", False), ("\n", False), ("cd", True), ("\n\n", True), ("end", True)],
            ],
        ),
        # an empty piece is never a block (Anthropic refuses empty text): its mark moves back
        (
            (None, Pieces(("ab", "", "\ncd\n\nend"), (1, 2))),
            [None, [("ab", True), ("\ncd\n\nend", True)]],
        ),
    ],
)
def test_pieces_become_marked_content_blocks_for_claude(pieces, expected):
    sent = request_messages(MESSAGES, pieces, CLAUDE)
    got = [blocks([m])[0] if isinstance(m["content"], list) else None for m in sent]
    assert got == expected
    assert ["".join(b["text"] for b in m["content"]) if got[i] else m["content"]
            for i, m in enumerate(sent)] == [m["content"] for m in MESSAGES]  # fmt: skip


@pytest.mark.parametrize(
    "model, pieces",
    [
        ("openai/gpt-4o-mini", PIECES),  # not a breakpoint provider: plain text
        (CLAUDE, ()),  # no pieces
        (CLAUDE, (Pieces(("other text",), (0,)), None)),  # pieces that no longer match
    ],
)
def test_everything_else_is_sent_as_plain_text(model, pieces):
    assert request_messages(MESSAGES, pieces, model) == [dict(m) for m in MESSAGES]


@pytest.mark.parametrize(
    "usage, expected",
    [
        (None, (0, 0)),
        ({"prompt_tokens": 2000, "prompt_tokens_details": {"cached_tokens": 1920}}, (1920, 0)),
        ({"cache_read_input_tokens": 1500, "cache_creation_input_tokens": 300}, (1500, 300)),
        ({"prompt_tokens_details": {"cached_tokens": 10, "cache_creation_tokens": 7}}, (10, 7)),
        ({"prompt_tokens_details": None}, (0, 0)),
        ({"cache_read_input_tokens": -5, "cache_creation_input_tokens": math.nan}, (0, 0)),
        ({"cache_read_input_tokens": "12", "cache_creation_input_tokens": True}, (0, 0)),
        ({"cache_read_input_tokens": math.inf}, (0, 0)),
    ],
)
def test_cached_tokens_are_read_from_either_providers_usage(usage, expected):
    assert cache_tokens(usage) == expected


def _turns(n: int, cast=("甲", "乙", "丙")) -> tuple[Turn, ...]:
    return tuple(
        Turn(i + 1, cast[i % len(cast)], "", f"第 {i + 1} 句台詞。" * 3, cast[(i + 1) % len(cast)])
        for i in range(n)
    )


@pytest.mark.parametrize("turns", [0, 1, 5, 400])  # 400: the window has dropped the oldest
def test_pieces_join_to_exactly_the_prompt_every_other_reader_sees(turns):
    brief = ActorBrief(
        name="甲",
        soul="SOUL",
        context="CTX",
        cast=("甲", "乙", "丙"),
        turns=_turns(turns),
        own_thoughts={1: "想"},
        whisper_all="ALL",
        whisper_private="ME",
        direction="拍桌",
    )
    prompt = actor_prompt(brief)
    assert [p.text for p in prompt.pieces] == [m["content"] for m in prompt.messages]
    stage = stage_manager_prompt(StageBrief("CTX", ("甲", "乙", "丙"), _turns(turns), "ALL"))
    assert [p.text for p in stage.pieces] == [m["content"] for m in stage.messages]


def test_an_actors_prompt_marks_its_previous_calls_end_and_its_own_end():
    cast = ("甲", "乙", "丙")
    turns = _turns(7, cast)  # 甲 spoke turns 1, 4 and 7 … and now it is 甲's turn again
    user = actor_prompt(ActorBrief("甲", "S", "C", cast, turns[:6], {}, language="zh")).pieces[1]
    # parts: heading, one per turn, the tail; the last own turn (4) follows part 3
    assert len(user.parts) == 1 + 6 + 1
    assert user.marks == (6, 3)
    assert user.parts[4].startswith("\n[4] 甲:")
    # what this call sends up to its end mark is what 甲's next call sends before turn 7
    later = actor_prompt(ActorBrief("甲", "S", "C", cast, turns, {}, language="zh")).pieces[1]
    assert later.parts[: user.marks[0] + 1] == user.parts[: user.marks[0] + 1]
    assert later.marks[1] == user.marks[0]


# --------------------------------------------------------------------------- over HTTP
@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")


def scene_for(tmp_path: Path) -> tuple[Path, list[str]]:
    """The interrogation template: souls long enough to pass Anthropic's 1024-token minimum."""
    scene = new_scene(tmp_path / "cache", "interrogation", config=operator_config())
    cast = sorted(p.name for p in (scene / "actors").iterdir())
    return scene, cast


def rows(scene: Path) -> list[dict]:
    text = (scene / ".circus" / "usage.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def speaker(body: dict, cast: list[str]) -> str:
    system = "".join(b["text"] for b in body["system"])
    first = system.split("\n", 1)[0]
    return next((a for a in cast if a in first), "stage manager")


async def test_claude_gets_few_breakpoints_on_the_stable_part_and_hits_from_each_actors_second_call(
    tmp_path,
):
    scene, cast = scene_for(tmp_path)
    fake = FakeAnthropic(cast)
    async with fake as base:
        config = Config(
            model=CLAUDE, stage_manager_model=CLAUDE, api_base=base, reply_format="tags"
        )
        await Rehearsal(scene, config=config).run(9)
        report = await Rehearsal(scene, config=config).harvest.report()
    seen: set[str] = set()
    actor_calls = 0
    for body, usage in zip(fake.requests, fake.usages, strict=True):
        marked = [b for b in flatten(body) if b.breakpoint]
        assert 1 <= len(marked) <= 4
        # the system block (rules, soul, stage) is one block and always marked
        assert body["system"][-1].get("cache_control") == {"type": "ephemeral"}
        # the turn's tail (whispers, "your turn") is never inside a cached prefix
        last = body["messages"][-1]["content"][-1]
        assert "cache_control" not in last
        who = speaker(body, cast)
        if who == "stage manager":
            continue
        actor_calls += 1
        prompt = sum(usage.values()) - usage["output_tokens"]
        if who in seen:
            assert usage["cache_read_input_tokens"] >= 0.8 * prompt, (who, usage)
        else:
            assert usage["cache_read_input_tokens"] == 0
        seen.add(who)
    assert actor_calls == 9 and seen == set(cast)
    landed = rows(scene)
    assert sum(r["cached_tokens"] for r in landed) == sum(
        u["cache_read_input_tokens"] for u in fake.usages
    )
    assert sum(r["cache_write_tokens"] for r in landed) == sum(
        u["cache_creation_input_tokens"] for u in fake.usages
    )
    # the cost is Sonnet's price at the cache rates (reads a tenth, writes 1.25× the input rate)
    cost = sum(r["cost_usd"] for r in landed)
    expected = sum(
        u["input_tokens"] * 3e-6
        + u["cache_creation_input_tokens"] * 3.75e-6
        + u["cache_read_input_tokens"] * 3e-7
        + u["output_tokens"] * 1.5e-5
        for u in fake.usages
    )
    assert cost == pytest.approx(expected)
    uncached = sum(sum(u.values()) * 3e-6 + u["output_tokens"] * 1.2e-5 for u in fake.usages)
    assert sum(r["cache_saved_usd"] for r in landed) == pytest.approx(uncached - cost)
    assert "### 提示快取" in report and f"| {CLAUDE} |" in report.split("### 提示快取")[1]


async def test_a_record_grown_inside_one_block_is_never_read_back(tmp_path):
    """What the blocks are for: the same prompts sent as plain text miss Anthropic's cache."""
    fake = FakeAnthropic(["甲"])
    system = "規則。" * 1500
    async with fake as base:
        for n in range(1, 4):
            record = "".join(f"[{i}] 甲: 第 {i} 句。\n" for i in range(n))
            messages = (
                {"role": "system", "content": system},
                {"role": "user", "content": record + "\n輪到你了"},
            )
            await llm.LiteLLMModels(Config()).complete(
                llm.ModelCall(CLAUDE, messages, api_base=base, max_tokens=64, retries=0)
            )
    assert [u["cache_read_input_tokens"] for u in fake.usages] == [0, 0, 0]


async def test_more_than_four_breakpoints_is_a_400_from_the_fake_and_never_sent_by_the_door(
    tmp_path,
):
    fake = FakeAnthropic(["甲"])
    many = Pieces(tuple(f"段落 {i}。" * 300 for i in range(6)), (0, 1, 2, 3, 4, 5))
    messages = ({"role": "user", "content": many.text},)
    async with fake as base:
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": p, "cache_control": {"type": "ephemeral"}}
                for p in many.parts
            ]}],
        }  # fmt: skip
        assert "maximum of 4" in str(fake.usage_for(body, 1))
        reply = await llm.LiteLLMModels(Config()).complete(
            llm.ModelCall(CLAUDE, messages, api_base=base, max_tokens=64, pieces=(many,))
        )
    assert reply.text and len([b for b in flatten(fake.requests[-1]) if b.breakpoint]) == 4


async def test_an_openai_style_providers_cached_tokens_reach_the_usage_rows_and_the_report(
    tmp_path,
):
    scene, cast = scene_for(tmp_path)
    fake = FakeOpenAI(cast)
    model = "openai/gpt-4o-mini"
    async with fake as base:
        config = Config(model=model, stage_manager_model=model, api_base=base, reply_format="tags")
        await Rehearsal(scene, config=config).run(6)
        report = await Rehearsal(scene, config=config).harvest.report()
    # nothing is marked for a provider that caches by itself: the prompt goes as plain text
    assert all(isinstance(m["content"], str) for b in fake.requests for m in b["messages"])
    cached = [u["prompt_tokens_details"]["cached_tokens"] for u in fake.usages]
    assert any(cached) and all(c % 128 == 0 for c in cached)
    landed = rows(scene)
    assert sum(r["cached_tokens"] for r in landed) == sum(cached)
    assert sum(r["cache_saved_usd"] for r in landed) > 0
    table = report.split("### 提示快取")[1].split("\n\n")[1]
    row = next(line for line in table.splitlines() if line.startswith(f"| {model} |"))
    prompt, read, share = row.split("|")[2:5]
    assert (
        int(read) == sum(cached) and share.strip() == f"{round(100 * sum(cached) / int(prompt))}%"
    )


ROWS = [
    {"turn": 1, "take": 1, "model": "anthropic/claude-sonnet-4-5", "prompt_tokens": 1500,
     "cached_tokens": 0, "cache_write_tokens": 1400, "cache_saved_usd": -0.00105},
    {"turn": 2, "take": 1, "model": "anthropic/claude-sonnet-4-5", "prompt_tokens": 2500,
     "cached_tokens": 2000, "cache_write_tokens": 400, "cache_saved_usd": 0.0051},
    {"turn": 2, "take": 1, "role": "stage_manager", "model": "openai/gpt-4o-mini",
     "prompt_tokens": 900},  # below any provider's minimum: nothing cached
]  # fmt: skip


def test_the_report_shows_each_caching_models_cached_share_and_savings():
    assert cache_lines(ROWS, "en") == [
        "",
        "### Prompt cache",
        "",
        "| Model | Prompt tokens | Read from cache | Cached share | Written to cache | Saved |",
        "|---|---:|---:|---:|---:|---:|",
        "| anthropic/claude-sonnet-4-5 | 4000 | 2000 | 50% | 1800 | $0.0041 |",
    ]
    assert cache_lines(ROWS[2:], "en") == []  # no provider cached anything: no table


def test_a_replays_kept_turns_bring_no_cached_tokens_or_savings_twice():
    assert cache_lines(carried_rows(ROWS, 2, 2, 1), "en") == []


async def test_after_each_roles_first_call_all_it_sent_before_is_read_back(tmp_path):
    # The most a role's call can read under Anthropic's rules is the prefix its previous call
    # wrote: everything before that call's tail. Every later call reads exactly that, so the
    # cached share after each role's first call is what the rules allow (bench/bench_cache.py).
    scene, cast = scene_for(tmp_path)
    fake = FakeAnthropic(cast)
    async with fake as base:
        config = Config(
            model=CLAUDE, stage_manager_model=CLAUDE, api_base=base, reply_format="tags"
        )
        await Rehearsal(scene, config=config).run(12)
    cached: dict[str, int] = {}  # per role: the prefix its last call left in the cache
    later_prompt = later_read = 0
    for body, usage in zip(fake.requests, fake.usages, strict=True):
        who = speaker(body, cast)
        read, written = usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]
        if who in cached and cached[who]:
            assert read == cached[who], (who, usage)
            later_prompt += sum(usage.values()) - usage["output_tokens"]
            later_read += read
        cached[who] = read + written
    assert later_read >= 0.85 * later_prompt, (later_read, later_prompt)


def test_the_cache_benchs_public_first_layout_moves_whole_sections_and_opens_with_nothing_private():
    # bench_cache's second floor (the best opening the walls allow) is only honest if the
    # reordered prompt keeps every character and puts no private text before the name line.
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "bench_cache.py"
    spec = importlib.util.spec_from_file_location("bench_cache", path)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def body(name: str, soul: str) -> dict:
        brief = ActorBrief(name, soul, "公開的舞台", ("甲", "乙"), (), {}, language="zh")
        system = actor_prompt(brief).messages[0]["content"]
        return {"system": [{"type": "text", "text": system}], "messages": []}

    a, b = body("甲", "甲的秘密"), body("乙", "乙的秘密")
    moved = [bench.public_first(x)["system"][0]["text"] for x in (a, b)]
    assert sorted(moved[0]) == sorted(a["system"][0]["text"] + "\n")  # a line break between
    openings = [text.split("只扮演")[0].rsplit("\n", 1)[0] for text in moved]
    assert openings[0] == openings[1] and "公開的舞台" in openings[0]
    assert not any(secret in openings[0] for secret in ("甲的秘密", "乙的秘密"))
    assert moved[0].index("甲的秘密") > moved[0].index("只扮演「甲」")
    stage_manager = {"system": [{"type": "text", "text": "你是排演的舞台監督。"}]}
    assert bench.public_first(stage_manager) is stage_manager
