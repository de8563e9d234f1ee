"""No key leaves the process: a model server that echoes the Authorization header in its error
body (many self-hosted and Ollama-compatible servers do) never gets the operator's key — a
provider key, the gateway key — printed, written to the scene folder or logged. Each run is a
real `python -m circus` subprocess against the echoing loopback server."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from clikit import REPO, cli_env
from fakeproviders.echoing import DISCORD_TOKEN, GATEWAY_KEY, OPENAI_KEY, EchoingServer
from scenekit import write_scene

from engine.redact import MASK


async def run_circus(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "circus", *args, cwd=cwd, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode or 0, out.decode("utf-8", "replace")


def everything_on_disk(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()
    )


@pytest.mark.parametrize("via", ["provider key", "gateway"])
async def test_an_echoing_server_never_gets_a_key_shown_or_written(tmp_path: Path, via: str):
    scene = write_scene(tmp_path / "scene", model="openai/gpt-4o-mini")
    server = EchoingServer()
    async with server as base:
        env = cli_env(OPENAI_API_KEY=OPENAI_KEY, DISCORD_TOKEN=DISCORD_TOKEN, CIRCUS_MODEL=None)
        if via == "gateway":
            env.update(CIRCUS_GATEWAY_URL=base, CIRCUS_GATEWAY_KEY=GATEWAY_KEY)
        else:
            env.update(CIRCUS_API_BASE=base)
        env["PYTHONPATH"] = str(REPO)
        cue_code, cue_out = await run_circus(
            env, tmp_path, "cue", str(scene), "刑警", "--backstage"
        )
        probe_code, probe_out = await run_circus(
            env, tmp_path, "check-model", "openai/gpt-4o-mini", "--api-base", base
        )
    sent = GATEWAY_KEY if via == "gateway" else OPENAI_KEY
    assert cue_code != 0 and probe_code != 0  # the server refused: the attack was made…
    assert any(sent in auth for auth in server.seen), "the key was never sent"
    for shown in (cue_out, probe_out, everything_on_disk(scene)):
        for key in (OPENAI_KEY, GATEWAY_KEY, DISCORD_TOKEN):
            assert key not in shown  # …and nothing came back out
    assert MASK in cue_out  # the director still reads why it failed
