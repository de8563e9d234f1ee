"""Directing from a phone: the panel in a scene thread, its buttons, selects and forms, and the
message menus — through the fake Discord with the payloads Discord really sends."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.botkit import Room, room


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


SCENE = "審訊室"


def panel_of(r: Room, thread: int) -> dict:
    """The thread's panel message as members see it (the bot's message with components)."""
    [panel] = [m for m in r.thread(thread) if m["components"] and not m["webhook_id"]]
    return panel


def controls(panel: dict) -> dict[str, dict]:
    """custom_id action -> component, for the panel's buttons and selects."""
    out = {}
    for row in panel["components"]:
        for c in row["components"]:
            out[c["custom_id"].split(":")[1]] = c
    return out


def cid(r: Room, thread: int, action: str) -> str:
    return controls(panel_of(r, thread))[action]["custom_id"]


async def press(r: Room, thread: int, action: str, user: str = "alice", values=None):
    panel = panel_of(r, thread)
    handle = await r.fake.click(int(panel["id"]), cid(r, thread, action), user=user, values=values)
    await handle.response(timeout=60)
    return handle


async def private(r: Room, handle) -> str:
    return await r.answer(handle)


def folder_state(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


async def test_a_scene_gets_one_pinned_panel_that_says_its_state(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        panel = panel_of(r, thread)
        assert panel["pinned"] is True
        assert "⏸" in panel["content"] and "第 1 條" in panel["content"]
        c = controls(panel)
        assert c["cut"]["disabled"] is True and c["run"].get("disabled") is not True
        bound = (r.scenes_dir / SCENE / ".circus" / "discord.json").read_text("utf-8")
        assert panel["id"] in bound
