"""Whether a model string can be routed, and the known names closest to one that cannot.

A run checks every model it may call before it starts, so `CIRCUS_MODEL=scripted` is one line
naming the fix instead of a provider exception ending every turn. litellm decides what it can
route (`get_llm_provider`, imported at run start, off the event loop) but for the providers the
door serves itself (in process, or over the OpenAI-compatible wire), known without it; everything else here —
which model a run may call, the first one that fails, the closest known names — is a pure
function of its inputs.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from engine.catalog import Phrase
from engine.config import Config
from engine.door.boot import LOCAL_PROVIDERS
from engine.door.gateway import base_for, proxied
from engine.door.llm import EMBEDDED_MODEL, litellm_module
from engine.door.wire import WIRE_PROVIDERS
from engine.errors import UnroutableModel
from engine.folder.role_models import actor_model, api_base, stage_manager_model
from engine.folder.scene import SceneState

MAX_HINTS = 3
HINT_CUTOFF = 0.6  # difflib ratio below which a name is no help
# Our in-process providers, by a model each really serves (litellm's tables do not know them).
LOCAL_EXAMPLES = ("scripted/improv", EMBEDDED_MODEL)

Routable = Callable[[str, "str | None"], bool]


@dataclass(frozen=True)
class RoleModel:
    """One model a run may call, and whose it is (for the refusal's wording)."""

    model: str
    api_base: str | None
    who: Phrase


def run_models(state: SceneState, config: Config) -> tuple[RoleModel, ...]:
    """Every model a run of `state` may call: each actor a model plays (its model, then its
    fallback_model), then the stage manager's. An actor a person plays is never asked."""
    out: list[RoleModel] = []

    def add(model: str, base: str | None, who: Phrase) -> None:
        # as sent: through the LiteLLM proxy when CIRCUS_GATEWAY_URL is set (engine.door.gateway)
        out.append(RoleModel(proxied(model, config), base_for(model, base, config), who))

    for name, soul in state.souls.items():
        if name in state.played:
            continue
        base = api_base(soul, state.settings, config)
        add(actor_model(soul, state.settings, config), base, Phrase("routing.actor", actor=name))
        if soul.fallback_model:
            add(soul.fallback_model, base, Phrase("routing.fallback", actor=name))
    sm_base = api_base(None, state.settings, config)
    add(stage_manager_model(state.settings, config), sm_base, Phrase("routing.sm"))
    return tuple(out)


def first_unroutable(models: Iterable[RoleModel], routable: Routable) -> RoleModel | None:
    """The first model `routable` says no to, or None when every one can be sent."""
    for role in models:
        if not routable(role.model, role.api_base):
            return role
    return None


def closest_names(model: str, known: Iterable[str], n: int = MAX_HINTS) -> tuple[str, ...]:
    """The known model names nearest to `model`, best first (at most `n`, none if none is
    close). A known `provider/name` is also compared by its name alone, so a bare `llama3.1`
    finds `ollama/llama3.1`."""
    text = model.strip().lower()
    if not text:
        return ()
    matcher = difflib.SequenceMatcher(a="", b=text)
    scored: list[tuple[float, str]] = []
    for name in dict.fromkeys(known):
        best = 0.0
        for form in {name.lower(), name.lower().split("/", 1)[-1]}:
            matcher.set_seq1(form)
            if matcher.real_quick_ratio() >= HINT_CUTOFF and matcher.quick_ratio() >= HINT_CUTOFF:
                best = max(best, matcher.ratio())
        if best >= HINT_CUTOFF:
            scored.append((best, name))
    scored.sort(key=lambda item: (-item[0], len(item[1]), item[1]))
    return tuple(name for _, name in scored[:n])


@functools.lru_cache(maxsize=1)
def known_names() -> tuple[str, ...]:
    """Model names litellm knows (its local cost map), each as provider/name so a hint is a
    string one can paste, then our in-process providers' models."""
    litellm = litellm_module()
    providers = _providers()
    names: list[str] = list(LOCAL_EXAMPLES)
    for key, entry in litellm.model_cost.items():
        provider = entry.get("litellm_provider") if isinstance(entry, dict) else None
        if key == "sample_spec":
            continue
        if provider in providers and not key.startswith(f"{provider}/"):
            key = f"{provider}/{key}"
        names.append(key)
    return tuple(dict.fromkeys(names))


def _providers() -> frozenset[str]:
    litellm = litellm_module()
    return frozenset(str(getattr(p, "value", p)) for p in litellm.provider_list)


@functools.lru_cache(maxsize=1024)
def litellm_routable(model: str, base: str | None = None) -> bool:
    """Whether litellm can tell which provider serves `model`.

    A known provider prefix is enough, and is decided without asking litellm: for some
    providers (github_copilot/) its get_llm_provider starts a device login over the network.
    Anything else goes to get_llm_provider, which maps bare names it knows (gpt-4o) and
    raises for the rest.
    """
    head, slash, _ = model.partition("/")
    if slash and (head in LOCAL_PROVIDERS or head in WIRE_PROVIDERS):
        return True  # the door serves these itself: no litellm to load to know it
    if slash and head in _providers():
        return True
    litellm = litellm_module()
    try:
        litellm.get_llm_provider(model=model, api_base=base)
    except Exception:  # litellm's BadRequestError, or an IndexError from inside it
        return False
    return True


def refusal(role: RoleModel) -> UnroutableModel:
    """The one line for a model nobody can route, with the closest names litellm knows."""
    return UnroutableModel(role.model, role.who, closest_names(role.model, known_names()))


def check_models(models: Sequence[RoleModel], routable: Routable = litellm_routable) -> None:
    """Raise UnroutableModel for the first model that cannot be routed (blocking: litellm)."""
    bad = first_unroutable(models, routable)
    if bad is not None:
        raise refusal(bad)
