"""`circus bot` with CIRCUS_METRICS_PORT set: the process serves /metrics, counting the
turns its scenes play, its model calls under the model's configured name and the Discord REST
replies it got (not the gateway's WebSocket upgrade) — never a scene's or an actor's name."""

from __future__ import annotations

import socket
import urllib.request

from botkit import finished, room
from prometheus_client.parser import text_string_to_metric_families


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_bot_with_a_metrics_port_serves_what_its_scenes_did(tmp_path, monkeypatch):
    port = free_port()
    monkeypatch.setenv("CIRCUS_METRICS_PORT", str(port))
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        assert "▶" in await r.ask("run", {"turns": 3}, channel=thread)
        await finished(r, thread)
        await r.drain()
        for panel in r.bot.panels.by_scene.values():  # its last edit, at most 2 s later
            await panel.settled()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
            text = reply.read().decode("utf-8")
    got = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert got[("circus_turns_total", (("kind", "model"),))] >= 3
    assert got[("circus_scenes_running", ())] == 0
    for queue in ("personas", "backstage", "panel"):  # everything was delivered before the scrape
        assert got[("circus_queue_depth", (("queue", queue),))] == 0
    assert got[("circus_discord_requests_total", (("status", "2xx"),))] > 0
    statuses = {dict(labels).get("status") for name, labels in got if name.startswith("circus_d")}
    assert "1xx" not in statuses  # the bot connected to the gateway: a 101, not a REST reply
    calls = {labels: v for (name, labels), v in got.items() if name == "circus_model_calls_total"}
    assert sum(calls.values()) > 0
    assert {dict(labels)["model"] for labels in calls} == {"scripted/improv"}
    for secret in ("審訊室", "林小姐", "刑警", "律師"):
        assert secret not in text
