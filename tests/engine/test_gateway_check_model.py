"""`circus check-model` through the model gateway: with CIRCUS_GATEWAY_URL set, the probe
asks the LiteLLM proxy for the proxy's own model names, with the gateway key, exactly as a run
does — so an operator can check `writers-room` before a room starts. Run as a real
`python -m circus` subprocess against the loopback fake proxy (tests/fakeproviders)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
from pathlib import Path

import pytest
from aiohttp import web
from fakeproviders.litellm_proxy import FakeLiteLLMProxy

REPO = Path(__file__).resolve().parents[2]
CAST = ("Ruth", "Danny", "林小姐", "刑警")  # the probe's two scenes (engine/catalog: probe.scene)
PRICES = {"writers-room": 2e-06, "stage-manager": 1e-06}


class KeyedProxy(FakeLiteLLMProxy):
    """The fake proxy started with a master key (general_settings.master_key): any other key is
    refused with a 401, in the real proxy's words (it shows only the key's last four
    characters). Without a master key it takes every key, as the real one does."""

    def __init__(self, master_key: str | None) -> None:
        super().__init__(CAST, PRICES)
        self.master_key = master_key

    async def handle(self, request: web.Request) -> web.Response:
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if self.master_key is None or key == self.master_key:
            return await super().handle(request)
        self.requests.append(await request.json())
        self.keys.append(key)
        message = (
            "Authentication Error, Invalid proxy server token passed. Received API Key = "
            f"sk-...{key[-4:]}, Key Hash (Token) =5699. Unable to find token in cache or "
            "`LiteLLM_VerificationTokenTable`"
        )
        error = {"message": message, "type": "token_not_found_in_db", "param": "key", "code": "401"}
        return web.json_response({"error": error}, status=401)


def gateway_env(base: str, key: str | None) -> dict[str, str]:
    """The operator's environment: the gateway on, nothing else of Circus's set, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CIRCUS_", "DISCORD_"))}
    env.update(
        CIRCUS_GATEWAY_URL=base,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_OFFLINE_MODE="true",
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        PYTHONUNBUFFERED="1",
    )
    if key is not None:
        env["CIRCUS_GATEWAY_KEY"] = key
    return env


async def check_model(
    proxy: KeyedProxy, key: str | None, cwd: Path, *args: str
) -> tuple[int, str, str]:
    """`circus check-model ARGS` with the gateway pointing at `proxy`: (exit code, out, err)."""
    async with proxy as base:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "circus",
            "check-model",
            *args,
            cwd=cwd,
            env=gateway_env(base, key),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and stderr.startswith("circus: unusable — "), stderr
    assert "Traceback" not in stderr
    return stderr


@pytest.mark.parametrize(
    "key, master_key, sent",
    [
        ("sk-circus", "sk-circus", "sk-circus"),  # the scale profile: the proxy's master key
        (None, None, "no-key"),  # a proxy without a master key takes litellm's placeholder
    ],
)
async def test_check_model_reaches_the_proxy_under_its_own_model_name(
    tmp_path: Path, key: str | None, master_key: str | None, sent: str
) -> None:
    proxy = KeyedProxy(master_key)
    # --api-base names another server: through the gateway, the gateway still wins
    code, out, err = await check_model(
        proxy, key, tmp_path, "writers-room", "--api-base", "http://127.0.0.1:9/never-asked"
    )
    assert code == 0, err
    assert out.startswith("check-model litellm_proxy/writers-room at http://127.0.0.1:")
    assert "reachable: yes" in out
    assert "replies read without a re-ask: 6/6" in out
    assert out.rstrip().endswith("verdict: usable — every reply read as written")
    assert err == ""
    # one stage-manager call and six actor turns, all asked of the proxy by its model name
    assert [r["model"] for r in proxy.requests] == ["writers-room"] * 7
    assert proxy.keys == [sent] * 7
    assert list(tmp_path.iterdir()) == []  # nothing written


async def test_the_json_findings_name_the_model_as_sent_and_the_proxys_costs(
    tmp_path: Path,
) -> None:
    proxy = KeyedProxy("sk-circus")
    code, out, err = await check_model(proxy, "sk-circus", tmp_path, "writers-room", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["model"] == "litellm_proxy/writers-room"
    assert found["api_base"].startswith("http://127.0.0.1:")
    assert (found["usable"], found["verdict"], found["turns"]) == (True, "ok", 6)
    # the cost of each call is the one the proxy reported in its x-litellm-response-cost header
    costs = [c["cost_usd"] for c in found["calls"]]
    assert len(costs) == len(proxy.costs) == 7
    assert all(math.isclose(a, b) for a, b in zip(costs, proxy.costs, strict=True))
    assert "sk-circus" not in out


@pytest.mark.parametrize("key", ["sk-wrong-key-7d1f", None])
async def test_a_key_the_proxy_refuses_is_one_clear_line_and_a_failed_exit(
    tmp_path: Path, key: str | None
) -> None:
    proxy = KeyedProxy("sk-circus")
    code, out, err = await check_model(proxy, key, tmp_path, "writers-room")
    assert code == 1
    assert "the model gateway refused Circus's key" in one_line(err)
    assert "CIRCUS_GATEWAY_KEY" in one_line(err)
    assert "Invalid proxy server token passed" in err  # the proxy's own reason, kept
    assert "reachable: yes — it answered with a refusal" in out and "Traceback" not in out
    assert len(proxy.requests) == 1  # the first failure ends the probe, with no retry
    if key is not None:
        assert key not in out + err  # only the proxy's masked form of it, if anything


async def test_a_model_the_proxy_does_not_serve_is_one_clear_line(tmp_path: Path) -> None:
    proxy = KeyedProxy(None)
    code, out, err = await check_model(proxy, None, tmp_path, "no-such-room")
    assert code == 1
    line = one_line(err)
    assert "Invalid model name passed in model=no-such-room" in line
    assert [r["model"] for r in proxy.requests] == ["no-such-room"]
