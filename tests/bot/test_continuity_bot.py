"""Continuity in Discord, black box against the fake Discord: `/scene next` makes the
next scene and its thread with the same directors, shows each carried section privately with a
button to edit each soul (the `/soul edit` form); `/secrets` and `/take list` (with the tree)
answer directors privately, and nothing private reaches the thread."""

from __future__ import annotations

import pytest
from botkit import WAIT, finished, room
from scenekit import CAST, write_scene
from setupkit import inputs, thread_of

from engine.providers.scripted import ScriptedModels

THOUGHT = "weighs what was said"  # every scripted/improv thought


@pytest.fixture(autouse=True)
def operator_env(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")
    monkeypatch.delenv("CIRCUS_STAGE_MANAGER_MODEL", raising=False)
    monkeypatch.delenv("CIRCUS_ALLOWED_MODELS", raising=False)


async def test_scene_next_secrets_and_the_take_tree_from_a_thread(tmp_path):
    async with room(tmp_path, models=ScriptedModels()) as r:
        write_scene(r.home / "一")
        soul = r.home / "一/actors/刑警/soul.md"
        soul.write_text(soul.read_text("utf-8").replace("---\n## ", "secrets: [二十萬]\n---\n## "))
        await r.ask("scene open", {"name": "一"})
        thread = thread_of(r, "一")
        await r.ask("run", {"turns": 3}, channel=thread)
        await finished(r, thread)
        assert "1" in await r.ask("take save", channel=thread)
        await r.ask("replay", {"take": 1, "until": 1}, channel=thread)
        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread, 2)
        await r.ask("take save", channel=thread)

        listing = await r.ask("take list", channel=thread)
        assert "└─ take_2" in listing and "（從 take_1 第 1 輪分出）" in listing
        ledger = await r.ask("secrets", {"take": 1}, channel=thread)
        assert "刑警 · '二十萬'：始終沒有說出口。" in ledger and "0 次牆被穿越" in ledger
        refused = await r.ask("secrets", channel=thread, user="bob")
        assert "二十萬" not in refused and "<@" in refused

        handle = await r.slash("scene next", {"name": "二", "take": 2}, channel=thread)
        messages = await handle.wait_followups(2 + len(CAST), timeout=WAIT)
        assert handle.ephemeral and all(m.get("flags", 0) & 64 for m in messages)
        new_thread = thread_of(r, "二")
        assert f"<#{new_thread}>" in messages[0]["content"]
        for actor in CAST:
            shown = next(
                m["content"] for m in messages[1:] if m["content"].startswith(f"**{actor}**")
            )
            assert "### 承接自 一，排演 2" in shown
        assert THOUGHT not in r.everything_public()  # the carried thoughts stayed private
        assert r.scene_thread("二").binding.directors == r.scene_thread("一").binding.directors

        # Each soul opens in the soul form from its button; what is sent is written.
        buttons = messages[-1]
        press = await r.fake.click(int(buttons["id"]), "next:edit:律師")
        await press.response(timeout=WAIT)
        text = inputs(press.modal)["soul"]
        assert "### 承接自 一，排演 2" in text
        rewritten = text.split("### 承接自")[0] + "律師記得那通電話。\n\n## 導戲筆記\n拖延。\n"
        old_soul = (r.home / "一/actors/律師/soul.md").read_bytes()
        submitted = await r.fake.submit_modal(press, {"soul": rewritten})
        await submitted.response(timeout=WAIT)
        assert "律師" in await r.answer(submitted)  # written to the new scene's soul
        assert (r.home / "一/actors/律師/soul.md").read_bytes() == old_soul
        assert "律師記得那通電話。" in (r.home / "二/actors/律師/soul.md").read_text("utf-8")
        status = await r.ask("status", channel=new_thread)
        assert "actors/刑警/soul.md" in status and "actors/律師/soul.md" not in status

        again = await r.ask("scene next", {"name": "二"}, channel=thread)
        assert again.startswith("「二」已經存在")  # nothing written, one private line
