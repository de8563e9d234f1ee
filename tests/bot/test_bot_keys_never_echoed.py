"""No key reaches Discord: a model server that echoes the Authorization header in its error
body, and a member allowed only /scene and /cue, who then reads the run's error in their DM and
the thread. Neither the provider key nor the gateway key is anywhere Discord was sent."""

from __future__ import annotations

import pytest
from botkit import room, until
from fakeproviders.echoing import GATEWAY_KEY, OPENAI_KEY, EchoingServer

from engine.redact import MASK


@pytest.mark.parametrize("via", ["provider key", "gateway"])
async def test_an_echoed_key_never_reaches_a_dm_or_the_thread(tmp_path, monkeypatch, via):
    server = EchoingServer()
    async with server as base:
        monkeypatch.setenv("CIRCUS_MODEL", "openai/gpt-4o-mini")
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        if via == "gateway":
            monkeypatch.setenv("CIRCUS_GATEWAY_URL", base)
            monkeypatch.setenv("CIRCUS_GATEWAY_KEY", GATEWAY_KEY)
        else:
            monkeypatch.setenv("CIRCUS_API_BASE", base)
        async with room(tmp_path) as r:
            thread = await r.new_scene("審訊室")
            await r.ask("cue", {"actor": "刑警"}, channel=thread)
            await until(lambda: any("gpt-4o-mini" in d for d in r.dms("alice")), what="the DM")
            await r.drain()
            dms = "\n".join(r.dms("alice"))
            seen = "\n".join([r.everything_public(), dms])
    sent = GATEWAY_KEY if via == "gateway" else OPENAI_KEY
    assert any(sent in auth for auth in server.seen)  # the attack was made…
    assert OPENAI_KEY not in seen and GATEWAY_KEY not in seen  # …and nothing came back out
    assert MASK in dms  # the director still reads why the turn failed
