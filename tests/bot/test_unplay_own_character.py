"""A player gives back their own character with `/unplay actor:<it>` — no director needed, as
the writer's guide promises — but never someone else's: that stays a director's call, refused
privately with who the directors are, and nothing changes."""

from __future__ import annotations

import json

import pytest
from botkit import room


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def players(r) -> dict[str, str]:
    path = r.home / "審訊室" / ".circus" / "players.json"
    return json.loads(path.read_text(encoding="utf-8"))


async def test_a_player_frees_their_own_character_by_name_and_no_one_elses(tmp_path):
    async with room(tmp_path) as r:
        for name in ("dave", "erin", "frank"):
            r.fake.add_user(name)
        dave, erin = r.fake.users["dave"].id, r.fake.users["erin"].id
        r.let_open_scenes("bob")
        thread = await r.new_scene("審訊室", user="bob")
        await r.ask("play", {"actor": "林小姐", "user": "dave"}, user="bob", channel=thread)
        await r.ask("play", {"actor": "刑警", "user": "erin"}, user="bob", channel=thread)
        assert players(r) == {"林小姐": f"discord:{dave}", "刑警": f"discord:{erin}"}

        refused = await r.ask("unplay", {"actor": "刑警"}, user="dave", channel=thread)
        assert "/director add" in refused  # erin's role is not dave's to give back
        refused = await r.ask("unplay", {"actor": "刑警"}, user="frank", channel=thread)
        assert "/director add" in refused  # nor a spectator's
        assert players(r) == {"林小姐": f"discord:{dave}", "刑警": f"discord:{erin}"}

        freed = await r.ask("unplay", {"actor": "林小姐"}, user="dave", channel=thread)
        assert "交還" in freed and "林小姐" in freed and "/director" not in freed
        assert players(r) == {"刑警": f"discord:{erin}"}

        freed = await r.ask("unplay", {"actor": "刑警"}, user="bob", channel=thread)
        assert "交還" in freed  # a director frees anyone's
        assert players(r) == {}
