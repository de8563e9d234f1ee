"""The real LiteLLM proxy, as an operator runs it, in front of a loopback provider.

`RealProxy` starts `python -m litellm.proxy.proxy_cli` (the pinned litellm's own proxy, with the
server requirements of deploy/litellm/requirements.txt) on a config built from the shipped
deploy/litellm/config.yaml — its general_settings and router_settings as they ship, its
model_list pointed at `Upstream`: a FakeOpenAI (tests/fakeproviders) served from a thread of its
own, so the proxy process can call it while a test drives `circus` subprocesses.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web
from fakeproviders import FakeOpenAI

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "deploy" / "litellm" / "config.yaml"
MASTER_KEY = "sk-circus-master-5f1e0c9a7b3d4e21"
UPSTREAM_KEY = "sk-upstream-provider-9a8b7c6d5e4f3a2b"  # the provider key the proxy holds
# Import names of the proxy server's requirements (deploy/litellm/requirements.txt).
SERVER_MODULES = (
    "fastapi", "uvicorn", "uvloop", "backoff", "orjson", "apscheduler", "fastapi_sso", "jwt",
    "multipart", "cryptography", "websockets", "rq", "nacl", "semver", "expression", "mcp",
    "soundfile",
)  # fmt: skip
OFFLINE = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
}
READY = "Uvicorn running on"
START_TIMEOUT = 240.0  # bounds a hang only: the proxy imports for ~10 s, longer on busy cores


def need_proxy_server() -> None:
    """Skip, in one line, where the proxy's server requirements are not installed."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            "the LiteLLM proxy's server requirements are not installed "
            f"({', '.join(missing)}): pip install -r deploy/litellm/requirements.txt"
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Upstream:
    """A FakeOpenAI on its own event loop in a thread. `on_request(n)` runs before the n-th
    request (1-based) is answered — e.g. to stop the proxy in the middle of a run."""

    def __init__(
        self, cast: Sequence[str], on_request: Callable[[int], None] | None = None
    ) -> None:
        self.fake = KeyedOpenAI(cast, answer=self._answer)
        self.on_request = on_request
        self.loop = asyncio.new_event_loop()
        self.base = ""
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def _answer(self, system: str, json_mode: bool) -> str:
        if self.on_request is not None:
            self.on_request(len(self.fake.requests))
        return self.fake.improv.answer(system, json_mode)

    def __enter__(self) -> Upstream:
        self.thread.start()
        started = asyncio.run_coroutine_threadsafe(self.fake.__aenter__(), self.loop)
        self.base = started.result(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.fake.__aexit__(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)

    @property
    def keys(self) -> list[str]:
        return self.fake.keys


class KeyedOpenAI(FakeOpenAI):
    """FakeOpenAI that also keeps the bearer key of every request (the provider's key)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keys: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.keys.append(request.headers.get("Authorization", "").removeprefix("Bearer "))
        return await super().handle(request)


def proxy_config(upstream: str, prices: Mapping[str, float]) -> dict:
    """The shipped config with its model_list served by `upstream`, each name at its price per
    token (so the proxy reports a cost in its x-litellm-response-cost header)."""
    shipped = yaml.safe_load(SHIPPED.read_text("utf-8"))
    models = [
        {
            "model_name": name,
            "litellm_params": {
                "model": "openai/improv",
                "api_base": upstream,
                "api_key": UPSTREAM_KEY,
            },
            "model_info": {"input_cost_per_token": price, "output_cost_per_token": price},
        }
        for name, price in prices.items()
    ]
    return {**shipped, "model_list": models}


class RealProxy:
    """The LiteLLM proxy process on a free loopback port; `base` is its CIRCUS_GATEWAY_URL."""

    def __init__(self, tmp: Path, upstream: str, prices: Mapping[str, float]) -> None:
        self.config = tmp / "proxy-config.yaml"
        self.config.write_text(yaml.safe_dump(proxy_config(upstream, prices)), "utf-8")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log: list[str] = []
        self.proc: subprocess.Popen[str] | None = None

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CIRCUS_", "LITELLM_"))}
        return {**env, **OFFLINE, "CIRCUS_GATEWAY_KEY": MASTER_KEY}

    def __enter__(self) -> RealProxy:
        command = [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(self.config)]
        command += ["--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = subprocess.Popen(
            command,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        ready = threading.Event()
        threading.Thread(target=self._read, args=(ready,), daemon=True).start()
        if not ready.wait(START_TIMEOUT) or self.proc.poll() is not None:
            self.stop()
            raise AssertionError("the LiteLLM proxy did not start:\n" + "".join(self.log[-40:]))
        return self

    def _read(self, ready: threading.Event) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.append(line)
            if READY in line:
                ready.set()
        ready.set()  # it exited: __enter__ sees poll() is not None

    def stop(self) -> None:
        """Stop the proxy at once (as a crash or an operator's kill would)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def __exit__(self, *exc: object) -> None:
        self.stop()
