"""`check-model`: a short fixed rehearsal through the real door, to know before the room starts.

One stage-manager call, then two actors playing three turns in an English and in a Chinese scene,
built in memory (a SceneState never written anywhere) and played by the same code as a rehearsal:
the prompt builders, the reply reader and its one re-ask, the model door. Each call is timed and
kept as a `CallSample`; the first failure ends the probe. What it found is a `ProbeResult`;
the verdict, the projection and the wording are pure functions of it (engine.probe.report).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from engine.catalog import say
from engine.config import Config
from engine.door.boot import settle_imports
from engine.door.gateway import base_for, proxied
from engine.door.llm import (
    LiteLLMModels,
    ModelCall,
    ModelReply,
    Models,
    Price,
    SpendGate,
    litellm_module,
    transport,
)
from engine.errors import BadSceneFile, CircusError, ModelError
from engine.folder.scene import SceneState
from engine.folder.settings import context_settings_dict
from engine.folder.soul import Soul
from engine.folder.turns import Turn
from engine.folder.whispers import Whispers
from engine.rehearsal.run_loop import TURN_DEADLINE_FACTOR
from engine.turn.performance import ask_stage_manager, perform
from engine.turn.routing import closest_names, known_names, litellm_routable
from engine.vocabulary import FailureKind, ProbeRead

DEFAULT_TIMEOUT = 60.0  # seconds one probe call may take (--timeout)
WARM_UP_SECONDS = 60.0  # litellm's first-call imports take a few seconds on a busy machine
LANGUAGES = ("en", "zh")
ACTOR_TURNS = 3  # per scene: A, B, then A again (A's second prompt repeats its first's start)
# What ModelReply may carry once a door reports it (read with getattr: older doors do not).
CACHED_FIELDS = ("cached_tokens", "cache_read_tokens", "cache_read_input_tokens")
STRUCTURED_FIELDS = ("structured", "json_mode")
STRUCTURED_KWARGS = ("response_format", "format")  # litellm / Ollama: a schema was requested


@dataclass(frozen=True)
class CallSample:
    """One model call of the probe as the door answered it."""

    role: str  # actor | stage_manager
    language: str  # the scene's: en | zh
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    cached_tokens: int | None  # None: the door does not report cached tokens
    structured: bool | None  # None: the door does not say whether a schema was used
    repeat: bool  # a later call of an actor whose prompt starts as its earlier one did
    retry: bool = False  # the re-ask after an unreadable reply (its prompt carries that reply)


@dataclass(frozen=True)
class TurnSample:
    """How one actor's turn read: as written (clean), after the re-ask, or not at all."""

    language: str
    actor: str
    read: ProbeRead
    calls: int


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    detail: str


@dataclass(frozen=True)
class ProbeResult:
    model: str
    api_base: str | None
    timeout: float
    calls: tuple[CallSample, ...] = ()
    turns: tuple[TurnSample, ...] = ()
    stage_manager: str | None = None  # picked | fallback | None (not asked)
    failure: Failure | None = None
    price: Price | None = None  # per token, when litellm (or CIRCUS_MODEL_PRICES) knows it


# ----------------------------------------------------------------------------- pure helpers
def reply_field(reply: ModelReply, names: tuple[str, ...]) -> Any:
    """The first of `names` a ModelReply carries and that is not None (None if none does)."""
    for name in names:
        value = getattr(reply, name, None)
        if value is not None:
            return value
    return None


def structured_used(reply: ModelReply, call: ModelCall) -> bool:
    """Whether the reply came under a schema: as the door says, else from what was asked (the
    door puts a schema request in the call's extra keywords; no request means tags)."""
    said = reply_field(reply, STRUCTURED_FIELDS)
    if said is not None:
        return bool(said)
    return any(k in call.extra for k in STRUCTURED_KWARGS)


# ----------------------------------------------------------------------------- the scenes
def probe_scene(language: str, model: str, api_base: str | None, timeout: float) -> SceneState:
    """The probe's two-actor scene in `language`, in memory; every text is from the catalog."""
    raw: dict[str, Any] = {"language": language, "model": model, "stage_manager_model": model}
    raw["turn_timeout"] = timeout
    if api_base:
        raw["api_base"] = api_base
    settings = context_settings_dict(raw, "check-model")
    souls = {
        say(name, language): Soul(say(name, language), say(soul, language))
        for name, soul in (
            ("probe.scene.a", "probe.scene.a.soul"),
            ("probe.scene.b", "probe.scene.b.soul"),
        )
    }
    return SceneState(
        name=f"check-model-{language}",
        settings=settings,
        context=say("probe.scene.context", language),
        souls=souls,
        turns=[],
        thoughts={name: {} for name in souls},
        whispers=Whispers(),
    )


# ----------------------------------------------------------------------------- the timed door
@dataclass
class _Recorder:
    """The door the probe is given, passing each call on and timing what came back."""

    door: Models
    language: str = "en"
    samples: list[CallSample] = field(default_factory=list)
    failure: Failure | None = None
    _seen: set[tuple[str, str]] = field(default_factory=set)

    async def complete(self, call: ModelCall, *, gate: SpendGate | None = None) -> ModelReply:
        started = time.monotonic()
        try:
            reply = await self.door.complete(call, gate=gate)
        except ModelError as exc:
            waited = time.monotonic() - started
            kind: FailureKind = "timeout" if waited >= call.timeout else exc.kind
            # A model the proxy does not serve: the detail is the names it does serve.
            detail = ", ".join(exc.served) if kind == "not_served" else exc.why
            self.failure = self.failure or Failure(kind, detail)
            raise
        who = (self.language, call.shape.speaker or call.shape.kind)
        self.samples.append(
            CallSample(
                role="stage_manager" if call.shape.kind == "stage_manager" else "actor",
                language=self.language,
                seconds=time.monotonic() - started,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
                cost_usd=reply.cost_usd,
                cached_tokens=_count(reply_field(reply, CACHED_FIELDS)),
                structured=structured_used(reply, call),
                repeat=who in self._seen,
                retry=len(call.messages) > 2,  # prompts are system + user; a re-ask adds two
            )
        )
        self._seen.add(who)
        return reply

    def price(self, model: str) -> Price | None:
        return self.door.price(model)

    def warm(self) -> None:
        self.door.warm()


def _count(value: Any) -> int | None:
    try:
        return max(0, int(value)) if value is not None else None
    except (TypeError, ValueError):
        return None


# ----------------------------------------------------------------------------- the probe
async def check_model(
    model: str,
    *,
    api_base: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    config: Config,
    models: Models | None = None,
) -> ProbeResult:
    """Play the probe on `model` through `models` (default: the litellm door of `config`).

    No retries (the probe shows the model as it answers) and no spend gate; nothing is written.
    """
    config = dataclasses.replace(config, model_retries=0)
    # As a run sends it: through the LiteLLM proxy when CIRCUS_GATEWAY_URL is set (its name
    # `litellm_proxy/<model>`, its address), so the proxy's own model names can be probed.
    base = base_for(model.strip(), api_base or config.api_base, config)
    result = ProbeResult(proxied(model, config), base, timeout)
    try:  # the checks a scene file makes
        scenes = [probe_scene(lang, result.model, base, timeout) for lang in LANGUAGES]
    except BadSceneFile as exc:
        return dataclasses.replace(result, failure=Failure("refused", exc.why))
    settle_imports()  # the threads below may import litellm beside this one's imports
    if not await asyncio.to_thread(litellm_routable, result.model, base):  # as a run start does
        closest = await asyncio.to_thread(closest_names, result.model, known_names())
        return dataclasses.replace(result, failure=Failure("unroutable", ", ".join(closest)))
    door = models or LiteLLMModels(config)
    if transport(result.model, {}, config) == "litellm":
        await _warm_up(result.model, base)  # the door's own providers need no warming
    # Its price (which may load litellm) is looked up beside the calls, not before them.
    priced = asyncio.ensure_future(asyncio.to_thread(door.price, result.model))
    recorder = _Recorder(door)
    turns: list[TurnSample] = []
    picked: str | None = None
    failure: Failure | None = None
    try:
        for state in scenes:
            recorder.language = state.language
            first = None
            if picked is None:
                decision = await ask_stage_manager(state, models=recorder, config=config)
                if recorder.failure is not None:
                    break
                picked, first = ("fallback" if decision.fallback else "picked"), decision.actor
            if not await _play(state, first, recorder, config, timeout, turns):
                break
        failure = recorder.failure
        price = await priced
    except CircusError as exc:  # e.g. the embedded model is not installed
        priced.cancel()
        failure, price = Failure("error", str(exc).split("\n")[0]), None
    return dataclasses.replace(
        result,
        calls=tuple(recorder.samples),
        turns=tuple(turns),
        stage_manager=picked,
        failure=failure,
        price=price,
    )


async def _warm_up(model: str, base: str | None) -> None:
    """Load what litellm loads on a provider's first call, off the clock and without leaving
    the machine (litellm's mock_response), so --timeout measures the model, not our imports."""
    try:
        async with asyncio.timeout(WARM_UP_SECONDS):
            await litellm_module().acompletion(
                model=model,
                messages=[{"role": "user", "content": "warm-up"}],
                api_base=base,
                mock_response="ok",
            )
    except Exception:  # a warm-up that fails costs nothing: the probe's first call will say
        pass


async def _play(
    state: SceneState,
    first: str | None,
    recorder: _Recorder,
    config: Config,
    timeout: float,
    turns: list[TurnSample],
) -> bool:
    """Three turns in `state` (A, B, A; A is `first` when given), kept in memory. False when a
    call failed: the probe stops there."""
    cast = state.cast
    a = first if first in cast else cast[0]
    b = next(name for name in cast if name != a)
    for number, actor in enumerate((a, b, a)[:ACTOR_TURNS], start=1):
        try:
            async with asyncio.timeout(TURN_DEADLINE_FACTOR * timeout):
                done = await perform(state, actor, models=recorder, config=config)
        except (ModelError, TimeoutError):
            if recorder.failure is None:
                recorder.failure = Failure("timeout", f"{TURN_DEADLINE_FACTOR * timeout:g} s")
            return False
        read: ProbeRead = (
            "unreadable" if done.fallback else "repaired" if done.repaired else "clean"
        )
        turns.append(TurnSample(state.language, actor, read, done.usage.calls))
        reply = done.reply
        state.turns.append(Turn(number, actor, reply.action, reply.dialogue, reply.cue))
        state.thoughts[actor][number] = reply.thought
    return True
