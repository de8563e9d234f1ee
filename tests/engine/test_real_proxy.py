"""Circus through the real LiteLLM proxy — the operator's guide's scale profile, outside docker:
the pinned litellm's own proxy process, on the shipped deploy/litellm/config.yaml (its master
key, no database), in front of a loopback OpenAI-compatible provider (tests/proxykit.py).

What an operator sees: check-model says usable; a run lands and counts the proxy's own cost; a
wrong or missing CIRCUS_GATEWAY_KEY, a name the proxy does not serve, and the proxy stopped in
the middle of a run are each one line that names what to fix — and no key is ever printed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from clikit import check_backstage_complete, circus, cli_env, turns_of
from proxykit import (
    MASTER_KEY,
    OFFLINE,
    UPSTREAM_KEY,
    RealProxy,
    Upstream,
    need_proxy_server,
)

CAST = ("Ruth", "Danny", "Carol", "林小姐", "刑警")  # the wake scene's and the probe's actors
PRICES = {"writers-room": 2e-06, "stage-manager": 1e-06}
WRONG_KEY = "sk-wrong-0f9e8d7c6b5a4f3e"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RealProxy, Upstream]]:
    need_proxy_server()
    with Upstream(CAST) as upstream:
        with RealProxy(tmp_path_factory.mktemp("proxy"), upstream.base, PRICES) as real:
            yield real, upstream


def gateway(base: str, key: str | None = MASTER_KEY, **extra: str) -> dict[str, str]:
    """The operator's environment with the gateway on (as the scale profile sets it)."""
    settings: dict[str, str | None] = {
        "CIRCUS_GATEWAY_URL": base,
        "CIRCUS_GATEWAY_KEY": key,
        "CIRCUS_MODEL": "writers-room",
        "CIRCUS_STAGE_MANAGER_MODEL": "stage-manager",
        **OFFLINE,
    }
    return cli_env(**(settings | extra))


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def no_key_in(*texts: str) -> None:
    for text in texts:
        for key in (MASTER_KEY, WRONG_KEY, UPSTREAM_KEY):
            assert key not in text and key[-12:] not in text


def test_check_model_through_the_real_proxy_is_usable(proxy, tmp_path: Path) -> None:
    real, upstream = proxy
    before = len(upstream.keys)
    done = circus("check-model", "writers-room", cwd=tmp_path, env=gateway(real.base))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "check-model litellm_proxy/writers-room" in done.stdout
    assert "reachable: yes" in done.stdout and "verdict: usable" in done.stdout
    # the proxy holds the provider's key: Circus's key stops at the proxy
    assert set(upstream.keys[before:]) == {UPSTREAM_KEY}
    no_key_in(done.stdout, done.stderr)


def test_a_run_through_the_real_proxy_lands_and_counts_the_proxys_own_cost(
    proxy, tmp_path: Path
) -> None:
    real, upstream = proxy
    env = gateway(real.base)
    assert circus("new", "wake", "--template", "wake", cwd=tmp_path, env=env).returncode == 0
    before = len(upstream.fake.usages)
    done = circus("run", "wake", "-n", "3", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    scene = tmp_path / "wake"
    assert len(turns_of(scene)) == 3
    check_backstage_complete(scene)
    rows = [
        json.loads(line) for line in (scene / ".circus" / "calls.jsonl").read_text().splitlines()
    ]
    usages = upstream.fake.usages[before:]
    assert len(rows) == len(usages)  # every call of the run reached the provider once
    billed = sum(
        u["total_tokens"] * PRICES[r["model"].split("/")[-1]]
        for r, u in zip(rows, usages, strict=True)
    )
    assert math.isclose(sum(r["cost_usd"] for r in rows), billed, rel_tol=1e-6)
    assert {r["model"] for r in rows} <= {
        "litellm_proxy/writers-room",
        "litellm_proxy/stage-manager",
    }
    no_key_in(done.stdout, done.stderr, *(p.read_text("utf-8") for p in scene.rglob("*.md")))


@pytest.mark.parametrize("key", [WRONG_KEY, None], ids=["wrong key", "no key"])
def test_a_key_the_real_proxy_refuses_names_circus_gateway_key(
    proxy, tmp_path: Path, key: str | None
) -> None:
    real, _ = proxy
    env = gateway(real.base, key)
    done = circus("check-model", "writers-room", cwd=tmp_path, env=env)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert "the model gateway refused Circus's key" in line and "CIRCUS_GATEWAY_KEY" in line
    assert "reachable: yes — it answered with a refusal" in done.stdout
    assert circus("new", "wake", "--template", "wake", cwd=tmp_path, env=env).returncode == 0
    run = circus("run", "wake", "-n", "2", cwd=tmp_path, env=env)
    assert run.returncode != 0
    assert "CIRCUS_GATEWAY_KEY" in run.stdout + run.stderr
    assert "Check the model name" not in run.stdout + run.stderr
    assert turns_of(tmp_path / "wake") == []
    no_key_in(done.stdout, done.stderr, run.stdout, run.stderr)


def test_a_name_the_real_proxy_does_not_serve_is_named_with_the_names_it_does(
    proxy, tmp_path: Path
) -> None:
    real, _ = proxy
    done = circus("check-model", "writers-rom", cwd=tmp_path, env=gateway(real.base))
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert "the proxy does not serve writers-rom; it serves writers-room, stage-manager" in line
    assert "reachable: yes" in done.stdout
    env = gateway(real.base, CIRCUS_MODEL="writers-rom")
    assert circus("new", "wake", "--template", "wake", cwd=tmp_path, env=env).returncode == 0
    run = circus("run", "wake", "-n", "1", "--start", "Ruth", cwd=tmp_path, env=env)
    said = run.stdout + run.stderr
    assert "does not serve writers-rom — it serves writers-room, stage-manager" in said


def test_the_real_proxy_stopped_in_the_middle_of_a_run(tmp_path: Path) -> None:
    need_proxy_server()
    stopping: list[RealProxy] = []

    def stop_on_the_third_call(n: int) -> None:
        if n == 3:
            stopping[0].stop()

    with Upstream(CAST, on_request=stop_on_the_third_call) as upstream:
        with RealProxy(tmp_path, upstream.base, PRICES) as real:
            stopping.append(real)
            env = gateway(real.base, CIRCUS_RETRY_BASE_SECONDS="0.01")
            assert (
                circus("new", "wake", "--template", "wake", cwd=tmp_path, env=env).returncode == 0
            )
            run = circus("run", "wake", "-n", "6", "--start", "Ruth", cwd=tmp_path, env=env)
    said = run.stdout + run.stderr
    assert run.returncode != 0, said
    assert "Nothing answered" in said and "CIRCUS_GATEWAY_URL" in said
    scene = tmp_path / "wake"
    assert 1 <= len(turns_of(scene)) <= 2  # the turns before the stop, each whole
    check_backstage_complete(scene)
    no_key_in(said)
