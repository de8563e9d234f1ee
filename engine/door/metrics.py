"""Prometheus metrics for the operator, per process: off unless CIRCUS_METRICS_PORT is set.

Invariant: no label carries scene text, a scene's or an actor's name, or a secret, and every
label has a bounded set of values: fixed words (outcome, kind, status class, queue) and, for
`model`, the names the operator configured (`model_label`), anything else counted as `other`;
everything else is a number. Fed by the engine's event stream (`Metrics.on_event`, a listener),
the model door's replies (`MeteredModels`) and the frontends' counts (Discord REST replies,
queue depths). prometheus_client is imported lazily.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.config import Config
from engine.door.gateway import proxied
from engine.door.llm import EMBEDDED_MODEL
from engine.errors import BadRequest, CircusError, ModelError

if TYPE_CHECKING:
    from engine.door.llm import ModelCall, ModelReply, Models, Price, SpendGate
    from engine.events import Event

MAX_LABEL = 80
_SAFE_MODEL = re.compile(r"[a-z0-9][a-z0-9._:/-]*", re.I)
# Seconds: a scripted reply in milliseconds up to a slow local model on a CPU.
LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
QUEUES = ("personas", "backstage", "panel")  # the frontends' outgoing queues


def configured_models(config: Config) -> tuple[str, ...]:
    """The models the operator named, in order: CIRCUS_MODEL (the embedded model when unset, as
    every role falls back to it: engine.folder.role_models), CIRCUS_STAGE_MANAGER_MODEL, then
    each exact name on CIRCUS_ALLOWED_MODELS (a pattern, `provider/*` or `*`, names no model)."""
    listed = (config.allowed_models or "").split(",")
    names = (config.model or EMBEDDED_MODEL, config.stage_manager_model or "", *listed)
    return tuple(dict.fromkeys(n.strip() for n in names if n.strip() and "*" not in n))


def model_label(model: str, config: Config) -> str:
    """A model's `model` label: the name the operator configured it by — one spelling whether
    the call went through the gateway (`litellm_proxy/…`) or failed before it — or "other" for
    any model they did not name (a director's pick under a wildcard allow-list) and any name
    that is not short and plain (an address, a key, spaces, text is never shown)."""
    return _labels(config).get(proxied(model, config), "other")


@functools.lru_cache(maxsize=16)
def _labels(config: Config) -> dict[str, str]:
    """Each configured model's label, by the name litellm is asked for (the first spelling the
    operator wrote wins: `writers-room` and `litellm_proxy/writers-room` are one model)."""
    out: dict[str, str] = {}
    for name in configured_models(config):
        if _plain(name):
            out.setdefault(proxied(name, config), name)
    return out


def _plain(name: str) -> bool:
    return (
        len(name) <= MAX_LABEL
        and bool(_SAFE_MODEL.fullmatch(name))
        and not ("//" in name or "@" in name)
    )


def status_class(status: int) -> str | None:
    """An HTTP status as a label: the exact code for 429 (rate limited), else its class; None
    for an interim reply (a WebSocket upgrade's 101 is the gateway connecting, not REST)."""
    if status < 200:
        return None
    return "429" if status == 429 else f"{min(status // 100, 5)}xx"


class Metrics:
    """One process's metrics, in a registry of their own (a test can hold several)."""

    def __init__(self, config: Config) -> None:
        import prometheus_client as prom

        self.config = config  # whose configured models are the `model` labels
        self.registry = prom.CollectorRegistry()
        r = self.registry
        self.turns = prom.Counter("circus_turns", "Turns that landed.", ["kind"], registry=r)
        self.repairs = prom.Counter(
            "circus_turn_repairs", "Turns whose first reply was malformed.", registry=r
        )
        self.sm_fallbacks = prom.Counter(
            "circus_stage_manager_fallbacks", "Stage manager decisions Circus made.", registry=r
        )
        self.runs = prom.Counter("circus_runs", "Runs finished.", ["reason"], registry=r)
        self.running = prom.Gauge("circus_scenes_running", "Scenes running now.", registry=r)
        self.calls = prom.Counter(
            "circus_model_calls", "Model calls.", ["model", "outcome"], registry=r
        )
        self.latency = prom.Histogram(
            "circus_model_call_duration_seconds",
            "How long a model call took (retries and fallback included).",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.tokens = prom.Counter(
            "circus_model_tokens", "Tokens used.", ["model", "kind"], registry=r
        )
        self.cost = prom.Counter(
            "circus_model_cost_usd", "What model calls cost, in US dollars.", ["model"], registry=r
        )
        self.discord = prom.Counter(
            "circus_discord_requests", "Discord REST replies.", ["status"], registry=r
        )
        self.queues = prom.Gauge(
            "circus_queue_depth", "Items waiting in an outgoing queue.", ["queue"], registry=r
        )
        self._lock = threading.Lock()
        self._running: set[str] = set()

    # ------------------------------------------------------------------ the event stream
    def on_event(self, event: Event) -> None:
        """A listener for `Rehearsal.events`: turns, repairs, fallbacks, scenes running."""
        from engine import events as ev

        if isinstance(event, ev.TurnCompleted):
            kind = "played" if event.played else "fallback" if event.fallback else "model"
            self.turns.labels(kind=kind).inc()
            if event.repaired:
                self.repairs.inc()
        elif isinstance(event, ev.StageManagerDecided) and event.fallback:
            self.sm_fallbacks.inc()
        elif isinstance(event, ev.RunStarted):
            self._scene(event.scene, True)
        elif isinstance(event, ev.RunFinished):
            self._scene(event.scene, False)
            self.runs.labels(
                reason=_word(event.reason, ("completed", "cut", "error", "budget"))
            ).inc()

    def _scene(self, scene: str, running: bool) -> None:
        # the names are kept here to count each scene once; they never reach a label
        with self._lock:
            (self._running.add if running else self._running.discard)(scene)
            self.running.set(len(self._running))

    # ------------------------------------------------------------------ the model door
    def model_call(
        self, model: str, seconds: float, reply: ModelReply | None, outcome: str
    ) -> None:
        label = model_label(model, self.config)
        self.calls.labels(model=label, outcome=outcome).inc()
        self.latency.labels(model=label).observe(max(seconds, 0.0))
        if reply is not None:
            self.tokens.labels(model=label, kind="prompt").inc(reply.prompt_tokens)
            self.tokens.labels(model=label, kind="completion").inc(reply.completion_tokens)
            if reply.cost_usd is not None:
                self.cost.labels(model=label).inc(reply.cost_usd)

    # ------------------------------------------------------------------ the frontends
    def discord_reply(self, status: int) -> None:
        label = status_class(status)
        if label is not None:
            self.discord.labels(status=label).inc()

    def queue_depth(self, queue: str, depth: int) -> None:
        self.queues.labels(queue=_word(queue, QUEUES)).set(max(depth, 0))

    def text(self) -> str:
        """The exposition text, as /metrics serves it."""
        import prometheus_client as prom

        return prom.generate_latest(self.registry).decode("utf-8")

    def serve(self, port: int, addr: str = "127.0.0.1") -> Any:
        """Serve /metrics on `port` from a thread (0: a free port); returns the server. A port
        that cannot be had (taken, privileged) is the operator's to change: one line saying so."""
        import prometheus_client as prom

        try:
            server, _thread = prom.start_http_server(port, addr=addr, registry=self.registry)
        except OSError as exc:
            raise BadRequest("error.metrics_port", port=port, reason=exc.strerror or exc) from None
        return server


def _word(value: str, known: tuple[str, ...]) -> str:
    return value if value in known else "other"


class MeteredModels:
    """A model door that counts every call of the door it wraps (`Models`, engine.door.llm)."""

    def __init__(self, door: Models, metrics: Metrics) -> None:
        self.door = door
        self.metrics = metrics

    async def complete(self, call: ModelCall, *, gate: SpendGate | None = None) -> ModelReply:
        start = time.perf_counter()
        try:
            reply = await self.door.complete(call, gate=gate)
        except ModelError:
            self.metrics.model_call(call.model, time.perf_counter() - start, None, "error")
            raise
        except CircusError:  # a budget's refusal: no call was made
            self.metrics.model_call(call.model, time.perf_counter() - start, None, "refused")
            raise
        config = self.metrics.config  # the reply names the model as sent through a gateway
        outcome = (
            "ok" if proxied(reply.model, config) == proxied(call.model, config) else "fallback"
        )
        self.metrics.model_call(reply.model, time.perf_counter() - start, reply, outcome)
        return reply

    def price(self, model: str) -> Price | None:
        return self.door.price(model)

    def warm(self) -> None:
        self.door.warm()

    def __getattr__(self, name: str) -> Any:  # what else the wrapped door offers (scripted())
        return getattr(self.door, name)


_process: Metrics | None = None
_process_lock = threading.Lock()


def process_metrics(config: Config) -> Metrics | None:
    """This process's metrics, serving /metrics on CIRCUS_METRICS_PORT from the first call on;
    None when the port is not set (metrics off)."""
    global _process
    if config.metrics_port is None:
        return None
    with _process_lock:
        if _process is None:
            _process = Metrics(config)
            _process.serve(config.metrics_port, config.metrics_addr)
    return _process


def metered(door: Models, config: Config) -> Models:
    """`door` counted by this process's metrics, or `door` itself when they are off."""
    found = process_metrics(config)
    return door if found is None else MeteredModels(door, found)


def watch(hub: Any, config: Config) -> None:
    """Count a rehearsal's events (`hub`: its EventHub) when this process has metrics on."""
    found = process_metrics(config)
    if found is not None:
        hub.listen(found.on_event)


def track_queue(config: Config, queue: str, depth: Callable[[], int]) -> None:
    """Show `depth()` as the queue's depth at each scrape, when this process has metrics on."""
    found = process_metrics(config)
    if found is not None:
        found.queues.labels(queue=_word(queue, QUEUES)).set_function(depth)


def discord_trace(config: Config) -> Any:
    """An aiohttp TraceConfig counting every Discord REST reply by status (discord.py's
    `http_trace`), or None when metrics are off."""
    found = process_metrics(config)
    if found is None:
        return None
    import aiohttp

    async def replied(_session: Any, _context: Any, params: Any) -> None:
        found.discord_reply(params.response.status)

    trace = aiohttp.TraceConfig()
    trace.on_request_end.append(replied)
    return trace
