"""What a check-model probe means: the verdict, a projection to a longer take, and its wording.

Pure functions of a ProbeResult (engine.probe.check). A model is unusable when the probe could not get
an answer from it, or when most of its replies could not be read even after the re-ask; usable
with care when some needed the re-ask. The projection grows the probe's measured prompts the way
a rehearsal's do (engine.turn.prompts: the record grows by a turn per turn, bounded at HISTORY_BUDGET).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.catalog import Phrase, say
from engine.door.gateway import PROXY
from engine.probe.check import CallSample, ProbeResult
from engine.turn.prompts import HISTORY_BUDGET
from engine.vocabulary import FailureKind

PROJECT_TURNS = 40
PROJECT_ACTORS = 4
# Turns whose cue is left open, so the stage manager is asked too (an assumption: improv models
# throw the ball by name most of the time).
STAGE_MANAGER_SHARE = 0.25
NOT_ASKED = ("refused", "unroutable")  # failures found before any call
# Failures a server gave in its own answer: it was reached, and refused (a status, not silence).
ANSWERED = ("auth", "gateway_key", "not_found", "not_served", "rate_limited")
FAILURE_KEYS = {
    "refused": "probe.verdict.refused",
    "unroutable": "probe.verdict.unroutable",
    "timeout": "probe.verdict.timeout",
    "unreachable": "probe.verdict.unreachable",
    "auth": "probe.verdict.auth",
    "gateway_key": "probe.verdict.gateway_key",
    "not_found": "probe.verdict.not_found",
    "not_served": "probe.verdict.not_served",
    "rate_limited": "probe.verdict.rate_limited",
    "error": "probe.verdict.error",
}
SM_KEYS = {"picked": "probe.sm.picked", "fallback": "probe.sm.fallback", None: "probe.sm.none"}
SCENE_KEYS = {
    "stage_manager": "probe.what.stage_manager",
    "en": "probe.what.en",
    "zh": "probe.what.zh",
}
STRUCTURED_KEYS = {
    True: "probe.structured.yes",
    False: "probe.structured.no",
    None: "probe.structured.unknown",
}


@dataclass(frozen=True)
class Verdict:
    usable: bool
    kind: Literal["ok", "shaky", "unreadable"] | FailureKind
    reason: Phrase  # one line, said in any language


def verdict(result: ProbeResult) -> Verdict:
    """Usable or not, and the one line saying why (and what to do next)."""
    failure = result.failure
    if failure is not None:
        closest = (
            Phrase("probe.verdict.closest", names=failure.detail)
            if failure.kind == "unroutable" and failure.detail
            else ""
        )
        values = {"detail": failure.detail, "model": result.model[:80], "closest": closest}
        values["timeout"] = f"{result.timeout:g}"
        values["name"] = result.model.removeprefix(f"{PROXY}/")[:80]
        key = FAILURE_KEYS.get(failure.kind, "probe.verdict.error")
        return Verdict(False, failure.kind, Phrase(key, **values))
    turns = len(result.turns)
    if not turns:
        return Verdict(False, "error", Phrase("probe.verdict.no_turns"))
    counts = read_counts(result)
    if counts["unreadable"] * 2 > turns:
        return Verdict(
            False,
            "unreadable",
            Phrase("probe.verdict.unreadable", bad=counts["unreadable"], n=turns),
        )
    if counts["clean"] < turns or result.stage_manager == "fallback":
        return Verdict(True, "shaky", Phrase("probe.verdict.shaky", n=turns, **counts))
    return Verdict(True, "ok", Phrase("probe.verdict.ok"))


def reachable(result: ProbeResult) -> bool | None:
    """Whether the model answered at all; None when the probe never asked (a refused name)."""
    if result.calls:
        return True
    if result.failure is not None and result.failure.kind in NOT_ASKED:
        return None
    return result.failure is not None and result.failure.kind in ANSWERED


def read_counts(result: ProbeResult) -> dict[str, int]:
    reads = [t.read for t in result.turns]
    return {k: reads.count(k) for k in ("clean", "repaired", "unreadable")}


# ----------------------------------------------------------------------------- projection
@dataclass(frozen=True)
class Projection:
    turns: int
    actors: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _firsts(
    calls: Sequence[CallSample], role: str, language: str | None = None
) -> list[CallSample]:
    return [c for c in calls if c.role == role and not c.retry and language in (None, c.language)]


def project(
    result: ProbeResult, turns: int = PROJECT_TURNS, actors: int = PROJECT_ACTORS
) -> Projection | None:
    """Calls, tokens and cost of a `turns`-turn take, from the probe's own calls (None before
    any actor answered). Each turn is one actor's call whoever speaks, so the cast size does
    not change the sum; re-asks are counted at the rate the probe needed them; the record
    grows by the probe's measured tokens per turn until HISTORY_BUDGET bounds it. Cost at
    litellm's price, else at the probe's own cost per token, else unknown; no caching."""
    actor_calls = [c for c in result.calls if c.role == "actor"]
    if not actor_calls or not result.turns:
        return None
    starts, growth = [], []
    for language in dict.fromkeys(c.language for c in actor_calls):
        firsts = _firsts(actor_calls, "actor", language)
        if firsts:
            starts.append(firsts[0].prompt_tokens)
        if len(firsts) > 1:
            rise = (firsts[-1].prompt_tokens - firsts[0].prompt_tokens) / (len(firsts) - 1)
            growth.append(max(0.0, rise))
    start, grow = _mean(starts), _mean(growth)
    per_turn_calls = len(actor_calls) / len(result.turns)  # 1 + the re-ask rate
    record = [min(grow * k, HISTORY_BUDGET) for k in range(turns)]
    prompt = per_turn_calls * sum(start + r for r in record)
    completion = per_turn_calls * turns * _mean([c.completion_tokens for c in actor_calls])
    calls = per_turn_calls * turns
    sm = _firsts(result.calls, "stage_manager")
    if sm:
        asked = STAGE_MANAGER_SHARE * turns
        prompt += STAGE_MANAGER_SHARE * sum(sm[0].prompt_tokens + r for r in record)
        completion += asked * _mean([c.completion_tokens for c in sm])
        calls += asked
    return Projection(
        turns,
        actors,
        round(calls),
        round(prompt),
        round(completion),
        _cost(result, prompt, completion),
    )


def _cost(result: ProbeResult, prompt: float, completion: float) -> float | None:
    if result.price is not None:
        return prompt * result.price.input + completion * result.price.output
    costs = [c.cost_usd for c in result.calls]
    spent_tokens = sum(c.prompt_tokens + c.completion_tokens for c in result.calls)
    if not costs or any(c is None for c in costs) or not spent_tokens:
        return None
    return sum(c for c in costs if c is not None) / spent_tokens * (prompt + completion)


def per_turn(result: ProbeResult) -> tuple[float, float, float | None]:
    """Mean prompt and completion tokens of one actor's turn (re-asks included), and its cost."""
    calls = [c for c in result.calls if c.role == "actor"]
    n = len(result.turns) or 1
    costs = [c.cost_usd for c in calls]
    cost = None if not calls or any(c is None for c in costs) else sum(costs) / n  # type: ignore[arg-type]
    return (
        sum(c.prompt_tokens for c in calls) / n,
        sum(c.completion_tokens for c in calls) / n,
        cost,
    )


def cache_seen(result: ProbeResult) -> tuple[int, int] | None:
    """(cached, prompt) tokens of the repeat call that read the most from cache; None when
    the door reported no cached-token count at all."""
    repeats = [c for c in result.calls if c.repeat and c.cached_tokens is not None]
    if not repeats:
        return None
    best = max(repeats, key=lambda c: c.cached_tokens or 0)
    return best.cached_tokens or 0, best.prompt_tokens


def structured_seen(result: ProbeResult) -> bool | None:
    said = [c.structured for c in result.calls if c.structured is not None]
    return any(said) if said else None


# ----------------------------------------------------------------------------- wording
def _usd(value: float | None, language: str) -> str:
    return say("probe.cost.unknown", language) if value is None else f"${value:.4f}"


def _projected_usd(value: float | None, language: str) -> str:
    if value is None:
        return say("probe.cost.projected_unknown", language)
    return say("probe.cost.projected", language, usd=f"${value:.4f}")


def _latency(result: ProbeResult, language: str) -> str:
    groups: dict[str, list[str]] = {}
    for c in result.calls:
        what = "stage_manager" if c.role == "stage_manager" else c.language
        groups.setdefault(what, []).append(f"{c.seconds:.2f}")
    return "; ".join(
        say("probe.latency.group", language, what=Phrase(SCENE_KEYS[what]), seconds=tuple(s))
        for what, s in groups.items()
    )


def probe_lines(result: ProbeResult, language: str = "en") -> list[str]:
    """What `circus check-model` prints, one finding per line, the verdict last."""
    at = Phrase("probe.head.at", base=result.api_base) if result.api_base else ""
    lines = [say("probe.head", language, model=result.model, at=at, timeout=f"{result.timeout:g}")]
    if result.calls:
        first = f"{result.calls[0].seconds:.2f}"
        lines.append(say("probe.reachable.yes", language, seconds=first))
        lines.append(say("probe.latency", language, calls=_latency(result, language)))
    elif reachable(result) is True:  # it answered, with a refusal
        lines.append(say("probe.reachable.refused", language))
    elif reachable(result) is False:
        lines.append(say("probe.reachable.no", language))
    if result.turns:
        counts = read_counts(result)
        sm = Phrase(SM_KEYS.get(result.stage_manager, "probe.sm.none"))
        lines.append(say("probe.read", language, n=len(result.turns), sm=sm, **counts))
        lines.append(say(STRUCTURED_KEYS[structured_seen(result)], language))
        cache = cache_seen(result)
        if cache is None:
            lines.append(say("probe.cache.unknown", language))
        elif cache[0]:
            lines.append(
                say("probe.cache.hit", language, cached=f"{cache[0]:,}", prompt=f"{cache[1]:,}")
            )
        else:
            lines.append(say("probe.cache.none", language))
        prompt, completion, cost = per_turn(result)
        lines.append(
            say(
                "probe.per_turn",
                language,
                prompt=f"{prompt:,.0f}",
                completion=f"{completion:,.0f}",
                cost=_usd(cost, language),
            )
        )
        p = project(result)
        if p is not None:
            lines.append(
                say(
                    "probe.projection",
                    language,
                    turns=p.turns,
                    actors=p.actors,
                    calls=p.calls,
                    prompt=f"{p.prompt_tokens:,}",
                    completion=f"{p.completion_tokens:,}",
                    cost=_projected_usd(p.cost_usd, language),
                )
            )
    lines.append(say("probe.verdict", language, reason=verdict(result).reason))
    return lines


def probe_json(result: ProbeResult, language: str = "en") -> dict[str, Any]:
    """The same findings for a machine (`circus check-model --json`)."""
    v = verdict(result)
    prompt, completion, cost = per_turn(result)
    p = project(result)
    cache = cache_seen(result)
    return {
        "model": result.model,
        "api_base": result.api_base,
        "timeout_s": result.timeout,
        "usable": v.usable,
        "verdict": v.kind,
        "reason": v.reason.render(language),
        "reachable": reachable(result),
        "calls": [
            {
                "role": c.role,
                "scene": c.language,
                "seconds": round(c.seconds, 3),
                "prompt_tokens": c.prompt_tokens,
                "completion_tokens": c.completion_tokens,
                "cost_usd": c.cost_usd,
                "cached_tokens": c.cached_tokens,
                "structured": c.structured,
                "repeat": c.repeat,
                "retry": c.retry,
            }
            for c in result.calls
        ],
        "turns": len(result.turns),
        **read_counts(result),
        "stage_manager": result.stage_manager,
        "structured_output": structured_seen(result),
        "cached_tokens_on_repeat": cache[0] if cache else None,
        "per_turn": {
            "prompt_tokens": round(prompt, 1),
            "completion_tokens": round(completion, 1),
            "cost_usd": cost,
        },
        "projection": None
        if p is None
        else {
            "turns": p.turns,
            "actors": p.actors,
            "calls": p.calls,
            "prompt_tokens": p.prompt_tokens,
            "completion_tokens": p.completion_tokens,
            "cost_usd": p.cost_usd,
        },
    }
