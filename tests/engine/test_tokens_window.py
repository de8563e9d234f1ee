"""Prompt budgets in real tokens, a window that trims rarely, and a byte-bounded state cache.

Pure: tables of cases for the window, the budgets, the per-provider context sizes, the
conservative estimate and the embedded model's state cache (counted bytes, not RSS).
"""

from __future__ import annotations

import statistics
from array import array

import pytest

from engine.config import Config
from engine.door import tokens
from engine.folder.role_models import context_tokens
from engine.folder.turns import Turn
from engine.providers.prefix_cache import PrefixCache, SavedPrefix
from engine.turn import prompts
from engine.turn.prompts import (
    HISTORY_BUDGET,
    REPLY_RESERVE,
    ActorBrief,
    StageBrief,
    actor_messages,
    record_budget,
    stage_manager_prompt,
)
from engine.turn.record_memo import window_start

CAST = ("林小姐", "刑警", "律師", "書記員")

# --- the window ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("costs", "budget", "keep", "start"),
    [
        ([], 100, 0.5, 0),
        ([10] * 10, 100, 0.5, 0),  # exactly at the budget: nothing dropped
        ([10] * 11, 100, 0.5, 6),  # one past it: down to half in one block
        ([10] * 12, 100, 0.5, 6),  # ...and the start stays put as the record grows again
        ([10] * 16, 100, 0.5, 6),
        ([10] * 17, 100, 0.5, 12),  # the next trim comes only after half a budget of turns
        ([10] * 11, 100, 0.25, 9),
        ([60, 10, 10, 10, 20], 100, 0.5, 1),  # a big old turn goes first
        ([10, 10, 150], 100, 0.5, 3),  # a turn bigger than the budget is not shown
        ([30] * 3, 0, 0.5, 3),  # no room at all: no record
    ],
)
def test_window_start(costs: list[int], budget: int, keep: float, start: int) -> None:
    assert window_start(costs, budget, keep) == start
    assert sum(costs[start:]) <= budget


def test_the_window_start_moves_only_at_rare_trims() -> None:
    costs = [57, 80, 64, 71, 90, 55] * 40  # 240 turns
    starts = [window_start(costs[:n], 3000) for n in range(1, len(costs) + 1)]
    moves = sum(1 for a, b in zip(starts, starts[1:], strict=False) if a != b)
    assert starts == sorted(starts)  # never goes back
    assert moves <= len(costs) * 70 // 1500 + 1  # about once per half budget of text
    assert all(sum(costs[s:n]) <= 3000 for n, s in enumerate(starts, 1))


@pytest.mark.parametrize(
    ("fixed", "context", "budget"),
    [
        (1000, 128_000, HISTORY_BUDGET),  # a big hosted model: the history budget rules
        (1000, 0, min(HISTORY_BUDGET, 8192 - 1000 - REPLY_RESERVE - prompts.CHAT_OVERHEAD)),
        (2000, 8192, 8192 - 2000 - REPLY_RESERVE - prompts.CHAT_OVERHEAD),
        (2000, 4096, 4096 - 2000 - REPLY_RESERVE - prompts.CHAT_OVERHEAD),
        (9000, 8192, 0),  # the fixed part alone does not fit: no record
    ],
)
def test_record_budget_leaves_room_for_the_rest_of_the_prompt(
    fixed: int, context: int, budget: int
) -> None:
    assert record_budget(fixed, context) == budget


# --- counting -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "count"),
    [("", 0), ("abc", 1), ("abcd", 2), ("刑警", 6), ("刑警: hi", 6 + 2)],
)
def test_conservative_estimate(text: str, count: int) -> None:
    assert tokens.conservative(text) == count


def test_an_unknown_model_is_counted_conservatively() -> None:
    assert tokens.counter("") is tokens.conservative


@pytest.mark.parametrize(
    ("model", "env", "size"),
    [
        ("circus-local/smollm2", {}, 8192),
        ("ollama_chat/qwen2.5:7b", {}, 8192),
        ("ollama/llama3", {"CIRCUS_NUM_CTX": "16384"}, 16384),
        ("ollama/llama3", {"CIRCUS_NUM_CTX": "lots"}, 8192),
        ("openai/gpt-4o", {}, 128_000),
        ("anthropic/claude-sonnet-4-5", {}, 200_000),
        ("scripted/improv", {}, 8192),
        ("someprovider/unknown-model", {}, 8192),
    ],
)
def test_context_size_per_provider(model: str, env: dict[str, str], size: int) -> None:
    assert context_tokens(model, Config.from_env(env)) == size


# --- whole prompts --------------------------------------------------------------------------------


def _turns(n: int) -> tuple[Turn, ...]:
    return tuple(
        Turn(
            i,
            CAST[i % 4],
            f"第{i}個動作，手指敲著桌面，看向窗外。",
            f"「第{i}句台詞，你昨晚十一點到底在哪裡？監視器拍到你了。」",
            CAST[(i + 1) % 4],
        )
        for i in range(1, n + 1)
    )


def _brief(name: str, turns: tuple[Turn, ...], **kw: object) -> ActorBrief:
    return ActorBrief(
        name=name,
        soul="SOUL " * 200,
        context="CONTEXT " * 100,
        cast=CAST,
        turns=turns,
        own_thoughts={t.number: f"THOUGHT{t.number} 他在說謊嗎？" for t in turns},
        **kw,  # type: ignore[arg-type]
    )


def _prompt_text(messages: tuple[dict[str, str], ...]) -> str:
    return "\n".join(m["content"] for m in messages)


def test_a_prompt_never_outgrows_a_small_context() -> None:
    count = tokens.conservative
    for n in (10, 50, 120, 300):
        messages = actor_messages(_brief("林小姐", _turns(n), context_tokens=4096))
        assert count(_prompt_text(messages)) + REPLY_RESERVE <= 4096
        assert f"[{n}] " in messages[1]["content"]  # the newest turn is always there
    stage = stage_manager_prompt(
        StageBrief("CONTEXT", CAST, _turns(300), context_tokens=2048)
    ).messages
    assert count(_prompt_text(stage)) + REPLY_RESERVE <= 2048
    assert "[300] " in stage[1]["content"] and "輪已省略" in stage[1]["content"]


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def test_consecutive_prompts_of_an_actor_share_a_long_prefix_over_200_turns() -> None:
    """A hosted model (gpt-4o: litellm counts it offline with o200k), 4 actors, 200 turns."""
    turns = _turns(200)
    last: dict[str, str] = {}
    shares = []
    for i, turn in enumerate(turns):
        brief = _brief(turn.actor, turns[:i], model="openai/gpt-4o", context_tokens=128_000)
        text = _prompt_text(actor_messages(brief))
        if turn.actor in last:
            shares.append(_common_prefix(last[turn.actor], text) / len(text))
        last[turn.actor] = text
    assert statistics.median(shares) >= 0.9
    assert sum(1 for s in shares if s < 0.75) <= len(shares) // 10


def test_a_trimmed_record_says_how_many_turns_were_left_out() -> None:
    body = actor_messages(_brief("林小姐", _turns(300)))[1]["content"]
    start = int(body.split("（前 ")[1].split(" 輪")[0])
    assert f"[{start + 1}] " in body and f"\n[{start}] " not in body


# --- the embedded model's saved states ------------------------------------------------------------


def _saved(nbytes: int, ntokens: int = 4) -> SavedPrefix:
    return SavedPrefix(array("i", range(ntokens)), bytes(nbytes - 4 * ntokens))


@pytest.mark.parametrize(
    ("capacity", "puts", "kept"),
    [
        (1000, [("a", 300), ("b", 300), ("c", 300)], ["a", "b", "c"]),
        (1000, [("a", 300), ("b", 300), ("c", 300), ("d", 300)], ["b", "c", "d"]),
        (1000, [("a", 300), ("b", 300), ("a", 600)], ["b", "a"]),  # one state per role
        (1000, [("a", 300), ("b", 1200)], ["a"]),  # too big for the bound: not kept
        (1000, [("a", 500), ("b", 500), ("c", 100)], ["b", "c"]),
        (0, [("a", 100)], []),  # capacity 0: the cache is off
    ],
)
def test_the_state_cache_keeps_one_state_per_role_within_its_bytes(
    capacity: int, puts: list[tuple[str, int]], kept: list[str]
) -> None:
    cache = PrefixCache(capacity)
    for key, size in puts:
        cache.put(key, _saved(size))
        assert cache.nbytes <= capacity
    assert cache.keys() == kept
    assert cache.nbytes == sum(dict(puts)[k] for k in kept)


def test_using_a_state_makes_it_the_last_to_go_and_a_smaller_bound_evicts() -> None:
    cache = PrefixCache(900)
    for key in "abc":
        cache.put(key, _saved(300))
    assert cache.get("a") is not None
    cache.put("d", _saved(300))
    assert cache.keys() == ["c", "a", "d"]
    cache.capacity_bytes = 400
    assert cache.keys() == ["d"] and cache.nbytes == 300


def test_the_scripted_stand_in_counts_as_litellm_would_without_loading_it() -> None:
    """The stand-in's tokens are litellm's for a model it does not know (cl100k_base), from the
    same encoding file, so a scripted scene is cut where it always was — with no litellm."""
    import random

    from engine.door import tokens
    from engine.door.boot import litellm_module

    rng = random.Random(7)
    texts = ["", "hello", "測試 probe", "<|endoftext|> x <|fim_prefix|>", "a\n\nb  c\t"]
    texts += ["「台詞」" * 50, "".join(chr(rng.randint(32, 0x9FFF)) for _ in range(500))]
    ours = [tokens.count(text, "scripted/improv") for text in texts]
    litellm = litellm_module()
    assert ours == [litellm.token_counter(model="scripted/improv", text=t) for t in texts]
